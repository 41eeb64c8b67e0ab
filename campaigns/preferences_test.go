package campaigns

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePrefs(t *testing.T) {
	tests := []struct {
		name, text            string
		character, who, style string
	}{
		{"layout", "## Narrative Style\n\n**dialogue_format**: hybrid\n\n## Player Character\n\n**name**: Corwin Voss\n**file**: party/corwin-voss.md\n", "corwin-voss", "Corwin Voss", "hybrid"},
		{"name only", "## Player Character\n**name**: Tilda Brannock\n", "tilda-brannock", "Tilda Brannock", ""},
		{"file wins", "## Player Character\n**name**: Corwin\n**file**: party/corwin-voss.md\n", "corwin-voss", "Corwin", ""},
		{"empty values", "## Player Character\n\n**name**:\n**file**:\n", "", "", ""},
		{"bullets and quotes", "## Player Character\n- **name**: \"Seraphine Duskhollow\"\n## Style\n- **narrative_style**: cinematic\n", "seraphine-duskhollow", "Seraphine Duskhollow", "cinematic"},
		{"name elsewhere is not the character", "## NPC\n**name**: Aldric\n", "", "", ""},
		{"bad file name falls back to name", "## Player Character\n**name**: Corwin Voss\n**file**: ../../etc/Pass WD\n", "corwin-voss", "Corwin Voss", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ParsePrefs([]byte(tt.text))
			if p.Character != tt.character || p.Name != tt.who || p.Style != tt.style {
				t.Errorf("ParsePrefs = character %q, name %q, style %q; want %q, %q, %q", p.Character, p.Name, p.Style, tt.character, tt.who, tt.style)
			}
		})
	}
}

func TestFixturePrefs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", "campaigns", "the-rot-beneath", Preferences))
	if err != nil {
		t.Skipf("the fixture campaign is not beside the checkout (../shared): %v", err)
	}
	p := ParsePrefs(data)
	if p.Character != "corwin-voss" || p.Style != "hybrid" || p.Values["auto_save"] != "true" {
		t.Errorf("fixture preferences = %+v", p)
	}
}

func TestWritePrefs(t *testing.T) {
	ws := t.TempDir()
	c, err := New(ws, "the-hollow")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WritePrefs("corwin-voss", "", "cinematic"); err != nil {
		t.Fatal(err)
	}
	p, err := c.ReadPrefs()
	if err != nil {
		t.Fatal(err)
	}
	if p.Character != "corwin-voss" || p.Name != "Corwin Voss" || p.Style != "cinematic" || p.Values["auto_save"] != "true" {
		t.Errorf("after WritePrefs: %+v", p)
	}
	data, _ := os.ReadFile(c.Path(Preferences))
	if strings.Count(string(data), "**name**") != 1 || !strings.Contains(string(data), "> How this table likes to play") {
		t.Errorf("WritePrefs did not keep the file's own lines:\n%s", data)
	}

	// No file at all: written in the layout's form.
	if err := os.Remove(c.Path(Preferences)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadPrefs(); !errors.Is(err, ErrNoPreferences) {
		t.Fatalf("ReadPrefs without a file = %v, want ErrNoPreferences", err)
	}
	if err := c.WritePrefs("tilda-brannock", "Tilda", "terse"); err != nil {
		t.Fatal(err)
	}
	if p, _ := c.ReadPrefs(); p.Character != "tilda-brannock" || p.Name != "Tilda" || p.Style != "terse" {
		t.Errorf("written from nothing: %+v", p)
	}
	if err := c.WritePrefs("Not A Name", "", ""); err == nil {
		t.Error("WritePrefs took a character that is not kebab-case")
	}
}

func FuzzParsePrefs(f *testing.F) {
	f.Add([]byte("## Player Character\n**name**: Corwin Voss\n**file**: party/corwin-voss.md\n"))
	f.Add([]byte("**dialogue_format**: hybrid\n"))
	f.Add([]byte("## \n**a**:\x00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := ParsePrefs(data)
		if p.Character != "" && ValidName(p.Character) != nil && p.Character != Kebab(p.Name) {
			t.Errorf("character %q is neither a valid name nor the name's kebab case", p.Character)
		}
	})
}
