// Package campaigns owns the files of a D&D campaign under
// campaigns/<name>/ in a workspace: where each one lives, scaffolding a new
// campaign, and checking one that people already have. The files are
// plain markdown that people read, edit by hand and keep in git; the
// subpackages read and change them (sheet, delta, scenes, journal, dice).
package campaigns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/mailbox"
)

// Dir is the directory of a workspace that holds its campaigns.
const Dir = "campaigns"

// The files and directories of a campaign, relative to its root.
const (
	Overview       = "overview.md"
	WorldPrimer    = "world-primer.md"
	StoryState     = "story-state.md" // the GM's; "## GM Notes (Secret)" holds secrets
	PartyKnowledge = "party-knowledge.md"
	Preferences    = "preferences.md"
	DecisionLog    = "decision-log.md"
	PartyDir       = "party"  // <character>.md sheets and <character>-journal.md journals
	ScenesDir      = "scenes" // NNN-slug.md
	TmpDir         = "tmp"    // transient: deltas; git-ignored
)

// Directories of reference notes, one file per entity.
var NoteDirs = []string{"npcs", "locations", "factions", "items", "beats"}

// JournalSuffix ends the file name of a character's journal.
const JournalSuffix = "-journal.md"

// Errors callers branch on.
var (
	ErrNotFound   = errors.New("no such campaign")
	ErrNoCampaign = errors.New("the workspace has no campaign")
	ErrSeveral    = errors.New("the workspace has several campaigns")
	ErrExists     = errors.New("the campaign exists already")
	ErrNoSheet    = errors.New("no such character")
)

// ValidName reports whether name can name a campaign or a character:
// kebab case, as agent names are (mailbox.CheckName), which also keeps it
// inside its directory. The error wraps mailbox.ErrBadName.
func ValidName(name string) error {
	return mailbox.CheckName(name)
}

// Campaign is a campaign directory.
type Campaign struct {
	Name string
	Root string // the campaign's directory
}

// Open returns the campaign name of the workspace at root.
func Open(workspace, name string) (*Campaign, error) {
	if err := ValidName(name); err != nil {
		return nil, fmt.Errorf("campaign %w", err)
	}
	c := &Campaign{Name: name, Root: filepath.Join(workspace, Dir, name)}
	info, err := os.Stat(c.Root)
	if errors.Is(err, fs.ErrNotExist) {
		have, _ := List(workspace)
		return nil, fmt.Errorf("%s: %w (campaigns: %s)", filepath.Join(Dir, name), ErrNotFound, orNone(have))
	}
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", c.Root)
	}
	return c, nil
}

// Find returns the campaign name, or, when name is empty, the workspace's
// only campaign.
func Find(workspace, name string) (*Campaign, error) {
	if name != "" {
		return Open(workspace, name)
	}
	names, err := List(workspace)
	if err != nil {
		return nil, err
	}
	switch len(names) {
	case 0:
		return nil, fmt.Errorf("%w: make one with `parley campaign new NAME`", ErrNoCampaign)
	case 1:
		return Open(workspace, names[0])
	}
	return nil, fmt.Errorf("%w (%s): name one", ErrSeveral, strings.Join(names, ", "))
}

