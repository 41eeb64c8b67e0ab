// Package sheet owns D&D character sheets: the markdown files under a
// campaign's party/ directory (party/tilda-brannock.md) that people write,
// edit by hand and keep in git. It reads what a sheet says and changes
// values where they are written: only the changed value's bytes move,
// every other byte of the file stays as it was, and the write is atomic.
//
// # Layouts
//
// A sheet comes in one of two layouts.
//
// [Tables] is the layout people write without parley. Mechanical state
// lives in markdown:
//
//	| **Hit Points** | 8/8 |          current/max (a lone number is both)
//	| **Level** | 1 |
//	| STR | DEX | CON | INT | WIS | CHA |      an ability table: header,
//	|:---:|:---:|:---:|:---:|:---:|:---:|      separator, scores ("15" or
//	| 7 | 14 | 11 | 10 | 14 | 13 |            "15 (+2)") and, optionally,
//	| -2 | +2 | +0 | +0 | +2 | +1 |           a row of modifiers
//	## Equipment                              items: the bullets of this
//	### Worn/Carried                          section, grouped by its ###
//	- Two daggers                             headings
//	### Pack Contents
//	- Burglar's pack (backpack, bag of 1,000 ball bearings, ...)
//	### Currency                              coins: "15 gp, 3 sp"
//	15 gp
//
// Hit points and level may also be written as "**Hit Points**: 8/8"
// lines, and abilities as a two-column table with one row per ability.
// The maximum may also be written "8 of 12", "8 out of 12" or "8 (max
// 12)", or on a row of its own ("| **Max HP** | 12 |"); a lone number is
// both only when no such row says otherwise. Temporary hit points follow
// in parentheses: "8/12 (temp 3)" (or "(temp: 3)", "(temp hp 3)"), or
// have a row of their own ("| **Temp HP** | 3 |", "Temporary Hit Points",
// "THP"; "-" or an empty cell for none), where they are written back. Hit
// points whose maximum cannot be read ("8 (max twelve)", "8 (12)") are
// an error, never a guess. A level may be an ordinal ("3rd"), and stays
// one when changed. A level outside 1 to 20 (a level of 0 too) or an
// ability score outside 1 to 30 is read as written and noted in
// Sheet.Invalid, as hit points above the maximum are (see [CheckLevel]
// and [CheckScore], the one rule for both reading and writing).
// When a label appears twice the first one counts. Lines in fenced code
// blocks and HTML comments are not read.
//
// Coins may also be written label first, one a line ("**Gold**: 10") or
// several ("GP: 10, SP: 4"), as table rows ("| Gold | 10 |"), or as a
// table with a column for each coin over one row of amounts; "-" or
// "none" for an amount is 0. A Currency section of prose only ("None")
// holds no coins, but a line in it with a number that is not an amount
// of coins is an error.
//
// [Frontmatter] is parley's own layout: YAML between "---" lines above the
// prose, with the keys hp, max_hp, temp_hp, level, abilities ({str: 15, ...}),
// inventory (a list of {name, quantity, note} mappings, which may also
// say the item they are in, {in: Explorer's pack}, or hold a list of
// their own under contents:; or of strings read like a tables-layout
// item) and currency ({gp: 10, sp: 5}), in flow or
// block style. A file whose frontmatter has no hp key is read in the
// tables layout (its frontmatter is left alone).
//
// # Items
//
// In the tables layout an item's quantity is a leading count ("20 crossbow
// bolts", "Two daggers", "a torch"; one to twenty in words) or a trailing
// "(x3)", "x3" or "×3", or a count in parentheses right after the name
// ("Rations (5)"); otherwise it is 1. A changed count keeps its style. A
// count followed by a unit is part of the name ("50 ft hempen rope" is
// one rope). What follows the name in parentheses, or after " — ", " - "
// or ": ", is the item's note, so a pack with its contents in parentheses
// is one item, and indented lines under a bullet belong to it. See [Slug]
// for how items are named.
//
// A bullet indented under an item (by two spaces, four, or a tab) is an
// item in it: Item.In names the container, which stays an item too, and
// a trailing ", containing:" or ":" is not part of its name:
//
//	### Worn/Carried
//	- Explorer's pack, containing:        "Explorer's pack"
//	  - 10 torches                        In "Explorer's pack"
//	- Dungeoneer's pack
//	  - 10 torches                        In "Dungeoneer's pack": not a duplicate
//
// Items nest up to MaxDepth deep. In the frontmatter layout an entry
// says its container with "in: Explorer's pack", or holds its contents
// in a list under "contents:". Two items of one name are a duplicate
// only directly in one container (or both in none). A name that matches
// items in several containers is ambiguous; a name may say the container,
// "explorers-pack/torch" ("/torch" for one in no container).
//
// # Changes
//
// Each method of [Doc] either changes the text and the values
// consistently or returns an error and changes nothing: it edits the
// bytes, reads the result again, and keeps it only if it reads back as
// intended. Several changes followed by [Doc.Save] are all-or-nothing for
// the file. A Doc is not safe for concurrent use.
package sheet

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
)

