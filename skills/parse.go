package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/parley-dev/parley/mailbox"
)

// Parse reads a skill document. source names it in problems. It does not
// fail: what it cannot read is listed in the skill's Problems, with the
// line and the section, and errors among them make the skill unusable
// (see Skill.Err).
func Parse(source string, data []byte) *Skill {
	sum := sha256.Sum256(data)
	s := &Skill{Source: source, Hash: hex.EncodeToString(sum[:6])}
	// Read CRLF files as LF ones: lines keep their numbers.
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	p := &parser{skill: s, types: make(map[string]*typeState)}
	body, bodyLine := p.frontmatter(data)
	p.src = body
	p.lineOffset = bodyLine - 1
	p.lineStarts = lineStarts(body)
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(body))
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		p.block(n)
	}
	p.finish()
	return s
}

// parser holds the state of one Parse.
type parser struct {
	skill      *Skill
	src        []byte
	lineOffset int   // lines before the markdown body (the frontmatter)
	lineStarts []int // byte offset of each body line

	headings []heading
	cur      *typeState // the type whose section we are in
	types    map[string]*typeState
	order    []*typeState

	when          *pendingWhen // for the next field table
	lastPara      string       // the paragraph just read, for a list of values after it
	noBroadcast   bool         // "cannot be broadcast" said outside a type
	noBroadcastAt int
}

type heading struct {
	level int
	text  string
	line  int
}

// typeState is a type being read, with what is needed to finish it.
type typeState struct {
	*Type
	level                  int  // heading level of its section; 0 when only in a table
	byHeading              bool // defined by a heading (else by a table row or an example)
	sectionFrom, sectionTo string
	required               []string            // from Required: lines
	optional               []string            // from Optional: lines
	examples               [][]string          // top-level keys of each example payload
	enums                  map[string][]string // from example payloads
	byExample              bool                // defined by JSON examples (fields from their keys)
	path                   string              // every heading above it, for "structured" sections
	booleans               map[string]bool     // JSON example keys whose values are all booleans
}

type pendingWhen struct {
	field, value string
}

// frontmatter reads the skill's name, description and version from the
// document's frontmatter, and returns the markdown body after it and the
// line it starts on. mailbox.Parse reads and checks the header, as it does
// a message's; mailbox.SplitFrontmatter says where the body starts. A
// document without frontmatter is all body.
func (p *parser) frontmatter(data []byte) (body []byte, bodyLine int) {
	m, err := mailbox.Parse(data)
	if errors.Is(err, mailbox.ErrNoHeader) || err == nil && m.Tag != "" {
		// A document without frontmatter is read all the same, and named
		// after its file.
		p.skill.Name = nameFromSource(p.skill.Source)
		p.problem(1, fmt.Sprintf("no frontmatter (name:, description:): named %q after its file", p.skill.Name), true)
		return data, 1
	}
	if errors.Is(err, mailbox.ErrEmpty) {
		p.problem(1, "empty file", false)
		return data, 1
	}
	if err != nil {
		msg := "frontmatter: " + err.Error()
		var pe *mailbox.ParseError
		if errors.As(err, &pe) {
			msg = "frontmatter: " + pe.Err.Error()
			if pe.Field != "" && pe.Field != "header" {
				msg = "frontmatter: " + pe.Field + ": " + pe.Err.Error()
			}
			p.problem(max(pe.Line, 1), msg, false)
		} else {
			p.problem(1, msg, false)
		}
		return data, 1
	}
	s := p.skill
	s.Name, _ = m.Payload().Get("name")
	s.Description, _ = m.Payload().Get("description")
	s.Version, _ = m.Payload().Get("version")
	switch {
	case s.Name == "":
		p.problem(1, "frontmatter: name: missing", false)
	case mailbox.CheckName(s.Name) != nil:
		p.problem(max(m.Payload().Line("name"), 1), "frontmatter: name: "+mailbox.CheckName(s.Name).Error(), false)
	}
	if s.Description == "" {
		p.problem(1, "frontmatter: description: missing", true)
	}
	// Parse read the header of a frontmatter, so the split finds it.
	fm, err := mailbox.SplitFrontmatter(data)
	if err != nil {
		return data, 1
	}
	return fm.Body, fm.BodyLine
}

// nameFromSource makes a skill name of a file name: "send-message-tool.md"
// gives send-message-tool.
func nameFromSource(source string) string {
	base := source
	if i := strings.LastIndexAny(base, "/\\:"); i >= 0 {
		base = base[i+1:]
	}
	base = strings.TrimSuffix(strings.ToLower(base), ".md")
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// problem records something the document holds that could not be read.
func (p *parser) problem(line int, msg string, warning bool) {
	p.skill.Problems = append(p.skill.Problems, Problem{Line: line, Section: p.section(), Message: msg, Warning: warning})
}

// section is the text of the innermost heading.
func (p *parser) section() string {
	if len(p.headings) == 0 {
		return ""
	}
	return p.headings[len(p.headings)-1].text
}

func (p *parser) block(n gast.Node) {
	defer func() {
		if _, ok := n.(*gast.Paragraph); !ok {
			p.lastPara = "" // a list of values follows its paragraph at once
		}
	}()
	switch n := n.(type) {
	case *gast.Heading:
		p.heading(n)
	case *gast.Paragraph:
		p.paragraph(n)
	case *gast.List:
		if p.valueList(n) {
			break
		}
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			if first := item.FirstChild(); first != nil {
				txt, line := strings.TrimSpace(p.inline(first)), p.line(first)
				if labelled.MatchString(txt) {
					p.bullet(txt, line)
				} else {
					p.prose(txt, line) // Required:, Hard rule: ... in a list
				}
			}
		}
	case *east.Table:
		p.table(n)
	case *gast.FencedCodeBlock:
		p.example(n)
	case *gast.Blockquote:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if para, ok := c.(*gast.Paragraph); ok {
				p.prose(p.inline(para), p.line(para))
			}
		}
	}
}

