// Package delta applies the GM's state deltas to a campaign. After a scene
// the GM writes what changed into two files under the campaign's tmp/
// directory and sends [STATE_UPDATED]; this package folds them into the
// campaign's markdown, which people also edit by hand and keep in git:
//
//	tmp/gm-state-delta.md         -> story-state.md      (the GM's file)
//	tmp/party-knowledge-delta.md  -> party-knowledge.md  (read by players)
//
// # Deltas
//
// A delta is a list of lines, one change each:
//
//   - NPC: Wiven Mirsk - a nervous fence who owes the Guild
//   - QUEST: Find Tomlin Greer - last seen near the sewer grate
//   - LOCATION: The Sewers - dank tunnels under the Lower City
//   - SITUATION: The party stands at the sewer grate, lanterns lit.
//   - SECRET: Wiven sells everything he hears to the cult
//   - UPCOMING: The cult moves the charm at midnight
//   - LEARNED: The rot spreads from below
//   - Party HP: tilda-brannock 8/12
//     The Watch will not enter the sewers.
//
// Parsing is tolerant: the bullet may be "-", "*", "+", "1." or absent;
// keywords are matched without regard to case and may be written in bold
// ("**NPC**:", "**SECRET** text"), in brackets ("[SECRET] text") or before
// a dash ("SECRET - text", with an en or em dash too); blank lines,
// headings and "#" comments (and HTML comments) are ignored; a line
// indented under another belongs to it (a multi-line SITUATION, the
// sub-bullets of an NPC, one character per line under "Party HP:"), but
// for an indented line that starts with a known keyword written plainly
// ("- NPC: Wiven"): that one is an entry of its own, at its own line. An
// indented SECRET or UPCOMING is one in any spelling, so a secret is a
// secret wherever it is written; another keyword in bold ("- **Location**:
// the docks" under an NPC, the "**Location**:" of a SITUATION) is a field
// of the entry above, and a character's "Name: 8/12" under "Party HP:" a
// line of it. A line
// without a keyword is something the party learned; one shaped "Name:
// 8/12" is a Party HP line. An upper-case word before a colon ("MONSTER:")
// or a bold one is a keyword, and an unknown keyword is reported, never
// guessed at. A line that starts with a keyword but lacks its colon ("-
// NPC Oswin Crane - the miller") is kept back with the line it meant
// ("NPC: Oswin Crane - the miller"), never taken for something the party
// learned: in the GM's delta whatever the keyword's case, in the party's
// when it is written in capitals (see [ErrNoColon]).
//
// # What goes where
//
// Sections are the file's "## " headings, matched without regard to case,
// with fallbacks ("NPC Relationships", "NPCs", "Key NPCs", "NPCs We've
// Met"; see [Keyword]). In story-state.md:
//
//   - SITUATION replaces the body of the Current Situation section;
//   - NPC, QUEST and LOCATION upsert a bullet of their section: a bullet
//     whose name (the text before the first " - " or ": ", a tab counting
//     as a space, without ** and checkbox) is the entity's, in any case,
//     is replaced; else a bullet is added. A separator written with tabs
//     is written with spaces;
//   - SECRET is added under "### Hidden Information" of the secret section
//     ("## GM Notes (Secret)"), UPCOMING under its "### Upcoming Planned
//     Events" (created when missing: upcoming events are the GM's alone);
//   - Party HP sets the character's line in the "**Hit Points**:" list of
//     Party Status, or adds one.
//
// In party-knowledge.md NPC, QUEST and LOCATION go to the party's sections
// ("NPCs We've Met", "Active Quests", "Locations We've Visited"), LEARNED and
// lines without a keyword to "Important Information Learned", and SITUATION
// replaces its Current Situation. SECRET and UPCOMING are never written
// there: they are refused and kept in the delta, and so is any entry
// labelled secret whatever its keyword: one whose text, text after the
// entity's name or any line starts "Secret:", "[secret]", "**Upcoming**",
// "secret -" or the like. LEARNED has no place in story-state.md, nor
// Party HP in party-knowledge.md: they are kept too.
//
// Where a line goes inside a section, so that the file still reads as a
// person wrote it:
//
//   - a bullet is added after the section's last list item, in that list's
//     style (marker, checkbox, numbering), replacing a lone placeholder item
//     ("None yet", "N/A", "Party not yet established"); after a table or a
//     paragraph it starts a list of its own, a blank line away. Tables are
//     never changed: a table row naming the entity is left as it is, and
//     the change says so in its Note;
//   - a section made of "### " subsections (a subsection per quest or per
//     place, as party-knowledge.md has) gets one more subsection for a new
//     entity; an entity that has a subsection of its own gets its text added
//     there; a subsection that is a list of such entities ("### Secondary
//     Quests") gets the bullet;
//   - a replaced bullet keeps its marker, checkbox, indentation, bold
//     name and the name's spelling (a delta saying "wiven mirsk" does
//     not rename "Wiven Mirsk"), and its indented lines unless the delta
//     gives new ones;
//   - a missing section is added at the end of the file, but in front of
//     the secret part of story-state.md: the "## GM Notes (Secret)" section,
//     the "---" line before it and everything after it. Only SECRET and
//     UPCOMING are written there; a story-state.md without one gets one at
//     its end.
//
// Every other byte of the file stays as it was, line endings (LF or CRLF)
// and the presence or absence of a final newline included. A line already
// there (the same SECRET, LEARNED or Party HP, the same bullet) is left
// alone, so a delta applied twice changes nothing the second time.
// "**Last Updated**:" lines are not touched.
//
// # Files
//
// [Apply] does the whole job on a campaign directory: for each delta file
// present, it applies the delta to its target, writes the target atomically
// and only then removes the delta, or rewrites it to hold just the lines
// that were not applied, under a comment saying why. [Parse], [ApplyStory]
// and [ApplyParty] are the same steps on bytes.
package delta

