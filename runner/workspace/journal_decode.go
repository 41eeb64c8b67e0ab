package workspace

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeEntry decodes a journal line written the way parley writes them
// (encoding/json, compact, the fields of Entry) without reflection, about
// five times faster than encoding/json. It reports false for anything
// else: a key that is not one of Entry's exactly, a \u escape, a null, a
// number that is not a plain integer, invalid UTF-8, a line that is not
// JSON. The caller then decodes the line with encoding/json, so an entry
// reads the same either way (FuzzDecodeEntry checks that). On false, e
// may hold part of the line.
//
// The fields are substrings of the line (but for the strings with
// escapes), which is copied into a string once.
func decodeEntry(b []byte, e *Entry) bool { return decodeString(string(b), e) }

// decodeString is decodeEntry of a line already in a string: the fields
// are substrings of it.
func decodeString(s string, e *Entry) bool {
	d := decoder{b: s}
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return d.end()
	}
	for {
		key, ok := d.key()
		if !ok || !d.next(':') {
			return false
		}
		switch key {
		case "time":
			e.Time, ok = d.str()
		case "id":
			e.ID, ok = d.str()
		case "from":
			e.From, ok = d.str()
		case "to":
			e.To, ok = d.strs()
		case "type":
			e.Type, ok = d.str()
		case "signal":
			e.Signal, ok = d.str()
		case "skill":
			e.Skill, ok = d.str()
		case "outcome":
			e.Outcome, ok = d.str()
		case "agent":
			e.Agent, ok = d.str()
		case "reason":
			e.Reason, ok = d.str()
		case "line":
			e.Line, ok = d.int()
		case "field":
			e.Field, ok = d.str()
		case "file":
			e.File, ok = d.str()
		case "path":
			e.Path, ok = d.str()
		case "was":
			e.Was, ok = d.str()
		case "attempts":
			e.Attempts, ok = d.int()
		case "sent":
			e.Sent, ok = d.str()
		case "already":
			e.Already, ok = d.strs()
		case "warnings":
			e.Warnings, ok = d.strs()
		case "note":
			e.Note, ok = d.str()
		case "model":
			e.Model, ok = d.str()
		case "session":
			e.Session, ok = d.str()
		case "tokens_in":
			var n int
			n, ok = d.int()
			e.TokensIn = int64(n)
		case "tokens_out":
			var n int
			n, ok = d.int()
			e.TokensOut = int64(n)
		case "interrupted":
			e.Interrupted, ok = d.bool()
		case "failed_calls":
			e.FailedCalls, ok = d.int()
		case "tool":
			e.Tool, ok = d.str()
		case "args":
			e.Args, ok = d.str()
		case "result":
			e.Result, ok = d.str()
		case "workspace":
			e.Workspace, ok = d.str()
		default:
			return false
		}
		if !ok {
			return false
		}
		if d.next(',') {
			continue
		}
		return d.next('}') && d.end()
	}
}

// bool reads true or false, after white space.
func (d *decoder) bool() (bool, bool) {
	d.space()
	for _, lit := range []string{"true", "false"} {
		if strings.HasPrefix(d.b[d.i:], lit) {
			d.i += len(lit)
			return lit == "true", true
		}
	}
	return false, false
}

// decoder reads JSON values from b, from i on.
type decoder struct {
	b string
	i int
}

func (d *decoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next consumes c, after white space, if it comes next.
func (d *decoder) next(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (d *decoder) end() bool {
	d.space()
	return d.i == len(d.b)
}

// key reads an object key made of plain ASCII, without escapes.
func (d *decoder) key() (string, bool) {
	if !d.next('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if c == '"' {
			d.i++
			return d.b[start : d.i-1], true
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return "", false
		}
		d.i++
	}
	return "", false
}

// str reads a string.
func (d *decoder) str() (string, bool) {
	if !d.next('"') {
		return "", false
	}
	start := d.i
	ascii := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if !ascii && !utf8.ValidString(s) {
				return "", false // encoding/json replaces invalid bytes
			}
			return s, true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
		d.i++
	}
	return "", false
}

// escaped reads the rest of a string from its first backslash on, which
// is at d.i; the string began at start.
func (d *decoder) escaped(start int) (string, bool) {
	buf := append([]byte(nil), d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if !utf8.Valid(buf) {
				return "", false
			}
			return string(buf), true
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return "", false
			}
			switch d.b[d.i+1] {
			case '"', '\\', '/':
				c = d.b[d.i+1]
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			default:
				return "", false // \u, and what is not JSON
			}
			buf = append(buf, c)
			d.i += 2
			continue
		case c < 0x20:
			return "", false
		}
		buf = append(buf, c)
		d.i++
	}
	return "", false
}

// strs reads an array of strings. An empty array is an empty slice, not
// nil, as encoding/json makes it.
func (d *decoder) strs() ([]string, bool) {
	if !d.next('[') {
		return nil, false
	}
	out := []string{}
	if d.next(']') {
		return out, true
	}
	for {
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		out = append(out, s)
		if d.next(',') {
			continue
		}
		return out, d.next(']')
	}
}

// int reads an integer written plainly: no fraction, no exponent.
func (d *decoder) int() (int, bool) {
	d.space()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		d.i++
	}
	n := d.i - digits
	if n == 0 || n > 18 || n > 1 && d.b[digits] == '0' {
		return 0, false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return 0, false
	}
	v, err := strconv.Atoi(d.b[start:d.i])
	return v, err == nil
}
