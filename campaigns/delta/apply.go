package delta

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parley-dev/parley/internal/markdown"
)

// rules say what a target file takes and where.
type rules struct {
	story    bool                 // story-state.md: secrets and hit points, no LEARNED
	sections map[Keyword][]string // "## " titles by keyword; a missing section gets the first
}

// Section titles, tried in order.
var (
	situationTitles = []string{"Current Situation", "Situation", "Where We Are"}
	questTitles     = []string{"Active Quests", "Quests", "Current Quests", "Open Quests"}
	partyTitles     = []string{"Party Status", "Party", "Party State"}
	hiddenTitles    = []string{"Hidden Information", "Secrets", "Hidden"}                                  // "### " in the secret section
	upcomingTitles  = []string{"Upcoming Planned Events", "Upcoming Events", "Planned Events", "Upcoming"} // same
)

const secretTitle = "GM Notes (Secret)"

var storyRules = &rules{story: true, sections: map[Keyword][]string{
	Situation: situationTitles,
	NPC:       {"NPC Relationships", "NPCs", "Key NPCs", "NPCs We've Met"},
	Quest:     questTitles,
	Location:  {"Locations", "Key Locations", "Locations We've Visited"},
}}

var partyRules = &rules{sections: map[Keyword][]string{
	Situation: situationTitles,
	NPC:       {"NPCs We've Met", "NPCs", "Key NPCs", "NPC Relationships"},
	Quest:     questTitles,
	Location:  {"Locations We've Visited", "Locations", "Key Locations"},
	Learned:   {"Important Information Learned", "What We Know", "Known Information", "Information Learned", "What We've Learned"},
}}

// plural holds the words that make a "### " subsection a list of entities
// of a kind ("### Secondary Quests").
var plural = map[Keyword][]string{NPC: {"npcs"}, Quest: {"quests"}, Location: {"locations", "places"}}

// ApplyStory applies d to story-state.md, given as doc, and returns the
// new content and what changed. Entries it cannot apply (LEARNED, unknown
// keywords, entries Parse found wrong) are in the Result's Kept. When
// nothing is applied it returns doc itself.
func ApplyStory(doc []byte, d *Delta) ([]byte, *Result) { return apply(doc, d, storyRules) }

// ApplyParty applies d to party-knowledge.md, given as doc, and returns
// the new content and what changed. SECRET and UPCOMING entries are never
// written: they are in the Result's Kept, refused (ErrRefused), as are
// entries with a line labelled secret ("Secret:", "[upcoming]"), Party HP
// entries and those Parse found wrong. When nothing is applied it
// returns doc itself.
func ApplyParty(doc []byte, d *Delta) ([]byte, *Result) { return apply(doc, d, partyRules) }

func apply(src []byte, d *Delta, r *rules) ([]byte, *Result) {
	res := &Result{}
	if d == nil {
		return src, res
	}
	m := parseDoc(src)
	for i := range d.Entries {
		e := &d.Entries[i]
		if err := refusal(e, r); err != nil {
			res.Kept = append(res.Kept, lineError(d.Path, e, err))
			continue
		}
		res.Applied = append(res.Applied, m.apply(e, r)...)
	}
	if len(res.Applied) == 0 {
		return src, res
	}
	return m.bytes(), res
}

// refusal reports why an entry is not applied to the target of rules r,
// whatever the target holds, or nil.
func refusal(e *Entry, r *rules) error {
	err := e.Err
	if err == nil {
		err = check(e)
	}
	if err == nil {
		err = allowed(e, r)
	}
	return err
}

// Refused returns the entries of d, read from the delta file name
// (StoryDelta or PartyDelta), that Apply keeps in the delta whatever its
// target holds, and why: those Parse found wrong, and those the target
// has no place for (a SECRET in the party's delta). It is what Apply
// decides, without reading or writing a file.
func Refused(name string, d *Delta) []*LineError {
	r := storyRules
	if name == PartyDelta {
		r = partyRules
	}
	var kept []*LineError
	for i := range d.Entries {
		if err := refusal(&d.Entries[i], r); err != nil {
			kept = append(kept, lineError(d.Path, &d.Entries[i], err))
		}
	}
	return kept
}

