package skills

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var conditionRe = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*)\s*(==|!=|>=|<=|>|<|=|:)\s*(.+)$`)

// parseRule reads a hard rule: conditions in backticks joined by "or",
// then "requires", then one condition in backticks:
//
//	`critical_count > 0` requires `signal: fail`
//	`a.b > 0` or `c: fail` requires `signal: fail`
func parseRule(text string) (*Rule, error) {
	before, after, ok := strings.Cut(text, " requires ")
	if !ok {
		return nil, fmt.Errorf("%q: write the conditions, then \"requires\", then what must hold, each in backticks", text)
	}
	r := &Rule{Text: strings.TrimSuffix(strings.TrimSpace(strings.SplitN(text, ". ", 2)[0]), ".")}
	rest := strings.TrimSpace(before)
	for i := 0; ; i++ {
		loc := codeSpan.FindStringSubmatchIndex(rest)
		if loc == nil || loc[0] != 0 {
			return nil, fmt.Errorf("%q: each condition goes in backticks, joined by \"or\"", before)
		}
		c, err := parseCondition(rest[loc[2]:loc[3]])
		if err != nil {
			return nil, err
		}
		r.If = append(r.If, c)
		rest = strings.TrimSpace(rest[loc[1]:])
		if rest == "" {
			break
		}
		if strings.HasPrefix(rest, "and ") {
			return nil, fmt.Errorf("%q: conditions joined by \"and\" are not understood; write one rule per condition joined by \"or\"", before)
		}
		if !strings.HasPrefix(rest, "or ") {
			return nil, fmt.Errorf("%q: conditions must be joined by \"or\"", before)
		}
		rest = strings.TrimSpace(rest[3:])
	}
	m := codeSpan.FindStringSubmatchIndex(strings.TrimSpace(after))
	if m == nil || m[0] != 0 {
		return nil, fmt.Errorf("%q: what the rule requires goes in backticks", after)
	}
	a := strings.TrimSpace(after)
	then, err := parseCondition(a[m[2]:m[3]])
	if err != nil {
		return nil, err
	}
	r.Then = then
	return r, nil
}

func parseCondition(s string) (Condition, error) {
	m := conditionRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Condition{}, fmt.Errorf("condition %q not understood: write field > N, field < N, field >= N, field: value", s)
	}
	op := m[2]
	if op == ":" || op == "=" {
		op = "=="
	}
	value := strings.Trim(strings.TrimSpace(m[3]), `"'`)
	if op != "==" && op != "!=" {
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			return Condition{}, fmt.Errorf("condition %q: %s compares numbers, and %q is not one", s, op, value)
		}
	}
	return Condition{Path: m[1], Op: op, Value: value}, nil
}

// holds evaluates a condition against a field getter. A condition on an
// absent field does not hold.
func (c Condition) holds(get func(path string) (any, bool)) bool {
	v, ok := get(c.Path)
	if !ok {
		return false
	}
	got := scalarString(v)
	switch c.Op {
	case "==":
		return got == c.Value
	case "!=":
		return got != c.Value
	}
	a, err1 := strconv.ParseFloat(got, 64)
	b, err2 := strconv.ParseFloat(c.Value, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	switch c.Op {
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "<":
		return a < b
	case "<=":
		return a <= b
	}
	return false
}

// scalarString renders a decoded YAML scalar as the text a protocol
// compares it with.
func scalarString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}
