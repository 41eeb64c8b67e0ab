package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// newProtocol is a skill nobody compiled in: new tags, new fields, a
// rule. parley must read it with no change to its code.
const newProtocol = "---\n" +
	"name: heist-crew\n" +
	"description: How a heist crew plans a job.\n" +
	"version: 1\n" +
	"---\n" +
	"\n" +
	"# Heist crew\n" +
	"\n" +
	"## From the mastermind\n" +
	"\n" +
	"### `[CASE_THE_JOINT]`\n" +
	"\n" +
	"Sends a lookout to watch a building.\n" +
	"\n" +
	"- **Sender**: mastermind\n" +
	"- **Recipient**: lookout\n" +
	"- **Transport**: direct\n" +
	"\n" +
	"```\n" +
	"[CASE_THE_JOINT]\n" +
	"building: the-bank\n" +
	"hours: day | night\n" +
	"```\n" +
	"\n" +
	"| Field | Required | Description |\n" +
	"|---|---|---|\n" +
	"| `building` | Yes | Which building |\n" +
	"| `hours` | Yes | One of: `day`, `night`, `both` |\n" +
	"| `guards` | No | How many guards were seen |\n" +
	"\n" +
	"**Hard rule:** `guards > 3` requires `hours: day`.\n" +
	"\n" +
	"### `[ALL_CLEAR]`\n" +
	"\n" +
	"- **Sender**: lookout\n" +
	"- **Recipient**: all (broadcast)\n" +
	"- **Transport**: broadcast\n"

func TestParseNewProtocol(t *testing.T) {
	s := Parse("skills/heist-crew.md", []byte(newProtocol))
	if len(s.Problems) != 0 {
		t.Fatalf("problems: %v", s.Problems)
	}
	want := map[string][]string{
		"CASE_THE_JOINT mastermind>lookout direct": {"building!", "hours!=day|night|both", "guards?"},
		"ALL_CLEAR lookout>* broadcast":            {},
	}
	if d := cmp.Diff(want, schema(s)); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}
	ty, _ := s.Type("CASE_THE_JOINT")
	if len(ty.Rules) != 1 || ty.Rules[0].Line != 31 || ty.Rules[0].Then.String() != "hours: day" {
		t.Errorf("rules = %+v", ty.Rules)
	}
	if ty.Line != 11 || ty.Section != "From the mastermind" || ty.Description != "" && !strings.HasPrefix(ty.Description, "Sends") {
		t.Errorf("line %d, section %q", ty.Line, ty.Section)
	}
	if f, _ := ty.Field("hours"); f.Line != 28 {
		t.Errorf("field hours on line %d, want 28", f.Line)
	}
}

