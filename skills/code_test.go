package skills

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTypeScriptTypes checks that message types declared as TypeScript
// interfaces are read: the name from the type literal (else the
// interface's name), optional members, unions of literals as values,
// members whose types span lines, and the section's sender and recipient.
func TestTypeScriptTypes(t *testing.T) {
	text := "---\nname: ts\ndescription: types in code\n---\n" +
		"## Worker → Lead\n\n```typescript\n" +
		"interface Ping {\n  type: 'ping';\n  level: 'low' | \"high\"; // how loud\n  note?: string;\n}\n\n" +
		"export interface StatusReport extends Base {\n  state: 'green' | 'amber' | 'red',\n  items?: Array<{\n    id: string;\n    done: boolean;\n  }>;\n  readonly owner: string\n}\n```\n"
	s := Parse("ts.md", []byte(text))
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"ping worker>team-lead direct":          {"level!=low|high", "note?"},
		"status_report worker>team-lead direct": {"state!=green|amber|red", "owner!", "items?"},
	}
	if d := cmp.Diff(want, schema(s)); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}
	if ty, _ := s.Type("ping"); ty == nil || ty.Line != 8 {
		t.Errorf("ping = %+v, want it at line 8", ty)
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"AssistantMessage": "assistant_message", "LLMResponse": "llm_response", "Message": "message", "toolCall": "tool_call"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}