// MaxSize is the largest sheet Parse reads, in bytes.
const MaxSize = 1 << 20

// MaxDepth bounds how deep items nest: an item in a pouch in a pack is 2
// deep. A sheet with an item deeper than this is refused.
const MaxDepth = 8

// MaxAmount bounds quantities, coin amounts and hit points.
const MaxAmount = 1_000_000_000

// Layout says how a sheet is written.
type Layout int

const (
	// Tables is the layout of sheets written without parley: markdown
	// tables, an Equipment section of bullet lists, a Currency line.
	Tables Layout = iota + 1
	// Frontmatter is parley's own layout: YAML frontmatter above the prose.
	Frontmatter
)

// String returns "tables" or "frontmatter".
func (l Layout) String() string {
	switch l {
	case Tables:
		return "tables"
	case Frontmatter:
		return "frontmatter"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Abilities are the six ability scores in the order of AbilityNames.
type Abilities [6]int

// AbilityNames names the abilities in the order of Abilities. Treat it as
// read-only.
var AbilityNames = [6]string{"STR", "DEX", "CON", "INT", "WIS", "CHA"}

// The values a level and an ability score may take. A sheet that says
// otherwise is read, and says so in Sheet.Invalid; SetLevel and
// SetAbility refuse to write such a value.
const (
	MinLevel = 1
	MaxLevel = 20
	MinScore = 1
	MaxScore = 30
)

// CheckLevel returns nil for a level a character may have, MinLevel to
// MaxLevel, and otherwise an error wrapping ErrRange that says the
// range: "25 is out of range: want 1 to 20". Reading a sheet and
// SetLevel both decide by it.
func CheckLevel(n int) error {
	if n < MinLevel || n > MaxLevel {
		return fmt.Errorf("%d is %w: want %d to %d", n, ErrRange, MinLevel, MaxLevel)
	}
	return nil
}

// CheckScore returns nil for an ability score, MinScore to MaxScore, and
// otherwise an error wrapping ErrRange that says the range: "99 is out of
// range: want 1 to 30". Reading a sheet and SetAbility both decide by it.
func CheckScore(n int) error {
	if n < MinScore || n > MaxScore {
		return fmt.Errorf("%d is %w: want %d to %d", n, ErrRange, MinScore, MaxScore)
	}
	return nil
}

// Modifier returns the ability modifier of a score: (score-10)/2 rounded
// down.
func Modifier(score int) int {
	d := score - 10
	if d < 0 {
		return (d - 1) / 2
	}
	return d / 2
}

// Sheet is what a sheet says.
type Sheet struct {
	Name      string // the character: the file name without .md (tilda-brannock)
	Path      string // as the caller gave it
	Layout    Layout
	HP, MaxHP int
	// TempHP is the temporary hit points, which damage takes first: in
	// the tables layout "(temp 3)" after the hit points ("| **Hit Points**
	// | 8/12 (temp 3) |") or a row of their own ("| **Temp HP** | 3 |"),
	// temp_hp in the frontmatter; 0 when not written.
	TempHP    int
	Level     int       // 0 when the sheet has none (or says 0: see Invalid)
	Abilities Abilities // all 0 when the sheet has none
	Items     []Item    // in the order written
	Currency  []Coin    // in the order written
	// Unread says what of the sheet could not be read, each as "path:line:
	// field: problem" (money written in a way the package does not know,
	// a row that lost the | before its value, a key misspelt); the rest
	// of the sheet reads and changes as usual. Doc.UnreadNotes says it to
	// a reader.
	Unread []string
	// Invalid, when not nil, is what the sheet reads but cannot stand
	// by: hit points above the maximum, a level outside 1 to 20 (0
	// included), an ability score outside 1 to 30. Each is an *Error
	// naming the line and the field, wrapping ErrRange; Problems lists
	// them, and Invalid's text joins them with "; ". Such a sheet is read
	// all the same, so that a change can set it right (SetHP or SetMaxHP
	// the hit points, SetLevel the level, SetAbility a score); other
	// changes are made as usual, and Damage and Heal refuse while the hit
	// points are above the maximum: they cannot tell which of the two
	// numbers to start from.
	Invalid error
}

// Problems returns the *Error values of Invalid, in the order of the
// sheet's fields (hit points, level, abilities); nil when it is nil.
func (s *Sheet) Problems() []*Error {
	switch e := s.Invalid.(type) {
	case nil:
		return nil
	case *Error:
		return []*Error{e}
	case problems:
		return append([]*Error(nil), e...)
	}
	return nil
}

// problems are several of a sheet's Invalid values, said on one line.
type problems []*Error

func (ps problems) Error() string {
	s := make([]string, len(ps))
	for i, e := range ps {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

func (ps problems) Unwrap() []error {
	errs := make([]error, len(ps))
	for i, e := range ps {
		errs[i] = e
	}
	return errs
}

// Item is one entry of a sheet's equipment or inventory.
type Item struct {
	Name     string // as written, without its count: "daggers" for "Two daggers"
	Slug     string // Slug(Name): "daggers"
	Quantity int
	Section  string // the ### heading it is under ("Worn/Carried", "Pack Contents"); "" in the frontmatter layout
	Note     string // what the line says beside the name: "backpack, bedroll, ..."
	Line     int    // 1-based line of the item in the file
	// In is the name of the item that holds this one, as that item's
	// Name reads ("Explorer's pack" for a bullet indented under "-
	// Explorer's pack, containing:", or an entry's in: key in the
	// frontmatter layout); "" for an item not in another.
	In    string
	Depth int // how many containers deep: 0 for an item not in another, 1 in a pack, 2 in a pouch in a pack
}

// Coin is an amount of one denomination: {Denom: "gp", Amount: 15}.
type Coin struct {
	Denom  string // gp, sp, cp, ep or pp
	Amount int
}

// Doc is a sheet file and its text. Its methods change values where they
// are written; the embedded Sheet always describes the current text. Treat
// the embedded fields as read-only: change them with the methods.
type Doc struct {
	Sheet
	p    *parsed
	base []byte // what the file held when read or last saved
}

// Read reads and parses the sheet at path. A sheet git left a merge
// conflict in is not read: its values are one side's or the other's, a
// number nobody chose, so Read returns a *textfile.ConflictError naming
// the file and the line of the conflict (errors.Is ErrConflict).
func Read(path string) (*Doc, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	if err := textfile.CheckConflict(path, data); err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// readFile reads the sheet at path; its error is an *Error.
func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is the Error's
		}
		return nil, &Error{Path: path, Err: err}
	}
	return data, nil
}

// Inspect reads the sheet at path to show it, as Read does, except that
// a number it cannot read (a level of "one") leaves its field unset
// (Level 0) instead of failing: the Doc is returned, and each such number
// as an *Error naming the line and the field, joined (errors.Join), so
// that a caller shows the rest of the sheet and what to mend. A Doc with
// such errors is for showing: do not change or save it.
func Inspect(path string) (*Doc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Read(path) // its error
	}
	// Not shown at all: a value of it may be either side's (see Read).
	if err := textfile.CheckConflict(path, data); err != nil {
		return nil, err
	}
	d, err := parseDoc(path, data, true)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, e := range d.p.bad {
		errs = append(errs, e)
	}
	return d, errors.Join(errs...)
}

// Unreadable returns, for a Doc from Inspect, the numbers it could not
// read, each naming its line and field.
func (d *Doc) Unreadable() []*Error { return d.p.bad }

// Parse parses data as the sheet at path; path names the character and
// the file Save writes. Its errors are *Error values naming the line and
// field. Parse keeps its own copy of data, and Save expects to find data
// on disk. Parse does not look for merge conflicts (Read does): a caller
// that parses what it read calls textfile.CheckConflict first.
func Parse(path string, data []byte) (*Doc, error) {
	return parseDoc(path, data, false)
}

// parseDoc is Parse; lenient is Inspect's (see parsed.lenient).
func parseDoc(path string, data []byte, lenient bool) (*Doc, error) {
	data = bytes.Clone(data)
	if data == nil {
		data = []byte{}
	}
	p, err := parseAs(&parsed{path: path, data: data, ls: lineStarts(data), nl: "\n", lenient: lenient})
	if err != nil {
		return nil, err
	}
	d := &Doc{p: p, base: data}
	d.sync()
	return d, nil
}

// Bytes returns the sheet's current text.
func (d *Doc) Bytes() []byte { return bytes.Clone(d.p.data) }

// Save writes the current text to the sheet's path atomically (a
// temporary file, fsync, rename, fsync of the directory), unless nothing
// changed. It refuses with ErrChanged when the file on disk no longer
// holds what was read (or last saved), so a concurrent edit is not
// overwritten; read the file again and redo the changes. The file is
// compared again after the fsync, right before the rename
// (textfile.Replace): only a save that lands in that instant is lost. A symbolic link
// is followed, and the file keeps its permissions.
func (d *Doc) Save() error {
	if bytes.Equal(d.p.data, d.base) {
		return nil
	}
	// The check that the file is still what was read, and the write, are
	// one step for every Save in every process: no change is lost between.
	unlock, err := mailbox.LockDir(filepath.Dir(realPath(d.Path)))
	if err != nil {
		return err
	}
	defer unlock()
	return d.saveLocked()
}

// realPath is path with symbolic links followed, when it can be.
func realPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// saveLocked is Save, with the directory's lock held by the caller.
func (d *Doc) saveLocked() error {
	if bytes.Equal(d.p.data, d.base) {
		return nil
	}
	path := realPath(d.Path)
	cur, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Path: d.Path, Err: fmt.Errorf("%w: it is gone", ErrChanged)}
	}
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, d.base) {
		return &Error{Path: d.Path, Err: ErrChanged}
	}
	if err := textfile.CheckConflict(d.Path, cur); err != nil {
		return err
	}
	// Written and fsynced first, compared with the base again last: a
	// person's save (their editor, an echo >>) in between is seen, and
	// Update starts again from it.
	if err := textfile.Replace(path, d.base, d.p.data); err != nil {
		if errors.Is(err, textfile.ErrChanged) {
			return &Error{Path: d.Path, Err: ErrChanged}
		}
		return err
	}
	d.base = d.p.data
	return nil
}