var (
	tagHeading   = regexp.MustCompile("^`?\\[([A-Za-z][A-Za-z0-9_]*)\\]`?(\\s|$|\\{)")
	badTag       = regexp.MustCompile("^`?\\[[^\\]]*\\]")
	plainHeading = regexp.MustCompile("^`?([a-z][a-z0-9]*(?:_[a-z0-9]+)*)`?\\s*(\\{#[^}]*\\})?$")
	arrow        = regexp.MustCompile(`(?i)^(.+?)\s*(?:→|->|\bto\b)\s*(.+?)(?:\s+(?:message types|messages))?$`)
)

func (p *parser) heading(n *gast.Heading) {
	txt := strings.TrimSpace(p.inline(n))
	line := p.line(n)
	if p.cur != nil && n.Level <= p.cur.level {
		p.cur = nil
	}
	for len(p.headings) > 0 && p.headings[len(p.headings)-1].level >= n.Level {
		p.headings = p.headings[:len(p.headings)-1]
	}
	p.headings = append(p.headings, heading{level: n.Level, text: stripTicks(txt), line: line})
	p.when = nil
	if n.Level < 2 {
		return
	}
	name, tagged := "", false
	switch {
	case tagHeading.MatchString(txt):
		name, tagged = tagHeading.FindStringSubmatch(txt)[1], true
	case badTag.MatchString(txt):
		p.problem(line, fmt.Sprintf("heading %q names no message type: a tag is [NAME] in letters, digits and _", txt), false)
		return
	case plainHeading.MatchString(txt) && n.Level <= 3:
		name = plainHeading.FindStringSubmatch(txt)[1]
	default:
		return
	}
	t := p.typeNamed(name, line)
	if t.byHeading {
		p.problem(line, fmt.Sprintf("%s is defined twice: here and on line %d", displayName(name, tagged), t.Line), false)
		p.cur = nil
		return
	}
	t.byHeading, t.Tagged, t.Line, t.level = true, tagged, line, n.Level
	t.Section = p.parentSection()
	t.path = p.headingPath()
	t.sectionFrom, t.sectionTo, _ = headingRoles(t.Section)
	p.cur = t
}

// headingRoles reads a heading that says who sends to whom: "Agent →
// Orchestrator", "GM to Players"; not a sentence with "to" in it
// ("Responding to Narrator Requests").
func headingRoles(heading string) (from, to string, ok bool) {
	m := arrow.FindStringSubmatch(heading)
	if m == nil {
		return "", "", false
	}
	if strings.Contains(heading, "→") || strings.Contains(heading, "->") || rolePhrase(m[1]) && rolePhrase(m[2]) {
		return m[1], m[2], true
	}
	return "", "", false
}

// rolePhrase reports whether one side of a heading "X to Y" may name
// roles ("GM", "the player teammates") rather than be part of a sentence
// ("Responding", "Narrator Requests"): a few words, none a verb in -ing,
// and, past the first, words parley knows for roles.
func rolePhrase(s string) bool {
	words := strings.Fields(strings.ToLower(stripTicks(s)))
	if len(words) == 0 || len(words) > 4 {
		return false
	}
	for i, w := range words {
		if strings.HasSuffix(w, "ing") {
			return false
		}
		if i > 0 && w != "or" && w != "and" && w != "all" {
			if _, ok := roleWords[strings.TrimSuffix(w, "s")]; !ok {
				if _, ok := roleWords[w]; !ok && !slices.Contains([]string{"the", "a", "an", "any", "each", "every", "other"}, w) {
					return false
				}
			}
		}
	}
	return true
}

// headingPath is the text of every heading we are under.
func (p *parser) headingPath() string {
	parts := make([]string, len(p.headings))
	for i, h := range p.headings {
		parts[i] = h.text
	}
	return strings.Join(parts, " / ")
}

// parentSection is the text of the heading above the current one.
func (p *parser) parentSection() string {
	if len(p.headings) < 2 {
		return ""
	}
	return p.headings[len(p.headings)-2].text
}

// typeNamed returns the type of this name, creating it.
func (p *parser) typeNamed(name string, line int) *typeState {
	if t, ok := p.types[name]; ok {
		return t
	}
	t := &typeState{Type: &Type{Name: name, Line: line}, enums: map[string][]string{}}
	p.types[name] = t
	p.order = append(p.order, t)
	return t
}

func displayName(name string, tagged bool) string {
	if tagged {
		return "[" + name + "]"
	}
	return name
}

