package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
	"github.com/parley-dev/parley/skills"
)

const dndTable = `skills: [dnd-team]
agents:
  - gm
  - narrator
  - team-lead
  - name: aria
    role: player
  - name: bram
    role: player
  - name: seat
    role: human
`

// outcome is what became of a dropped file: who got it, or why it was
// refused, and the journal's warnings.
type outcome struct {
	To       []string
	Refused  string
	Warnings []string
}

func outcomes(t *testing.T, ws *workspace.Workspace) map[string]outcome {
	t.Helper()
	out := map[string]outcome{}
	for _, e := range journalEntries(t, ws) {
		o := outcome{To: e.To, Warnings: e.Warnings}
		if e.Outcome == workspace.Refused {
			o.To = nil
			o.Refused = e.Reason
		}
		out[e.File] = o
	}
	return out
}

func TestProtocol(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "gm"), dndTable)
	files := map[string][2]string{ // name -> sender, text
		"narrative.md":       {"gm", "[NARRATIVE]\n\nRain on the roof.\n"},
		"ask.md":             {"gm", "[ASK_PLAYER]\nquestion: Which character?\nheader: Character\noptions:\n  - label: Aria\n    description: the bard\n"},
		"prompt-nobody.md":   {"gm", "[GM_TO_PLAYER]\nrequest_type: QUICK_REACTION\nscene_number: 1\nscene_slug: the-inn\n\nWhat now?\n"},
		"prompt-aria.md":     {"gm", "[GM_TO_PLAYER]\nto: aria\nrequest_type: QUICK_REACTION\nscene_number: 1\nscene_slug: the-inn\n\nWhat now?\n"},
		"prompt-bad-enum.md": {"gm", "[GM_TO_PLAYER]\nto: aria\nrequest_type: quick_reaction\nscene_number: 1\nscene_slug: the-inn\n"},
		"player-narrates.md": {"aria", "[NARRATIVE]\n\nI take over the story.\n"},
		"old-style.md":       {"gm", "[AWAIT_PLAYERS]\ncharacters:\n  - name: aria\n    request_type: QUICK_REACTION\n    scene_context: dark\n    just_happened: a noise\n    request: react\nscene_number: 1\nscene_slug: the-inn\n"},
		"gossip.md":          {"aria", "[GOSSIP]\nto: bram\n\nDid you hear?\n"},
		"typo.md":            {"gm", "---\nto: aria\ntype: NARATIVE\n---\nRain.\n"},
		"veto.md":            {"aria", "[PLAYER_TO_GM]\ntype: VETO\ncharacter: aria\n\nThis touches my past.\n"},
		"ask-aria.md":        {"gm", "[ASK_PLAYER]\nto: aria\nquestion: Which?\nheader: Which\noptions: []\n"},
	}
	for name, f := range files {
		drop(t, ws, f[0], name, f[1])
	}
	routeAll(t, ws)
	got := outcomes(t, ws)
	want := map[string]outcome{
		"narrative.md":       {To: []string{"narrator", "team-lead", "aria", "bram", "seat"}},
		"ask.md":             {To: []string{"team-lead"}},
		"prompt-nobody.md":   {Refused: "prompt-nobody.md: to: missing: [GM_TO_PLAYER] goes to one player or human, and there are several (aria, bram, seat): name it with to:"},
		"prompt-aria.md":     {To: []string{"aria"}},
		"prompt-bad-enum.md": {Refused: `prompt-bad-enum.md:3: request_type: "quick_reaction" is not one of QUICK_REACTION, FULL_CONTEXT, COMBAT_ACTION, SECRET_ACTION, OPTIONAL_REACTION, REFLECTION, INTERACTION (values are exact: "QUICK_REACTION", not "quick_reaction")`},
		"player-narrates.md": {Refused: "player-narrates.md: from: aria (role player) may not send [NARRATIVE]: it is sent by gm"},
		"old-style.md":       {To: []string{"team-lead"}, Warnings: []string{"type: [AWAIT_PLAYERS] is deprecated since Phase 2: [GM_TO_PLAYER], sent by the gm directly to each player"}},
		"gossip.md":          {To: []string{"bram"}, Warnings: []string{"type: [GOSSIP] is no type of this workspace's protocol: delivered as an informal message"}},
		"typo.md":            {Refused: `typo.md:3: type: "NARATIVE" is no type of this workspace's protocol; did you mean "NARRATIVE"?`},
		"veto.md":            {To: []string{"gm"}},
		"ask-aria.md":        {Refused: "ask-aria.md:2: to: aria (role player) may not receive [ASK_PLAYER]: it goes to team-lead"},
	}
	for name, w := range want {
		g := got[name]
		if w.Refused != "" {
			if !strings.HasPrefix(g.Refused, w.Refused) {
				t.Errorf("%s: refused %q, want a reason starting %q (outcome %+v)", name, g.Refused, w.Refused, g)
			}
			continue
		}
		if d := cmp.Diff(w, g); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
	// A default recipient is written into the delivered copy.
	inbox := names(t, ws, "team-lead", mailbox.Inbox)
	for _, n := range inbox {
		m := readMessage(t, ws.Mailbox("team-lead").Path(mailbox.Inbox, n))
		if typ, _ := m.Header().Get("type"); typ == "ASK_PLAYER" {
			if to, _ := m.Header().Get("to"); to != "team-lead" {
				t.Errorf("delivered [ASK_PLAYER] says to: %q, want team-lead", to)
			}
		}
	}
}

