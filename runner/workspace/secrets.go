package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parley-dev/parley/internal/markdown"
	"github.com/parley-dev/parley/mailbox"
)

// The D&D isolation guard: what the game master keeps secret, and what a
// character keeps to itself, never reaches a player or the narrator. A
// message whose text holds a sentence of the campaign's secrets is
// refused, naming the file and the secret part, when it goes to someone
// who may not know it; the words are quoted for the sender alone
// (Refusal.Quoted), since the reason is shown at players' seats. Who may
// know depends on the message: a message of a guarded type (what the
// protocol sends to players or the narrator, or what the players said)
// may carry none of the game master's secrets to anyone;
// any other message, of any type or of none (a program's plain-text
// reply), may carry them to the game master's side alone, the agents with
// a role in KeeperRoles. A character's secret may go besides to the agent
// that plays that character.
//
// The secrets are the parts of the campaign's files under a heading that
// says "secret" (any markdown heading, "## Secrets" or "Secrets"
// underlined, of any level, down to the next heading as high): in
// story-state.md, "GM Notes (Secret)" and everything under it; in a
// character's sheet, a "Secrets" part, which may go to that character but
// to no one else. A sentence is one of those parts' sentences, bullets or
// table cells with four words or more ("N/A", "None yet" and short labels
// are not secrets), the lines of a paragraph or list item read together
// (see findSecrets). A message leaks one when it holds the whole sentence,
// or eight of its words in a row. Both sides are compared in lower case,
// with punctuation and spacing evened out, so a secret copied with other
// capitals, commas or line breaks is caught; one told in other words is
// not.

// GuardedTypes are the types that may carry no secret to anyone: those
// the protocol sends to players or the narrator with the game master's
// words in them, and the players' answers bundled for the game master.
var GuardedTypes = []string{"GM_TO_PLAYER", "NARRATIVE", "NARRATOR_NOTE", "PLAYER_RESPONSES"}

// KeeperRoles are the roles that may be sent the campaign's secrets in a
// message of a type that is not guarded: the game master, who wrote them,
// and the team lead, who works for it and applies its deltas.
var KeeperRoles = []string{"gm", "team-lead"}

// CampaignsDir is the directory of a workspace that holds its campaigns.
const CampaignsDir = "campaigns"

// storyState is the game master's file of a campaign.
const storyState = "story-state.md"

// secret is a sentence a message may not carry.
type secret struct {
	text  string   // as written
	norm  string   // normalised, between spaces
	runs  []string // each leakRun words in a row of it, normalised, between spaces
	file  string   // where it is, relative to the workspace
	part  string   // the heading of the secret part it is in
	owner string   // the character it belongs to; "" for the game master's
}

// campaignDir returns the directory of the workspace's campaign: the one
// parley.yaml names, else its only one; "" when there is none.
func (w *Workspace) campaignDir() string {
	if w.Config.Campaign != "" {
		return filepath.Join(w.Root, CampaignsDir, w.Config.Campaign)
	}
	des, err := os.ReadDir(filepath.Join(w.Root, CampaignsDir))
	if err != nil {
		return ""
	}
	var dirs []string
	for _, de := range des {
		if de.IsDir() && !strings.HasPrefix(de.Name(), ".") {
			dirs = append(dirs, de.Name())
		}
	}
	if len(dirs) != 1 {
		return ""
	}
	return filepath.Join(w.Root, CampaignsDir, dirs[0])
}

// secretFiles keeps the secrets read from each file of a campaign, so
// that the guard, which runs for every message the router checks, reads
// and parses a file again only when it changed. Each check still stats
// every file: a file edited by hand (its size or modification time
// changed) is read again at once, and one removed is forgotten.
type secretFiles struct {
	mu    sync.Mutex
	files map[string]secretFile // by path
}

// secretFile is what one file held when it was read.
type secretFile struct {
	size    int64
	modTime time.Time
	list    []secret
}

