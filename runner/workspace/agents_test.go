package workspace

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestAwaitedAfterReadable: agents.json says a wait's after: as
// parley.yaml does ("2m0s"), not 120000000000, and reads the nanoseconds
// the runners before wrote.
func TestAwaitedAfterReadable(t *testing.T) {
	ws, err := InitConfig(t.TempDir(), "agents: [gm, p1]\n")
	if err != nil {
		t.Fatal(err)
	}
	until := time.Date(2026, 11, 29, 21, 4, 5, 0, time.UTC)
	want := Awaited{Agent: "p1", Message: "m1", From: "gm", Until: until, After: 2 * time.Minute, Policy: "timeouts[0]"}
	data, err := json.Marshal(AgentRun{State: StateIdle, Awaited: []Awaited{want}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"after":"2m0s"`) || strings.Contains(string(data), "120000000000") {
		t.Fatalf("written as %s", data)
	}
	for _, after := range []string{`"2m0s"`, `120000000000`} {
		file := `{"p1": {"state": "idle", "since": "2026-11-29T21:00:00Z", "awaited": [{"agent": "p1", "message": "m1", "from": "gm", "until": "2026-11-29T21:04:05Z", "after": ` + after + `, "policy": "timeouts[0]"}]}}`
		if err := os.WriteFile(ws.AgentsPath(), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		runs, err := ws.AgentRuns()
		if err != nil {
			t.Fatal(err)
		}
		if got := runs["p1"].Awaited; len(got) != 1 || got[0] != want {
			t.Errorf("after: %s read as %+v, want %+v", after, got, want)
		}
	}
}