func TestProtocolStrictAndPhase(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "gm"), "strict: true\nphase: 1\n"+dndTable)
	drop(t, ws, "team-lead", "old-style.md", "[PLAYER_RESPONSES]\nresponses:\n  - character: aria\n    response: ok\n")
	drop(t, ws, "team-lead", "too-soon.md", "[HUMAN_DECISION]\ncharacter: aria\n")
	routeAll(t, ws)
	got := outcomes(t, ws)
	// In phase 1 a phase-1 message is fine, deprecated later or not.
	if d := cmp.Diff(outcome{To: []string{"gm"}}, got["old-style.md"]); d != "" {
		t.Errorf("old-style.md in phase 1 (-want +got):\n%s", d)
	}
	if r := got["too-soon.md"].Refused; !strings.HasPrefix(r, "too-soon.md:1: type: [HUMAN_DECISION] belongs to phase 2+, and the session is in phase 1") {
		t.Errorf("too-soon.md: %+v", got["too-soon.md"])
	}
}

// TestNewProtocolByFile checks that a protocol nobody compiled in works by
// dropping its skill file into skills/: its types route by role and its
// fields, values and rules are checked.
func TestProtocolStrictDeprecated(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "gm"), "strict: true\nphase: 2\n"+dndTable)
	drop(t, ws, "team-lead", "old-style.md", "[PLAYER_RESPONSES]\nresponses:\n  - character: aria\n    response: ok\n")
	routeAll(t, ws)
	if r := outcomes(t, ws)["old-style.md"].Refused; !strings.HasPrefix(r, "old-style.md:1: type: [PLAYER_RESPONSES] is deprecated since Phase 2") {
		t.Errorf("old-style.md: %q", r)
	}
}

func TestNewProtocolByFile(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "skills: [heist-crew]\nagents:\n  - name: boss\n    role: mastermind\n  - name: eyes\n    role: lookout\n  - name: wheels\n    role: driver\n")
	skill := "---\nname: heist-crew\ndescription: How a heist crew plans a job.\n---\n\n" +
		"### `[CASE_THE_JOINT]`\n\n- **Sender**: mastermind\n- **Recipient**: lookout\n\n" +
		"| Field | Required | Description |\n|---|---|---|\n| `building` | Yes | Which building |\n| `hours` | Yes | One of: `day`, `night` |\n| `guards` | No | Guards seen |\n\n" +
		"**Hard rule:** `guards > 3` requires `hours: day`.\n\n" +
		"### `[ALL_CLEAR]`\n\n- **Sender**: lookout\n- **Recipient**: all (broadcast)\n"
	if err := os.MkdirAll(ws.SkillsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws.SkillsDir(), "heist-crew.md"), []byte(skill), 0o644); err != nil {
		t.Fatal(err)
	}
	drop(t, ws, "boss", "case.md", "[CASE_THE_JOINT]\nbuilding: the-bank\nhours: night\n")
	drop(t, ws, "boss", "risky.md", "[CASE_THE_JOINT]\nbuilding: the-bank\nhours: night\nguards: 5\n")
	drop(t, ws, "boss", "vague.md", "[CASE_THE_JOINT]\nbuilding: the-bank\nhours: evening\n")
	drop(t, ws, "eyes", "clear.md", "[ALL_CLEAR]\n\nNobody around.\n")
	routeAll(t, ws)
	got := outcomes(t, ws)
	if d := cmp.Diff([]string{"eyes"}, got["case.md"].To); d != "" {
		t.Errorf("case.md went to (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"boss", "wheels"}, got["clear.md"].To); d != "" {
		t.Errorf("clear.md went to (-want +got):\n%s", d)
	}
	if r := got["risky.md"].Refused; !strings.HasPrefix(r, "risky.md:3: hours: hard rule of [CASE_THE_JOINT]: `guards > 3` requires `hours: day` (here guards is 5 and hours is \"night\")") {
		t.Errorf("risky.md: %+v", got["risky.md"])
	}
	if r := got["vague.md"].Refused; !strings.HasPrefix(r, `vague.md:3: hours: "evening" is not one of day, night`) {
		t.Errorf("vague.md: %+v", got["vague.md"])
	}
}