// secrets reads the campaign's secrets, from the files that changed
// since the last call (see secretFiles). A file that cannot be read for
// want of permission (a program in its sandbox runs `parley send`) gives
// none: the runner, which can read it, checks the message again.
func (w *Workspace) secrets() ([]secret, error) {
	dir := w.campaignDir()
	if dir == "" {
		return nil, nil
	}
	c := &w.secretFiles
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	var out []secret
	read := func(path, owner string) error {
		fi, err := os.Stat(path)
		if err == nil {
			if f, ok := c.files[path]; ok && f.size == fi.Size() && f.modTime.Equal(fi.ModTime()) {
				seen[path] = true
				out = append(out, f.list...)
				return nil
			}
		}
		list, fi, err := w.readSecrets(path, owner)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil
		}
		if err != nil {
			return err
		}
		if c.files == nil {
			c.files = map[string]secretFile{}
		}
		c.files[path] = secretFile{size: fi.Size(), modTime: fi.ModTime(), list: list}
		seen[path] = true
		out = append(out, list...)
		return nil
	}
	defer func() {
		maps.DeleteFunc(c.files, func(path string, _ secretFile) bool { return !seen[path] })
	}()
	if err := read(filepath.Join(dir, storyState), ""); err != nil {
		return nil, err
	}
	sheets, _ := filepath.Glob(filepath.Join(dir, "party", "*.md"))
	for _, p := range sheets {
		name := strings.TrimSuffix(filepath.Base(p), ".md")
		if strings.HasSuffix(name, "-journal") {
			continue
		}
		if err := read(p, name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readSecrets reads the secrets of one file, and what the file was (its
// size and modification time) when it was read: taken from the open
// file before reading it, so an edit made while it is read is seen at
// the next check.
func (w *Workspace) readSecrets(path, owner string) ([]secret, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, err
	}
	rel, _ := filepath.Rel(w.Root, path)
	var list []secret
	for _, f := range findSecrets(string(data)) {
		list = append(list, newSecret(f.text, filepath.ToSlash(rel), f.part, owner))
	}
	return list, fi, nil
}

// Secrets are a campaign's secrets as the guard reads them: the
// sentences of the game master's and of every character's secret parts.
type Secrets struct{ list []secret }

// Secrets reads the campaign's secrets; none when the workspace has no
// campaign.
func (w *Workspace) Secrets() (*Secrets, error) {
	list, err := w.secrets()
	if err != nil {
		return nil, err
	}
	return &Secrets{list: list}, nil
}

// Withhold returns text as someone who may know none of the secrets may
// read it: without its secret parts (WithoutSecrets), without each line
// (with the indented lines that continue it, as a list item's do) that
// carries a sentence of a secret as the guard would refuse it in a
// message, and without each paragraph that still does once its lines are
// read together (a sentence broken over lines). A nil Secrets withholds
// the secret parts alone.
func (s *Secrets) Withhold(text string) string {
	text = WithoutSecrets(text)
	if s == nil || len(s.list) == 0 {
		return text
	}
	carries := func(lines []string) bool {
		norm := " " + normalise(strings.Join(lines, " ")) + " "
		return slices.ContainsFunc(s.list, func(sec secret) bool { return leaks(norm, sec) })
	}
	var kept []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); {
		j := i + 1 // a line, and the indented lines that continue it
		for j < len(lines) && continues(lines[j]) {
			j++
		}
		if !carries(lines[i:j]) {
			kept = append(kept, lines[i:j]...)
		}
		i = j
	}
	var out, para []string
	flush := func() {
		if !carries(para) {
			out = append(out, para...)
		}
		para = para[:0]
	}
	for _, line := range kept {
		if strings.TrimSpace(line) == "" {
			flush()
			out = append(out, line)
			continue
		}
		para = append(para, line)
	}
	flush()
	return strings.Join(out, "\n")
}

// continues reports whether a line continues the one before it: it is
// indented, not blank, and starts no list item of its own.
func continues(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if t == "" || t == line {
		return false
	}
	if len(t) > 1 && strings.ContainsRune("-*+", rune(t[0])) && t[1] == ' ' {
		return false
	}
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	return n == 0 || n+1 >= len(t) || !strings.ContainsRune(".)", rune(t[n])) || t[n+1] != ' '
}

// secretSentences returns the sentences of a file's secret parts.
func secretSentences(text string) []string {
	var out []string
	for _, f := range findSecrets(text) {
		out = append(out, f.text)
	}
	return out
}

// found is a sentence of a secret part, and the line of the part's
// heading: what a refusal names, instead of the sentence.
type found struct{ text, part string }

// findSecrets returns the sentences of a file's secret parts, each with
// the heading of its part. The lines of a paragraph or of a list item
// are read together, as markdown reads them: a line that continues one
// (indented under a list item, or lazy: not blank, and starting no list
// item, quote, heading, table row or fence) joins its sentence, so a
// sentence wrapped over two lines is one sentence, and eight of its
// words across the break give it away. Fail closed: where a line ends
// with no stop and the next starts with no lower-case letter, the break
// may end a sentence written without its stop, so each side counts as
// well, on its own. Table rows are read one by one, cell by cell.
func findSecrets(text string) []found {
	var out []found
	seen := map[found]bool{}
	add := func(part string, texts ...string) {
		for _, t := range texts {
			for _, s := range sentences(t) {
				f := found{s, part}
				if len(strings.Fields(normalise(s))) >= 4 && !placeholder(s) && !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
		}
	}
	var block []string // the lines of the paragraph or list item being read, their markers taken off
	part, quoted := "", false
	flush := func() {
		if len(block) > 0 {
			add(part, strings.Join(block, " "))
			if len(block) > 1 {
				// Each line on its own too, as before lines were
				// joined: fail closed (a line that ends with no stop,
				// the next starting in lower case, may be two
				// sentences a writer left without their stop).
				add(part, block...)
			}
			start := 0
			for i := 1; i < len(block); i++ {
				if mayEndSentence(block[i-1], block[i]) {
					add(part, strings.Join(block[start:i], " "))
					start = i
				}
			}
			if start > 0 {
				add(part, strings.Join(block[start:], " "))
			}
		}
		block, quoted = block[:0], false
	}
	for _, l := range secretLines(text) {
		t := strings.TrimSpace(l.text)
		if l.secret && l.heading && setextLevel(t) == 0 {
			// A heading in a secret part is a line of it too ("####
			// The abbot feeds on orphans"): its words, without the #s.
			flush()
			add(l.part, strings.TrimSpace(strings.Trim(t, "#")))
			continue
		}
		if f := opensFence(t); l.secret && f != "" {
			// What follows the fence's marks on its line (its info
			// string, to markdown) is not shown, but a model reading
			// the file reads it: a line of the part.
			flush()
			add(l.part, strings.TrimSpace(t[len(f):]))
			continue
		}
		if !l.secret || l.heading || t == "" || strings.Trim(t, "|-: ") == "" || setextLevel(t) > 0 || thematicBreak(t) || opensFence(t) != "" {
			flush()
			continue
		}
		if strings.Contains(t, "|") {
			// A table row: each cell on its own.
			flush()
			add(l.part, strings.Split(t, "|")...)
			continue
		}
		quote := t[0] == '>'
		content := strings.TrimSpace(strings.TrimLeft(t, "> \t"))
		if content == "" {
			flush()
			continue
		}
		item := startsBlock(content)
		if item || quote && !quoted || l.part != part {
			flush() // a list item or a quote starts a block of its own
		}
		part, quoted = l.part, quoted || quote
		if item {
			if content = strings.TrimSpace(content[listMarker(content):]); content == "" {
				continue // "-" alone: an empty item, or the lines under it lazy
			}
		}
		block = append(block, content)
	}
	flush()
	return out
}

// listMarker returns the length of the list item marker a line, its
// spaces trimmed, starts with ("- ", "12. "); 0 for none.
func listMarker(t string) int {
	if strings.ContainsRune("-*+", rune(t[0])) {
		return 1
	}
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n > 0 && n < len(t) && (t[n] == '.' || t[n] == ')') {
		return n + 1
	}
	return 0
}

// mayEndSentence reports whether the break between two lines of a
// paragraph may end a sentence written without its stop: the first ends
// with no stop, and the second starts with no lower-case letter.
func mayEndSentence(line, next string) bool {
	if strings.ContainsRune(".!?;", rune(line[len(line)-1])) {
		return false // sentences splits there already
	}
	r, _ := utf8.DecodeRuneInString(next)
	return !unicode.IsLower(r)
}

// WithoutSecrets returns text without its secret parts: each heading
// that says "secret" and everything under it, down to the next heading
// as high — the parts whose sentences the guard keeps from the players.
// The other lines are kept as they are, with a blank line where a part
// went between two lines of text: the line above it would otherwise run
// into the one below, and could make a heading of it.
func WithoutSecrets(text string) string {
	var kept []string
	cut := false
	for _, l := range secretLines(text) {
		if l.secret {
			cut = true
			continue
		}
		if cut && len(kept) > 0 && strings.TrimSpace(kept[len(kept)-1]) != "" && strings.TrimSpace(l.text) != "" {
			kept = append(kept, "")
		}
		kept, cut = append(kept, l.text), false
	}
	return strings.Join(kept, "\n")
}

// markedLine is a line of a text, and what secretLines found it to be.
type markedLine struct {
	text    string
	secret  bool   // in a secret part, its heading included
	heading bool   // a heading's line: its text, or a setext heading's underline
	part    string // in a secret part, the line of the heading that opened it
}

// secretLines returns each line of text, marked as in a secret part or
// not (a heading that says "secret", the heading itself included, and
// everything under it down to the next heading as high, written with
// #), and as a heading's line or not. The headings are markdown's, both
// kinds (see headings); one underlined opens a part, never ends one.
func secretLines(text string) []markedLine {
	lines := strings.Split(text, "\n")
	hs := headings(lines)
	out := make([]markedLine, 0, len(lines))
	inSecret, level, headingEnd, part := false, 0, 0, ""
	for i, line := range lines {
		// In a secret part, a paragraph over a line of - or = (a
		// setext heading, to markdown) is taken for a line of the part
		// over a rule: "Lord Varn leads the cult." then "---" ends
		// nothing, and stays secret. Only a # heading ends a part.
		if h := hs[i]; h.level > 0 && !(inSecret && h.lines > 1) {
			if inSecret && h.level <= level {
				inSecret = false
			}
			if !inSecret && strings.Contains(strings.ToLower(h.text), "secret") {
				// Named by its line, not its words: a heading may
				// say something itself ("## Secret: Marla is the cult
				// leader"), and a refusal is read at players' seats.
				inSecret, level, part = true, h.level, strconv.Itoa(i+1)
			}
			headingEnd = i + h.lines
		}
		ml := markedLine{text: line, secret: inSecret, heading: i < headingEnd}
		if inSecret {
			ml.part = part
		}
		out = append(out, ml)
	}
	return out
}

// placeholder reports whether a sentence only holds a place: "N/A -
// campaign not started", "None yet", "TBD".
func placeholder(s string) bool {
	n := normalise(s)
	for _, p := range []string{"n a", "none", "tbd", "todo", "nothing yet"} {
		if n == p || strings.HasPrefix(n, p+" ") {
			return true
		}
	}
	return false
}

// heading is a markdown heading of a text.
type heading struct {
	level int    // 1 to 6; 0 for none
	lines int    // the lines it takes: 1, or a setext heading's text and underline
	text  string // its lines, joined with spaces
}

// headings returns the markdown headings of a text's lines, each at the
// index of its first line: an ATX heading ("## Secrets"), and a setext
// one — a paragraph underlined with "=" (level 1) or "-" (level 2), the
// paragraph's lines its text. A line of "---" with no paragraph line
// right above it is a thematic break, not an underline; nor is one under
// a list item, a quote, a table or indented code, or the closing fence
// of the frontmatter. Nothing in the frontmatter or in a fenced code
// block is a heading.
func headings(lines []string) []heading {
	out := make([]heading, len(lines))
	const (
		none  = iota // after a blank line, a heading or a thematic break
		para         // in a paragraph, which started at start
		block        // in a list item, a quote, a table or indented code
	)
	state, start, fence := none, 0, ""
	i := 0
	if len(lines) > 0 && strings.TrimRight(lines[0], " \t\r") == "---" {
		for j := 1; j < len(lines); j++ {
			if t := strings.TrimRight(lines[j], " \t\r"); t == "---" || t == "..." {
				i = j + 1 // the frontmatter's lines, fences included, are no headings
				break
			}
		}
	}
	for ; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		t := strings.TrimLeft(line, " \t")
		indent := markdown.Indent(line)
		if fence != "" {
			if indent < 4 && closesFence(t, fence) {
				fence = ""
			}
			continue
		}
		switch {
		case t == "":
			state = none
		case indent < 4 && opensFence(t) != "" && fenceCloses(lines[i+1:], opensFence(t)):
			// A fence never closed is taken for no fence: markdown runs
			// its block to the end of the file, which would hide the
			// headings below it, and show a secret part under them.
			fence, state = opensFence(t), none
		case headingLevel(t) > 0:
			out[i] = heading{level: headingLevel(t), lines: 1, text: t}
			state = none
		case state == para && indent < 4 && setextLevel(t) > 0:
			var words []string
			for _, l := range lines[start:i] {
				words = append(words, strings.TrimSpace(l))
			}
			out[start] = heading{level: setextLevel(t), lines: i - start + 1, text: strings.Join(words, " ")}
			state = none
		case indent < 4 && thematicBreak(t):
			state = none
		case indent < 4 && startsBlock(t):
			state = block
		case state == none && indent >= 4:
			state = block
		case state == none:
			state, start = para, i
		}
	}
	return out
}

// fenceCloses reports whether one of lines closes the code fence fence.
func fenceCloses(lines []string, fence string) bool {
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if markdown.Indent(l) < 4 && closesFence(strings.TrimLeft(l, " \t"), fence) {
			return true
		}
	}
	return false
}