// updateTries bounds how often Update starts again after a writer that
// does not take the lock (a person's editor) saved the sheet first.
const updateTries = 5

// Update reads the sheet at path, changes it with change and saves it,
// holding the lock Save takes for the whole of it: Updates and Saves of
// the sheet, from any process, take turns, and none is lost. When a
// writer that takes no lock (a person's editor) saved the sheet between
// the read and the save, it reads the sheet again and makes the change
// again on what is there now: change must work from the Doc it is given
// ("take 3 hit points"), and may be called more than once. When change
// fails nothing is saved and its error is returned. It returns the Doc
// as saved.
func Update(path string, change func(*Doc) error) (*Doc, error) {
	return Mend(path, nil, change)
}

// Mend is Update for a sheet that does not read because a value is
// written where a number goes that is not one (hit points "three/8", a
// level "one": a NotNumber). mend is given the *Error that names each such
// value in turn; when it returns a number (0 to MaxAmount), the number is
// written in the value's place, over "three" in "three/8" so that the
// maximum stays, every other byte kept, and the sheet is read again. Then
// change runs and the sheet is saved as Update does. A value mend returns
// no number for, or one Mendable says cannot be written over, fails with
// its error, and nothing is saved.
func Mend(path string, mend func(*Error) (int, bool), change func(*Doc) error) (*Doc, error) {
	unlock, err := mailbox.LockDir(filepath.Dir(realPath(path)))
	if err != nil {
		return nil, err
	}
	defer unlock()
	for try := 1; ; try++ {
		d, err := readMending(path, mend)
		if err != nil {
			return nil, err
		}
		if err := change(d); err != nil {
			return nil, err
		}
		err = d.saveLocked()
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, ErrChanged) || try == updateTries {
			return nil, err
		}
	}
}

