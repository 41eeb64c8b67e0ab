package workspace

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/skills"
)

// problemsOf returns the problems of a refusal as "line field", in the
// order it lists them.
func problemsOf(f *Refusal) []string {
	var out []string
	for _, p := range f.Problems() {
		out = append(out, fmt.Sprintf("%d %s", p.Line, p.Field))
	}
	return out
}

// TestCheckEveryProblem: a message with several mistakes is refused for
// each of them, in line order (a problem of no line, of the header as a
// whole, last, unless other checks were left out for it: no recipient),
// each on a line of its own; the first is the refusal's
// own, as the first line of a .reason file is read alone.
func TestCheckEveryProblem(t *testing.T) {
	ws := tableWorkspace(t)
	tests := []struct {
		name, sender, text string
		want               []string
	}{
		{"a misspelt to and type", "aria", "---\nfrom: aria\ntoo: gm\ntpye: PLAYER_TO_GM\nsumary: x\n---\nhi\n",
			[]string{"3 too", "4 tpye"}},
		{"an unknown recipient and a misspelt type", "aria", "---\nto: zed\ntpye: PLAYER_TO_GM\n---\nhi\n",
			[]string{"2 to", "3 tpye"}},
		{"a forged from and an unknown recipient", "aria", "---\nfrom: bram\nto: zed\n---\nhi\n",
			[]string{"2 from", "3 to"}},
		{"nobody, and a forged from", "aria", "---\nfrom: bram\nnote: hi\n---\n",
			[]string{"0 to", "2 from"}},
		{"ot: told once", "aria", "---\not: gm\ntpye: PLAYER_TO_GM\n---\n",
			[]string{"2 ot", "3 tpye"}},
		{"a forged from and the protocol's field missing", "aria", "[PLAYER_TO_GM]\nfrom: corwin-voss\n",
			[]string{"2 from", "0 type", "0 character"}}, // fields missing last
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ws.Check(Input{File: "m.md", Sender: tt.sender, Message: parse(t, tt.text)})
			if err != nil {
				t.Fatal(err)
			}
			if v.Accepted() {
				t.Fatalf("Check accepted it, to %v", v.Agents())
			}
			if d := cmp.Diff(tt.want, problemsOf(v.Refusal)); d != "" {
				t.Errorf("problems (-want +got):\n%s\n%v", d, v.Refusal)
			}
			lines := strings.Split(v.Refusal.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("Error() = %q, want a line for each of %d problems", v.Refusal.Error(), len(tt.want))
			}
			for i, p := range v.Refusal.Problems() {
				if i < len(lines) && lines[i] != p.Error() {
					t.Errorf("line %d of Error() = %q, want %q", i+1, lines[i], p.Error())
				}
				if p.File != "m.md" {
					t.Errorf("problem %d names file %q, want m.md", i+1, p.File)
				}
			}
		})
	}
}

// TestCheckProblemsCap: past MaxProblems, a refusal says how many more
// there are instead of listing them.
func TestCheckProblemsCap(t *testing.T) {
	var fields []string
	for i := 1; i <= 25; i++ {
		fields = append(fields, fmt.Sprintf("`f%02d`", i))
	}
	sk := skills.Parse("wide.md", []byte("---\nname: wide\ndescription: many fields\n---\n## Types\n\n### report\n\n```yaml\n---\ntype: report\n---\n```\n\nRequired: `type`, "+strings.Join(fields, ", ")+"\n"))
	if err := sk.Err(); err != nil {
		t.Fatal(err)
	}
	set, err := skills.NewSet(sk)
	if err != nil {
		t.Fatal(err)
	}
	ws := tableWorkspace(t).WithProtocol(set)
	v, err := ws.Check(Input{File: "m.md", Sender: "aria", Message: parse(t, "---\nfrom: bram\nto: gm\ntype: report\n---\n")})
	if err != nil {
		t.Fatal(err)
	}
	if v.Accepted() {
		t.Fatalf("Check accepted it, to %v", v.Agents())
	}
	// 25 fields missing and a forged from: 26 problems.
	if got := len(v.Refusal.Problems()); got != MaxProblems || v.Refusal.Left != 26-MaxProblems {
		t.Errorf("refusal lists %d problems and %d more, want %d and %d", got, v.Refusal.Left, MaxProblems, 26-MaxProblems)
	}
	lines := strings.Split(v.Refusal.Error(), "\n")
	if len(lines) != MaxProblems+1 || lines[len(lines)-1] != "m.md: and 6 more problems" {
		t.Errorf("Error() has %d lines, the last %q; want %d, the last %q", len(lines), lines[len(lines)-1], MaxProblems+1, "m.md: and 6 more problems")
	}
	if !strings.HasPrefix(lines[0], "m.md:2: from: ") || !strings.HasPrefix(lines[1], "m.md: f01: missing") {
		t.Errorf("first lines = %q, want the forged from, then the first field missing", lines[:2])
	}
}