// allowed reports why an entry has no place in a target, or nil. Nothing
// labelled secret goes to party-knowledge.md, whatever its keyword: not
// an entry whose text, text after the entity's name or any of whose lines
// starts "Secret:", "[Secret]", "**Upcoming**", "secret -" and the like.
func allowed(e *Entry, r *rules) error {
	if e.Bare != "" {
		if err := noColon(e, r); err != nil {
			return err
		}
	}
	k := e.Keyword
	switch {
	case !r.story && (k == Secret || k == Upcoming):
		return ErrRefused
	case r.story && k == Learned:
		return fmt.Errorf("%w (put it in %s)", ErrMisplaced, PartyDelta)
	case !r.story && k == PartyHP:
		return fmt.Errorf("%w (put it in %s)", ErrMisplaced, StoryDelta)
	}
	if !r.story {
		lines := append([]string{e.Text}, e.More...)
		if k == NPC || k == Quest || k == Location {
			// The text after the name may be a bullet of its own, under
			// the entity's "### " heading.
			_, _, rest := splitEntity(bare(e.Text))
			lines = append(lines, rest)
		}
		for _, s := range lines {
			if label, ok := secretLabel(s); ok {
				return fmt.Errorf("labelled %q: %w", label, ErrRefused)
			}
		}
	}
	return nil
}

// noColon reports a line that starts with a keyword but lacks its colon
// (Entry.Bare) as the keyword it meant, or nil when the target of rules r
// takes it for a line without a keyword. The GM's file has no such line
// to take, so there a keyword in any case is one. In the players' file:
// "secret" or "upcoming" in any case, followed by text, is a label
// without its colon, kept back ("Secret the miller did it"); "NPC" and
// "HP" are keywords only written in capitals as a word of their own and
// followed by what the keyword needs (a name and a separator, hit
// points): "NPCs in the tavern whisper", "HP potions cost 50 gold" are
// what the party learned; "LEARNED the well" is a LEARNED (learnedText);
// any other keyword is one when written in capitals ("QUEST the well").
func noColon(e *Entry, r *rules) error {
	k, rest := keywords[normWord(e.Bare)], bareRest(e)
	if !r.story {
		words := strings.Fields(e.Bare)
		switch k {
		case Secret, Upcoming:
		case Learned:
			return nil
		case NPC:
			if !slices.Contains(words, "NPC") || findSep(rest) <= 0 {
				return nil
			}
		case PartyHP:
			if !slices.Contains(words, "HP") || !slices.ContainsFunc(strings.Fields(rest), isHPValue) {
				return nil
			}
		default:
			if !slices.ContainsFunc(words, isUpper) {
				return nil
			}
		}
	}
	err := fmt.Errorf("%w (did you mean %q?)", ErrNoColon, string(k)+": "+clip(rest, 48))
	switch {
	case !r.story && (k == Secret || k == Upcoming):
		return fmt.Errorf("%w; %w", err, ErrRefused)
	case r.story && k == Learned:
		return fmt.Errorf("%w; %w (put it in %s)", err, ErrMisplaced, PartyDelta)
	case !r.story && k == PartyHP:
		return fmt.Errorf("%w; %w (put it in %s)", err, ErrMisplaced, StoryDelta)
	}
	return err
}

// learnedText is the text of a LEARNED entry: a "LEARNED the well is
// poisoned" without its colon means what "LEARNED: the well is poisoned"
// does; "Learned the hard way" is a line without a keyword, kept whole.
func learnedText(e *Entry) string {
	if e.Bare != "" && keywords[normWord(e.Bare)] == Learned && isUpper(e.Bare) {
		return bareRest(e)
	}
	return e.Text
}