import (
	"errors"
	"fmt"
	"strings"
)

// The delta files and the files they change, relative to a campaign's
// directory (slash-separated). They match the campaigns package's layout.
const (
	StoryDelta = "tmp/gm-state-delta.md"
	PartyDelta = "tmp/party-knowledge-delta.md"
	StoryFile  = "story-state.md"
	PartyFile  = "party-knowledge.md"
)

// Keyword names what a delta line changes.
type Keyword string

// The keywords of a delta line, as written in the files (matched without
// regard to case; plurals such as "NPCs" and "Secrets", "HP" and "Hit
// Points" are accepted too).
const (
	NPC       Keyword = "NPC"       // a person: upserts a bullet
	Quest     Keyword = "QUEST"     // a quest: upserts a bullet
	Location  Keyword = "LOCATION"  // a place: upserts a bullet
	Situation Keyword = "SITUATION" // replaces the Current Situation's body
	Secret    Keyword = "SECRET"    // story-state only: GM Notes, Hidden Information
	Upcoming  Keyword = "UPCOMING"  // story-state only: GM Notes, Upcoming Planned Events
	Learned   Keyword = "LEARNED"   // party-knowledge only: Important Information Learned
	PartyHP   Keyword = "Party HP"  // story-state only: a character's hit points
)

// known lists the keywords as messages give them.
const known = "NPC, QUEST, LOCATION, SITUATION, SECRET, UPCOMING, LEARNED, Party HP"

// keywords maps a keyword, normalized by normWord, to its Keyword.
var keywords = map[string]Keyword{
	"npc": NPC, "npcs": NPC,
	"quest": Quest, "quests": Quest,
	"location": Location, "locations": Location,
	"situation": Situation,
	"secret":    Secret, "secrets": Secret,
	"upcoming": Upcoming,
	"learned":  Learned, "learnt": Learned,
	"party hp": PartyHP, "hp": PartyHP, "hit points": PartyHP, "party hit points": PartyHP,
}

// Errors callers branch on, with errors.Is. A line that cannot be applied
// is reported as a *LineError wrapping one of them.
var (
	// ErrUnknownKeyword is the error for a line whose keyword is none of
	// the known ones.
	ErrUnknownKeyword = errors.New("unknown (known: " + known + ")")
	// ErrEmpty is the error for a line that names nothing: "- NPC:" with no
	// name, "- SECRET:" with no text.
	ErrEmpty = errors.New("names nothing")
	// ErrHP is the error for a Party HP line without a character and a
	// value.
	ErrHP = errors.New(`want a character and hit points ("tilda-brannock 8/12" or "Tilda Brannock: 8/12")`)
	// ErrStructure is the error for text that would change the shape of the
	// target: a heading or a code fence in an indented line (or in a
	// SITUATION) would end the section it is written into.
	ErrStructure = errors.New("a heading or code fence here would break the file's sections")
	// ErrRefused is the error for a SECRET or UPCOMING line in the party's
	// delta, or a line labelled secret ("Secret:", "[upcoming]"): players
	// read party-knowledge.md. It says how a game master reveals a secret
	// on purpose: out of story-state.md's secret part first (or the
	// message guard refuses every narration of it), then a LEARNED line.
	ErrRefused = errors.New("refused: players read " + PartyFile + " (put it in " + StoryDelta + "; to reveal it, first move it out of " + StoryFile + "'s secret part, then write it here, unlabelled, as LEARNED:)")
	// ErrMisplaced is the error for a line the target has no place for:
	// LEARNED (and a line without keyword) in story-state.md, Party HP in
	// party-knowledge.md.
	ErrMisplaced = errors.New("not for this file")
	// ErrNoColon is the error for a line that starts with a keyword of
	// the file it is in but lacks the keyword's colon ("- NPC Oswin Crane
	// - the miller"): it is kept back, never taken for a line the party
	// learned (which would send the GM's words to the players' file). In
	// tmp/gm-state-delta.md a keyword in any case is one; in
	// tmp/party-knowledge-delta.md one written in capitals ("NPC", "QUEST",
	// "Party HP" with its hit points), where SECRET and UPCOMING are
	// refused as well (ErrRefused).
	ErrNoColon = errors.New("missing its colon")
	// ErrMissingTarget is the error of Apply for a delta whose target file
	// does not exist; the delta is kept.
	ErrMissingTarget = errors.New("target file missing")
	// ErrChanged is the error of Apply for a delta file that changed while
	// it was applied: it is left in place, so lines already applied may be
	// applied again (which changes nothing for most of them).
	ErrChanged = errors.New("changed while it was applied; left in place")
)