// readMending reads the sheet at path, as Read does, writing a number
// from mend over each value that is not one (see Mend). The Doc's text
// is the mended one; what it saves over is the file as read.
func readMending(path string, mend func(*Error) (int, bool)) (*Doc, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	// A sheet git left a conflict in is not changed: the conflict is
	// said first, whatever else is wrong with it.
	if err := textfile.CheckConflict(path, data); err != nil {
		return nil, err
	}
	text := data
	// Each mend writes digits over a field that did not read: a field
	// read again is one the number did not mend.
	done := map[string]bool{}
	for {
		d, err := Parse(path, text)
		if err == nil {
			d.base = data
			return d, nil
		}
		var se *Error
		var nn *NotNumber
		if mend == nil || !errors.As(err, &se) || !errors.As(err, &nn) || !nn.Mendable() || done[se.Field] {
			return nil, err
		}
		n, ok := mend(se)
		if !ok || n < 0 || n > MaxAmount {
			return nil, err
		}
		done[se.Field] = true
		text = splice(text, []edit{{nn.at.start, nn.at.end, itoa(n)}})
	}
}

// sync copies the parse into the embedded Sheet.
func (d *Doc) sync() {
	d.Sheet = d.p.sh
	d.Sheet.Items = append([]Item(nil), d.p.sh.Items...)
	d.Sheet.Currency = append([]Coin(nil), d.p.sh.Currency...)
}

func (d *Doc) fail(line int, field string, err error) error {
	return &Error{Path: d.p.path, Line: line, Field: field, Err: err}
}

