package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/campaigns/tools"
	"github.com/parley-dev/parley/internal/linediff"
	"github.com/parley-dev/parley/internal/toolargs"
)

// tablesSheet is a sheet in the layout people write by hand.
const tablesSheet = `# Tilda Brannock

| | |
|---|---|
| **Race** | Halfling |
| **Class** | Rogue |
| **Level** | 1 |
| **Hit Points** | 8/12 |

## Ability Scores

| STR | DEX | CON | INT | WIS | CHA |
|:---:|:---:|:---:|:---:|:---:|:---:|
| 8 (-1) | 16 (+3) | 12 (+1) | 10 (+0) | 14 (+2) | 13 (+1) |

## Equipment

### Worn/Carried
- Two daggers
- Leather armor

### Pack Contents
- Burglar's pack (backpack, bag of 1,000 ball bearings, 10 ft string)
- 3 healing potions
- a torch

### Currency
15 gp, 3 sp

## Backstory

She owes the Brannock family a debt of 3 gp.
`

// frontSheet is a sheet in parley's frontmatter layout, with the same
// values as tablesSheet.
const frontSheet = `---
hp: 8
max_hp: 12
level: 1
abilities:
  str: 8
  dex: 16
  con: 12
  int: 10
  wis: 14
  cha: 13
inventory:
  - {name: Daggers, quantity: 2}
  - {name: Healing potion, quantity: 3, note: smells of mint}
  - {name: Torch, quantity: 1}
currency: {gp: 15, sp: 3}
---

# Brother Oswin

He keeps a torch lit for the dead.
`

// layouts are the two sheet layouts, each with its character.
var layouts = []struct {
	name      string // of the layout
	character string
	text      string
}{
	{"tables", "tilda-brannock", tablesSheet},
	{"frontmatter", "brother-oswin", frontSheet},
}