func TestParseProblems(t *testing.T) {
	front := "---\nname: bad\ndescription: x\n---\n"
	tests := []struct {
		name    string
		text    string
		problem string // "line: message" prefix; "~" for a warning
	}{
		{"no frontmatter", "# A protocol\n\n### `[PING]`\n", "~1: no frontmatter (name:, description:): named \"broken\" after its file"},
		{"frontmatter never closed", "---\nname: bad\n\n# A protocol\n", "1: frontmatter: frontmatter is never closed"},
		{"name missing", "---\ndescription: x\n---\n", "1: frontmatter: name: missing"},
		{"name not kebab-case", "---\nname: Bad Name\ndescription: x\n---\n", `2: frontmatter: name: "Bad Name" is not a valid name`},
		{"malformed table", front + "### `[PING]`\n\n| Field | Required | Description\n| `x` | Yes | an x |\n", "7: looks like a table but is not one"},
		{"heading without a type", front + "## Messages\n\n### `[]`\n", "7: heading \"`[]`\" names no message type"},
		{"two types with the same name", front + "### `[PING]`\n\nx\n\n### `[PING]`\n", "9: [PING] is defined twice: here and on line 5"},
		{"hard rule parley cannot parse", front + "### review\n\n**Hard rule:** critical findings require a fail.\n", "7: hard rule: \"critical findings require a fail.\": write the conditions"},
		{"hard rule joined by and", front + "### review\n\n**Hard rule:** `a > 0` and `b > 0` requires `signal: fail`.\n", "7: hard rule: \"`a > 0` and `b > 0`\": conditions joined by \"and\""},
		{"hard rule with a bad condition", front + "### review\n\n**Hard rule:** `a is big` requires `signal: fail`.\n", "7: hard rule: condition \"a is big\" not understood"},
		{"hard rule outside a type", front + "# Rules\n\n**Hard rule:** `a > 0` requires `b: c`.\n", "7: hard rule outside a message type"},
		{"required is neither yes nor no", front + "### `[PING]`\n\n| Field | Required | Description |\n|---|---|---|\n| `x` | Maybe | an x |\n", "9: field x: Required is \"Maybe\": write Yes or No"},
		{"field listed twice", front + "### `[PING]`\n\n| Field | Required | Description |\n|---|---|---|\n| `x` | Yes | an x |\n| `x` | No | again |\n", "10: field x of PING is listed twice (line 9)"},
		{"field table outside a type", front + "| Field | Required | Description |\n|---|---|---|\n| `x` | Yes | an x |\n", "5: field table outside a message type"},
		{"table not understood", front + "### `[PING]`\n\n| Colour | Taste |\n|---|---|\n| red | sweet |\n", "~7: table not understood (columns: colour, taste); skipped"},
		{"required line naming nothing", front + "### ping_pong\n\nRequired: everything.\n", "7: Required: names no field"},
		{"empty file", "", "1: empty file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Parse("skills/broken.md", []byte(tt.text))
			var got []string
			for _, p := range s.Problems {
				g := strings.TrimPrefix(p.String(), "line ")
				g = strings.Replace(g, " ("+p.Section+")", "", 1)
				g = strings.Replace(g, ": error: ", ": ", 1)
				if p.Warning {
					g = "~" + strings.Replace(g, ": warning: ", ": ", 1)
				}
				got = append(got, g)
			}
			for _, g := range got {
				if strings.HasPrefix(g, tt.problem) {
					return
				}
			}
			t.Errorf("problems = %q, want one starting with %q", got, tt.problem)
		})
	}
}

func TestSkillErr(t *testing.T) {
	s := Parse("skills/x.md", []byte("---\nname: x\ndescription: y\n---\n### `[A]`\n\n### `[A]`\n"))
	err := s.Err()
	if err == nil || !strings.Contains(err.Error(), "skill x cannot be used:\n  skills/x.md:7: [A] is defined twice") {
		t.Errorf("Err() = %v", err)
	}
	if ok := Parse("skills/y.md", []byte(newProtocol)); ok.Err() != nil {
		t.Errorf("Err() of a good skill = %v", ok.Err())
	}
}

func TestParseRoles(t *testing.T) {
	tests := []struct {
		in    string
		roles []string
		all   bool
	}{
		{"GM", []string{"gm"}, false},
		{"Team lead", []string{"team-lead"}, false},
		{"All (broadcast)", []string{"*"}, true},
		{"All teammates (broadcast)", []string{"*"}, true},
		{"GM or Player", []string{"gm", "player"}, false},
		{"GM or any player teammate", []string{"gm", "player"}, false},
		{"Specific player teammate", []string{"player"}, false},
		{"Human's player teammate", []string{"human"}, false},
		{"Player teammate (AI or human-relay)", []string{"player"}, false},
		{"Any teammate (GM, narrator, or player)", []string{"any"}, false},
		{"All player teammates", []string{"player"}, true},
		{"worker, debugger, documenter", []string{"worker", "debugger", "documenter"}, false},
		{"architect (Phase 1)", []string{"architect"}, false},
		{"Specific player teammate (Phase 2) or included in `[AWAIT_PLAYERS]` for ephemeral Tasks (Phase 1)", []string{"player"}, false},
		{"`gm` or `player`", []string{"gm", "player"}, false},
		{"all drivers", []string{"driver"}, true},
		{"every secretaries", []string{"secretary"}, true},
		{"Both players", []string{"player"}, true},
		{"Each of the players", []string{"player"}, true},
		{"all of the reviewers", []string{"reviewer"}, true},
		{"All the agents", []string{"*"}, true},
		{"editor and translator", []string{"editor", "translator"}, true},
		{"the editor and the reviewer", []string{"editor", "reviewer"}, true},
		{"editor, translator and/or reviewer", []string{"editor", "translator", "reviewer"}, false},
		{"editor or translator", []string{"editor", "translator"}, false},
		{"a player and the narrator", []string{"player", "narrator"}, false},
	}
	for _, tt := range tests {
		roles, all := parseRoles(tt.in)
		if d := cmp.Diff(tt.roles, roles); d != "" || all != tt.all {
			t.Errorf("parseRoles(%q) = %v, %v; want %v, %v", tt.in, roles, all, tt.roles, tt.all)
		}
	}
}