// bareRest returns the text after the keyword of an entry whose keyword
// lacks its colon.
func bareRest(e *Entry) string {
	return strings.TrimSpace(strings.TrimPrefix(e.Text, e.Bare))
}

// secretLabel reports whether a line starts with "secret", "secrets" or
// "upcoming" used as a label, and returns the word as written: followed
// by a colon, a dash, a parenthesis or nothing, or set off by emphasis,
// brackets or backquotes ("**Secret** the cult", "[upcoming] a raid").
// Bullets, checkboxes, quote marks, "#" and opening marks before the word
// are skipped, however many. "Secret passages" and "Secret-keeper" are not
// labels.
func secretLabel(s string) (string, bool) {
	t := strings.TrimSpace(s)
	for {
		u := stripBullet(t)
		if _, rest, ok := cutBox(u); ok {
			u = rest
		}
		u = strings.TrimLeft(u, "*_[`>(# \t")
		if u == t {
			break
		}
		t = u
	}
	end := strings.IndexFunc(t, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(t)
	}
	word, rest := t[:end], t[end:]
	switch strings.ToLower(word) {
	case "secret", "secrets", "upcoming":
	default:
		return "", false
	}
	if isUpper(word) {
		return word, true // "SECRET the miller did it": a label without its colon
	}
	if strings.TrimLeft(rest, "*_]`)") != rest {
		return word, true
	}
	r := strings.TrimLeft(rest, " \t")
	switch {
	case r == "", strings.HasPrefix(r, ":"), strings.HasPrefix(r, "–"), strings.HasPrefix(r, "—"),
		strings.HasPrefix(r, "("), strings.HasPrefix(r, "="):
		return word, true
	case strings.HasPrefix(r, "-"):
		return word, r != rest || len(r) == 1 || isSpace(r[1])
	}
	return "", false
}

// apply applies one checked, allowed entry.
func (m *doc) apply(e *Entry, r *rules) []Change {
	switch e.Keyword {
	case Situation:
		return []Change{m.situation(e)}
	case NPC, Quest, Location:
		return []Change{m.upsert(e, r)}
	case Secret, Upcoming:
		return []Change{m.secretItem(e)}
	case Learned:
		return []Change{m.learned(e, r)}
	case PartyHP:
		hs, _ := parseHP(e.Text, e.More)
		cs := make([]Change, len(hs))
		for i, h := range hs {
			cs[i] = m.hp(e.Line, h)
		}
		return cs
	}
	return nil
}

// section finds a "## " section outside the secret part: the index of its
// heading and its lines [from, to), clipped at the secret part; k is -1
// when there is none.
func (m *doc) section(titles []string) (k, from, to int) {
	_, pub := m.secret()
	k = m.find(2, 0, pub, titles)
	if k < 0 {
		return -1, 0, 0
	}
	return k, m.heads[k].i + 1, min(m.end(k), pub)
}

// addSection adds a "## " section at the end of the part of the file that
// is not secret, and returns the line of its heading.
func (m *doc) addSection(title string, body []string) int {
	_, p := m.secret()
	var block []string
	if p > 0 && !isBlank(m.lines[p-1].s) {
		block = append(block, "")
	}
	at := p + len(block)
	block = append(block, "## "+title, "")
	block = append(block, body...)
	if p < len(m.lines) {
		block = append(block, "")
	}
	m.insert(p, block...)
	return at
}

// addBlock inserts block after the content of lines [from, to), a blank
// line away from it and from what follows, and returns the line of the
// block's first line.
func (m *doc) addBlock(from, to int, block []string) int {
	a, b := m.content(from, to)
	if a == b {
		b = from
	}
	ls := append([]string{""}, block...)
	if b < len(m.lines) && !isBlank(m.lines[b].s) {
		ls = append(ls, "")
	}
	m.insert(b, ls...)
	return b + 1
}

