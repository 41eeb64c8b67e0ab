package sheet_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// item is an Item without its line, for comparing.
type item struct {
	Name     string
	Quantity int
	Section  string
	Note     string
}

// TestConformance reads the four sheets of the-rot-beneath, written by
// people without parley, and checks what they say.
func TestConformance(t *testing.T) {
	fixtures(t)
	const (
		worn = "Worn/Carried"
		pack = "Pack Contents"
	)
	tests := []struct {
		name          string
		hp, max, lvl  int
		abilities     sheet.Abilities
		currency      []sheet.Coin
		items         []item
		firstItemLine int
	}{
		{
			name: "corwin-voss", hp: 8, max: 8, lvl: 1,
			abilities: sheet.Abilities{7, 14, 11, 10, 14, 13},
			currency:  []sheet.Coin{{Denom: "gp", Amount: 15}},
			items: []item{
				{"Leather armor", 1, worn, ""},
				{"Shortsword", 1, worn, ""},
				{"daggers", 2, worn, ""},
				{"Thieves' tools", 1, worn, ""},
				{"Burglar's pack", 1, pack, "backpack, bag of 1,000 ball bearings, 10 ft of string, bell, 5 candles, crowbar, hammer, 10 pitons, hooded lantern, 2 flasks of oil, 5 days rations, tinderbox, waterskin, 50 ft hempen rope"},
				{"Dark common clothes with hood", 1, pack, ""},
				{"Playing cards", 1, pack, "marked - old habit"},
			},
			firstItemLine: 86,
		},
		{
			name: "gideon-harrowmoor", hp: 10, max: 10, lvl: 1,
			abilities: sheet.Abilities{8, 13, 14, 13, 10, 17},
			currency:  []sheet.Coin{{Denom: "gp", Amount: 5}},
			items: []item{
				{"Leather armor", 1, worn, ""},
				{"Light crossbow", 1, worn, ""},
				{"crossbow bolts", 20, worn, ""},
				{"Arcane focus", 1, worn, "a tarnished silver ring that grows cold when his patron stirs"},
				{"daggers", 2, worn, ""},
				{"Scholar's pack", 1, pack, "backpack, book of lore, bottle of ink, ink pen, 10 sheets of parchment, little bag of sand, small knife"},
				{"Monster hunter's pack contents merged", 1, pack, "crowbar, hammer, 3 wooden stakes, holy symbol (from before he understood what he was dealing with), flask of oil, tinderbox, 3 torches"},
				{"Set of common clothes", 1, pack, "dark, practical"},
				{"trinket", 1, pack, "A small vial of grave dust that never settles"},
			},
			firstItemLine: 102,
		},
		{
			name: "seraphine-duskhollow", hp: 10, max: 10, lvl: 1,
			abilities: sheet.Abilities{10, 13, 15, 8, 16, 14},
			currency:  []sheet.Coin{{Denom: "gp", Amount: 15}},
			items: []item{
				{"Chain mail", 1, worn, "AC 16"},
				{"Shield", 1, worn, "+2 AC"},
				{"Mace", 1, worn, ""},
				{"Holy symbol of Kelemvor", 1, worn, "worn as amulet - skeletal arm holding scales"},
				{"Priest's pack", 1, pack, "backpack, blanket, 10 candles, tinderbox, alms box, 2 blocks of incense, censer, vestments, 2 days rations, waterskin"},
				{"Prayer book", 1, pack, "Kelemvor's rites for the dying and dead"},
				{"sticks of incense", 5, pack, ""},
				{"Set of common clothes", 1, pack, "grey and silver, Kelemvor's colors"},
				{"Small silver hand mirror", 1, pack, "for the Last Rites"},
			},
			firstItemLine: 115,
		},
		{
			name: "tilda-brannock", hp: 12, max: 12, lvl: 1,
			abilities: sheet.Abilities{15, 13, 14, 8, 12, 10},
			currency:  []sheet.Coin{{Denom: "gp", Amount: 10}},
			items: []item{
				{"Chain mail", 1, worn, ""},
				{"Shield", 1, worn, "bearing no insignia - she scraped off the Fist emblem"},
				{"Longsword", 1, worn, ""},
				{"handaxes", 2, worn, ""},
				{"Explorer's pack", 1, pack, "backpack, bedroll, mess kit, tinderbox, 10 torches, 10 days rations, waterskin, 50 ft hempen rope"},
				{"Rank insignia", 1, pack, "Flaming Fist corporal - kept in pack, not worn"},
				{"Playing card deck", 1, pack, "used for watch duty"},
				{"Trophy from first battle", 1, pack, "a cracked helmet from a gnoll raid"},
			},
			firstItemLine: 76,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(fixtureDir, tt.name+".md")
			d, err := sheet.Read(path)
			if err != nil {
				t.Fatalf("Read(%s) = %v", path, err)
			}
			if d.Name != tt.name || d.Layout != sheet.Tables {
				t.Errorf("Read(%s): Name, Layout = %q, %v; want %q, tables", path, d.Name, d.Layout, tt.name)
			}
			if d.HP != tt.hp || d.MaxHP != tt.max || d.Level != tt.lvl {
				t.Errorf("Read(%s): HP/MaxHP, Level = %d/%d, %d; want %d/%d, %d", path, d.HP, d.MaxHP, d.Level, tt.hp, tt.max, tt.lvl)
			}
			if d.Abilities != tt.abilities {
				t.Errorf("Read(%s).Abilities = %v, want %v", path, d.Abilities, tt.abilities)
			}
			if diff := cmp.Diff(tt.currency, d.Currency); diff != "" {
				t.Errorf("Read(%s).Currency (-want +got):\n%s", path, diff)
			}
			var got []item
			for _, it := range d.Items {
				got = append(got, item{it.Name, it.Quantity, it.Section, it.Note})
				if it.Slug != sheet.Slug(it.Name) {
					t.Errorf("item %q: Slug = %q, want Slug(Name) = %q", it.Name, it.Slug, sheet.Slug(it.Name))
				}
			}
			if diff := cmp.Diff(tt.items, got); diff != "" {
				t.Errorf("Read(%s).Items (-want +got):\n%s", path, diff)
			}
			if len(d.Items) > 0 && d.Items[0].Line != tt.firstItemLine {
				t.Errorf("Read(%s).Items[0].Line = %d, want %d", path, d.Items[0].Line, tt.firstItemLine)
			}
		})
	}
}