var (
	labelled     = regexp.MustCompile(`^(Sender|Senders|Recipient|Recipients|Transport|Phase|Emitted by|Sent to|Copied to|Visible to)\s*:\s*(.+)$`)
	listLine     = regexp.MustCompile(`^(Required|Optional)\s*:\s*(.*)$`)
	hardRule     = regexp.MustCompile(`^Hard rule\s*:\s*(.*)$`)
	additional   = regexp.MustCompile("^Additional fields (?:for `([^`]+)` (?:command|value)|when `([^`]+)` is `([^`]+)`)")
	typeMention  = regexp.MustCompile("`type:\\s*\"([a-z][a-z0-9_]*)\"`")
	noBroadcast  = regexp.MustCompile(`(?i)\b(cannot|can't|must not|may not|never) be broadcast|never broadcast|direct only`)
	tableLooking = regexp.MustCompile(`^\|.*\|`)
)

func (p *parser) paragraph(n *gast.Paragraph) {
	txt := strings.TrimSpace(p.inline(n))
	line := p.line(n)
	p.lastPara = txt
	// Lines that each start with a label ("Emitted by: worker", then
	// "Sent to: lead") are read one by one, not as one sentence.
	if lines := strings.Split(p.inlineBreaks(n, '\n'), "\n"); len(lines) > 1 && startsLabel(lines[0]) && startsLabel(lines[1]) {
		for i, l := range lines {
			p.prose(strings.TrimSpace(l), line+i)
		}
		return
	}
	if tableLooking.MatchString(txt) {
		p.problem(line, "looks like a table but is not one: a table needs a header row, then a |---|---| row", false)
		return
	}
	p.prose(txt, line)
}

// startsLabel reports whether a line starts with a label parley reads:
// Sender:, Emitted by:, Required:, Hard rule: ...
func startsLabel(line string) bool {
	line = strings.TrimSpace(line)
	return labelled.MatchString(line) || listLine.MatchString(line) || hardRule.MatchString(line)
}

// prose reads the sentences of a paragraph that carry schema.
func (p *parser) prose(txt string, line int) {
	if m := labelled.FindStringSubmatch(txt); m != nil && p.cur != nil {
		p.bullet(txt, line)
		return
	}
	if p.cur != nil && strings.HasPrefix(txt, "`") {
		// "`stage` is `draft` or `final`."
		if m := fieldValues.FindStringSubmatch(txt); m != nil {
			p.cur.enums[m[1]] = union(p.cur.enums[m[1]], oneOf(m[2]))
		}
	}
	// Cheap looks for the words each pattern needs keep the patterns off
	// most paragraphs: reading a skill is on the path of every command
	// that checks a message.
	lower := strings.ToLower(txt)
	if strings.Contains(txt, "`type:") {
		for _, m := range typeMention.FindAllStringSubmatch(txt, -1) {
			t := p.typeNamed(m[1], line)
			if t.Section == "" {
				t.Section, t.path = p.section(), p.headingPath()
			}
		}
	}
	if (strings.Contains(lower, "broadcast") || strings.Contains(lower, "direct only")) && noBroadcast.MatchString(txt) {
		if p.cur != nil {
			p.cur.NoBroadcast = true
		} else {
			p.noBroadcast, p.noBroadcastAt = true, line
		}
	}
	if p.cur == nil {
		if hardRule.MatchString(txt) {
			p.problem(line, "hard rule outside a message type: put it under the type it constrains", false)
		}
		return
	}
	t := p.cur
	if roles := observers(txt); roles != nil {
		if t.Observers == nil {
			t.ObserversLine = line
		}
		for _, r := range roles {
			if !slices.Contains(t.Observers, r) {
				t.Observers = append(t.Observers, r)
			}
		}
	}
	switch {
	case listLine.MatchString(txt):
		m := listLine.FindStringSubmatch(txt)
		names := leadingSpans(m[2])
		if len(names) == 0 {
			p.problem(line, m[1]+": names no field: write the fields in backticks, separated by commas", false)
			return
		}
		if m[1] == "Required" {
			t.required = append(t.required, names...)
		} else {
			t.optional = append(t.optional, names...)
		}
	case hardRule.MatchString(txt):
		r, err := parseRule(hardRule.FindStringSubmatch(txt)[1])
		if err != nil {
			p.problem(line, "hard rule: "+err.Error(), false)
			return
		}
		r.Line = line
		t.Rules = append(t.Rules, r)
	case additional.MatchString(txt):
		m := additional.FindStringSubmatch(txt)
		if m[1] != "" {
			p.when = &pendingWhen{value: m[1]}
		} else {
			p.when = &pendingWhen{field: m[2], value: m[3]}
		}
	}
}

var (
	seesVerb  = regexp.MustCompile(`(?i)\b(?:sees?|captures?|receives? a copy of|gets? a copy of)\b`)
	seesEvery = regexp.MustCompile(`(?i)\b(?:every|all|each)\b`)
)

// observers reads a rule that lets roles see every message of a type,
// as protocols write it: "GM sees all player-to-player messages via peer
// DM visibility", "Narrator captures via peer DM visibility", "The gm and
// the narrator see every player-to-player message". The sentence names
// the roles before its verb, and speaks of visibility or of every
// message. It returns nil for any other sentence.
func observers(txt string) []string {
	lower := strings.ToLower(txt)
	if !strings.Contains(lower, "see") && !strings.Contains(lower, "captur") && !strings.Contains(lower, "a copy of") {
		return nil
	}
	loc := seesVerb.FindStringIndex(txt)
	if loc == nil {
		return nil
	}
	rest := strings.ToLower(txt[loc[1]:])
	if !strings.Contains(rest, "visibility") && !seesEvery.MatchString(rest) {
		return nil
	}
	subject := strings.TrimSpace(txt[:loc[0]])
	if subject == "" || len(strings.Fields(subject)) > 6 || strings.ContainsAny(subject, ".;:()[]`*") {
		return nil
	}
	roles, _ := parseRoles(subject)
	if len(roles) == 0 || slices.Contains(roles, "*") || slices.Contains(roles, "any") {
		return nil
	}
	return roles
}