// headingLevel returns the level of an ATX heading line ("## Title"), 0
// for none.
func headingLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(line) && line[n] != ' ' && line[n] != '\t' {
		return 0
	}
	return n
}

// setextLevel returns the level of a setext heading's underline ("===="
// 1, "----" 2), its spaces trimmed; 0 for none.
func setextLevel(t string) int {
	switch {
	case t == "":
		return 0
	case strings.Trim(t, "=") == "":
		return 1
	case strings.Trim(t, "-") == "":
		return 2
	}
	return 0
}

// thematicBreak reports whether a line, its spaces trimmed, is a
// thematic break: three or more of one of "-", "*", "_", spaces between.
func thematicBreak(t string) bool {
	if t == "" || !strings.ContainsRune("-*_", rune(t[0])) {
		return false
	}
	rest := strings.NewReplacer(" ", "", "\t", "").Replace(t)
	return len(rest) >= 3 && strings.Trim(rest, t[:1]) == ""
}

// startsBlock reports whether a line, its spaces trimmed, starts a list
// item, a quote or a table row: what a paragraph is not, and what a
// setext underline cannot follow.
func startsBlock(t string) bool {
	if t[0] == '>' || t[0] == '|' {
		return true
	}
	if strings.ContainsRune("-*+", rune(t[0])) {
		return len(t) == 1 || t[1] == ' ' || t[1] == '\t'
	}
	n := 0
	for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	return n > 0 && n < len(t) && (t[n] == '.' || t[n] == ')') && (n+1 == len(t) || t[n+1] == ' ' || t[n+1] == '\t')
}