// TestConformanceUpdate changes a copy of each fixture sheet, saves it,
// and checks that exactly the changed lines differ.
func TestConformanceUpdate(t *testing.T) {
	fixtures(t)
	tests := []struct {
		name   string
		change func(*sheet.Doc) error
		want   []string
	}{
		{
			name: "corwin-voss",
			change: func(d *sheet.Doc) error {
				if _, _, err := d.Damage(5); err != nil {
					return err
				}
				_, err := d.ChangeItem("dagger", -1)
				return err
			},
			want: []string{
				"-| **Hit Points** | 8/8 |\n", "+| **Hit Points** | 3/8 |\n",
				"-- Two daggers\n", "+- 1 dagger\n",
			},
		},
		{
			name: "gideon-harrowmoor",
			change: func(d *sheet.Doc) error {
				if _, _, err := d.Damage(4); err != nil {
					return err
				}
				_, err := d.ChangeItem("crossbow bolt", -3)
				return err
			},
			want: []string{
				"-| **Hit Points** | 10/10 |\n", "+| **Hit Points** | 6/10 |\n",
				"-- 20 crossbow bolts\n", "+- 17 crossbow bolts\n",
			},
		},
		{
			name: "seraphine-duskhollow",
			change: func(d *sheet.Doc) error {
				if _, _, err := d.Damage(99); err != nil {
					return err
				}
				if _, err := d.ChangeItem("mace", 1); err != nil {
					return err
				}
				if _, err := d.AddItem("Potion of healing", 2, "2d4+2"); err != nil {
					return err
				}
				return d.SetCurrency("sp", 7)
			},
			want: []string{
				"-| **Hit Points** | 10/10 |\n", "+| **Hit Points** | 0/10 |\n",
				"-- Mace\n", "+- Mace (x2)\n",
				"+- 2 Potion of healing — 2d4+2\n",
				"-15 gp\n", "+15 gp, 7 sp\n",
			},
		},
		{
			name: "tilda-brannock",
			change: func(d *sheet.Doc) error {
				if _, _, err := d.Damage(3); err != nil {
					return err
				}
				if err := d.SetAbility("STR", 16); err != nil {
					return err
				}
				if err := d.SetLevel(2); err != nil {
					return err
				}
				if _, err := d.ChangeItem("explorers-pack", -1); err != nil {
					return err
				}
				return d.SetCurrency("gp", 8)
			},
			want: []string{
				"-| **Level** | 1 |\n", "+| **Level** | 2 |\n",
				"-| 15 | 13 | 14 | 8 | 12 | 10 |\n", "-| +2 | +1 | +2 | -1 | +1 | +0 |\n",
				"+| 16 | 13 | 14 | 8 | 12 | 10 |\n", "+| +3 | +1 | +2 | -1 | +1 | +0 |\n",
				"-| **Hit Points** | 12/12 |\n", "+| **Hit Points** | 9/12 |\n",
				"-- Explorer's pack (backpack, bedroll, mess kit, tinderbox, 10 torches, 10 days rations, waterskin, 50 ft hempen rope)\n",
				"-10 gp\n", "+8 gp\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := copyTo(t, filepath.Join(fixtureDir, tt.name+".md"), t.TempDir())
			before, _ := os.ReadFile(path)
			d, err := sheet.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.change(d); err != nil {
				t.Fatalf("change: %v", err)
			}
			if err := d.Save(); err != nil {
				t.Fatalf("Save() = %v", err)
			}
			after, _ := os.ReadFile(path)
			if diff := cmp.Diff(tt.want, lineDiff(string(before), string(after))); diff != "" {
				t.Errorf("changed lines (-want +got):\n%s", diff)
			}
			again, err := sheet.Read(path)
			if err != nil {
				t.Fatalf("Read after Save = %v", err)
			}
			if diff := cmp.Diff(d.Sheet, again.Sheet, cmpopts.EquateEmpty(), errText); diff != "" {
				t.Errorf("Read after Save (-doc +reread):\n%s", diff)
			}
			if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
				t.Errorf("a temporary file is left behind: %v", err)
			}
		})
	}
}