// List returns the names of the workspace's campaigns, sorted.
func List(workspace string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(workspace, Dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, de := range des {
		if de.IsDir() && ValidName(de.Name()) == nil {
			names = append(names, de.Name())
		}
	}
	return names, nil
}

// Strays returns the directories of the workspace's campaigns/ whose
// names cannot name a campaign ("My Campaign"): List leaves them out.
func Strays(workspace string) []string {
	des, _ := os.ReadDir(filepath.Join(workspace, Dir))
	var out []string
	for _, de := range des {
		if de.IsDir() && ValidName(de.Name()) != nil && !strings.HasPrefix(de.Name(), ".") {
			out = append(out, de.Name())
		}
	}
	return out
}

// Short returns err with the campaign's directory left out of its text,
// so that it names files as a person sees them in the campaign
// ("party/tilda-brannock.md:28: hit points: ..."); errors.Is and errors.As
// see err as it was. Short(nil) is nil.
func (c *Campaign) Short(err error) error {
	if err == nil {
		return nil
	}
	return &shortError{err: err, c: c}
}

type shortError struct {
	err error
	c   *Campaign
}

func (e *shortError) Error() string { return e.c.shorten(e.err.Error()) }
func (e *shortError) Unwrap() error { return e.err }

// shorten leaves the campaign's directory out of s.
func (c *Campaign) shorten(s string) string {
	return strings.ReplaceAll(s, c.Root+string(filepath.Separator), "")
}

// Path returns the path of a file of the campaign.
func (c *Campaign) Path(rel ...string) string {
	return filepath.Join(append([]string{c.Root}, rel...)...)
}

// SheetPath returns the path of a character's sheet.
func (c *Campaign) SheetPath(character string) string {
	return c.Path(PartyDir, character+".md")
}

// JournalPath returns the path of a character's journal.
func (c *Campaign) JournalPath(character string) string {
	return c.Path(PartyDir, character+JournalSuffix)
}

// Characters returns the characters that have a sheet in party/, sorted:
// a file whose name is no character's name is none (see partyFiles).
func (c *Campaign) Characters() ([]string, error) {
	pf, err := c.partyFiles()
	if err != nil {
		return nil, err
	}
	return pf.sheets, nil
}

// party is what party/ holds: the characters' sheets and journals (by file
// name without .md), and other files people keep beside them.
type party struct {
	missing  bool
	sheets   []string // tilda-brannock
	journals []string // tilda-brannock-journal.md
	others   []string // appearance-briefs.md
	strays   []string // "tilda-brannock (copy).md": a sheet whose name names no character
}

// partyFiles sorts the files of party/: a journal by its name; a file
// that does not look like a character sheet (sheet.Looks) is another
// file, not a sheet with mistakes; a sheet whose name is no character's
// name (ValidName: "tilda-brannock (copy).md", "Tilda.md", a copy a
// file manager made) is a stray, not a character: no command lists it
// or reads it as one, and Check warns of it. It is the one place that
// says which files are characters.
func (c *Campaign) partyFiles() (party, error) {
	var pf party
	des, err := os.ReadDir(c.Path(PartyDir))
	if errors.Is(err, fs.ErrNotExist) {
		pf.missing = true
		return pf, nil
	}
	if err != nil {
		return pf, err
	}
	for _, de := range des {
		n := de.Name()
		switch {
		case de.IsDir() || !strings.HasSuffix(n, ".md"):
		case strings.HasSuffix(n, JournalSuffix):
			pf.journals = append(pf.journals, n)
		default:
			data, err := os.ReadFile(c.Path(PartyDir, n))
			if err == nil && !sheet.Looks(data) {
				pf.others = append(pf.others, n)
				continue
			}
			if ValidName(strings.TrimSuffix(n, ".md")) != nil {
				pf.strays = append(pf.strays, n)
				continue
			}
			pf.sheets = append(pf.sheets, strings.TrimSuffix(n, ".md"))
		}
	}
	sort.Strings(pf.sheets)
	sort.Strings(pf.journals)
	sort.Strings(pf.others)
	sort.Strings(pf.strays)
	return pf, nil
}

// Sheet returns the path of the sheet of a character, by its full
// kebab-case name, checking that it exists.
func (c *Campaign) Sheet(character string) (string, error) {
	if err := ValidName(character); err != nil {
		return "", fmt.Errorf("character %w: use the full name of the sheet (tilda-brannock)", err)
	}
	path := c.SheetPath(character)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			have, _ := c.Characters()
			return "", fmt.Errorf("%s: %w %q in %s (characters: %s)", c.Name, ErrNoSheet, character, PartyDir+"/", orNone(have))
		}
		return "", err
	}
	return path, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Kebab writes a name in kebab case, as campaign, character and scene
// names are: "The Sewers!" is "the-sewers", "Lysara's Office"
// "lysaras-office".
func Kebab(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		if r != '\'' && r != '’' {
			dash = true
		}
	}
	return b.String()
}