// bullet reads a "Sender: gm" line, from a list or a paragraph.
func (p *parser) bullet(txt string, line int) {
	m := labelled.FindStringSubmatch(strings.TrimSpace(txt))
	if m == nil || p.cur == nil {
		return
	}
	t := p.cur
	value := strings.TrimSpace(m[2])
	switch m[1] {
	case "Sender", "Senders", "Emitted by":
		t.SenderText = value
		t.Senders, _ = parseRoles(value)
	case "Recipient", "Recipients", "Sent to":
		t.RecipientText, t.RecipientLine = value, line
		var all bool
		t.Recipients, all = parseRoles(value)
		t.AllRecipients = t.AllRecipients || all
	case "Copied to", "Visible to":
		t.Observers, _ = parseRoles(value)
		t.ObserversLine = line
	case "Transport":
		t.Transport, t.NoBroadcast = parseTransport(value, t.NoBroadcast)
	case "Phase":
		if ph := parsePhase(value); ph != "" {
			t.Phase = ph
		} else {
			p.problem(line, fmt.Sprintf("phase %q not understood: write 1+, 2+ or 1 only", value), true)
		}
	}
}

func (p *parser) table(n *east.Table) {
	var header []string
	var rows [][]cell
	for r := n.FirstChild(); r != nil; r = r.NextSibling() {
		var cells []cell
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, cell{text: strings.TrimSpace(p.inline(c)), line: p.line(c)})
		}
		if _, ok := r.(*east.TableHeader); ok {
			for _, c := range cells {
				header = append(header, strings.ToLower(stripTicks(c.text)))
			}
			continue
		}
		rows = append(rows, cells)
	}
	line := p.line(n)
	col := func(names ...string) int {
		for i, h := range header {
			for _, name := range names {
				if h == name {
					return i
				}
			}
		}
		return -1
	}
	switch {
	case col("field") >= 0 && col("required") >= 0:
		p.fieldTable(rows, col("field"), col("required"), col("description"), line)
	case col("tag", "message", "type") >= 0 && col("sender") >= 0 && col("recipient") >= 0:
		p.referenceTable(rows, col("tag", "message", "type"), col("sender"), col("recipient"), col("transport"), col("phase"))
	case col("signal") >= 0 && col("meaning") >= 0:
		p.signalTable(rows, col("signal"), col("meaning"), col("emitted by", "sent by", "sender", "from"), col("sent to", "recipient", "to"))
	case col("message", "tag", "type") >= 0 && col("deprecated") >= 0:
		p.deprecationTable(rows, col("message", "tag", "type"), col("introduced"), col("deprecated"), col("replacement"))
	default:
		p.problem(line, fmt.Sprintf("table not understood (columns: %s); skipped", strings.Join(header, ", ")), true)
	}
	p.when = nil
}

type cell struct {
	text string
	line int
}

func at(cells []cell, i int) string {
	if i < 0 || i >= len(cells) {
		return ""
	}
	return cells[i].text
}

func (p *parser) fieldTable(rows [][]cell, fieldCol, reqCol, descCol, line int) {
	if p.cur == nil {
		p.problem(line, "field table outside a message type: put it under the type's heading", false)
		return
	}
	t := p.cur
	var when *Condition
	if p.when != nil {
		when = &Condition{Path: p.when.field, Op: "==", Value: p.when.value}
		if when.Path == "" {
			for _, f := range t.Fields {
				if contains(f.Enum, p.when.value) {
					when.Path = f.Name
				}
			}
			if when.Path == "" {
				p.problem(line, fmt.Sprintf("additional fields for %q: no field of %s has that value", p.when.value, t.Name), false)
				when = nil
			}
		}
	}
	for _, r := range rows {
		rowLine := line
		if len(r) > 0 {
			rowLine = r[0].line
		}
		name := stripTicks(at(r, fieldCol))
		if name == "" {
			p.problem(rowLine, "field table row without a field name", false)
			continue
		}
		if strings.ContainsAny(name, " `") {
			p.problem(rowLine, fmt.Sprintf("field %q: a field name is one word (letters, digits, _, . and [])", name), false)
			continue
		}
		req := strings.ToLower(strings.TrimSpace(stripTicks(at(r, reqCol))))
		var required bool
		switch {
		case strings.HasPrefix(req, "yes"), strings.HasPrefix(req, "required"), req == "y":
			required = true
		case strings.HasPrefix(req, "no"), strings.HasPrefix(req, "optional"), req == "n":
		default:
			p.problem(rowLine, fmt.Sprintf("field %s: Required is %q: write Yes or No", name, at(r, reqCol)), false)
			continue
		}
		desc := at(r, descCol)
		f := &Field{Name: name, Required: required, Description: stripTicks(desc), Enum: oneOf(desc), When: when, Line: rowLine}
		if old, ok := t.Field(name); ok && old.When == nil && when == nil {
			p.problem(rowLine, fmt.Sprintf("field %s of %s is listed twice (line %d)", name, t.Name, old.Line), false)
			continue
		}
		t.Fields = append(t.Fields, f)
	}
}

