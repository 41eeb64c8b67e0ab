package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seedsDir holds the protocol documents users already have. It sits beside
// the checkout in CI and is absent from a user's clone.
const seedsDir = "../../shared/seeds"

func loadSeed(t *testing.T, name string) *Skill {
	t.Helper()
	path := filepath.Join(seedsDir, name)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("%s is absent (it is beside the checkout in CI)", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	s := Parse(path, data)
	if err := s.Err(); err != nil {
		t.Fatalf("the seed does not load: %v", err)
	}
	return s
}

// header renders what a type says about who sends it where:
// "NAME senders>recipients transport phase", with "all" when it goes to
// every agent of its recipient roles, "no-broadcast" for structured
// requests, and the phase it was deprecated in.
func header(t *Type) string {
	parts := []string{t.Name, strings.Join(t.Senders, ",") + ">" + strings.Join(t.Recipients, ",")}
	if t.AllRecipients && !t.IsBroadcast() {
		parts = append(parts, "all")
	}
	parts = append(parts, t.Transport)
	if t.NoBroadcast {
		parts = append(parts, "no-broadcast")
	}
	if t.Phase != "" {
		parts = append(parts, t.Phase)
	}
	if t.Deprecated != nil {
		parts = append(parts, "deprecated:"+t.Deprecated.Deprecated)
	}
	return strings.Join(parts, " ")
}

// fields renders a type's fields: "name!" when required, "name?" when not,
// then "=A|B" for an enumeration and " when:c" for a condition.
func fields(t *Type) []string {
	out := []string{}
	for _, f := range t.Fields {
		s := f.Name + "?"
		if f.Required {
			s = f.Name + "!"
		}
		if len(f.Enum) > 0 {
			s += "=" + strings.Join(f.Enum, "|")
		}
		if f.When != nil {
			s += " when:" + f.When.String()
		}
		out = append(out, s)
	}
	return out
}

// schema renders every type of a skill: its header line, then its fields.
func schema(s *Skill) map[string][]string {
	out := map[string][]string{}
	for _, t := range s.Types {
		out[header(t)] = fields(t)
	}
	return out
}

const requestTypes7 = "QUICK_REACTION|FULL_CONTEXT|COMBAT_ACTION|SECRET_ACTION|OPTIONAL_REACTION|REFLECTION|INTERACTION"
const requestTypes4 = "QUICK_REACTION|FULL_CONTEXT|COMBAT_ACTION|SECRET_ACTION"

func TestSeedV2(t *testing.T) {
	s := loadSeed(t, "messaging-protocol-v2.md")
	if s.Name != "messaging-protocol" || !strings.HasPrefix(s.Description, "Canonical reference") {
		t.Errorf("name, description = %q, %q", s.Name, s.Description)
	}
	want := map[string][]string{
		"NARRATIVE gm>* broadcast":                {},
		"GM_TO_PLAYER gm>player direct":           {"request_type!=" + requestTypes7, "scene_number!", "scene_slug!"},
		"ASK_PLAYER gm>team-lead direct":          {"question!", "header!", "options!"},
		"SESSION_END gm>team-lead direct":         {"summary!", "state_saved!=true|false", "next_hook!"},
		"NARRATOR_NOTE gm,player>narrator direct": {"from!", "note!"},
		"DICE_RESULT team-lead>gm direct":         {"character!", "check!", "roll!", "dc?", "result?=success|failure|critical_success|critical_failure"},
		"PLAYER_ANSWER team-lead>gm direct":       {"question!", "answer!"},
		"SESSION_COMMAND team-lead>gm direct":     {"command!=start|save|end", "reason?", "campaign! when:command: start", "player_character! when:command: start", "narrative_style! when:command: start", "ai_characters! when:command: start"},
		"CONTEXT_REFRESH team-lead>any direct":    {"campaign!", "current_scene?", "last_narrative_summary?"},
		"HUMAN_DECISION team-lead>human direct":   {"character!"},
		"MODE_SWITCH team-lead>human direct":      {"mode!=AUTONOMOUS|HUMAN_RELAY", "reason?"},
		"PLAYER_TO_GM player>gm direct":           {"type!=ACTION|REACTION|VETO", "character!"},
		"PLAYER_TO_PLAYER player>player direct":   {"from!", "to!"},
		"RELAY_TO_HUMAN human>team-lead direct":   {"character!"},
		"NARRATOR_REQUEST narrator>gm direct":     {"to!", "request!"},
	}
	if d := cmp.Diff(want, schema(s)); d != "" {
		t.Errorf("schema of messaging-protocol-v2.md (-want +got):\n%s", d)
	}
	for _, tag := range []string{"NARRATIVE", "GM_TO_PLAYER", "PLAYER_TO_GM"} {
		if ty, ok := s.Type(tag); !ok || !ty.Tagged {
			t.Errorf("%s is not a tag-first type", tag)
		}
	}
	if len(s.Problems) != 0 {
		t.Errorf("problems: %v", s.Problems)
	}
}

func TestSeedV1(t *testing.T) {
	s := loadSeed(t, "messaging-protocol-v1-phases.md")
	want := map[string][]string{
		"NARRATIVE gm>* broadcast 1+":                                    {},
		"GM_TO_PLAYER gm>player direct 1+":                               {"request_type!=" + requestTypes4, "scene_number!", "scene_slug!"},
		"ASK_PLAYER gm>team-lead direct 1+":                              {"question!", "header!", "options!"},
		"STATE_UPDATED gm>team-lead direct 1+":                           {"deltas_written!", "characters_involved!"},
		"SESSION_END gm>team-lead direct 1+":                             {"summary!", "state_saved!=true|false", "next_hook!"},
		"NARRATOR_NOTE gm,player>narrator direct 1+":                     {"from!", "note!"},
		"AWAIT_PLAYERS gm>team-lead direct 1 only deprecated:Phase 2":    {"characters!", "characters[].name!", "characters[].request_type!=" + requestTypes4, "characters[].scene_context!", "characters[].just_happened!", "characters[].request!", "scene_number!", "scene_slug!"},
		"PLAYER_ACTION team-lead>gm direct 1+":                           {"character!", "action!"},
		"DICE_RESULT team-lead>gm direct 1+":                             {"character!", "check!", "roll!", "dc?", "result?=success|failure|critical_success|critical_failure"},
		"PLAYER_ANSWER team-lead>gm direct 1+":                           {"question!", "answer!"},
		"PLAYER_RESPONSES team-lead>gm direct 1 only deprecated:Phase 2": {"responses!", "vetoes?"},
		"SESSION_COMMAND team-lead>gm direct 1+":                         {"command!=start|save|end", "reason?", "campaign! when:command: start", "player_character! when:command: start", "narrative_style! when:command: start", "ai_characters! when:command: start"},
		"CONTEXT_REFRESH team-lead>any direct 1+":                        {"campaign!", "current_scene?", "last_narrative_summary?"},
		"HUMAN_DECISION team-lead>human direct 2+":                       {"character!"},
		"MODE_SWITCH team-lead>human direct 2+":                          {"mode!=AUTONOMOUS|HUMAN_RELAY", "reason?"},
		"PLAYER_TO_GM player>gm direct 2+":                               {"type!=ACTION|REACTION|VETO", "character!"},
		"PLAYER_TO_PLAYER player>player direct 2+":                       {"from!", "to!"},
		"RELAY_TO_HUMAN human>team-lead direct 2+":                       {"character!"},
		"NARRATOR_REQUEST narrator>gm direct 1+":                         {"to!", "request!"},
		"JOURNAL_CHECKPOINT team-lead>player all direct 2+":              {"campaign!", "scene_number!", "scene_slug!", "trigger!=state_updated|session_end|manual"},
	}
	if d := cmp.Diff(want, schema(s)); d != "" {
		t.Errorf("schema of messaging-protocol-v1-phases.md (-want +got):\n%s", d)
	}
	deps := map[string]string{}
	for _, d := range s.Deprecations {
		deps[d.Type] = d.Introduced + " -> " + d.Deprecated + ": " + d.Replacement
	}
	wantDeps := map[string]string{
		"AWAIT_PLAYERS":    "Phase 1 -> Phase 2: GM sends [GM_TO_PLAYER] directly to each player",
		"PLAYER_RESPONSES": "Phase 1 -> Phase 2: Players send [PLAYER_TO_GM] directly to GM",
	}
	if d := cmp.Diff(wantDeps, deps); d != "" {
		t.Errorf("deprecations (-want +got):\n%s", d)
	}
	if len(s.Problems) != 0 {
		t.Errorf("problems: %v", s.Problems)
	}
}

func TestSeedMessageSchema(t *testing.T) {
	s := loadSeed(t, "message-schema.md")
	want := map[string][]string{
		"worker_submission worker,debugger,documenter>orchestrator direct": {"type!", "signal!=rfr|blocked|escalate", "files_changed!", "qa_check!=pass|fail", "ac_coverage?", "ac_coverage.*?=pass|fail|partial|na"},
		"review_verdict reviewer>orchestrator direct":                      {"type!", "signal!=pass|pass_with_notes|fail|blocked|escalate", "critical_count!", "moderate_count!", "minor_count!", "ac_coverage!", "ac_coverage.*?=pass|fail"},
		"audit_verdict auditor>orchestrator direct":                        {"type!", "signal!=pass|pass_with_notes|fail|blocked|escalate", "security_findings!", "build_status!=pass|fail|skipped", "test_status!=pass|fail|partial|skipped", "typecheck_status?=pass|fail|skipped"},
		"triage_result architect>orchestrator direct":                      {"type!", "signal!=triage_complete|blocked|escalate", "tier!=0|1|2|3", "research_needed!=true|false", "research_count?"},
		"plan_result architect>orchestrator direct":                        {"type!", "signal!=plan_complete|blocked|escalate", "plan_file!", "wave_count!", "risk_tags!", "has_blockers!", "step_count?"},
		"research_result researcher>orchestrator direct":                   {"type!", "signal!=research_complete|blocked|escalate", "topic!", "verified!=true|false", "has_gotchas?=true|false"},
		"task_assignment orchestrator>worker,debugger,documenter direct":   {"type!", "signal!=execute", "task?", "plan_file?", "wave?", "step?"},
		"revision_request orchestrator>worker,debugger,documenter direct":  {"type!", "signal!=revise", "iteration!", "max_iterations?", "fix_severity?=critical|critical+moderate|all"},
		"approval orchestrator>worker,debugger,documenter direct":          {"type!", "signal!=lgtm"},
		"triage_request orchestrator>architect direct":                     {"type!", "signal!=execute"},
		"architecture_request orchestrator>architect direct":               {"type!", "signal!=plan"},
		"research_request orchestrator>researcher direct":                  {"type!", "signal!=research", "topic!"},
	}
	if d := cmp.Diff(want, schema(s)); d != "" {
		t.Errorf("schema of message-schema.md (-want +got):\n%s", d)
	}
	rules := map[string][]string{}
	for _, ty := range s.Types {
		for _, r := range ty.Rules {
			var ifs []string
			for _, c := range r.If {
				ifs = append(ifs, c.String())
			}
			rules[ty.Name] = append(rules[ty.Name], strings.Join(ifs, " or ")+" => "+r.Then.String())
		}
	}
	wantRules := map[string][]string{
		"review_verdict": {"critical_count > 0 => signal: fail"},
		"audit_verdict":  {"security_findings.critical > 0 or build_status: fail or test_status: fail => signal: fail"},
	}
	if d := cmp.Diff(wantRules, rules); d != "" {
		t.Errorf("hard rules (-want +got):\n%s", d)
	}
	var signals []string
	for _, sg := range s.Signals {
		signals = append(signals, sg.Name+" "+strings.Join(sg.Senders, ",")+">"+strings.Join(sg.Recipients, ","))
	}
	wantSignals := []string{
		"rfr worker,debugger,documenter>", "pass reviewer,auditor>", "pass_with_notes reviewer,auditor>",
		"fail reviewer,auditor>", "triage_complete architect>", "plan_complete architect>",
		"research_complete researcher>", "blocked any>", "escalate any>",
		"execute >worker,debugger,documenter,architect", "revise >worker,debugger,documenter",
		"lgtm >worker,debugger,documenter", "research >researcher", "plan >architect",
	}
	if d := cmp.Diff(wantSignals, signals); d != "" {
		t.Errorf("signals (-want +got):\n%s", d)
	}
	if len(s.Problems) != 0 {
		t.Errorf("problems: %v", s.Problems)
	}
}

func TestSeedSendMessageTool(t *testing.T) {
	s := loadSeed(t, "send-message-tool.md")
	if s.Name != "send-message-tool" {
		t.Errorf("name = %q, want it taken from the file name", s.Name)
	}
	want := map[string][]string{
		"shutdown_request > direct no-broadcast":       {"reason?"},
		"shutdown_response > direct no-broadcast":      {"request_id!", "approve!=true|false", "reason?"},
		"plan_approval_request > direct no-broadcast":  {},
		"plan_approval_response > direct no-broadcast": {"request_id!", "approve!=true|false", "feedback?"},
	}
	if d := cmp.Diff(want, schema(s)); d != "" {
		t.Errorf("schema of send-message-tool.md (-want +got):\n%s", d)
	}
	// What it could not read is said, as warnings: no frontmatter, the
	// addressing table, and the types whose recipient is only in prose
	// ("ask a teammate"): they go where their to: says.
	var got []string
	for _, p := range s.Problems {
		if !p.Warning {
			t.Errorf("error: %v", p)
		}
		got = append(got, p.Message)
	}
	wantProblems := []string{
		"no frontmatter",
		"table not understood (columns: address, meaning)",
		"shutdown_request: no recipient found",
		"shutdown_response: no recipient found",
		"plan_approval_request: no recipient found",
		"plan_approval_response: no recipient found",
	}
	if len(got) != len(wantProblems) {
		t.Fatalf("problems = %q", got)
	}
	for i, w := range wantProblems {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("problem %d = %q, want it to start with %q", i, got[i], w)
		}
	}
}

// TestSeedGMToolProtocol: the tool-loop document defines its messages as
// TypeScript interfaces, between a frontend and a backend.
func TestSeedGMToolProtocol(t *testing.T) {
	s := loadSeed(t, "gm-tool-protocol.md")
	want := map[string][]string{
		"message frontend>backend direct":           {"role!=user|assistant|system|tool", "content!", "toolCallId?", "toolCalls?"},
		"llm_response backend>frontend direct":      {"message!"},
		"assistant_message backend>frontend direct": {"role!=assistant", "content!", "toolCalls?"},
	}
	if d := cmp.Diff(want, schema(s)); d != "" {
		t.Errorf("schema of gm-tool-protocol.md (-want +got):\n%s", d)
	}
}
