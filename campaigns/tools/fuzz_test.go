package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/campaigns/tools"
)

// FuzzCall calls the tools with the JSON arguments a model might write.
// A call never panics; a call that fails leaves both sheets byte for byte
// as they were and returns no result; a call that succeeds leaves sheets
// that still parse.
func FuzzCall(f *testing.F) {
	for _, s := range []struct {
		tool uint8
		args string
	}{
		{0, `{"dice": "1d20+5", "reason": "stealth", "dc": 12}`},
		{0, `{"dice": "4d6dl1!", "reason": ""}`},
		{1, `{"character": "tilda-brannock", "items": [{"name": "Rope", "description": "50 ft", "quantity": 2}]}`},
		{1, `{"character": "brother-oswin", "items": [{"name": "2 daggers"}]}`},
		{2, `{"character": "tilda-brannock", "updates": [{"slug": "healing-potion", "quantityChange": -1}, {"slug": "torch", "quantityChange": -5}]}`},
		{2, `{"character": "brother-oswin", "updates": [{"slug": "candle", "quantityChange": 3}]}`},
		{3, `{"character": "tilda-brannock", "hp": 3, "maxHp": 20, "level": 2, "stats": {"str": 16}}`},
		{3, `{"character": "brother-oswin", "damage": 100, "healing": 2}`},
		{3, `{"character": "tilda-brannock", "tempHp": 5, "damage": 7}`},
		{3, `{"character": "brother-oswin", "temp_hp": -1}`},
		{4, `{"character": "tilda-brannock"}`},
		{4, `{}`},
		{3, `{"character": "../../etc/passwd", "hp": 1}`},
		{2, `{"updates": [{"slug": "", "quantityChange": 0}]}`},
		{1, `[1, 2]`},
		{3, `{"hp": 1e99}`},
	} {
		f.Add(s.tool, []byte(s.args))
	}
	c, err := campaigns.New(f.TempDir(), "the-rot-beneath")
	if err != nil {
		f.Fatal(err)
	}
	names := tools.Tools()
	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		for _, l := range layouts {
			if err := os.WriteFile(c.SheetPath(l.character), []byte(l.text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		box := tools.New(c, dice.Seeded(1))
		res, err := box.Call(context.Background(), names[int(tool)%len(names)].Name, json.RawMessage(args))
		for _, l := range layouts {
			got, rerr := os.ReadFile(c.SheetPath(l.character))
			if rerr != nil {
				t.Fatal(rerr)
			}
			if err != nil && string(got) != l.text {
				t.Fatalf("a failed call (%v) changed %s:\n%s", err, l.character, got)
			}
			if _, perr := sheet.Parse(l.character, got); perr != nil {
				t.Fatalf("after the call (%v), %s no longer parses: %v", err, l.character, perr)
			}
		}
		if err != nil && res != nil {
			t.Fatalf("a failed call returned a result: %#v", res)
		}
		if err == nil {
			if _, jerr := json.Marshal(res); jerr != nil {
				t.Fatalf("the result does not encode: %v", jerr)
			}
		}
	})
}