func (p *parser) referenceTable(rows [][]cell, nameCol, senderCol, recipientCol, transportCol, phaseCol int) {
	seenRows := map[string]bool{}
	for _, r := range rows {
		raw := at(r, nameCol)
		name, tagged := typeCell(raw)
		if name == "" {
			p.problem(cellLine(r), fmt.Sprintf("reference table row %q names no message type", raw), false)
			continue
		}
		if seenRows[name] {
			p.problem(cellLine(r), fmt.Sprintf("%s is listed twice in the reference table", displayName(name, tagged)), true)
			continue
		}
		seenRows[name] = true
		t := p.typeNamed(name, cellLine(r))
		t.Tagged = t.Tagged || tagged
		if t.SenderText == "" {
			t.SenderText = at(r, senderCol)
			t.Senders, _ = parseRoles(t.SenderText)
		}
		if t.RecipientText == "" {
			t.RecipientText, t.RecipientLine = at(r, recipientCol), cellLine(r)
			var all bool
			t.Recipients, all = parseRoles(t.RecipientText)
			t.AllRecipients = t.AllRecipients || all
		}
		if t.Transport == "" && transportCol >= 0 {
			t.Transport, t.NoBroadcast = parseTransport(at(r, transportCol), t.NoBroadcast)
		}
		if t.Phase == "" && phaseCol >= 0 {
			t.Phase = parsePhase(at(r, phaseCol))
		}
	}
}

func (p *parser) signalTable(rows [][]cell, nameCol, meaningCol, senderCol, recipientCol int) {
	for _, r := range rows {
		name := stripTicks(at(r, nameCol))
		if name == "" {
			continue
		}
		sig := &Signal{Name: name, Meaning: at(r, meaningCol), Direction: p.section(), Line: cellLine(r)}
		if senderCol >= 0 {
			sig.Senders, _ = parseRoles(at(r, senderCol))
		}
		if recipientCol >= 0 {
			sig.Recipients, _ = parseRoles(at(r, recipientCol))
		}
		p.skill.Signals = append(p.skill.Signals, sig)
	}
}

func (p *parser) deprecationTable(rows [][]cell, nameCol, introCol, deprCol, replCol int) {
	for _, r := range rows {
		name, _ := typeCell(at(r, nameCol))
		if name == "" {
			p.problem(cellLine(r), fmt.Sprintf("deprecation row %q names no message type", at(r, nameCol)), false)
			continue
		}
		p.skill.Deprecations = append(p.skill.Deprecations, Deprecation{
			Type: name, Introduced: stripTicks(at(r, introCol)), Deprecated: stripTicks(at(r, deprCol)),
			Replacement: stripTicks(at(r, replCol)), Line: cellLine(r),
		})
	}
}

func cellLine(r []cell) int {
	if len(r) == 0 {
		return 0
	}
	return r[0].line
}

var tagCell = regexp.MustCompile(`^\[?` + "`?" + `\[([A-Za-z][A-Za-z0-9_]*)\]`)

// typeCell reads a type name from a table cell: "[`[NARRATIVE]`](#narrative)",
// "`[NARRATIVE]`" or "`review_verdict`".
func typeCell(s string) (name string, tagged bool) {
	s = strings.TrimSpace(s)
	if m := tagCell.FindStringSubmatch(s); m != nil {
		return m[1], true
	}
	if m := plainHeading.FindStringSubmatch(s); m != nil {
		return m[1], false
	}
	return "", false
}

// example reads a fenced code block: a payload example of the current type
// (enumerations "a | b", its keys), or a JSON example that names its type.
func (p *parser) example(n *gast.FencedCodeBlock) {
	var b bytes.Buffer
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(p.src))
	}
	content := b.String()
	lang := strings.ToLower(string(n.Language(p.src)))
	trimmed := strings.TrimSpace(content)
	if (lang == "typescript" || lang == "ts" || lang == "") && interfaceStart.MatchString(content) {
		p.interfaces(content, p.line(n))
		return
	}
	if lang == "json" || strings.HasPrefix(trimmed, "{") {
		p.jsonExample(trimmed, p.line(n))
		return
	}
	if p.cur == nil {
		return
	}
	t := p.cur
	body := content
	first, rest, _ := strings.Cut(trimmed, "\n")
	switch {
	case strings.HasPrefix(first, "["):
		name, _ := typeCell(first)
		if name != t.Name {
			return // another type's payload, shown for comparison
		}
		body = rest
	case first == "---":
		inner, _, ok := strings.Cut(rest, "\n---")
		if !ok {
			return
		}
		body = inner
	default:
		return
	}
	keys, enums := exampleFields(body)
	if typ, ok := enums["type"]; ok && !t.Tagged && len(typ) > 0 && typ[0] != t.Name {
		return
	}
	t.examples = append(t.examples, keys)
	for path, values := range enums {
		t.enums[path] = union(t.enums[path], values)
	}
}

