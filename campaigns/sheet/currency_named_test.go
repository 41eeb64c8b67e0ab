package sheet_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// TestNamedCurrencies checks that money in a setting's own currencies is
// read as named amounts and changed where it is written, in both
// layouts, and that prose with a number is still not money.
func TestNamedCurrencies(t *testing.T) {
	tables := "# Vex\n\n| **Hit Points** | 9/9 |\n\n## Equipment\n- Blaster\n\n### Currency\n250 credits, 3 trade tokens\n12 marks (sewn into the coat)\n"
	d, err := sheet.Parse("party/vex.md", []byte(tables))
	if err != nil {
		t.Fatal(err)
	}
	want := []sheet.Coin{{Denom: "credits", Amount: 250}, {Denom: "trade tokens", Amount: 3}, {Denom: "marks", Amount: 12}}
	if diff := cmp.Diff(want, d.Currency); diff != "" || len(d.Unread) > 0 {
		t.Fatalf("currency (-want +got):\n%s\nunread: %v", diff, d.Unread)
	}
	if err := d.SetCurrency("credits", 240); err != nil {
		t.Fatal(err)
	}
	if err := d.SetCurrency(d.Denom("trade-tokens"), 5); err != nil {
		t.Fatal(err)
	}
	if got := string(d.Bytes()); !strings.Contains(got, "240 credits, 5 trade tokens\n12 marks (sewn into the coat)\n") {
		t.Errorf("the sheet after the change:\n%s", got)
	}
	if err := d.SetCurrency("doubloons", 1); err == nil {
		t.Error("a currency the sheet does not hold was added")
	}

	front := "---\nhp: 5\nmax_hp: 5\ncurrency: {credits: 100, gp: 2}\n---\n# Vex\n"
	f, err := sheet.Parse("party/vex.md", []byte(front))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]sheet.Coin{{Denom: "credits", Amount: 100}, {Denom: "gp", Amount: 2}}, f.Currency); diff != "" {
		t.Errorf("frontmatter currency (-want +got):\n%s", diff)
	}
	if err := f.SetCurrency("credits", 90); err != nil || !strings.Contains(string(f.Bytes()), "credits: 90") {
		t.Errorf("SetCurrency(credits) = %v:\n%s", err, f.Bytes())
	}

	prose := "# Vex\n\n| **Hit Points** | 9/9 |\n\n### Currency\nabout 40 in gems\n"
	p, err := sheet.Parse("party/vex.md", []byte(prose))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Currency) != 0 || len(p.Unread) != 1 {
		t.Errorf("prose with a number: currency %v, unread %v; want it not read as money", p.Currency, p.Unread)
	}
}