// LineError is the error for one line of a delta: it names the file, the
// line and the keyword, and wraps the reason (ErrUnknownKeyword, ErrEmpty,
// ErrHP, ErrStructure, ErrRefused, ErrMisplaced or ErrNoColon).
type LineError struct {
	File    string // the delta, as named to Parse
	Line    int    // 1-based
	Keyword string // as written ("MONSTER", "npc"); "" for a line without one
	Text    string // the text after the keyword
	Err     error
}

func (e *LineError) Error() string {
	if e.Keyword != "" {
		return fmt.Sprintf("%s:%d: keyword %q: %v", e.File, e.Line, e.Keyword, e.Err)
	}
	return fmt.Sprintf("%s:%d: %q: %v", e.File, e.Line, clip(e.Text, 40), e.Err)
}

// Unwrap returns the reason.
func (e *LineError) Unwrap() error { return e.Err }

// Delta is a parsed delta file.
type Delta struct {
	Path    string  // as given to Parse, used in errors
	Entries []Entry // in the order of the file
}

// Entry is one change of a delta: a keyword line and the lines indented
// under it (but for the indented lines that start entries of their own:
// SECRET, UPCOMING, and keywords written plainly).
type Entry struct {
	Line    int     // 1-based line of the keyword line
	Keyword Keyword // the canonical keyword; Learned for a line without one; "" when unknown
	Word    string  // the keyword as written ("npc", "MONSTER"); "" for a line without one
	Text    string  // the text after the keyword, trimmed
	// Bare is set for a line that starts with a keyword but lacks its
	// colon ("- NPC Oswin Crane - the miller"): the keyword as written,
	// the first bytes of Text. Such an entry is Learned (a line without a
	// keyword) until a target's rules say otherwise: the GM's file keeps
	// it back, asking for the colon, and so does the players' file when
	// the keyword is written as one (see [ErrNoColon]).
	Bare string
	// More holds the indented lines under the keyword line, with their
	// common indentation removed; a blank line between two of them is "".
	// An indented keyword line and the lines under it are not in it.
	More []string
	// Source holds the entry's lines as written in the file, kept in the
	// delta when the entry is not applied.
	Source []string
	// Err, when set, is the *LineError saying why the entry cannot be
	// applied to any file (unknown keyword, nothing named, bad hit points).
	Err error
}

// Result says what applying a delta to a file did.
type Result struct {
	Applied []Change     // in the order of the delta; a Party HP line may give several
	Kept    []*LineError // the entries not applied, and why
}

// Action says how a change went in.
type Action string

// The actions of a Change.
const (
	Inserted  Action = "inserted"  // a bullet, line or subsection added
	Replaced  Action = "replaced"  // a bullet, hit points line or section body replaced
	Unchanged Action = "unchanged" // the file said so already
)

// Change is one change made to a file.
type Change struct {
	Line    int     // the entry's line in the delta
	Keyword Keyword //
	Entity  string  // the NPC, quest, place or character; "" for other keywords
	Section string  // where: "NPC Relationships", "GM Notes (Secret) > Hidden Information"
	Action  Action  //
	Created bool    // the section (or subsection, or hit points list) was added for it
	Note    string  // more to know: a placeholder replaced, a table row left as it is
}

// String describes the change in a line, as a report shows it.
func (c Change) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "line %d: %s", c.Line, c.Keyword)
	if c.Entity != "" {
		fmt.Fprintf(&b, " %q", c.Entity)
	}
	fmt.Fprintf(&b, ": %s in %s", c.Action, c.Section)
	if c.Created {
		b.WriteString(" (new)")
	}
	if c.Note != "" {
		b.WriteString("; " + c.Note)
	}
	return b.String()
}

// clip shortens s to n runes at most, marking a cut with "...".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