// exampleFields reads the top-level keys of an example payload and the
// enumerations written in it as "key: A | B | C", by dotted path.
func exampleFields(body string) (keys []string, enums map[string][]string) {
	enums = map[string][]string{}
	type level struct {
		indent int
		path   string
	}
	var stack []level
	for _, raw := range strings.Split(body, "\n") {
		line := strings.TrimRight(raw, " \t\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		rest := strings.TrimSpace(line)
		item := false
		if strings.HasPrefix(rest, "- ") {
			item = true
			rest = strings.TrimSpace(rest[2:])
			indent += 2
		}
		key, value, ok := strings.Cut(rest, ":")
		if !ok || !exampleKey.MatchString(key) {
			if indent == 0 && !item {
				break // the body of a tag-first example
			}
			continue
		}
		var path string
		if item {
			// "- key: v" opens an element of the list above: later keys
			// at the same indentation belong to the same element.
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent-1 {
				stack = stack[:len(stack)-1]
			}
			container := "[]"
			if len(stack) > 0 {
				container = stack[len(stack)-1].path + "[]"
			}
			stack = append(stack, level{indent: indent - 1, path: container})
			path = container + "." + key
		} else {
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
			path = key
			if len(stack) > 0 {
				path = stack[len(stack)-1].path + "." + key
			}
		}
		if indent == 0 {
			keys = append(keys, key)
		}
		value = strings.TrimSpace(value)
		if path == "signal" && value != "" && !strings.Contains(value, "|") {
			enums[path] = []string{value} // a type's signal, even when it has one
		} else if strings.Contains(value, "|") && !strings.HasPrefix(value, "|") && !strings.HasPrefix(value, "\"") {
			var vals []string
			for _, v := range strings.Split(value, "|") {
				if v = strings.TrimSpace(v); v != "" {
					vals = append(vals, v)
				}
			}
			if len(vals) > 1 {
				enums[path] = vals
			}
		}
		stack = append(stack, level{indent: indent, path: path})
	}
	return keys, collapseMaps(enums)
}

var exampleKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// collapseMaps turns enumerations of sibling keys that agree ("AC1: pass |
// fail", "AC2: pass | fail") into one for every value of their parent map
// ("ac_coverage.*").
func collapseMaps(enums map[string][]string) map[string][]string {
	byParent := map[string][]string{}
	for path := range enums {
		if i := strings.LastIndexByte(path, '.'); i > 0 {
			byParent[path[:i]] = append(byParent[path[:i]], path)
		}
	}
	for parent, paths := range byParent {
		if len(paths) < 2 {
			continue
		}
		first := strings.Join(enums[paths[0]], "|")
		same := true
		for _, p := range paths[1:] {
			same = same && strings.Join(enums[p], "|") == first
		}
		if !same {
			continue
		}
		enums[parent+".*"] = enums[paths[0]]
		for _, p := range paths {
			delete(enums, p)
		}
	}
	return enums
}

// jsonExample reads a JSON example: an object whose "message" (or itself)
// has a "type" string defines or adds to that type, its other keys being
// the type's fields.
func (p *parser) jsonExample(content string, line int) {
	var v map[string]any
	if err := json.Unmarshal([]byte(content), &v); err != nil {
		return
	}
	if p.jsonSchema(v, line) {
		return
	}
	msg := v
	if inner, ok := v["message"].(map[string]any); ok {
		msg = inner
	}
	name, ok := msg["type"].(string)
	if !ok || !plainHeading.MatchString(name) {
		return
	}
	t := p.typeNamed(name, line)
	if !t.byHeading {
		t.byExample = true
		if t.Section == "" || t.path == "" {
			t.Section, t.path = p.section(), p.headingPath()
		}
	}
	if t.booleans == nil {
		t.booleans = map[string]bool{}
	}
	keys := make([]string, 0, len(msg))
	for k, v := range msg {
		if k == "type" {
			continue
		}
		keys = append(keys, k)
		_, isBool := v.(bool)
		if old, seen := t.booleans[k]; !seen || old {
			t.booleans[k] = isBool
		}
	}
	sort.Slice(keys, func(i, j int) bool { return jsonKeyOrder(content, keys[i]) < jsonKeyOrder(content, keys[j]) })
	t.examples = append(t.examples, keys)
	if _, ok := v["to"]; ok && p.cur == nil && t.Transport == "" {
		t.Transport = "direct"
	}
}

func jsonKeyOrder(content, key string) int {
	return strings.Index(content, `"`+key+`"`)
}

// finish completes every type: fields from Required/Optional lines and
// examples, enumerations, deprecations, section defaults, and the
// "cannot be broadcast" rule of structured requests.
func (p *parser) finish() {
	deprecated := map[string]*Deprecation{}
	for i := range p.skill.Deprecations {
		d := &p.skill.Deprecations[i]
		deprecated[d.Type] = d
		if _, ok := p.types[d.Type]; !ok {
			p.skill.Problems = append(p.skill.Problems, Problem{Line: d.Line, Message: fmt.Sprintf("deprecation of %s, which the skill does not define", d.Type), Warning: true})
		}
	}
	for _, t := range p.order {
		for _, name := range t.required {
			p.ensureField(t, name, true)
		}
		for _, name := range t.optional {
			p.ensureField(t, name, false)
		}
		// Keys every example shows are required for a type that has only
		// examples; other keys shown are optional.
		for i, keys := range t.examples {
			for _, k := range keys {
				if k == "type" {
					continue
				}
				// Keys every example shows are required, when there are
				// examples enough to tell.
				required := t.byExample && len(t.examples) > 1 && inAll(t.examples, k)
				// Addressing shown in an example is not a field of the
				// type, unless the type's own table says it is.
				if _, ok := t.Field(k); !ok && !(mailbox.IsReserved(k) && !t.byExample) {
					p.ensureField(t, k, required)
				}
			}
			_ = i
		}
		for path, values := range t.enums {
			if path == "type" {
				continue
			}
			f, ok := t.Field(path)
			if !ok {
				f = &Field{Name: path}
				t.Fields = append(t.Fields, f)
			}
			f.Enum = union(f.Enum, values)
		}
		if d, ok := deprecated[t.Name]; ok {
			t.Deprecated = d
		}
		if len(t.Senders) == 0 && t.sectionFrom != "" {
			if roles, _ := parseRoles(t.sectionFrom); !Generic(roles) {
				t.Senders = roles
			}
		}
		if len(t.Recipients) == 0 && t.sectionTo != "" {
			if roles, all := parseRoles(t.sectionTo); !Generic(roles) {
				t.Recipients, t.AllRecipients = roles, all
			}
		}
		p.anySignals(t)
		p.rolesFromSignals(t)
		for k, isBool := range t.booleans {
			if f, ok := t.Field(k); ok && isBool && len(f.Enum) == 0 {
				f.Enum = []string{"true", "false"}
			}
		}
		if p.noBroadcast && (strings.Contains(strings.ToLower(t.path), "structured") || t.byExample && hasRequestID(t)) {
			t.NoBroadcast = true
		}
		if t.NoBroadcast {
			t.Transport = "direct"
		}
		if t.Transport == "" {
			t.Transport = "direct"
			if contains(t.Recipients, "*") {
				t.Transport = "broadcast"
			}
		}
		p.skill.Types = append(p.skill.Types, t.Type)
	}
	p.review()
}

// rolesFromSignals gives a type whose section names no sender (or no
// recipient) the roles its signal tables give every value of its signal
// field.
func (p *parser) rolesFromSignals(t *typeState) {
	f, ok := t.Field("signal")
	if !ok || len(f.Enum) == 0 || len(t.Senders) > 0 && len(t.Recipients) > 0 {
		return
	}
	var senders, recipients []string
	sendersKnown, recipientsKnown := true, true
	for _, v := range f.Enum {
		var sg *Signal
		for _, x := range p.skill.Signals {
			if x.Name == v {
				sg = x
				break
			}
		}
		if sg == nil {
			return
		}
		if r := sg.SignalSenders(); len(r) > 0 {
			senders = union(senders, r)
		} else {
			sendersKnown = false
		}
		if r := sg.SignalRecipients(); len(r) > 0 {
			recipients = union(recipients, r)
		} else {
			recipientsKnown = false
		}
	}
	if len(t.Senders) == 0 && sendersKnown {
		t.Senders = senders
	}
	if len(t.Recipients) == 0 && recipientsKnown {
		t.Recipients = recipients
	}
}

// anySignals adds to a type's signal values those its signal tables say
// any agent may emit ("blocked", "escalate"), when the type goes the
// table's way (its recipients are the table's "X -> Y" Y).
func (p *parser) anySignals(t *typeState) {
	f, ok := t.Field("signal")
	if !ok || len(f.Enum) == 0 {
		return
	}
	for _, sg := range p.skill.Signals {
		if !contains(sg.Senders, "any") {
			continue
		}
		_, toText, ok := headingRoles(sg.Direction)
		if !ok {
			continue
		}
		if to, _ := parseRoles(toText); overlapsAny(to, t.Recipients) {
			f.Enum = union(f.Enum, []string{sg.Name})
		}
	}
}

func overlapsAny(a, b []string) bool {
	for _, x := range a {
		if contains(b, x) {
			return true
		}
	}
	return false
}

func hasRequestID(t *typeState) bool {
	_, ok := t.Field("request_id")
	return ok
}

func inAll(examples [][]string, key string) bool {
	for _, keys := range examples {
		if !contains(keys, key) {
			return false
		}
	}
	return true
}

// Generic reports whether roles name no particular role but any agent
// ("agent", "team", "any", "*"), as a section heading like
// "Agent → Orchestrator" does.
func Generic(roles []string) bool {
	for _, r := range roles {
		switch r {
		case "agent", "team", "any", "*":
		default:
			return false
		}
	}
	return true
}

func (p *parser) ensureField(t *typeState, name string, required bool) {
	if f, ok := t.Field(name); ok {
		f.Required = f.Required || required
		return
	}
	t.Fields = append(t.Fields, &Field{Name: name, Required: required})
}

// inline renders a node's inline content as text: emphasis and links
// dropped, code spans kept in backticks.
func (p *parser) inline(n gast.Node) string { return p.inlineBreaks(n, ' ') }

// inlineBreaks renders a node's inline content as inline does, writing
// brk where a line of the source ends.
func (p *parser) inlineBreaks(n gast.Node, brk byte) string {
	var b strings.Builder
	var walk func(gast.Node)
	walk = func(n gast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *gast.Text:
				b.Write(util.UnescapePunctuations(c.Value(p.src)))
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteByte(brk)
				}
			case *gast.String:
				b.Write(c.Value)
			case *gast.CodeSpan:
				b.WriteByte('`')
				for t := c.FirstChild(); t != nil; t = t.NextSibling() {
					if txt, ok := t.(*gast.Text); ok {
						b.Write(txt.Value(p.src))
					} else if s, ok := t.(*gast.String); ok {
						b.Write(s.Value)
					}
				}
				b.WriteByte('`')
			case *gast.AutoLink:
				b.Write(c.URL(p.src))
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return string(util.ResolveEntityNames(util.ResolveNumericReferences([]byte(b.String()))))
}

// line returns the file line of a node.
func (p *parser) line(n gast.Node) int {
	off := -1
	if n.Type() == gast.TypeBlock {
		if lines := n.Lines(); lines != nil && lines.Len() > 0 {
			off = lines.At(0).Start
		}
	}
	if off < 0 {
		_ = gast.Walk(n, func(c gast.Node, entering bool) (gast.WalkStatus, error) {
			if !entering {
				return gast.WalkContinue, nil
			}
			if t, ok := c.(*gast.Text); ok {
				off = t.Segment.Start
				return gast.WalkStop, nil
			}
			if c.Type() == gast.TypeBlock && c != n {
				if lines := c.Lines(); lines != nil && lines.Len() > 0 {
					off = lines.At(0).Start
					return gast.WalkStop, nil
				}
			}
			return gast.WalkContinue, nil
		})
	}
	if off < 0 {
		return p.lineOffset + 1
	}
	return sort.Search(len(p.lineStarts), func(i int) bool { return p.lineStarts[i] > off }) + p.lineOffset
}

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// stripTicks removes backticks.
func stripTicks(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "`", "")) }