func TestParseCRLFAndLists(t *testing.T) {
	text := "---\nname: x\ndescription: y\n---\n### status_report\n\n- Sender: worker\n- Required: `state`\n- Optional: `note`, `errors`\n- Recipient: lead\n- **Hard rule:** `errors > 0` requires `state: red`.\n\n```yaml\n---\ntype: status_report\nstate: green | amber | red\n---\n```\n"
	crlf := strings.ReplaceAll(text, "\n", "\r\n")
	for name, in := range map[string]string{"LF": text, "CRLF": crlf} {
		s := Parse("x.md", []byte(in))
		if len(s.Problems) != 0 {
			t.Errorf("%s: problems %v", name, s.Problems)
		}
		want := map[string][]string{"status_report worker>team-lead direct": {"state!=green|amber|red", "note?", "errors?"}}
		if d := cmp.Diff(want, schema(s)); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
		ty, _ := s.Type("status_report")
		if ty == nil || len(ty.Rules) != 1 || ty.Rules[0].Line != 11 {
			t.Errorf("%s: rules %+v", name, ty)
		}
	}
}

// TestReview checks that skills check says what looks misread, and that a
// document with no message type is no protocol.
func TestReview(t *testing.T) {
	notes := Parse("notes.md", []byte("---\nname: notes\ndescription: our notes\n---\n# Notes\n\nSome prose about the team.\n"))
	if err := notes.Err(); err == nil || !strings.Contains(err.Error(), "no message type found: not a protocol parley can read") {
		t.Errorf("a document with no type: Err() = %v", err)
	}
	text := "---\nname: x\ndescription: y\n---\n" +
		"### `[REPORT]`\n\n- **Sender**: worker\n- Required: `state`\n- **Hard rule:** `errors > 0` requires `state: red`.\n\n" +
		"### `[ORDER]`\n\n- **Sender**: the narrator requests handler\n- **Recipient**: worker\n\n" +
		"### `[NOTE]`\n\n- **Sender**: whoever is responding to the narrator\n- **Recipient**: worker\n\n" +
		"### `[ASK]`\n\n- **Sender**: worker or whoever holds the conch\n- **Recipient**: worker\n"
	s := Parse("x.md", []byte(text))
	var got []string
	for _, p := range s.Problems {
		got = append(got, fmt.Sprintf("%d %v %s", p.Line, p.Warning, p.Message))
	}
	want := []string{
		`5 true [REPORT]: no recipient found: a message of this type goes only where its to: says`,
		`9 true [REPORT]: a hard rule on "errors", a field the type does not have: ` + "`errors > 0` requires `state: red`",
		`11 true [ORDER]: the sender "the narrator requests handler" names no role parley can read: any agent may send it`,
		`16 true [NOTE]: the sender "whoever is responding to the narrator" names no role parley can read: any agent may send it`,
		`21 true [ASK]: the sender "worker or whoever holds the conch" has words parley cannot read as a role ("whoever holds the conch"): they are left out`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	// A phrase parley cannot map is reported, not guessed into a role.
	if d := cmp.Diff([]string{"worker"}, s.Roles()); d != "" {
		t.Errorf("Roles() (-want +got):\n%s", d)
	}
	if ask, _ := s.Type("ASK"); ask == nil || !cmp.Equal(ask.Senders, []string{"worker"}) {
		t.Errorf("[ASK] senders = %v, want [worker]", ask)
	}
}

func TestLibraryNameClash(t *testing.T) {
	dir := t.TempDir()
	for file, version := range map[string]string{"proto-v1.md": "1", "proto-v2.md": "2"} {
		text := "---\nname: proto\ndescription: x\nversion: " + version + "\n---\n### `[PING_V" + version + "]`\n"
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := LoadLibrary(dir)
	if err != nil {
		t.Fatalf("two files naming themselves alike must load: %v", err)
	}
	if _, err := lib.Set([]string{"proto"}); err == nil || !strings.Contains(err.Error(), `several files call themselves "proto"`) {
		t.Errorf("Set(proto) = %v, want the clash named", err)
	}
	set, err := lib.Set([]string{"proto-v2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := set.Type("PING_V2"); !ok {
		t.Errorf("the skill named by its file is not the v2 one")
	}
	if n := len(lib.List()); n != 6 {
		t.Errorf("List has %d skills, want the 4 shipped and both files", n)
	}
}

// TestObservers reads the rules that let roles see every message of a
// type, as protocols write them, and nothing else.
func TestObservers(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"GM sees all player-to-player messages via peer DM visibility", []string{"gm"}},
		{"Narrator captures via peer DM visibility for scene files", []string{"narrator"}},
		{"The gm and the narrator see every player-to-player message (peer visibility); the narrator uses them for the scene files.", []string{"gm", "narrator"}},
		{"The auditor receives a copy of every review_verdict", []string{"auditor"}},
		{"Players must NOT respond to broadcasts", nil},
		{"Team lead: Strips tag, displays to human.", nil},
		{"Recipient re-reads campaign files, resumes from latest state.", nil},
		{"Everyone sees every message", nil},
		{"When the GM wants the narrator to emphasize a moment, it sees to it that every detail is captured.", nil},
	}
	for _, tt := range tests {
		if got := observers(tt.text); !cmp.Equal(got, tt.want) {
			t.Errorf("observers(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	s := Parse("x.md", []byte("---\nname: x\ndescription: y\n---\n### `[WHISPER]`\n\n- **Sender**: player\n- **Recipient**: player\n- **Copied to**: gm, narrator\n"))
	ty, ok := s.Type("WHISPER")
	if !ok || !cmp.Equal(ty.Observers, []string{"gm", "narrator"}) || ty.ObserversLine != 9 {
		t.Errorf("Copied to: observers %v line %d, want [gm narrator] line 9", ty.Observers, ty.ObserversLine)
	}
}

// TestNotations checks the ways protocols write allowed values, role
// phrases, and headings that are sentences rather than "sender to
// recipient".
func TestNotations(t *testing.T) {
	text := "---\nname: n\ndescription: notations\n---\n" +
		"## Responding to Narrator Requests\n\n" +
		"### `[VOTE]`\n\n- **Sender**: Any teammate\n- **Recipient**: Either the GM or a player\n\n" +
		"| Field | Required | Description |\n|---|---|---|\n" +
		"| `choice` | Yes | One of: `A`, `B` |\n" +
		"| `mood` | Yes | How they feel (`calm`/`angry`) |\n" +
		"| `side` | Yes | `left` or `right` |\n" +
		"| `pace` | No | either `slow` or `fast` |\n" +
		"| `secret` | No | `true`/`false` |\n" +
		"| `level` | No | The level, see below |\n" +
		"| `ref` | No | Points at `scene_number` or `scene_slug` of the scene |\n\n" +
		"Values of `level`:\n\n- `low` — barely\n- `high`: a lot\n\n" +
		"```yaml\n[VOTE]\nchoice: A\nstance: for | against\n```\n\n" +
		"## GM to Players\n\n### `[CUE]`\n\n- Required: `cue`\n"
	s := Parse("n.md", []byte(text))
	want := map[string][]string{
		"VOTE any>gm,player direct": {"choice!=A|B", "mood!=calm|angry", "side!=left|right", "pace?=slow|fast", "secret?=true|false", "level?=low|high", "ref?", "stance?=for|against"},
		"CUE gm>player all direct":  {"cue!"},
	}
	if d := cmp.Diff(want, schema(s)); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}
	for _, p := range s.Problems {
		t.Errorf("problem: %+v", p)
	}
}