// addItem adds a list item (text, and more lines under it) at the end of
// the content of lines [from, to): after the last item of a list that
// ends it, in that list's style, or in place of its lone placeholder
// item; else as a list of its own. It returns the item's line and a note.
func (m *doc) addItem(from, to int, text string, more []string) (int, string) {
	a, b := m.content(from, to)
	if a < b {
		if first, last, extra, ok := m.listEnding(a, b); ok {
			ls := itemLines(nextPrefix(m.lines[last].s, text), text, more)
			if t, _ := m.item(first); first == last && !extra && isPlaceholder(t) {
				m.replace(first, first+1, ls...)
				return first, fmt.Sprintf("placeholder %q replaced", strings.TrimSpace(t))
			}
			m.insert(b, ls...)
			return b, ""
		}
	}
	return m.addBlock(from, to, itemLines("- ", text, more)), ""
}

// hasItem reports whether a top-level item of lines [from, to) says text.
func (m *doc) hasItem(from, to int, text string) bool {
	want := key(bare(text))
	for i := from; i < to; i++ {
		if t, ok := m.item(i); ok && key(bare(t)) == want {
			return true
		}
	}
	return false
}

// itemLines formats a list item: its first line, then more indented
// under it.
func itemLines(prefix, text string, more []string) []string {
	w := utf8.RuneCountInString(strings.TrimSuffix(prefix, "[ ] "))
	out := []string{prefix + text}
	for _, l := range more {
		if l != "" {
			l = strings.Repeat(" ", w) + l
		}
		out = append(out, l)
	}
	return out
}

// nextPrefix returns the marker of an item following the item on line s:
// the same bullet ("* "), the next number ("4. "), an empty checkbox when
// s has one and text does not.
func nextPrefix(s, text string) string {
	_, marker, at, _ := markerOf(s)
	indent := s[:len(s)-len(strings.TrimLeft(s, " \t"))]
	if n, err := strconv.Atoi(marker[:len(marker)-1]); err == nil {
		marker = strconv.Itoa(n+1) + marker[len(marker)-1:]
	}
	p := indent + marker + " "
	if _, _, ok := cutBox(s[at:]); ok {
		if _, _, has := cutBox(text); !has {
			p += "[ ] "
		}
	}
	return p
}

// situation replaces the body of the Current Situation section.
func (m *doc) situation(e *Entry) Change {
	c := Change{Line: e.Line, Keyword: Situation}
	body := e.More
	if e.Text != "" {
		body = append([]string{e.Text}, e.More...)
	}
	k, from, to := m.section(situationTitles)
	if k < 0 {
		c.Section, c.Action, c.Created = situationTitles[0], Inserted, true
		m.addSection(situationTitles[0], body)
		return c
	}
	c.Section = m.heads[k].title
	a, b := m.content(from, to)
	if a == b {
		m.addBlock(from, to, body)
		c.Action = Inserted
		return c
	}
	if same(m.lines[a:b], body) {
		c.Action = Unchanged
		return c
	}
	m.replace(a, b, body...)
	c.Action = Replaced
	return c
}