var codeSpan = regexp.MustCompile("`([^`]+)`")

// leadingSpans returns the code spans at the start of s, separated only by
// commas, "and" and spaces: "`a`, `b` (when c)" gives a and b.
func leadingSpans(s string) []string {
	var out []string
	rest := strings.TrimSpace(s)
	for {
		rest = strings.TrimLeft(rest, ", ")
		rest = strings.TrimPrefix(rest, "and ")
		loc := codeSpan.FindStringSubmatchIndex(rest)
		if loc == nil || loc[0] != 0 {
			return out
		}
		name := rest[loc[2]:loc[3]]
		if !contains(out, name) {
			out = append(out, name)
		}
		rest = rest[loc[1]:]
	}
}

// valueList reads a bullet list of allowed values after a paragraph that
// names one field and ends with a colon ("Values of `level`:"), under a
// message type: each item is a value in backticks, alone or followed by
// what it means. It reports whether the list was read so.
func (p *parser) valueList(n *gast.List) bool {
	if p.cur == nil || !strings.HasSuffix(p.lastPara, ":") {
		return false
	}
	named := codeSpan.FindAllStringSubmatch(p.lastPara, -1)
	if len(named) != 1 || labelled.MatchString(p.lastPara) || listLine.MatchString(p.lastPara) {
		return false
	}
	var values []string
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		first := item.FirstChild()
		if first == nil {
			return false
		}
		m := valueItem.FindStringSubmatch(strings.TrimSpace(p.inline(first)))
		if m == nil {
			return false
		}
		values = append(values, m[1])
	}
	if len(values) < 2 {
		return false
	}
	field := named[0][1]
	p.cur.enums[field] = union(p.cur.enums[field], values)
	return true
}