// newCampaign makes a campaign in a temporary workspace with the given
// sheets, by character.
func newCampaign(t *testing.T, sheets map[string]string) *campaigns.Campaign {
	t.Helper()
	c, err := campaigns.New(t.TempDir(), "the-rot-beneath")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range sheets {
		if err := os.WriteFile(c.SheetPath(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// readFile returns a file's contents.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call calls a tool and returns its result as JSON decodes it.
func call(t *testing.T, b *tools.Box, tool, args string) (map[string]any, error) {
	t.Helper()
	res, err := b.Call(context.Background(), tool, json.RawMessage(args))
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("json.Marshal(%s result): %v", tool, err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%s result %s is not a JSON object: %v", tool, data, err)
	}
	return got, nil
}

// checkFields checks that every field of the JSON object want has the
// same value in got.
func checkFields(t *testing.T, got map[string]any, want string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	for k, v := range w {
		if diff := cmp.Diff(v, got[k]); diff != "" {
			t.Errorf("result field %q (-want +got):\n%s", k, diff)
		}
	}
}

// lineDiff returns the lines changed from a to b (see linediff.Lines).
func lineDiff(a, b string) []string {
	return linediff.Lines(strings.Split(a, "\n"), strings.Split(b, "\n"))
}

// outcome is what a successful call should answer and do to the sheet.
type outcome struct {
	json string   // fields the result must have, as a JSON object
	diff []string // the lines of the sheet removed ("-") and added ("+")
}

func TestCallChangesSheet(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args string
		want map[string]outcome // by layout
	}{
		{
			name: "damage stops at 0",
			tool: "update_character",
			args: `{"damage": 10}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "hp": 0, "maxHp": 12}`,
					diff: []string{"-| **Hit Points** | 8/12 |", "+| **Hit Points** | 0/12 |"},
				},
				"frontmatter": {
					json: `{"success": true, "hp": 0, "maxHp": 12}`,
					diff: []string{"-hp: 8", "+hp: 0"},
				},
			},
		},
		{
			name: "healing stops at max",
			tool: "update_character",
			args: `{"healing": 10}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "hp": 12, "maxHp": 12}`,
					diff: []string{"-| **Hit Points** | 8/12 |", "+| **Hit Points** | 12/12 |"},
				},
				"frontmatter": {
					json: `{"success": true, "hp": 12, "maxHp": 12}`,
					diff: []string{"-hp: 8", "+hp: 12"},
				},
			},
		},
		{
			name: "hp level and stats",
			tool: "update_character",
			args: `{"hp": 5, "level": 2, "stats": {"str": 10, "cha": 13}}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "hp": 5, "maxHp": 12, "level": 2,
						"stats": {"str": 10, "dex": 16, "con": 12, "int": 10, "wis": 14, "cha": 13}}`,
					diff: []string{
						"-| **Level** | 1 |",
						"-| **Hit Points** | 8/12 |",
						"+| **Level** | 2 |",
						"+| **Hit Points** | 5/12 |",
						"-| 8 (-1) | 16 (+3) | 12 (+1) | 10 (+0) | 14 (+2) | 13 (+1) |",
						"+| 10 (+0) | 16 (+3) | 12 (+1) | 10 (+0) | 14 (+2) | 13 (+1) |",
					},
				},
				"frontmatter": {
					json: `{"success": true, "hp": 5, "maxHp": 12, "level": 2,
						"stats": {"str": 10, "dex": 16, "con": 12, "int": 10, "wis": 14, "cha": 13}}`,
					diff: []string{"-hp: 8", "+hp: 5", "-level: 1", "+level: 2", "-  str: 8", "+  str: 10"},
				},
			},
		},
		{
			name: "a lower max brings hp down",
			tool: "update_character",
			args: `{"max_hp": 6}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "hp": 6, "maxHp": 6}`,
					diff: []string{"-| **Hit Points** | 8/12 |", "+| **Hit Points** | 6/6 |"},
				},
				"frontmatter": {
					json: `{"success": true, "hp": 6, "maxHp": 6}`,
					diff: []string{"-hp: 8", "-max_hp: 12", "+hp: 6", "+max_hp: 6"},
				},
			},
		},
		{
			name: "max and hp together",
			tool: "update_character",
			args: `{"maxHp": 14, "hp": 14}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "hp": 14, "maxHp": 14}`,
					diff: []string{"-| **Hit Points** | 8/12 |", "+| **Hit Points** | 14/14 |"},
				},
				"frontmatter": {
					json: `{"success": true, "hp": 14, "maxHp": 14}`,
					diff: []string{"-hp: 8", "-max_hp: 12", "+hp: 14", "+max_hp: 14"},
				},
			},
		},
		{
			name: "grant temporary hit points",
			tool: "update_character",
			args: `{"tempHp": 5}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "hp": 8, "maxHp": 12, "tempHp": 5, "message": "tilda-brannock: temp HP 0 -> 5"}`,
					diff: []string{"-| **Hit Points** | 8/12 |", "+| **Hit Points** | 8/12 (temp 5) |"},
				},
				"frontmatter": {
					json: `{"success": true, "hp": 8, "maxHp": 12, "tempHp": 5}`,
					diff: []string{"+temp_hp: 5"},
				},
			},
		},
		{
			name: "temporary hit points are set before the damage",
			tool: "update_character",
			args: `{"damage": 7, "temp_hp": 5}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "hp": 6, "maxHp": 12, "message": "tilda-brannock: temp HP 0 -> 5, 7 damage: temp HP 5 -> 0, HP 8 -> 6"}`,
					diff: []string{"-| **Hit Points** | 8/12 |", "+| **Hit Points** | 6/12 |"},
				},
				"frontmatter": {
					json: `{"success": true, "hp": 6, "maxHp": 12}`,
					diff: []string{"-hp: 8", "+hp: 6", "+temp_hp: 0"},
				},
			},
		},
		{
			name: "add to an item and add a new one",
			tool: "add_inventory",
			args: `{"items": [{"name": "Healing potion", "quantity": 2}, {"name": "Rope", "description": "50 feet"}]}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "character": "tilda-brannock", "changes": [
						{"name": "healing potions", "slug": "healing-potions", "from": 3, "to": 5},
						{"name": "Rope", "slug": "rope", "from": 0, "to": 1}]}`,
					diff: []string{"-- 3 healing potions", "+- 5 healing potions", "+- Rope — 50 feet"},
				},
				"frontmatter": {
					json: `{"success": true, "character": "brother-oswin", "changes": [
						{"name": "Healing potion", "slug": "healing-potion", "from": 3, "to": 5},
						{"name": "Rope", "slug": "rope", "from": 0, "to": 1}]}`,
					diff: []string{
						"-  - {name: Healing potion, quantity: 3, note: smells of mint}",
						"+  - {name: Healing potion, quantity: 5, note: smells of mint}",
						"+  - {name: Rope, quantity: 1, note: 50 feet}",
					},
				},
			},
		},
		{
			name: "use items up",
			tool: "update_inventory",
			args: `{"updates": [{"slug": "healing-potion", "quantityChange": -1}, {"slug": "torch", "quantityChange": -1}]}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "character": "tilda-brannock", "changes": [
						{"name": "healing potions", "slug": "healing-potions", "from": 3, "to": 2},
						{"name": "torch", "slug": "torch", "from": 1, "to": 0}]}`,
					diff: []string{"-- 3 healing potions", "-- a torch", "+- 2 healing potions"},
				},
				"frontmatter": {
					json: `{"success": true, "character": "brother-oswin", "changes": [
						{"name": "Healing potion", "slug": "healing-potion", "from": 3, "to": 2},
						{"name": "Torch", "slug": "torch", "from": 1, "to": 0}]}`,
					diff: []string{
						"-  - {name: Healing potion, quantity: 3, note: smells of mint}",
						"-  - {name: Torch, quantity: 1}",
						"+  - {name: Healing potion, quantity: 2, note: smells of mint}",
					},
				},
			},
		},
		{
			name: "gain items by a positive change",
			tool: "update_inventory",
			args: `{"updates": [{"slug": "dagger", "quantityChange": 1}]}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "changes": [{"name": "daggers", "slug": "daggers", "from": 2, "to": 3}]}`,
					diff: []string{"-- Two daggers", "+- 3 daggers"},
				},
				"frontmatter": {
					json: `{"success": true, "changes": [{"name": "Daggers", "slug": "daggers", "from": 2, "to": 3}]}`,
					diff: []string{"-  - {name: Daggers, quantity: 2}", "+  - {name: Daggers, quantity: 3}"},
				},
			},
		},
		{
			name: "read the stats",
			tool: "get_character_stats",
			args: `{}`,
			want: map[string]outcome{
				"tables": {
					json: `{"success": true, "name": "tilda-brannock", "hp": 8, "maxHp": 12, "level": 1,
						"stats": {"str": 8, "dex": 16, "con": 12, "int": 10, "wis": 14, "cha": 13},
						"inventory": [
							{"name": "daggers", "slug": "daggers", "quantity": 2, "section": "Worn/Carried"},
							{"name": "Leather armor", "slug": "leather-armor", "quantity": 1, "section": "Worn/Carried"},
							{"name": "Burglar's pack", "slug": "burglars-pack", "quantity": 1, "section": "Pack Contents",
								"note": "backpack, bag of 1,000 ball bearings, 10 ft string"},
							{"name": "healing potions", "slug": "healing-potions", "quantity": 3, "section": "Pack Contents"},
							{"name": "torch", "slug": "torch", "quantity": 1, "section": "Pack Contents"}],
						"currency": {"gp": 15, "sp": 3}}`,
				},
				"frontmatter": {
					json: `{"success": true, "name": "brother-oswin", "hp": 8, "maxHp": 12, "level": 1,
						"stats": {"str": 8, "dex": 16, "con": 12, "int": 10, "wis": 14, "cha": 13},
						"inventory": [
							{"name": "Daggers", "slug": "daggers", "quantity": 2},
							{"name": "Healing potion", "slug": "healing-potion", "quantity": 3, "note": "smells of mint"},
							{"name": "Torch", "slug": "torch", "quantity": 1}],
						"currency": {"gp": 15, "sp": 3}}`,
				},
			},
		},
		{
			name: "no arguments at all",
			tool: "get_character_stats",
			args: ``,
			want: map[string]outcome{
				"tables":      {json: `{"success": true, "hp": 8}`},
				"frontmatter": {json: `{"success": true, "hp": 8}`},
			},
		},
	}
	for _, l := range layouts {
		for _, tt := range tests {
			t.Run(l.name+"/"+tt.name, func(t *testing.T) {
				c := newCampaign(t, map[string]string{l.character: l.text})
				b := tools.New(c, dice.Seeded(1))
				got, err := call(t, b, tt.tool, tt.args)
				if err != nil {
					t.Fatalf("Call(%s, %s) = %v, want success", tt.tool, tt.args, err)
				}
				want := tt.want[l.name]
				checkFields(t, got, want.json)
				if msg, _ := got["message"].(string); msg == "" && tt.tool != "get_character_stats" {
					t.Errorf("Call(%s, %s) has no message for the player to see", tt.tool, tt.args)
				}
				after := readFile(t, c.SheetPath(l.character))
				if diff := cmp.Diff(want.diff, lineDiff(l.text, after)); diff != "" {
					t.Errorf("Call(%s, %s): sheet lines changed (-want +got):\n%s\nsheet now:\n%s", tt.tool, tt.args, diff, after)
				}
				// What was written reads back as the result says.
				stats, err := call(t, b, "get_character_stats", `{}`)
				if err != nil {
					t.Fatalf("get_character_stats after %s: %v", tt.tool, err)
				}
				for _, k := range []string{"hp", "maxHp", "tempHp", "level", "stats", "inventory", "currency"} {
					if v, ok := got[k]; ok {
						if diff := cmp.Diff(v, stats[k]); diff != "" {
							t.Errorf("after %s, get_character_stats %q differs from the result (-result +read):\n%s", tt.tool, k, diff)
						}
					}
				}
			})
		}
	}
}