// change applies edits, reads the result again and keeps it only if it
// reads back as want says the sheet should; otherwise the Doc is left as
// it was.
func (d *Doc) change(line int, field string, edits []edit, want func(*Sheet)) error {
	if err := d.p.meant[field]; err != nil {
		return err // a second value would be written beside the one misspelt
	}
	data := splice(d.p.data, edits)
	np, err := parse(d.p.path, data)
	if err != nil {
		var se *Error
		if errors.As(err, &se) {
			err = se.Err
		}
		return d.fail(line, field, fmt.Errorf("%w: the change would not read back (%v)", ErrUneditable, err))
	}
	w := d.p.sh
	w.Items = append([]Item(nil), w.Items...)
	w.Currency = append([]Coin(nil), w.Currency...)
	want(&w)
	if !sameSheet(w, np.sh) {
		return d.fail(line, field, fmt.Errorf("%w: the change would not read back as intended", ErrUneditable))
	}
	d.p = np
	d.sync()
	return nil
}

// sameSheet reports whether got says what want says. Items are compared
// by slug key (a count change may turn "daggers" into "dagger"),
// quantity, section, note, and the slug key of their container and
// depth; lines and order are not compared.
func sameSheet(want, got Sheet) bool {
	if want.Layout != got.Layout || want.HP != got.HP || want.MaxHP != got.MaxHP || want.TempHP != got.TempHP ||
		want.Level != got.Level || want.Abilities != got.Abilities ||
		len(want.Items) != len(got.Items) || len(want.Currency) != len(got.Currency) {
		return false
	}
	for i := range want.Currency {
		if want.Currency[i] != got.Currency[i] {
			return false
		}
	}
	type val struct {
		key, in       string
		q, depth      int
		section, note string
	}
	v := func(it Item) val {
		return val{slugKey(it.Slug), slugKey(kebab(it.In)), it.Quantity, it.Depth, it.Section, it.Note}
	}
	m := make(map[val]int, len(want.Items))
	for _, it := range want.Items {
		m[v(it)]++
	}
	for _, it := range got.Items {
		k := v(it)
		if m[k] == 0 {
			return false
		}
		m[k]--
	}
	return true
}

// UnreadNotes says what of the sheet could not be read (Sheet.Unread)
// as parley tells it to a reader, one note each: "could not read:
// party/x.md:5: level: ...". Unless quote, a note says where and quotes
// nothing of the sheet ("could not read line 5: level"), for a reader who
// may not see every line of it, such as a spectator.
func (d *Doc) UnreadNotes(quote bool) []string {
	notes := make([]string, 0, len(d.p.unread))
	for _, e := range d.p.unread {
		switch {
		case quote:
			notes = append(notes, "could not read: "+e.Error())
		case e.Line > 0:
			notes = append(notes, fmt.Sprintf("could not read line %d: %s", e.Line, e.Field))
		case e.Field != "":
			notes = append(notes, "could not read: "+e.Field)
		default:
			notes = append(notes, "could not read part of the sheet")
		}
	}
	return notes
}

// SetHP sets the current hit points, 0 to MaxHP.
func (d *Doc) SetHP(n int) error {
	if n < 0 || n > d.p.sh.MaxHP {
		return d.fail(d.p.hpLine, "hit points", fmt.Errorf("%d is %w: want 0 to %d", n, ErrRange, d.p.sh.MaxHP))
	}
	return d.setHP(n, d.p.sh.MaxHP, d.p.sh.TempHP)
}

// SetTempHP sets the temporary hit points, 0 or more: in a tables-layout
// sheet in its Temp HP row, when it has one, else in a "(temp 3)" after
// the hit points, which is taken away at 0. A tables-layout sheet with a
// label that is "Temp HP" misspelt is refused (see Sheet.Unread).
func (d *Doc) SetTempHP(n int) error {
	if n < 0 || n > MaxAmount {
		return d.fail(d.p.hpLine, "temp hit points", fmt.Errorf("%d is %w: want 0 to %d", n, ErrRange, MaxAmount))
	}
	if err := d.p.meant["temp hit points"]; err != nil {
		return err
	}
	return d.setHP(d.p.sh.HP, d.p.sh.MaxHP, n)
}

// SetMaxHP sets the hit point maximum, at least 1; current hit points
// above the new maximum come down to it. A sheet with a Max HP row that
// lost the | before its value is refused (see Sheet.Unread): a second
// maximum is never written beside it.
func (d *Doc) SetMaxHP(n int) error {
	if n < 1 || n > MaxAmount {
		return d.fail(d.p.hpLine, "max hit points", fmt.Errorf("%d is %w: want 1 to %d", n, ErrRange, MaxAmount))
	}
	if err := d.p.meant["max hit points"]; err != nil {
		return err
	}
	return d.setHP(min(d.p.sh.HP, n), n, d.p.sh.TempHP)
}