// upsert replaces the bullet of an NPC, a quest or a place, or adds one.
func (m *doc) upsert(e *Entry, r *rules) Change {
	text := normSep(e.Text)
	name, _, _ := splitEntity(bare(text))
	k2 := key(name)
	c := Change{Line: e.Line, Keyword: e.Keyword, Entity: name}
	titles := r.sections[e.Keyword]
	k, from, to := m.section(titles)
	if k < 0 {
		m.addSection(titles[0], itemLines("- ", text, e.More))
		c.Section, c.Action, c.Created = titles[0], Inserted, true
		return c
	}
	// A bullet of the entity's, anywhere in the section.
	for i := from; i < to; i++ {
		if t, ok := m.item(i); ok && entityKey(t) == k2 {
			c.Section = m.where(i)
			c.Action = m.replaceItem(i, to, text, e.More)
			return c
		}
	}
	// A subsection of the entity's: its text goes there.
	_, _, rest := splitEntity(text)
	if sk := m.entitySub(k, to, name); sk >= 0 {
		from, to := m.heads[sk].i+1, min(m.end(sk), to)
		c.Section = m.where(m.heads[sk].i)
		item, more := rest, e.More
		if item == "" && len(more) > 0 {
			item, more = stripBullet(strings.TrimSpace(more[0])), dedent(more[1:])
		}
		if item == "" || m.hasItem(from, to, item) {
			c.Action = Unchanged
			return c
		}
		_, c.Note = m.addItem(from, to, item, more)
		c.Action = Inserted
		return c
	}
	c.Action = Inserted
	tableNote := m.tableNote(from, to, k2)
	var at int
	child := min(m.firstChild(k), to)
	if lk := m.listSub(k, to, plural[e.Keyword]); lk >= 0 {
		// A subsection listing entities of the kind.
		at, c.Note = m.addItem(m.heads[lk].i+1, min(m.end(lk), to), text, e.More)
	} else if a, b := m.content(from, child); a < b || child == to {
		// The section's own list.
		at, c.Note = m.addItem(from, child, text, e.More)
	} else {
		// A section of subsections: one more.
		block := []string{"### " + name}
		if rest != "" {
			block = append(block, "- "+rest)
		}
		at = m.addBlock(from, to, append(block, e.More...))
		c.Created = true
	}
	c.Section, c.Note = m.where(at), joinNotes(c.Note, tableNote)
	return c
}

// replaceItem replaces the item on line i with text, keeping its marker,
// indentation, checkbox and bold name, and its indented lines unless more
// has some.
func (m *doc) replaceItem(i, to int, text string, more []string) Action {
	s := m.lines[i].s
	ind, marker, at, _ := markerOf(s)
	prefix, old := s[:at], s[at:]
	if box, rest, ok := cutBox(old); ok {
		if _, _, has := cutBox(text); !has {
			prefix += box + " "
		}
		old = rest
	}
	// The entity keeps its name as the file spells it: "npc: wiven mirsk -
	// ..." does not rename "Wiven Mirsk".
	if was, _, _ := splitEntity(boldReplacer.Replace(old)); was != "" {
		if name, sep, rest := splitEntity(text); name != was && strings.EqualFold(boldReplacer.Replace(name), was) {
			text = was + sep + rest
		}
	}
	if strings.HasPrefix(old, "**") && !strings.Contains(text, "**") {
		name, sep, rest := splitEntity(text)
		text = "**" + name + "**" + sep + rest
	}
	ls := []string{prefix + text}
	for _, l := range more {
		if l != "" {
			l = strings.Repeat(" ", ind+len(marker)+1) + l
		}
		ls = append(ls, l)
	}
	end := i + 1
	if len(more) > 0 {
		end = m.itemEnd(i, to)
	}
	if same(m.lines[i:end], ls) {
		return Unchanged
	}
	m.replace(i, end, ls...)
	return Replaced
}

// entitySub returns the index of a "### " heading in the section of
// heading k (ending at to) that names the entity: "The Blushing Mermaid",
// "The Vendrath Job (Pending)", "Primary Quest: The Vendrath
// Investigation"; or -1.
func (m *doc) entitySub(k, to int, name string) int {
	want := key(normTitle(name))
	for j := k + 1; j < len(m.heads) && m.heads[j].i < to; j++ {
		h := m.heads[j]
		if h.level != 3 {
			continue
		}
		forms := []string{h.norm, stripParen(h.norm)}
		if i := strings.LastIndex(h.norm, ": "); i >= 0 {
			forms = append(forms, h.norm[i+2:], stripParen(h.norm[i+2:]))
		}
		for _, f := range forms {
			if key(f) == want {
				return j
			}
		}
	}
	return -1
}

// listSub returns the index of a "### " heading in the section of heading
// k (ending at to) whose title has one of words ("Secondary Quests"), or
// -1.
func (m *doc) listSub(k, to int, words []string) int {
	for j := k + 1; j < len(m.heads) && m.heads[j].i < to; j++ {
		if m.heads[j].level != 3 {
			continue
		}
		for _, w := range strings.FieldsFunc(m.heads[j].norm, func(r rune) bool { return !unicode.IsLetter(r) }) {
			for _, p := range words {
				if w == p {
					return j
				}
			}
		}
	}
	return -1
}