// TestRefusalIs: errors.Is and errors.As find a kind of problem wherever
// a refusal lists it, not only first.
func TestRefusalIs(t *testing.T) {
	loop := &Refusal{File: "m.md", Reason: "loop stopped", Loop: &Loop{From: "ping", With: "pong", Hops: 4, Limit: 3}}
	f := &Refusal{File: "m.md", Line: 2, Field: "from", Reason: "forged", More: []*Refusal{loop}}
	if !errors.Is(f, ErrLoop) {
		t.Errorf("errors.Is(refusal listing a loop second, ErrLoop) = false")
	}
	if f.Stopped() != loop.Loop {
		t.Errorf("Stopped() = %v, want the loop listed second", f.Stopped())
	}
	var got *Refusal
	if !errors.As(f, &got) || got != f {
		t.Errorf("errors.As(refusal) = %v, want the refusal itself", got)
	}
	if one := (&Refusal{Reason: "no"}); errors.Is(one, ErrLoop) || one.Stopped() != nil {
		t.Errorf("a refusal listing no loop is ErrLoop")
	}
}

// TestCheckLoopAmongOthers: a program's message past hop_limit that has
// another problem too is refused for both, and is still a loop stopped.
func TestCheckLoopAmongOthers(t *testing.T) {
	cfg, err := ParseConfig(ConfigFile, []byte("hop_limit: 3\nagents:\n  - you\n  - {name: ping, driver: command, run: [./ping.sh]}\n  - {name: pong, driver: command, run: [./pong.sh]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ws := &Workspace{Root: t.TempDir(), Config: cfg}
	if err := ws.MakeMailboxes(); err != nil {
		t.Fatal(err)
	}
	v, err := ws.Check(Input{File: "m.md", Sender: "ping", Message: parse(t, "---\nto: pong\ncreated: yesterday\n---\n"), Answering: &Answering{From: "pong", Hops: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Accepted() {
		t.Fatalf("Check accepted it, to %v", v.Agents())
	}
	if d := cmp.Diff([]string{"0 ", "3 created"}, problemsOf(v.Refusal)); d != "" {
		t.Errorf("problems (-want +got):\n%s\n%v", d, v.Refusal)
	}
	if !errors.Is(v.Refusal, ErrLoop) || v.Refusal.Stopped() == nil {
		t.Errorf("errors.Is(refusal, ErrLoop) = false: %v", v.Refusal)
	}
}

// TestConfigErrorsIs: parley.yaml read strictly names every unknown key,
// in line order; errors.Is finds each kind, errors.As the first.
func TestConfigErrorsIs(t *testing.T) {
	text := "agents:\n  - name: a\n    rol: x\n  - name: w\n    driver: command\n    rnu: [sh, w.sh]\n  - name: b\n    rol: y\nhop_limt: 3\n"
	_, err := ParseConfig(ConfigFile, []byte(text))
	want := []string{
		"parley.yaml:3: agents[0].rol: unknown key (did you mean role?)",
		"parley.yaml:6: agents[1].rnu: unknown key (did you mean run?); agents[1].run is missing: a command agent needs the program to run (run: [./agent.sh])",
		"parley.yaml:8: agents[2].rol: unknown key (did you mean role?)",
		"parley.yaml:9: hop_limt: unknown key (did you mean hop_limit?)",
	}
	if err == nil {
		t.Fatal("ParseConfig = nil, want an error")
	}
	if d := cmp.Diff(want, strings.Split(err.Error(), "\n")); d != "" {
		t.Errorf("ParseConfig (-want +got):\n%s", d)
	}
	if !errors.Is(err, ErrUnknownKey) || !errors.Is(err, ErrMissing) {
		t.Errorf("errors.Is(err, ErrUnknownKey), errors.Is(err, ErrMissing) = %v, %v; want both", errors.Is(err, ErrUnknownKey), errors.Is(err, ErrMissing))
	}
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Line != 3 {
		t.Errorf("errors.As(err, *ConfigError) = %v, want the first, on line 3", ce)
	}
	// After YAML that does not parse, nothing else can be checked: one
	// error.
	_, err = ParseConfig(ConfigFile, []byte("agents:\n  - name: a\n    rol: x\n  - [\n"))
	if err == nil || strings.Contains(err.Error(), "\n") || errors.Is(err, ErrUnknownKey) {
		t.Errorf("ParseConfig of broken YAML = %v, want its one error", err)
	}
	// A malformed value after an unknown key: both.
	_, err = ParseConfig(ConfigFile, []byte("agents:\n  - name: a\n    rol: x\nhop_limit: many\n"))
	if err == nil || len(strings.Split(err.Error(), "\n")) != 2 || !errors.Is(err, ErrUnknownKey) {
		t.Errorf("ParseConfig = %v, want the unknown key and the value", err)
	}
}