// Damage takes n hit points away, the temporary ones first (TempHP),
// stopping at 0, and returns the hit points before and after.
func (d *Doc) Damage(n int) (from, to int, err error) {
	from = d.p.sh.HP
	if err := d.invalidHP(); err != nil {
		return from, from, err
	}
	if n < 0 {
		return from, from, d.fail(d.p.hpLine, "hit points", fmt.Errorf("damage %d is %w: want 0 or more", n, ErrRange))
	}
	temp := d.p.sh.TempHP - min(n, d.p.sh.TempHP)
	to = max(from-(n-(d.p.sh.TempHP-temp)), 0)
	if err := d.setHP(to, d.p.sh.MaxHP, temp); err != nil {
		return from, from, err
	}
	return from, to, nil
}

// Heal gives n hit points back, stopping at MaxHP, and returns the hit
// points before and after. Temporary hit points are not healed.
func (d *Doc) Heal(n int) (from, to int, err error) {
	from = d.p.sh.HP
	if err := d.invalidHP(); err != nil {
		return from, from, err
	}
	if n < 0 {
		return from, from, d.fail(d.p.hpLine, "hit points", fmt.Errorf("healing %d is %w: want 0 or more", n, ErrRange))
	}
	to = d.p.sh.MaxHP
	if n < to-from {
		to = from + n
	}
	if err := d.setHP(to, d.p.sh.MaxHP, d.p.sh.TempHP); err != nil {
		return from, from, err
	}
	return from, to, nil
}

// invalidHP refuses a change that starts from the hit points when they
// are above the maximum: the sheet says two things, and which one is
// meant is for a person to say, by setting hp or max_hp.
func (d *Doc) invalidHP() error {
	for _, se := range d.p.sh.Problems() {
		if se.Field == "hit points" {
			return d.fail(se.Line, se.Field, fmt.Errorf("%w; set hp or max_hp first", se.Err))
		}
	}
	return nil
}

func (d *Doc) setHP(hp, maxHP, temp int) error {
	if hp == d.p.sh.HP && maxHP == d.p.sh.MaxHP && temp == d.p.sh.TempHP {
		return nil
	}
	edits, err := d.p.hpEdits(hp, maxHP, temp)
	if err != nil {
		return d.fail(d.p.hpLine, "hit points", err)
	}
	return d.change(d.p.hpLine, "hit points", edits, func(s *Sheet) { s.HP, s.MaxHP, s.TempHP = hp, maxHP, temp })
}

// SetLevel sets the character's level, 1 to 20 (see CheckLevel). A
// tables-layout sheet without a level says so with ErrMissing; a
// frontmatter sheet gains a level key. A sheet whose level cannot be
// read where it is written (a level row without its value cell, a key
// "levle") is refused with what Sheet.Unread says of it: a second level
// is never written beside it.
func (d *Doc) SetLevel(n int) error {
	if err := CheckLevel(n); err != nil {
		return d.fail(d.p.levelLine, "level", err)
	}
	if n == d.p.sh.Level {
		return nil
	}
	if err := d.p.meant["level"]; err != nil {
		return err
	}
	edits, err := d.p.levelEdits(n)
	if err != nil {
		return d.fail(d.p.levelLine, "level", err)
	}
	return d.change(d.p.levelLine, "level", edits, func(s *Sheet) { s.Level = n })
}

// SetAbility sets one ability score, 1 to 30 (see CheckScore). The name
// is str, dex, con, int, wis or cha (or the full name), in any case. A
// modifier written beside the score or in a modifier row under it
// follows.
func (d *Doc) SetAbility(name string, n int) error {
	i := abilityIndex(normLabel(name))
	if i < 0 {
		return d.fail(d.p.abilLine, "abilities", fmt.Errorf("unknown ability %q: want str, dex, con, int, wis or cha", name))
	}
	field := AbilityNames[i]
	if err := CheckScore(n); err != nil {
		return d.fail(d.p.abilLine, field, err)
	}
	if err := d.p.meant["abilities"]; err != nil {
		return err
	}
	if !d.p.haveAbil {
		return d.fail(0, field, fmt.Errorf("ability scores are %w", ErrMissing))
	}
	if d.p.sh.Abilities[i] == n {
		return nil
	}
	edits, err := d.p.abilityEdits(i, n)
	if err != nil {
		return d.fail(d.p.abilLine, field, err)
	}
	return d.change(d.p.abilLine, field, edits, func(s *Sheet) { s.Abilities[i] = n })
}