func TestCallFailsLeavesSheet(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args string
		want error // nil: any error
	}{
		{"unknown item after a good one", "update_inventory",
			`{"updates": [{"slug": "healing-potion", "quantityChange": -1}, {"slug": "lute", "quantityChange": -1}]}`,
			sheet.ErrUnknownItem},
		{"below zero after a good one", "update_inventory",
			`{"updates": [{"slug": "healing-potion", "quantityChange": -1}, {"slug": "torch", "quantityChange": -2}]}`,
			sheet.ErrBelowZero},
		{"no updates", "update_inventory", `{"updates": []}`, tools.ErrArguments},
		{"hp above max", "update_character", `{"hp": 13}`, sheet.ErrRange},
		{"hp above a new max", "update_character", `{"maxHp": 10, "hp": 11}`, sheet.ErrRange},
		{"level out of range after good hp", "update_character", `{"hp": 5, "level": 21}`, sheet.ErrRange},
		{"bad ability after good hp", "update_character", `{"hp": 5, "stats": {"str": 10, "luck": 3}}`, nil},
		{"ability score 0", "update_character", `{"hp": 5, "stats": {"str": 0}}`, sheet.ErrRange},
		{"negative damage", "update_character", `{"damage": -3}`, sheet.ErrRange},
		{"nothing to change", "update_character", `{}`, tools.ErrArguments},
		{"unknown field", "update_character", `{"hp": 5, "mana": 3}`, tools.ErrArguments},
		{"unknown field in an update", "update_inventory",
			`{"updates": [{"slug": "torch", "quantityChange": -1, "reason": "lit"}]}`, tools.ErrArguments},
		{"hp as a string", "update_character", `{"hp": "5"}`, tools.ErrArguments},
		{"malformed JSON", "update_character", `{"hp": 5`, tools.ErrArguments},
		{"trailing garbage", "update_character", `{"hp": 5}}`, tools.ErrArguments},
		{"two objects", "update_inventory",
			`{"updates": [{"slug": "torch", "quantityChange": -1}]} {"updates": []}`, tools.ErrArguments},
		{"arguments not an object", "add_inventory", `["torch"]`, tools.ErrArguments},
		{"nameless item after a good one", "add_inventory",
			`{"items": [{"name": "Rope"}, {"name": " "}]}`, tools.ErrArguments},
		{"negative quantity after a good one", "add_inventory",
			`{"items": [{"name": "Rope"}, {"name": "Chalk", "quantity": -2}]}`, tools.ErrArguments},
		{"no items", "add_inventory", `{"items": []}`, tools.ErrArguments},
		{"quantity 0", "add_inventory", `{"items": [{"name": "Rope", "quantity": 0}]}`, tools.ErrArguments},
		{"no quantityChange", "update_inventory", `{"updates": [{"slug": "torch"}]}`, tools.ErrArguments},
		{"quantityChange 0", "update_inventory", `{"updates": [{"slug": "torch", "quantityChange": 0}]}`, tools.ErrArguments},
		{"unknown tool", "cast_spell", `{"spell": "fireball"}`, tools.ErrUnknownTool},
		{"unknown character", "update_character", `{"character": "corwin-voss", "hp": 5}`, campaigns.ErrNoSheet},
		{"character outside the party", "update_character", `{"character": "../overview", "hp": 5}`, nil},
		{"bad dice", "roll_dice", `{"dice": "1d", "reason": "nothing"}`, nil},
		{"no dice", "roll_dice", `{"reason": "nothing"}`, tools.ErrArguments},
	}
	for _, l := range layouts {
		for _, tt := range tests {
			t.Run(l.name+"/"+tt.name, func(t *testing.T) {
				c := newCampaign(t, map[string]string{l.character: l.text})
				b := tools.New(c, dice.Seeded(1))
				got, err := b.Call(context.Background(), tt.tool, json.RawMessage(tt.args))
				if err == nil {
					t.Fatalf("Call(%s, %s) = %v, want an error", tt.tool, tt.args, got)
				}
				if got != nil {
					// Not even a nil pointer: callers test the result for nil.
					t.Errorf("Call(%s, %s) = %#v with its error, want a nil result", tt.tool, tt.args, got)
				}
				if tt.want != nil && !errors.Is(err, tt.want) {
					t.Errorf("Call(%s, %s) = %v, want %v", tt.tool, tt.args, err, tt.want)
				}
				if after := readFile(t, c.SheetPath(l.character)); after != l.text {
					t.Errorf("Call(%s, %s) failed but changed the sheet:\n%s", tt.tool, tt.args, strings.Join(lineDiff(l.text, after), "\n"))
				}
			})
		}
	}
}

