package campaigns

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/internal/textfile"
)

// Prefs is what preferences.md says about how a table plays: the human's
// character and the narrative style. The file is a person's: bold keys
// under headings, as the campaign layout writes it,
//
//	## Narrative Style
//	**dialogue_format**: hybrid
//	## Player Character
//	**name**: Corwin Voss
//	**file**: party/corwin-voss.md
//
// and every other key it holds is kept in Values.
type Prefs struct {
	// Style is the narrative style (dialogue_format).
	Style string
	// Character is the human's character, in full and hyphenated: the
	// name of the sheet the file: key names, else the name: key in kebab
	// case.
	Character string
	// Name is the character's name as written (Corwin Voss).
	Name string
	// Values holds every key of the file, by its name.
	Values map[string]string
	// CharacterField is the key Character was read from (file, or
	// name), and CharacterLine its line; both zero when it names none.
	CharacterField string
	CharacterLine  int
}

// ErrNoPreferences is returned by ReadPrefs for a campaign without a
// preferences.md.
var ErrNoPreferences = errors.New("no preferences.md")

// A key line: **key**: value, value possibly empty.
var prefLine = regexp.MustCompile(`^\s*(?:[-*]\s+)?\*\*([A-Za-z][A-Za-z0-9_ -]*)\*\*\s*:\s*(.*?)\s*$`)

// ReadPrefs reads the campaign's preferences.md. A file that names no
// character or style is not an error: the fields are then empty, and
// the caller asks.
func (c *Campaign) ReadPrefs() (*Prefs, error) {
	data, err := os.ReadFile(c.Path(Preferences))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", c.Path(Preferences), ErrNoPreferences)
	}
	if err != nil {
		return nil, err
	}
	return ParsePrefs(data), nil
}

// ParsePrefs reads the text of a preferences.md. It never fails: lines
// that are not **key**: value are prose.
func ParsePrefs(data []byte) *Prefs {
	p := &Prefs{Values: map[string]string{}}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	n, nameLine := 0, 0
	for sc.Scan() {
		line := sc.Text()
		n++
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.ToLower(strings.TrimSpace(h))
			continue
		}
		m := prefLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key := strings.ToLower(strings.TrimSpace(m[1]))
		val := strings.Trim(m[2], "\"'` ")
		if _, seen := p.Values[key]; !seen {
			p.Values[key] = val
		}
		switch {
		case key == "dialogue_format" || key == "narrative_style" || key == "style":
			if p.Style == "" {
				p.Style = val
			}
		case strings.Contains(section, "player character") && key == "name":
			p.Name, nameLine = val, n
		case strings.Contains(section, "player character") && key == "file":
			if base := strings.TrimSuffix(path.Base(strings.ReplaceAll(val, "\\", "/")), ".md"); val != "" && ValidName(base) == nil {
				p.Character, p.CharacterField, p.CharacterLine = base, "file", n
			}
		}
	}
	if p.Character == "" && p.Name != "" {
		p.Character, p.CharacterField, p.CharacterLine = Kebab(p.Name), "name", nameLine
	}
	return p
}

// WritePrefs writes the human's character and the narrative style into
// the campaign's preferences.md: into the file's own lines when it has
// them, keeping everything else as it is, or as a new file in the
// campaign layout's form. The write is durable.
func (c *Campaign) WritePrefs(character, name, style string) error {
	if err := ValidName(character); err != nil {
		return fmt.Errorf("character %w", err)
	}
	if name == "" {
		name = Title(character)
	}
	// A person may be writing the file meanwhile: textfile.Edit starts
	// again from their save.
	return textfile.Edit(c.Path(Preferences), func(data []byte) ([]byte, error) {
		if data == nil {
			data = []byte(fmt.Sprintf(preferencesTemplate, Title(c.Name)))
		}
		if err := textfile.CheckConflict(c.Path(Preferences), data); err != nil {
			return nil, err
		}
		return prefsText(data, character, name, style), nil
	})
}

// prefsText is data, a preferences.md, with the human's character and
// the narrative style written in (see WritePrefs).
func prefsText(data []byte, character, name, style string) []byte {
	want := map[string]string{
		"dialogue_format": style,
		"name":            name,
		"file":            path.Join(PartyDir, character+".md"),
	}
	var out bytes.Buffer
	section := ""
	set := map[string]bool{}
	lines := strings.SplitAfter(string(data), "\n")
	for _, line := range lines {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.ToLower(strings.TrimSpace(h))
		}
		m := prefLine.FindStringSubmatch(strings.TrimRight(line, "\r\n"))
		if m != nil {
			key := strings.ToLower(strings.TrimSpace(m[1]))
			ours := key == "dialogue_format" || strings.Contains(section, "player character") && (key == "name" || key == "file")
			if v := want[key]; ours && v != "" && !set[key] {
				out.WriteString("**" + m[1] + "**: " + v + "\n")
				set[key] = true
				continue
			}
		}
		out.WriteString(line)
	}
	// Keys the file did not have are added in sections of their own.
	if !set["dialogue_format"] && style != "" {
		fmt.Fprintf(&out, "\n## Narrative Style\n\n**dialogue_format**: %s\n", style)
	}
	if !set["name"] || !set["file"] {
		out.WriteString("\n## Player Character\n\n")
		for _, key := range []string{"name", "file"} {
			if !set[key] {
				fmt.Fprintf(&out, "**%s**: %s\n", key, want[key])
			}
		}
	}
	return out.Bytes()
}

// NoSheetError is the error CheckPrefs returns when preferences.md names
// a player character whose sheet is not in party/ (a typo:
// party/mira-quikfoot.md): a session would start with the human playing
// nobody, and find out at the first roll.
type NoSheetError struct {
	Path      string // preferences.md
	Line      int    // the line of the key that names the character
	Field     string // that key: file, or name
	Character string // the character named
	Near      string // a character with a sheet whose name is near, or ""
	NotASheet bool   // the file is there, and is no sheet (a journal)
}

func (e *NoSheetError) Error() string {
	s := fmt.Sprintf("%s:%d: %s: the player character's sheet, %s/%s.md, is not there", e.Path, e.Line, e.Field, PartyDir, e.Character)
	if e.NotASheet {
		s = fmt.Sprintf("%s:%d: %s: %s/%s.md is no character's sheet (a journal, or another file kept in %s/)", e.Path, e.Line, e.Field, PartyDir, e.Character, PartyDir)
	}
	if e.Near != "" {
		s += fmt.Sprintf(": did you mean %s/%s.md?", PartyDir, e.Near)
	}
	return s
}

// CheckPrefs reads preferences.md and returns a *NoSheetError when the
// player character it names has no sheet in party/. A campaign without
// a preferences.md, or one that names no character, is not an error:
// the seat asks.
func (c *Campaign) CheckPrefs() error {
	p, err := c.ReadPrefs()
	if errors.Is(err, ErrNoPreferences) {
		return nil
	}
	if err != nil {
		return err
	}
	return c.checkPrefs(p)
}

func (c *Campaign) checkPrefs(p *Prefs) error {
	if p.Character == "" {
		return nil
	}
	// A character is a sheet of party/ (partyFiles says which files are):
	// a journal, or another file kept there, named instead is none.
	have, err := c.Characters()
	if err != nil || slices.Contains(have, p.Character) {
		return nil
	}
	e := &NoSheetError{
		Path: c.Path(Preferences), Line: p.CharacterLine, Field: p.CharacterField,
		Character: p.Character, Near: spell.Nearest(p.Character, have, 2),
	}
	if _, err := os.Stat(c.SheetPath(p.Character)); err == nil {
		e.NotASheet = true
	}
	return e
}