// AddItem adds quantity (at least 1) of an item. An item with the same
// slug gains the quantity (the note is then ignored): the one item of
// that slug, in a container or not; when items of that slug are in
// several containers, AddItem refuses with ErrAmbiguous (say which with
// AddItemTo). Otherwise a new entry is written: in the tables layout a
// line "- Name", "- N Name" or "- N Name — note" at the end of "### Pack
// Contents", else after the last item of the Equipment section, else
// under the heading of an empty part of it for gear ("### Worn/Carried",
// the first one that holds no notes or money, one that names gear in
// general first); only a sheet with none of these gets a new "### Pack
// Contents" (under a new "## Equipment" at the end of the file when it
// has none); in the frontmatter layout an entry in the style of the existing
// ones. The name must not carry a count of its own ("2 daggers"); pass
// the quantity. It returns the item as it now reads.
func (d *Doc) AddItem(name string, quantity int, note string) (Item, error) {
	return d.AddItemTo("", name, quantity, note)
}

// AddItemTo adds quantity of an item to the item named container, found
// as ChangeItem finds an item ("explorers-pack", "pack/pouch"); with
// container "" it is AddItem. An item of the same slug directly in the
// container gains the quantity; otherwise a new entry is written: in the
// tables layout a line after the container's last item, indented and
// marked as its items are (indented under the container when it holds
// none yet); in the frontmatter layout an entry with "in:" naming the
// container. It returns the item as it now reads.
func (d *Doc) AddItemTo(container, name string, quantity int, note string) (Item, error) {
	name, note = strings.TrimSpace(name), strings.TrimSpace(note)
	switch {
	case name == "":
		return Item{}, d.fail(0, "items", errors.New("an item needs a name"))
	case strings.ContainsAny(name, "\r\n") || strings.ContainsAny(note, "\r\n"):
		return Item{}, d.fail(0, "items", fmt.Errorf("%q: a name or note must be one line", name))
	case quantity < 1 || quantity > MaxAmount:
		return Item{}, d.fail(0, "items", fmt.Errorf("%q: quantity %d is %w: want 1 to %d", name, quantity, ErrRange, MaxAmount))
	}
	if k := strings.LastIndex(name, "/"); k > 0 && strings.TrimSpace(container) == "" {
		// "explorers-pack/torch": the torch in the pack, when there is
		// such a pack; else a name with a slash of its own.
		if _, err := d.p.find(name[:k]); err == nil {
			container, name = name[:k], strings.TrimSpace(name[k+1:])
		}
	}
	tx := parseItemText(name)
	if tx.count != noCount {
		if w := strings.ToLower(name[tx.cStart:tx.cEnd]); w != "a" && w != "an" {
			return Item{}, d.fail(0, "items", fmt.Errorf("%q carries a count: pass the name without it and the quantity", name))
		}
		name = strings.TrimSpace(name[tx.nameStart:])
	}
	slug := Slug(name)
	if slug == "" {
		return Item{}, d.fail(0, "items", fmt.Errorf("%q has no letters or digits to name it by", name))
	}
	in := -1
	if strings.TrimSpace(container) != "" {
		c, err := d.p.find(container)
		if err != nil {
			return Item{}, d.fail(0, "items", fmt.Errorf("in: %w", err))
		}
		in = c
		if d.p.sh.Items[in].Depth >= MaxDepth {
			return Item{}, d.fail(d.p.sh.Items[in].Line, "items", fmt.Errorf("%s is %d deep: an item in it is %w: at most %d", d.p.sh.Items[in].Name, d.p.sh.Items[in].Depth, ErrRange, MaxDepth))
		}
		if i := d.p.child(in, slug); i >= 0 {
			return d.changeItem(i, quantity)
		}
	} else {
		k := slugKey(slug)
		var same []int
		for i, ik := range d.p.keys {
			if ik == k {
				same = append(same, i)
			}
		}
		switch {
		case len(same) == 1:
			return d.changeItem(same[0], quantity)
		case len(same) > 1:
			return Item{}, d.fail(0, "items", d.p.ambiguous(name, same))
		}
	}
	edits, want, err := d.p.addEdits(in, name, quantity, note)
	if err != nil {
		return Item{}, d.fail(0, "items", err)
	}
	if in >= 0 {
		want.In, want.Depth = d.p.sh.Items[in].Name, d.p.sh.Items[in].Depth+1
	}
	if err := d.change(0, "items", edits, func(s *Sheet) { s.Items = append(s.Items, want) }); err != nil {
		return Item{}, err
	}
	return d.item(d.p.child(in, want.Slug)), nil
}

// ChangeItem changes an item's quantity by delta. The item is named by
// its name or slug, singular or plural ("dagger" finds "Two daggers");
// failing an exact match, by a run of the words of its name ("potion"
// finds "Healing potion") when only one item has them. A name may say
// the container the item is in, "explorers-pack/torch" (or
// "pack/pouch/candle"; "/torch" is a torch in no container): a name
// that matches items in several containers is ambiguous, and the error
// says how to name each. At 0 the item's entry is removed (with the
// lines indented under it); a container that holds items is not removed
// (ErrNotEmpty), while a container emptied keeps its entry. It returns
// the item as it now reads, with Quantity 0 when removed. Errors:
// ErrUnknownItem, ErrAmbiguous, ErrBelowZero, ErrNotEmpty.
func (d *Doc) ChangeItem(nameOrSlug string, delta int) (Item, error) {
	i, err := d.p.find(nameOrSlug)
	if err != nil {
		return Item{}, d.fail(0, "items", err)
	}
	return d.changeItem(i, delta)
}