// opensFence returns the fence a line opens, its spaces trimmed (three
// or more "`" or "~"), "" for none.
func opensFence(t string) string {
	if t == "" || t[0] != '`' && t[0] != '~' {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || t[0] == '`' && strings.Contains(t[n:], "`") {
		return ""
	}
	return t[:n]
}

// closesFence reports whether a line, its spaces trimmed, closes a
// fence: as many of its character or more, and nothing else.
func closesFence(t, fence string) bool {
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == ""
}

// sentences splits text at the ends of sentences.
func sentences(text string) []string {
	text = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(text), "-*+>"))
	var out []string
	start := 0
	for i, r := range text {
		if (r == '.' || r == '!' || r == '?' || r == ';') && (i+1 == len(text) || text[i+1] == ' ') {
			if s := strings.TrimSpace(text[start : i+1]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// normalise writes text in lower case, its letters and digits only, one
// space between words.
func normalise(text string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

// checkSecrets refuses a message, of any type or of none, that carries a
// secret to a recipient who may not know it: anyone, for a guarded type;
// anyone but the keepers (KeeperRoles), for the others; and, for a
// character's secret, anyone but those and the agent playing it.
func (w *Workspace) checkSecrets(m *mailbox.Message, recipients []string) (*Refusal, error) {
	guarded := slices.Contains(GuardedTypes, TypeOf(m))
	keeper := func(agent string) bool { return !guarded && w.HasRole(agent, KeeperRoles...) }
	if !slices.ContainsFunc(recipients, func(a string) bool { return !keeper(a) }) {
		return nil, nil // only keepers read it: no file need be read
	}
	all, err := w.secrets()
	if err != nil || len(all) == 0 {
		return nil, err
	}
	// The text a recipient reads: the body, and the payload's values.
	type part struct{ field, norm string }
	parts := []part{{"body", " " + normalise(string(m.Body)) + " "}}
	for _, k := range m.Payload().Keys() {
		if IsAddressField(k) {
			continue
		}
		parts = append(parts, part{k, " " + normalise(m.Payload().Text(k)) + " "})
	}
	plays := func(agent string) string {
		if a, ok := w.Agent(agent); ok && a.Character != "" {
			return a.Character
		}
		return agent
	}
	for _, s := range all {
		barred := slices.DeleteFunc(slices.Clone(recipients), func(a string) bool {
			return keeper(a) || s.owner != "" && plays(a) == s.owner
		})
		if len(barred) == 0 {
			continue // to those who may know it alone
		}
		for _, p := range parts {
			if said := leaked(p.norm, s); said != "" {
				whose := "the game master's secrets"
				if s.owner != "" {
					whose = s.owner + "'s secrets"
				}
				what := "a sentence"
				if said != s.text {
					what = "words" // of a sentence the sender did not write whole: not quoted whole
				}
				// The reason names the file and the part, never the
				// words: it is shown to people who may not know them
				// (a notice at a player's seat, parley status, the
				// journal). The words go in Quote, for the sender.
				//
				// Telling it on purpose is a choice made in the file:
				// once the sentence is out of the secret part (the
				// runner reads the file again when it changes), it is
				// no secret, and the message goes.
				hint := fmt.Sprintf("to tell it on purpose, first move the sentence out of the secret part (edit %s), then send the message again", s.file)
				return &Refusal{
					Line: m.Payload().Line(p.field), Field: p.field,
					Reason: fmt.Sprintf("carries %s of %s (%s, the secret part at line %s) to %s, who may not know it; %s", what, whose, s.file, s.part, strings.Join(barred, ", "), hint),
					Quote:  said,
					Hint:   hint,
				}, nil
			}
		}
	}
	return nil, nil
}

// leakRun is how many words in a row of a secret give it away, when the
// secret is longer: a clause copied out of it counts.
const leakRun = 8

// leaks reports whether a text (normalised, between spaces) holds a
// secret: the whole of it, or leakRun of its words in a row.
func leaks(text string, s secret) bool {
	if strings.Contains(text, s.norm) {
		return true
	}
	return slices.ContainsFunc(s.runs, func(run string) bool { return strings.Contains(text, run) })
}

// leaked returns what of a secret a text (normalised, between spaces)
// holds, to quote in the refusal: the secret as written when the text
// holds all of it, else the longest run of its words the text holds from
// the first run of leakRun that gives it away (normalised, as the text
// has them). Never more than the sender wrote: a refusal that quoted the
// whole sentence told a player who happened on eight of its words the
// rest of the secret. "" when the text holds none of it.
func leaked(text string, s secret) string {
	if strings.Contains(text, s.norm) {
		return s.text
	}
	i := slices.IndexFunc(s.runs, func(run string) bool { return strings.Contains(text, run) })
	if i < 0 {
		return ""
	}
	words := strings.Fields(s.norm)
	end := i + leakRun
	for end < len(words) && strings.Contains(text, " "+strings.Join(words[i:end+1], " ")+" ") {
		end++
	}
	return strings.Join(words[i:end], " ")
}

// newSecret makes the secret of a sentence of file: normalised, with its
// runs of leakRun words worked out once, as leaks compares them.
func newSecret(sentence, file, part, owner string) secret {
	norm := normalise(sentence)
	s := secret{text: sentence, norm: " " + norm + " ", file: file, part: part, owner: owner}
	words := strings.Fields(norm)
	for i := 0; i+leakRun <= len(words); i++ {
		s.runs = append(s.runs, " "+strings.Join(words[i:i+leakRun], " ")+" ")
	}
	return s
}

// IsAddressField reports whether a field addresses a message (from, to,
// cc) rather than carrying what it says.
func IsAddressField(key string) bool {
	return key == "from" || key == "to" || key == "cc"
}
