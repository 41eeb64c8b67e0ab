package sheet

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseItemText(t *testing.T) {
	type got struct {
		Name, Note string
		Qty        int
		Count      countKind
	}
	tests := []struct {
		text string
		want got
	}{
		{"Leather armor", got{"Leather armor", "", 1, noCount}},
		{"Two daggers", got{"daggers", "", 2, leadCount}},
		{"20 crossbow bolts", got{"crossbow bolts", "", 20, leadCount}},
		{"a torch", got{"torch", "", 1, leadCount}},
		{"An ink pen", got{"ink pen", "", 1, leadCount}},
		{"twenty arrows", got{"arrows", "", 20, leadCount}},
		{"1,000 ball bearings", got{"ball bearings", "", 1000, leadCount}},
		{"2x Dagger", got{"Dagger", "", 2, leadCount}},
		{"Torch (x3)", got{"Torch", "", 3, trailCount}},
		{"Torch x3", got{"Torch", "", 3, trailCount}},
		{"Torch ×3", got{"Torch", "", 3, trailCount}},
		{"Torch (x3) (for the sewers)", got{"Torch", "for the sewers", 3, trailCount}},
		{"Torch (lit) (X4)", got{"Torch", "lit", 4, trailCount}},
		{"Rope — 50 ft", got{"Rope", "50 ft", 1, noCount}},
		{"50 ft hempen rope", got{"50 ft hempen rope", "", 1, noCount}},
		{"10-foot pole", got{"10-foot pole", "", 1, noCount}},
		{"Burglar's pack (backpack, bag of 1,000 ball bearings, 10 ft of string)", got{"Burglar's pack", "backpack, bag of 1,000 ball bearings, 10 ft of string", 1, noCount}},
		{"One trinket: A small vial of grave dust", got{"trinket", "A small vial of grave dust", 1, leadCount}},
		{"Potion of healing - greater", got{"Potion of healing", "greater", 1, noCount}},
		{"Holy symbol (worn - silver) (spare)", got{"Holy symbol", "(worn - silver) (spare)", 1, noCount}},
		{"**Longsword** +1", got{"**Longsword** +1", "", 1, noCount}},
		{"Two", got{"Two", "", 1, noCount}},
		{"(x3)", got{"(x3)", "", 1, noCount}},
		{"  ", got{"", "", 1, noCount}},
		{"12345678901 arrows", got{"12345678901 arrows", "", 1, noCount}},
		{"Rations (5)", got{"Rations", "", 5, trailCount}},
		{"Rations ( 5 ) (dried)", got{"Rations", "dried", 5, trailCount}},
		{"Rations (5) - dried", got{"Rations", "dried", 5, trailCount}},
		{"Rations (5 days)", got{"Rations", "5 days", 1, noCount}},
		{"Holy symbol (worn) (5)", got{"Holy symbol", "(worn) (5)", 1, noCount}},
		{"Rations (1234567890)", got{"Rations", "1234567890", 1, noCount}},
		{"(5)", got{"(5)", "", 1, noCount}},
		{"Explorer's pack, containing:", got{"Explorer's pack", "", 1, noCount}},
		{"Two sacks containing", got{"sacks", "", 2, leadCount}},
		{"Chest contains:", got{"Chest", "", 1, noCount}},
		{"Satchel with:", got{"Satchel", "", 1, noCount}},
		{"Staff with", got{"Staff with", "", 1, noCount}},
		{"Bag of Holding", got{"Bag of Holding", "", 1, noCount}},
		{"Containing", got{"Containing", "", 1, noCount}},
		{"Pack, containing (x2):", got{"Pack", "", 2, trailCount}},
	}
	for _, tt := range tests {
		tx := parseItemText(tt.text)
		g := got{tt.text[tx.nameStart:tx.nameEnd], tx.note, tx.qty, tx.count}
		if diff := cmp.Diff(tt.want, g); diff != "" {
			t.Errorf("parseItemText(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestItemQuantityEdits(t *testing.T) {
	tests := []struct {
		text string
		q    int
		want string
	}{
		{"Two daggers", 1, "1 dagger"},
		{"Two daggers", 3, "3 daggers"},
		{"1 dagger", 2, "2 daggers"},
		{"20 crossbow bolts", 19, "19 crossbow bolts"},
		{"a torch", 2, "2 torches"},
		{"A flask of oil", 3, "3 flasks of oil"},
		{"5 sticks of incense", 1, "1 stick of incense"},
		{"1 bag of 1,000 ball bearings", 2, "2 bags of 1,000 ball bearings"},
		{"3 berries", 1, "1 berry"},
		{"1 berry", 4, "4 berries"},
		{"Two handaxes", 1, "1 handaxe"},
		{"2 boxes", 1, "1 boxe"},
		{"2 glasses", 1, "1 glass"},
		{"1,000 ball bearings", 1200, "1,200 ball bearings"},
		{"2x Daggers", 1, "1x Dagger"},
		{"Leather armor", 2, "Leather armor (x2)"},
		{"Playing cards (marked - old habit)", 2, "Playing cards (x2) (marked - old habit)"},
		{"Rope — 50 ft", 3, "Rope (x3) — 50 ft"},
		{"Torch (x3)", 5, "Torch (x5)"},
		{"Torch (x3)", 1, "Torch (x1)"},
		{"Torch x3", 2, "Torch x2"},
		{"Rations (5)", 4, "Rations (4)"},
		{"Rations (5) — dried", 12, "Rations (12) — dried"},
		{"TWO DAGGERS", 1, "1 DAGGER"},
		{"Explorer's pack, containing:", 2, "Explorer's pack, containing (x2):"},
		{"Two sacks, containing:", 1, "1 sack, containing:"},
	}
	for _, tt := range tests {
		tx := parseItemText(tt.text)
		got := string(splice([]byte(tt.text), tx.qtyEdits(tt.text, tt.q)))
		if got != tt.want {
			t.Errorf("%q set to %d = %q, want %q", tt.text, tt.q, got, tt.want)
		}
		if a, b := slugKey(Slug(tt.text)), slugKey(Slug(got)); a != b {
			t.Errorf("%q set to %d = %q: slug key %q, was %q", tt.text, tt.q, got, b, a)
		}
		if g := parseItemText(got); g.qty != tt.q {
			t.Errorf("%q set to %d = %q, which reads as %d", tt.text, tt.q, got, g.qty)
		}
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ name, want string }{
		{"Two daggers", "daggers"},
		{"20 crossbow bolts", "crossbow-bolts"},
		{"Burglar's pack (backpack, bell)", "burglars-pack"},
		{"Thieves’ tools", "thieves-tools"},
		{"crossbow-bolts", "crossbow-bolts"},
		{"  Potion   of Healing!! ", "potion-of-healing"},
		{"Épée", "épée"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Slug(tt.name); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	same := [][2]string{
		{"dagger", "Two daggers"}, {"crossbow-bolts", "20 crossbow bolts"}, {"crossbow bolt", "20 crossbow bolts"},
		{"torch", "torches"}, {"handaxe", "Two handaxes"}, {"berry", "berries"}, {"stick of incense", "5 sticks of incense"},
	}
	for _, s := range same {
		if a, b := slugKey(Slug(s[0])), slugKey(Slug(s[1])); a != b {
			t.Errorf("%q and %q: keys %q and %q, want the same", s[0], s[1], a, b)
		}
	}
}

func TestModifier(t *testing.T) {
	for score, want := range map[int]int{1: -5, 3: -4, 7: -2, 8: -1, 9: -1, 10: 0, 11: 0, 12: 1, 15: 2, 20: 5, 30: 10} {
		if got := Modifier(score); got != want {
			t.Errorf("Modifier(%d) = %d, want %d", score, got, want)
		}
	}
}

// TestNotItems checks that bullets under an Equipment section that are
// notes about the gear (a Limitations heading, a "**Notes:**" label) are
// not read as items, and that items after them are.
func TestNotItems(t *testing.T) {
	text := "# Kit\n\n| **Hit Points** | 9/9 |\n\n## Equipment\n\n- Longsword\n- Shield\n\n" +
		"### Limitations\n\n- Cannot wear heavy armor\n- No metal near the shrine\n\n" +
		"### Pack\n\n- Rope\n\n**Notes:**\n- The rope is frayed\n\n**Worn:**\n- Cloak\n"
	d, err := Parse("party/kit.md", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range d.Sheet.Items {
		got = append(got, it.Name)
	}
	want := []string{"Longsword", "Shield", "Rope", "Cloak"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("items = %q, want %q", got, want)
	}
}