func (d *Doc) changeItem(i, delta int) (Item, error) {
	it := d.p.sh.Items[i]
	q := it.Quantity + delta
	switch {
	case delta == 0:
		return it, nil
	case q < 0:
		return Item{}, d.fail(it.Line, "items", fmt.Errorf("%s: %d held, %d to take: %w", it.Name, it.Quantity, -delta, ErrBelowZero))
	case q > MaxAmount || delta > MaxAmount:
		return Item{}, d.fail(it.Line, "items", fmt.Errorf("%s: %d %+d is %w: at most %d", it.Name, it.Quantity, delta, ErrRange, MaxAmount))
	}
	if kids := d.p.children(i); q == 0 && len(kids) > 0 {
		var names []string
		for _, k := range kids {
			names = append(names, d.p.sh.Items[k].Name)
		}
		return Item{}, d.fail(it.Line, "items", fmt.Errorf("%s: %w: %s; use them up, or edit the sheet", it.Name, ErrNotEmpty, strings.Join(names, ", ")))
	}
	var edits []edit
	var err error
	if q == 0 {
		edits, err = d.p.removeEdits(i)
	} else {
		edits, err = d.p.qtyEdits(i, q)
	}
	if err != nil {
		return Item{}, d.fail(it.Line, "items", err)
	}
	err = d.change(it.Line, "items", edits, func(s *Sheet) {
		if q == 0 {
			s.Items = append(s.Items[:i], s.Items[i+1:]...)
		} else {
			s.Items[i].Quantity = q
		}
	})
	if err != nil {
		return Item{}, err
	}
	if q == 0 {
		it.Quantity = 0
		return it, nil
	}
	return d.item(i), nil // a quantity moves no item
}

func (d *Doc) item(i int) Item {
	if i < 0 {
		return Item{}
	}
	return d.p.sh.Items[i]
}

// Denom returns the denomination a word names: a D&D coin ("gold" is gp),
// or a currency of the setting the sheet already holds ("credits",
// "trade-tokens" for trade tokens); "" for none.
func (d *Doc) Denom(word string) string {
	w := strings.ToLower(strings.TrimSpace(word))
	if dn := coinDenom(w); dn != "" {
		return dn
	}
	w = strings.NewReplacer("-", " ", "_", " ").Replace(w)
	for _, c := range d.p.sh.Currency {
		if c.Denom == w {
			return w
		}
	}
	return ""
}

// SetCurrency sets the amount of one denomination (gp, sp, cp, ep or pp;
// the full names gold, silver... work too) where it is written. A coin
// the sheet does not have yet is added in the style of the last one
// written: after it on its line ("15 gp, 3 sp", "GP: 10, SP: 3"), on a
// line or table row of its own ("**Silver**: 3"), or as a new column of a
// table of coin columns; a sheet with no currency gains a "### Currency"
// section or a currency key.
func (d *Doc) SetCurrency(denom string, n int) error {
	if d.p.curErr != nil {
		var se *Error
		line := 0
		if errors.As(d.p.curErr, &se) {
			line = se.Line
		}
		return d.fail(line, "currency", fmt.Errorf("%w: the money on the sheet could not be read (%v); correct it by hand", ErrUneditable, errors.Unwrap(d.p.curErr)))
	}
	dn := d.Denom(denom)
	if dn == "" {
		return d.fail(0, "currency", fmt.Errorf("unknown coin %q: want gp, sp, cp, ep or pp, or a currency the sheet holds", denom))
	}
	if n < 0 {
		return d.fail(0, "currency", fmt.Errorf("%d %s is %w", n, dn, ErrBelowZero))
	}
	if n > MaxAmount {
		return d.fail(0, "currency", fmt.Errorf("%d %s is %w: at most %d", n, dn, ErrRange, MaxAmount))
	}
	at := -1
	for i, c := range d.p.sh.Currency {
		if c.Denom == dn {
			at = i
		}
	}
	if at >= 0 && d.p.sh.Currency[at].Amount == n {
		return nil
	}
	edits, err := d.p.coinEdits(dn, at, n)
	if err != nil {
		return d.fail(0, "currency", err)
	}
	return d.change(0, "currency", edits, func(s *Sheet) {
		if at >= 0 {
			s.Currency[at].Amount = n
		} else {
			s.Currency = append(s.Currency, Coin{Denom: dn, Amount: n})
		}
	})
}