func TestWhichCharacter(t *testing.T) {
	sheets := map[string]string{"tilda-brannock": tablesSheet, "brother-oswin": frontSheet}
	tests := []struct {
		name    string
		def     string // Box.Character
		args    string
		wantErr error
		want    string // the character changed
	}{
		{"none named", "", `{"damage": 1}`, tools.ErrWhich, ""},
		{"named in the call", "", `{"character": "brother-oswin", "damage": 1}`, nil, "brother-oswin"},
		{"named in words", "", `{"character": "Tilda Brannock", "damage": 1}`, nil, "tilda-brannock"},
		{"the box's default", "tilda-brannock", `{"damage": 1}`, nil, "tilda-brannock"},
		{"the call over the default", "tilda-brannock", `{"character": "brother-oswin", "damage": 1}`, nil, "brother-oswin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCampaign(t, sheets)
			b := tools.New(c, dice.Seeded(1))
			b.Character = tt.def
			got, err := call(t, b, "update_character", tt.args)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Call(update_character, %s) = %v, want %v", tt.args, err, tt.wantErr)
			}
			if err == nil && got["name"] != tt.want {
				t.Errorf("Call(update_character, %s) changed %v, want %s", tt.args, got["name"], tt.want)
			}
			for name, text := range sheets {
				changed := readFile(t, c.SheetPath(name)) != text
				if changed != (name == tt.want) {
					t.Errorf("Call(update_character, %s): sheet %s changed = %v, want %v", tt.args, name, changed, !changed)
				}
			}
		})
	}
}

