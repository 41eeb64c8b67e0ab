// Package toolargs reads the JSON arguments of a tool call, as a model or
// an MCP client writes them, into a struct: strictly, and with errors
// that say the argument and what it wants in the arguments' words. It
// decides how the game master's campaign tools (campaigns/tools) and
// parley mcp's tools (runner/mcpserver) read their arguments.
package toolargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/parley-dev/parley/internal/spell"
)

// ErrBad is wrapped by every error of Decode.
var ErrBad = errors.New("bad arguments")

// Decode reads a tool's JSON arguments (no arguments are {}) into dst, a
// pointer to a struct, refusing fields dst does not have and anything
// after the object. Its errors wrap ErrBad and say, in the words of
// the arguments rather than of Go, the argument and what it wants:
// "hp: want a whole number, got \"eight\"". A field's want tag says what
// it wants where its type alone does not say it well.
func Decode(args json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.DisallowUnknownFields()
	if err := d.Decode(dst); err != nil {
		return fmt.Errorf("%w: %s", ErrBad, argError(args, dst, err))
	}
	// Decode stops after one value; what follows it is a mistake too.
	var more json.RawMessage
	if err := d.Decode(&more); err != io.EOF {
		return fmt.Errorf("%w: more after the arguments object", ErrBad)
	}
	return nil
}

// argError says what is wrong with args, as err (from decoding them into
// dst) found it.
func argError(args json.RawMessage, dst any, err error) string {
	st := reflect.TypeOf(dst)
	for st != nil && st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		top, _, nested := strings.Cut(te.Field, ".")
		want := kindWords(te.Type)
		if f, ok := fieldOf(st, top); ok && !nested {
			if w := f.Tag.Get("want"); w != "" {
				want = w
			}
		}
		got := "a " + te.Value
		var obj map[string]json.RawMessage
		if !nested && json.Unmarshal(args, &obj) == nil && obj[top] != nil {
			got = string(obj[top])
			if r := []rune(got); len(r) > 40 {
				got = string(r[:37]) + "..." // whole characters: a cut one would not print
			}
		}
		return fmt.Sprintf("%s: want %s, got %s", te.Field, want, got)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field ") && st != nil && st.Kind() == reflect.Struct {
		// encoding/json names the field but not where it is: found
		// again here, with its path and the fields of the object it is in.
		path, name, t, ok := unknownField(args, st, "")
		if !ok {
			return msg
		}
		names := fieldNames(t)
		hint := ""
		if like := nearest(name, names); like != "" {
			hint = "did you mean " + like + "? "
		}
		if path == "" {
			return fmt.Sprintf("unknown field %q (%sthe arguments: %s)", name, hint, strings.Join(names, ", "))
		}
		return fmt.Sprintf("%s.%s: unknown field (%sfields: %s)", path, name, hint, strings.Join(names, ", "))
	}
	return msg
}

// unknownField finds the first key of raw, a value of type t at path
// ("" for the arguments themselves), that names no field: it returns the
// path of the object holding it, the key, and the object's struct type.
// Keys are matched as encoding/json matches them, case aside.
func unknownField(raw json.RawMessage, t reflect.Type, path string) (string, string, reflect.Type, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return "", "", nil, false // it reads itself
	}
	switch t.Kind() {
	case reflect.Struct:
		keys, vals := objectKeys(raw)
		for i, k := range keys {
			f, ok := fieldOf(t, k)
			if !ok {
				f, ok = fieldFold(t, k)
			}
			if !ok {
				return path, k, t, true
			}
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			if p, n, st, ok := unknownField(vals[i], f.Type, sub); ok {
				return p, n, st, true
			}
		}
	case reflect.Slice, reflect.Array:
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			return "", "", nil, false
		}
		for i, v := range list {
			if p, n, st, ok := unknownField(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, n, st, true
			}
		}
	case reflect.Map:
		keys, vals := objectKeys(raw)
		for i, k := range keys {
			if p, n, st, ok := unknownField(vals[i], t.Elem(), path+"."+k); ok {
				return p, n, st, true
			}
		}
	}
	return "", "", nil, false
}

// objectKeys are the keys of the JSON object raw, in their order, and
// their values; none if raw is no object.
func objectKeys(raw json.RawMessage) ([]string, []json.RawMessage) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	var keys []string
	var vals []json.RawMessage
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return keys, vals
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return keys, vals
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals
}

// fieldFold finds the field of t whose JSON name is name, case aside, as
// encoding/json also matches.
func fieldFold(t reflect.Type, name string) (reflect.StructField, bool) {
	for _, n := range fieldNames(t) {
		if strings.EqualFold(n, name) {
			return fieldOf(t, n)
		}
	}
	return reflect.StructField{}, false
}

// nearest is the one of names that name most likely meant (one holds
// the other, case aside, or they differ by a letter or two: spell's
// rule), or "".
func nearest(name string, names []string) string {
	low := strings.ToLower(name)
	for _, n := range names {
		ln := strings.ToLower(n)
		if min(len(ln), len(low)) >= 2 && (strings.Contains(ln, low) || strings.Contains(low, ln)) {
			return n
		}
	}
	return spell.Nearest(name, names, 2)
}

// kindWords says what a value of Go type t is, in JSON's words.
func kindWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return kindWords(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return `a list of strings, e.g. ["a"]`
		}
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another kind of value"
}

// fieldOf finds the field of struct type t (or of a struct it embeds)
// whose JSON name is name.
func fieldOf(t reflect.Type, name string) (reflect.StructField, bool) {
	if t == nil || t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" {
			if g, ok := fieldOf(f.Type, name); ok {
				return g, true
			}
			continue
		}
		if tag == name || (tag == "" && f.Name == name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// fieldNames are the JSON names of struct type t's fields, embedded
// structs' included.
func fieldNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || !f.IsExported():
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, fieldNames(f.Type)...)
		case tag != "":
			out = append(out, tag)
		default:
			out = append(out, f.Name)
		}
	}
	return out
}
