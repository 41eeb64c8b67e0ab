package mailbox

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var simpleHeaderSeeds = []string{
	"id: 20261121-101500.123456Z-alice-3fa9c2\nfrom: alice\nto: bob\ntype: BENCH\n",
	"from: gm\nto: aria\ntype: GM_TO_PLAYER\ncreated: 2026-11-21T10:15:00.123456Z\nhops: 2\n",
	"to: bob\nsummary: The party rests, then moves on.\n",
	"signal: pass\ncritical_count: 0\niteration: 3\n",
	"to: bob\nok: yes\n",
	"to: bob\nflag: true\n",
	"to: bob\nempty: null\n",
	"to: bob\ncount: 007\n",
	"to: bob\nbig: 99999999999999999999\n",
	"to: bob\nwhen: 2026-13-45T99:99:99Z\n",
	"to: bob\nwhen: 2026-11-21T10:15:00+01:00\n",
	"to: bob\nv: 1.5\n",
	"to: bob\nv: a  b\n",
	"to: bob\nv: a b \n",
	"to: bob\nv: a.\n",
	"to: [bob, carol]\n",
	"to: bob # comment\n",
	"to: bob\r\n",
	"to: bob\n\ncc: carol\n",
	"to: bob\nto: carol\n",
	"To: bob\n",
	"to:bob\n",
	"to:  bob\n",
	"to: bob",
	"x: .inf\n",
	"x: Off\n",
	"x: e1\n",
	"x: 1e3\n",
	"x: a, b\n",
	"x: it's\n",
	// Paths, quotes without escapes, lists in brackets, booleans: what
	// the dev pipeline's agents write.
	"plan_file: plans/retry-failed-deliveries.md\nstep: 3\nverified: true\nhas_blockers: false\n",
	"topic: \"How long to back off\"\nsummary: 'plan done: plans/retry.md (3/3 steps)'\n",
	"files_changed: [runner/route.go, README.md]\nrisk_tags: [data-mutation, concurrent]\nfiles: []\n",
	"to: [bob, carol, 3, true]\n",
	"x: [a,b]\n", "x: [a, b, ]\n", "x: [ a ]\n", "x: [a: b]\n", "x: [yes, no]\n", "x: [null]\n",
	"x: \"a\\\"b\"\n", "x: 'it''s'\n", "x: \"\"\n", "x: ''\n", "x: \"a #b\"\n", "x: 'a' b\n",
	"x: http://example.com/a\n", "x: a:b\n", "x: a: b\n", "x: a:\n", "x: Retry (ENOSPC) +1 = 2\n",
}

// decodeWithYAML is what decodeOne does without its fast path.
func decodeWithYAML(data []byte) (doc yaml.Node, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return doc, err
	}
	return doc, nil
}

func checkSimpleHeader(t *testing.T, header string) {
	got, ok := decodeSimple([]byte(header))
	if !ok {
		return
	}
	want, err := decodeWithYAML([]byte(header))
	if err != nil {
		t.Fatalf("decodeSimple read %q, which YAML refuses: %v", header, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decodeSimple(%q) differs from the YAML decoder:\n got %s\nwant %s", header, dump(&got), dump(&want))
	}
}

func dump(n *yaml.Node) string {
	var b bytes.Buffer
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		b.WriteString("\n")
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(yamlKindName(n.Kind) + " " + n.Tag + " " + n.Value)
		b.WriteString(" @" + strconv.Itoa(n.Line) + ":" + strconv.Itoa(n.Column) + " style " + strconv.Itoa(int(n.Style)))
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

func yamlKindName(k yaml.Kind) string {
	return map[yaml.Kind]string{yaml.DocumentNode: "doc", yaml.MappingNode: "map", yaml.ScalarNode: "scalar", yaml.SequenceNode: "seq", yaml.AliasNode: "alias"}[k]
}

func TestSimpleHeadersReadAsYAMLReadsThem(t *testing.T) {
	read := 0
	for _, h := range simpleHeaderSeeds {
		if _, ok := decodeSimple([]byte(h)); ok {
			read++
		}
		checkSimpleHeader(t, h)
	}
	if read < 5 {
		t.Errorf("the fast path read %d of the seeds; parley's own headers must be among them", read)
	}
	// What parley send writes takes the fast path.
	if _, ok := decodeSimple([]byte(simpleHeaderSeeds[0])); !ok {
		t.Errorf("a header as parley send writes it is not read by the fast path")
	}
}

// Values at the edges of what YAML reads as text, one per header.
func TestSimpleHeaderEdges(t *testing.T) {
	values := []string{
		"0", "1", "10", "01", "-1", "+1", "0x1F", "0o7", "1_000", "1.0", ".5", "5.", "1e3", "e3", "E",
		"true", "True", "TRUE", "tRUE", "false", "null", "Null", "NULL", "~", "yes", "No", "on", "OFF", "y", "N",
		".nan", ".inf", "-.inf", "nan", "inf", "Infinity",
		"2026-11-21", "2026-11-21T10:15:00Z", "2026-11-21T10:15:00.5Z", "2026-11-21T10:15:00+00:00",
		"2026-02-30T10:15:00Z", "2026-11-21T24:00:00Z", "2026-11-21t10:15:00z",
		"20261121-101500.123456Z-alice-3fa9c2", "20261121-101500.123456Z-alice-3fa9c2x",
		"a", "a b", "a,b", "a, b", "a.b", "a-b", "a_b", "A1", "a:b", "a#b", "a #b", "a'b", "a\"b", "a%b",
		"<<", "=", "!x", "&a", "*a", "|", ">", "@a", "`a", "{a}", "[a]", "-", "- a", "?", "? a",
		"x123456789012345678", "1234567890123456789", "999999999999999999",
		"a/b", "a/b.md", "a:b:c", "a (b)", "a(b", "a)b", "a'b'", "a+b", "a=b", "a ::b", "a/", "a:/b",
		`"a"`, `"a b"`, `""`, `"a"`, `"a
b"`, `"a'b"`, `'a'`, `''`, `'a"b'`, `'a''b'`, `"a" `, `"a`, `'a`,
		"[]", "[a]", "[a, b]", "[a,b]", "[a, b,]", "[ a]", "[a ]", "[a, [b]]", "[a, {b}]", "[1, 2]", "[01]",
		"[true, false]", "[True]", "[yes]", "[null]", "[~]", "[a, ]", "[, a]", "[a b, c]", "[a/b, c.md]",
		"[2026-11-21T10:15:00Z]", "[20261121-101500.123456Z-alice-3fa9c2]", "[a#b]", "[a #b]", "[\"a\"]",
	}
	for _, v := range values {
		checkSimpleHeader(t, "k: "+v+"\n")
		checkSimpleHeader(t, "to: bob\n"+v+": x\n")
	}
}

func FuzzSimpleHeader(f *testing.F) {
	for _, h := range simpleHeaderSeeds {
		f.Add(h)
	}
	f.Fuzz(checkSimpleHeader)
}