// tableNote returns a note for a table row of lines [from, to) that names
// the entity, or "".
func (m *doc) tableNote(from, to int, k2 string) string {
	for i := from; i < to; i++ {
		if c, ok := tableCell(m.lines[i].s); ok && !m.code[i] && key(bare(c)) == k2 {
			return fmt.Sprintf("the table row for %q is left as it is", c)
		}
	}
	return ""
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// learned adds what the party learned.
func (m *doc) learned(e *Entry, r *rules) Change {
	c := Change{Line: e.Line, Keyword: Learned}
	text := learnedText(e)
	titles := r.sections[Learned]
	k, from, to := m.section(titles)
	if k < 0 {
		m.addSection(titles[0], itemLines("- ", text, e.More))
		c.Section, c.Action, c.Created = titles[0], Inserted, true
		return c
	}
	c.Section = m.heads[k].title
	if m.hasItem(from, to, text) {
		c.Action = Unchanged
		return c
	}
	var at int
	at, c.Note = m.addItem(from, min(m.firstChild(k), to), text, e.More)
	c.Section, c.Action = m.where(at), Inserted
	return c
}

// secretItem adds a SECRET or an UPCOMING event to the secret section,
// adding the section or its subsection when missing.
func (m *doc) secretItem(e *Entry) Change {
	c := Change{Line: e.Line, Keyword: e.Keyword, Action: Inserted}
	titles := hiddenTitles
	if e.Keyword == Upcoming {
		titles = upcomingTitles
	}
	k, _ := m.secret()
	if k < 0 {
		var block []string
		if n := len(m.lines); n > 0 && !isBlank(m.lines[n-1].s) {
			block = append(block, "")
		}
		if !m.blank() {
			block = append(block, "---", "") // not in an empty file: it would read as front matter
		}
		block = append(block, "## "+secretTitle, "", "### "+titles[0])
		m.insert(len(m.lines), append(block, itemLines("- ", e.Text, e.More)...)...)
		c.Section, c.Created = secretTitle+" > "+titles[0], true
		return c
	}
	from, to := m.heads[k].i+1, m.end(k)
	if sk := m.find(3, from, to, titles); sk >= 0 {
		from, to := m.heads[sk].i+1, m.end(sk)
		c.Section = m.where(from - 1)
		if m.hasItem(from, to, e.Text) {
			c.Action = Unchanged
			return c
		}
		_, c.Note = m.addItem(from, to, e.Text, e.More)
		return c
	}
	if e.Keyword == Secret {
		child := m.firstChild(k)
		c.Section = m.heads[k].title
		if m.hasItem(from, child, e.Text) {
			c.Action = Unchanged
			return c
		}
		_, c.Note = m.addItem(from, child, e.Text, e.More)
		return c
	}
	at := m.addBlock(from, to, append([]string{"### " + titles[0]}, itemLines("- ", e.Text, e.More)...))
	c.Section, c.Created = m.where(at), true
	return c
}

// hp sets a character's hit points in the Party Status section.
func (m *doc) hp(line int, h hp) Change {
	name := displayName(h.name)
	c := Change{Line: line, Keyword: PartyHP, Entity: name, Action: Inserted}
	entry := name + ": " + h.value
	k, from, to := m.section(partyTitles)
	if k < 0 {
		m.addSection(partyTitles[0], []string{"**Hit Points**:", "- " + entry})
		c.Section, c.Created = partyTitles[0]+" > Hit Points", true
		return c
	}
	c.Section = m.heads[k].title + " > Hit Points"
	label := -1
	for i := from; i < to; i++ {
		if !m.code[i] && isHPLabel(m.lines[i].s) {
			label = i
			break
		}
	}
	if label < 0 {
		m.addBlock(from, min(m.firstChild(k), to), []string{"**Hit Points**:", "- " + entry})
		c.Created = true
		return c
	}
	end := label + 1
	for end < to {
		s := m.lines[end].s
		if _, ok := m.item(end); !ok && (isBlank(s) || markdown.Indent(s) < 2) {
			break
		}
		end++
	}
	want, last := nameKey(h.name), -1
	for i := label + 1; i < end; i++ {
		t, ok := m.item(i)
		if !ok {
			continue
		}
		last = i
		if hasPrefixWord(nameKey(bare(t)), want) {
			if s := hpLine(m.lines[i].s, name, h.value); s != m.lines[i].s {
				m.replace(i, i+1, s)
				c.Action = Replaced
			} else {
				c.Action = Unchanged
			}
			return c
		}
	}
	if last < 0 {
		m.insert(label+1, "- "+entry)
		return c
	}
	ls := nextPrefix(m.lines[last].s, entry) + entry
	if t, _ := m.item(last); last == label+1 && end == label+2 && isPlaceholder(t) {
		m.replace(last, end, ls)
		c.Note = fmt.Sprintf("placeholder %q replaced", strings.TrimSpace(t))
		return c
	}
	m.insert(end, ls)
	return c
}

// isHPLabel reports whether a line starts the hit points list:
// "**Hit Points**:", "HP:".
func isHPLabel(s string) bool {
	if _, _, _, ok := markerOf(s); ok {
		return false
	}
	t := normTitle(s)
	return t == "hit points" || t == "hp" || strings.HasPrefix(t, "hit points:") || strings.HasPrefix(t, "hp:")
}

// hpValueRE matches hit points as a line writes them: "9/16", "9 / 16", "9".
var hpValueRE = regexp.MustCompile(`\d+(?:\s*/\s*\d+)?`)

// hpLine returns the hit points line s with a new value. When the value is
// only numbers ("15/16") and the line has some, just those change, so a
// note a person wrote beside them ("9/16 (poisoned)") stays; otherwise
// what follows the line's first colon is replaced.
func hpLine(s, name, value string) string {
	_, _, at, _ := markerOf(s)
	prefix, t := s[:at], s[at:]
	i := strings.IndexByte(t, ':')
	if i < 0 {
		return prefix + name + ": " + value
	}
	j := i + 1
	if strings.HasPrefix(t[j:], "**") || strings.HasPrefix(t[j:], "__") {
		j += 2
	}
	if loc := hpValueRE.FindStringIndex(t[j:]); loc != nil && hpValueRE.FindString(value) == value {
		return prefix + t[:j+loc[0]] + value + t[j+loc[1]:]
	}
	return prefix + t[:j] + " " + value
}

// displayName writes a kebab-case name in words: tilda-brannock is "Tilda
// Brannock", tilda is "Tilda". Other names are kept as written.
func displayName(n string) string {
	n = strings.TrimSpace(n)
	if strings.ContainsAny(n, " \t") || n != strings.ToLower(n) {
		return n
	}
	words := strings.FieldsFunc(n, func(r rune) bool { return r == '-' || r == '_' })
	for i, w := range words {
		r, size := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[size:]
	}
	return strings.Join(words, " ")
}

// same reports whether lines say ss.
func same(lines []line, ss []string) bool {
	if len(lines) != len(ss) {
		return false
	}
	for i := range lines {
		if lines[i].s != ss[i] {
			return false
		}
	}
	return true
}

// lineError returns err as a *LineError about entry e of the delta at
// path.
func lineError(path string, e *Entry, err error) *LineError {
	var le *LineError
	if errors.As(err, &le) {
		return le
	}
	if e.Word == "" && errors.Is(err, ErrNoColon) {
		return &LineError{File: path, Line: e.Line, Keyword: e.Bare, Text: bareRest(e), Err: err}
	}
	return &LineError{File: path, Line: e.Line, Keyword: e.Word, Text: e.Text, Err: err}
}