func TestBrokenSkillStopsTheRunner(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "gm"), "skills: [broken]\nagents: [gm]\n")
	os.MkdirAll(ws.SkillsDir(), 0o755)
	os.WriteFile(filepath.Join(ws.SkillsDir(), "broken.md"), []byte("---\nname: broken\ndescription: x\n---\n### `[A]`\n\n### `[A]`\n"), 0o644)
	_, err := Open(ws, Options{})
	var se *skills.SkillError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "[A] is defined twice") {
		t.Errorf("Open with a broken skill = %v, want the skill's problems", err)
	}
	ws = reconfigure(t, ws, "skills: [nowhere]\nagents: [gm]\n")
	if _, err := Open(ws, Options{}); !errors.Is(err, skills.ErrUnknownSkill) {
		t.Errorf("Open with an unknown skill = %v", err)
	}
}

// TestProtocolNamesAndCharacters: the gm need not be called gm, and a
// player agent may play a character of another name; messages addressed to
// the character reach it.
func TestProtocolNamesAndCharacters(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "dm"), `skills: [dnd-team]
agents:
  - name: dm
    role: gm
  - narrator
  - name: p1
    role: player
    character: tilda-brannock
  - name: p2
    role: player
    character: grimjaw-ironforge
`)
	drop(t, ws, "narrator", "request.md", "[NARRATOR_REQUEST]\nrequest: What happened in the warehouse?\n")
	drop(t, ws, "p1", "whisper.md", "[PLAYER_TO_PLAYER]\nfrom: tilda-brannock\nto: grimjaw-ironforge\n\n*whispers* Left flank.\n")
	routeAll(t, ws)
	got := outcomes(t, ws)
	if d := cmp.Diff(outcome{To: []string{"dm"}}, got["request.md"]); d != "" {
		t.Errorf("request.md (-want +got):\n%s", d)
	}
	// The protocol lets the gm and the narrator see every whisper.
	if d := cmp.Diff(outcome{To: []string{"p2", "dm", "narrator"}}, got["whisper.md"]); d != "" {
		t.Errorf("whisper.md (-want +got):\n%s", d)
	}
}

// TestSeedAsWorkspaceSkill loads a reference document, as it is, as the
// workspace's protocol.
func TestSeedAsWorkspaceSkill(t *testing.T) {
	seed, err := os.ReadFile("../../shared/seeds/messaging-protocol-v2.md")
	if err != nil {
		t.Skipf("the seed documents are beside the checkout in CI: %v", err)
	}
	ws := reconfigure(t, newWorkspace(t, "gm"), "skills: [messaging-protocol]\nagents: [gm, team-lead, {name: aria, role: player}]\n")
	os.MkdirAll(ws.SkillsDir(), 0o755)
	if err := os.WriteFile(filepath.Join(ws.SkillsDir(), "messaging-protocol-v2.md"), seed, 0o644); err != nil {
		t.Fatal(err)
	}
	drop(t, ws, "gm", "ask.md", "[ASK_PLAYER]\nquestion: Which character?\nheader: Character\noptions:\n  - label: Aria\n    description: the bard\n")
	drop(t, ws, "aria", "veto.md", "[PLAYER_TO_GM]\ntype: VETO\ncharacter: aria\n\nNot this.\n")
	drop(t, ws, "aria", "shout.md", "[NARRATIVE]\n\nI narrate!\n")
	routeAll(t, ws)
	got := outcomes(t, ws)
	if d := cmp.Diff([]string{"team-lead"}, got["ask.md"].To); d != "" {
		t.Errorf("ask.md went to (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"gm"}, got["veto.md"].To); d != "" {
		t.Errorf("veto.md went to (-want +got):\n%s", d)
	}
	if !strings.Contains(got["shout.md"].Refused, "may not send [NARRATIVE]") {
		t.Errorf("shout.md: %+v", got["shout.md"])
	}
}