// valueItem is an item of a list of values: `value`, alone or followed by
// what it means.
var valueItem = regexp.MustCompile("^`([^`]+)`\\s*(?:$|[-–—:(,]|\\s)")

// spanList is two or more code spans separated by commas, slashes, bars
// or "or": `a`, `b` or `c`; `a`/`b`; `A` | `B`.
const spanList = "`[^`]+`(?:\\s*(?:,\\s*or\\b|,|/|\\\\?\\||\\bor\\b)\\s*`[^`]+`)+"

// fieldValues is a sentence giving a field's values: "`stage` is `draft`
// or `final`", "`mode` must be one of `a`, `b`".
var fieldValues = regexp.MustCompile("^`([A-Za-z_][\\w.\\[\\]]*)` (?:is|must be|may be|can be)(?: one of:?| either)? (" + spanList + ")\\s*\\.?$")

// enumForms are the ways a field's description gives its allowed values:
// "One of: `A`, `B`"; a list of values that is the whole description, or
// all of a parenthesis; "either `a` or `b`"; "Values: `a`, `b`".
var enumForms = []*regexp.Regexp{
	regexp.MustCompile("(?i)one of:?\\s*((?:`[^`]+`(?:\\s*,\\s*|\\s+or\\s+|\\s*,\\s*or\\s+|\\s*)?)+)"),
	regexp.MustCompile("(?i)^\\s*(?:either\\s+)?(" + spanList + ")\\s*\\.?\\s*$"),
	regexp.MustCompile("(?i)\\(\\s*(?:either\\s+)?(" + spanList + ")\\s*\\)"),
	regexp.MustCompile("(?i)\\beither\\s+(" + spanList + ")"),
	regexp.MustCompile("(?i)\\b(?:values|allowed values|allowed|options|possible values)\\s*:\\s*(" + spanList + ")"),
}

// oneOf reads the enumeration a field's description gives, if any.
func oneOf(desc string) []string {
	for _, re := range enumForms {
		m := re.FindStringSubmatch(desc)
		if m == nil {
			continue
		}
		var out []string
		for _, s := range codeSpan.FindAllStringSubmatch(m[1], -1) {
			out = append(out, s[1])
		}
		return out
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// union appends to a the values of b it lacks.
func union(a, b []string) []string {
	for _, v := range b {
		if !contains(a, v) {
			a = append(a, v)
		}
	}
	return a
}
