package skills

import (
	"regexp"
	"strings"
	"unicode"
)

// Types declared in code: a protocol may define its messages as
// TypeScript interfaces in a fenced block, rather than in tables. Each
// interface is a message type: named by the string literal of its type
// field (interface Ping { type: 'ping'; ... } is ping), else by its own
// name in snake_case (AssistantMessage is assistant_message). Its members
// are the type's fields, optional when marked "?", and a member whose type
// is a union of string literals ('user' | 'tool') has those values only.
// An interface in the section of a type of the same name (or with no
// name of its own to give) adds its fields to that type.

var interfaceStart = regexp.MustCompile(`(?m)^\s*(?:export\s+)?interface\s+([A-Za-z_]\w*)(?:<[^>]*>)?(?:\s+extends\s+[^{]+)?\s*\{`)

// member is one field of an interface.
type member struct {
	name     string
	optional bool
	values   []string // the literals of a union of string literals
}

// interfaces reads the interfaces of a fenced block of TypeScript into
// types. line is the block's first line.
func (p *parser) interfaces(code string, line int) {
	for _, loc := range interfaceStart.FindAllStringSubmatchIndex(code, -1) {
		name := code[loc[2]:loc[3]]
		body, ok := braced(code[loc[1]:])
		if !ok {
			p.problem(line+strings.Count(code[:loc[0]], "\n"), "interface "+name+": its { has no matching }", true)
			continue
		}
		members := parseMembers(body)
		typeName := ""
		for _, m := range members {
			if m.name == "type" && len(m.values) == 1 {
				typeName = m.values[0]
			}
		}
		at := line + strings.Count(code[:loc[0]], "\n")
		var t *typeState
		switch {
		case p.cur != nil && (typeName == p.cur.Name || typeName == ""):
			t = p.cur
		case typeName != "":
			t = p.typeFromCode(typeName, at)
		default:
			t = p.typeFromCode(snake(name), at)
		}
		for _, m := range members {
			if m.name == "type" && typeName != "" {
				continue // the discriminant: the type itself
			}
			if m.optional {
				t.optional = append(t.optional, m.name)
			} else {
				t.required = append(t.required, m.name)
			}
			if len(m.values) > 0 {
				t.enums[m.name] = union(t.enums[m.name], m.values)
			}
		}
	}
}

// typeFromCode returns the type an interface defines, with the sender and
// recipient of the section it is in ("Frontend → Backend").
func (p *parser) typeFromCode(name string, line int) *typeState {
	t := p.typeNamed(name, line)
	if t.Section == "" {
		t.Section, t.path = p.section(), p.headingPath()
		t.sectionFrom, t.sectionTo, _ = headingRoles(t.Section)
	}
	return t
}

// braced returns what is inside the braces s starts within (s begins just
// after the opening one).
func braced(s string) (string, bool) {
	depth := 1
	for i, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[:i], true
			}
		}
	}
	return "", false
}

var memberRe = regexp.MustCompile(`^(?:readonly\s+)?['"]?([A-Za-z_]\w*)['"]?\s*(\?)?\s*:\s*(.+)$`)

// parseMembers reads an interface's members: "name?: type", separated by
// ";", "," or line ends at the top level; comments are dropped.
func parseMembers(body string) []member {
	var out []member
	var cur strings.Builder
	depth := 0
	flush := func() {
		s := strings.TrimSpace(cur.String())
		cur.Reset()
		m := memberRe.FindStringSubmatch(s)
		if m == nil {
			return
		}
		out = append(out, member{name: m[1], optional: m[2] == "?", values: literals(m[3])})
	}
	lines := strings.Split(body, "\n")
	for _, l := range lines {
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[:i]
		}
		prev := ' '
		for _, r := range l {
			switch {
			case r == '{' || r == '<' || r == '(' || r == '[':
				depth++
			case r == '>' && prev == '=': // an arrow function's =>
			case (r == '}' || r == '>' || r == ')' || r == ']') && depth > 0:
				depth--
			}
			prev = r
			if depth == 0 && (r == ';' || r == ',') {
				flush()
				continue
			}
			cur.WriteRune(r)
		}
		if depth == 0 {
			flush()
		} else {
			cur.WriteByte(' ')
		}
	}
	flush()
	return out
}

// literals returns the values of a type that is a union of string
// literals ('a' | "b"); nil for any other type.
func literals(typ string) []string {
	var out []string
	for _, alt := range strings.Split(typ, "|") {
		alt = strings.TrimSpace(alt)
		if len(alt) < 2 || (alt[0] != '\'' && alt[0] != '"') || alt[len(alt)-1] != alt[0] {
			return nil
		}
		out = append(out, alt[1:len(alt)-1])
	}
	return out
}

// snake writes a Go or TypeScript name in snake_case: AssistantMessage is
// assistant_message, LLMResponse llm_response.
func snake(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