// faces is a dice source that rolls the given faces, in turn.
type faces []int

func (f *faces) IntN(n int) int {
	v := (*f)[0]
	*f = (*f)[1:]
	if v < 1 || v > n {
		panic(fmt.Sprintf("face %d of a d%d", v, n))
	}
	return v - 1
}

func TestRollDice(t *testing.T) {
	tests := []struct {
		name  string
		faces []int
		args  string
		want  string // fields of the result, as JSON
	}{
		{"no dc", []int{8}, `{"dice": "1d20+5", "reason": "Perception check"}`,
			`{"dice": "1d20+5", "reason": "Perception check", "rolls": [8], "modifier": 5, "total": 13,
				"roll": "1d20+5 = [8]+5 = 13", "description": "Rolled 1d20+5 for Perception check: [8]+5 = 13"}`},
		{"success", []int{10}, `{"dice": "1d20+5", "reason": "Athletics", "dc": 15}`,
			`{"total": 15, "dc": 15, "outcome": "success"}`},
		{"failure", []int{9}, `{"dice": "1d20+5", "reason": "Athletics", "dc": 15}`,
			`{"total": 14, "dc": 15, "outcome": "failure"}`},
		{"natural 20 beats any dc", []int{20}, `{"dice": "1d20+0", "reason": "Stealth", "dc": 30}`,
			`{"total": 20, "outcome": "critical_success"}`},
		{"natural 1 fails any dc", []int{1}, `{"dice": "1d20+12", "reason": "Stealth", "dc": 5}`,
			`{"total": 13, "outcome": "critical_failure"}`},
		{"advantage keeps the higher", []int{4, 17}, `{"dice": "2d20kh1+3", "reason": "Attack", "dc": 12}`,
			`{"rolls": [17], "modifier": 3, "total": 20, "outcome": "success"}`},
		{"damage", []int{3, 6}, `{"dice": "2d6 + 1", "reason": "Shortsword"}`,
			`{"dice": "2d6+1", "rolls": [3, 6], "modifier": 1, "total": 10, "roll": "2d6+1 = [3, 6]+1 = 10"}`},
		{"negative modifier", []int{2}, `{"dice": "1d4-1", "reason": "Dagger"}`,
			`{"rolls": [2], "modifier": -1, "total": 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCampaign(t, map[string]string{"tilda-brannock": tablesSheet})
			src := faces(tt.faces)
			got, err := call(t, tools.New(c, &src), "roll_dice", tt.args)
			if err != nil {
				t.Fatalf("Call(roll_dice, %s) = %v", tt.args, err)
			}
			checkFields(t, got, tt.want)
			if _, ok := got["dc"]; !ok && got["outcome"] != nil {
				t.Errorf("Call(roll_dice, %s) has outcome %v without a dc", tt.args, got["outcome"])
			}
			if len(src) != 0 {
				t.Errorf("Call(roll_dice, %s) left faces %v unrolled", tt.args, []int(src))
			}
		})
	}
}

func TestRollDiceSeeded(t *testing.T) {
	c := newCampaign(t, map[string]string{"tilda-brannock": tablesSheet})
	roll := func(seed uint64) []string {
		b := tools.New(c, dice.Seeded(seed))
		var out []string
		for range 5 {
			got, err := call(t, b, "roll_dice", `{"dice": "1d20+5", "reason": "Perception check", "dc": 15}`)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(got["roll"], " ", got["outcome"]))
		}
		return out
	}
	first := roll(42)
	if diff := cmp.Diff(first, roll(42)); diff != "" {
		t.Errorf("two boxes seeded 42 rolled differently (-first +second):\n%s", diff)
	}
	re := regexp.MustCompile(`^1d20\+5 = \[(\d+)\]\+5 = (\d+) (success|failure|critical_success|critical_failure)$`)
	for _, r := range first {
		m := re.FindStringSubmatch(r)
		if m == nil {
			t.Errorf("roll %q, want the shape %q", r, re)
			continue
		}
		face, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		want := "failure"
		switch {
		case face == 20:
			want = "critical_success"
		case face == 1:
			want = "critical_failure"
		case total >= 15:
			want = "success"
		}
		if face < 1 || face > 20 || total != face+5 || m[3] != want {
			t.Errorf("roll %q, want a face 1 to 20, a total of face+5 and outcome %s", r, want)
		}
	}
}

func TestTools(t *testing.T) {
	want := []string{"roll_dice", "add_inventory", "update_inventory", "update_character", "get_character_stats"}
	// The arguments a model is told about: what it is not told, it does
	// not use.
	wantProps := map[string][]string{
		"roll_dice":           {"dc", "dice", "reason"},
		"add_inventory":       {"character", "items"},
		"update_inventory":    {"character", "updates"},
		"update_character":    {"character", "damage", "healing", "hp", "level", "maxHp", "stats", "tempHp"},
		"get_character_stats": {"character"},
	}
	var got []string
	for _, tool := range tools.Tools() {
		got = append(got, tool.Name)
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		if !json.Valid(tool.Parameters) {
			t.Errorf("tool %s: parameters are not JSON: %s", tool.Name, tool.Parameters)
			continue
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
			t.Errorf("tool %s: parameters: %v", tool.Name, err)
			continue
		}
		if schema.Type != "object" {
			t.Errorf("tool %s: parameters type = %q, want object", tool.Name, schema.Type)
		}
		props := slices.Sorted(maps.Keys(schema.Properties))
		if diff := cmp.Diff(wantProps[tool.Name], props); diff != "" {
			t.Errorf("tool %s: parameters properties (-want +got):\n%s", tool.Name, diff)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("tool %s: required %q is not a property", tool.Name, r)
			}
		}
		// Every argument the schema offers is one the tool accepts: an
		// argument it refuses as unknown would be a trap for the model.
		for p := range schema.Properties {
			args := fmt.Sprintf(`{%q: null}`, p)
			_, err := tools.New(newCampaign(t, map[string]string{"tilda-brannock": tablesSheet}), dice.Seeded(1)).
				Call(context.Background(), tool.Name, json.RawMessage(args))
			if err != nil && strings.Contains(err.Error(), "unknown field") {
				t.Errorf("tool %s offers %q but refuses it: %v", tool.Name, p, err)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tools() names (-want +got):\n%s", diff)
	}
}

// TestConcurrentCalls checks that calls on one box do not lose each
// other's changes.
func TestConcurrentCalls(t *testing.T) {
	c := newCampaign(t, map[string]string{"brother-oswin": frontSheet})
	b := tools.New(c, dice.Seeded(1))
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, 2*n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = b.Call(context.Background(), "add_inventory", json.RawMessage(`{"items": [{"name": "Torch"}]}`))
		})
		wg.Go(func() {
			_, errs[n+i] = b.Call(context.Background(), "roll_dice", json.RawMessage(`{"dice": "1d20", "reason": "luck"}`))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got, err := call(t, b, "get_character_stats", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"inventory": [
		{"name": "Daggers", "slug": "daggers", "quantity": 2},
		{"name": "Healing potion", "slug": "healing-potion", "quantity": 3, "note": "smells of mint"},
		{"name": "Torch", "slug": "torch", "quantity": 9}]}`
	checkFields(t, got, want)
}

// A player's box changes only the sheet of the character it plays; it
// still reads the others'.
func TestOwnCharacter(t *testing.T) {
	c := newCampaign(t, map[string]string{"tilda-brannock": tablesSheet, "brother-oswin": frontSheet})
	b := tools.New(c, dice.Seeded(1))
	b.Own, b.Character = "tilda-brannock", "tilda-brannock"
	before := readFile(t, c.SheetPath("brother-oswin"))
	_, err := call(t, b, "update_character", `{"character": "brother-oswin", "damage": 8}`)
	if !errors.Is(err, tools.ErrNotYours) {
		t.Errorf("changing another's sheet: %v", err)
	}
	if after := readFile(t, c.SheetPath("brother-oswin")); after != before {
		t.Errorf("the other sheet changed:\n%s", after)
	}
	if _, err := call(t, b, "get_character_stats", `{"character": "brother-oswin"}`); err != nil {
		t.Errorf("reading another's sheet: %v", err)
	}
	if _, err := call(t, b, "update_character", `{"damage": 1}`); err != nil {
		t.Errorf("changing its own sheet: %v", err)
	}
}

// TestDecodeSaysTheArgument: a wrong argument is told in the arguments'
// words, not Go's: it said "cannot unmarshal string into Go struct field
// UpdateCharacterArgs.hp of type int".
func TestDecodeSaysTheArgument(t *testing.T) {
	for _, tt := range []struct {
		args string
		dst  any
		want string
	}{
		{`{"hp": "eight"}`, &tools.UpdateCharacterArgs{}, `bad arguments: hp: want a whole number, got "eight"`},
		{`{"dice": 20}`, &tools.RollArgs{}, `bad arguments: dice: want a string, got 20`},
		{`{"notation": "1d20"}`, &tools.RollArgs{}, `bad arguments: unknown field "notation" (the arguments: dice, reason, dc, character)`},
		{`{"hp": "` + strings.Repeat("é", 50) + `"}`, &tools.UpdateCharacterArgs{}, `bad arguments: hp: want a whole number, got "` + strings.Repeat("é", 36) + `...`},
		{``, &tools.RollArgs{}, ``},
	} {
		err := toolargs.Decode(json.RawMessage(tt.args), tt.dst)
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, tools.ErrArguments) {
				t.Errorf("Decode(%s) = %v, not ErrArguments", tt.args, err)
			}
		}
		if got != tt.want {
			t.Errorf("Decode(%s) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// The journal's line of a call (parley log) held update_character's whole
// answer, the sheet with its items and money as JSON; Journaled keeps
// what the call did or read.
func TestJournaled(t *testing.T) {
	sheetAnswer := `{"success":true,"message":"tilda: HP 12 -> 7","name":"tilda","hp":7,"maxHp":12,"tempHp":2,"level":3,"stats":{"str":15},"inventory":[{"name":"Rope","slug":"rope","quantity":1}],"currency":{"gp":12}}`
	read := strings.Replace(sheetAnswer, `"message":"tilda: HP 12 -> 7",`, "", 1)
	tests := []struct {
		tool, result, want string
	}{
		{"update_character", sheetAnswer, `{"success":true,"message":"tilda: HP 12 -> 7"}`},
		{"get_character_stats", read, `{"success":true,"message":"tilda: read: HP 7 of 12, temp HP 2, level 3"}`},
		{"update_character", `{"success":true,"message":"tilda: HP 8 -> 3 (of 12)"}`, `{"success":true,"message":"tilda: HP 8 -> 3 (of 12)"}`},
		{"roll_dice", `{"dice":"1d20","total":4}`, `{"dice":"1d20","total":4}`},
		{"update_inventory", `{"success":true,"message":"tilda: Rope 1 -> 0","changes":[]}`, `{"success":true,"message":"tilda: Rope 1 -> 0","changes":[]}`},
		{"update_character", `not json`, `not json`},
	}
	for _, tt := range tests {
		if got := tools.Journaled(tt.tool, tt.result); got != tt.want {
			t.Errorf("Journaled(%s, %s) = %s, want %s", tt.tool, tt.result, got, tt.want)
		}
	}
}
