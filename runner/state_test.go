package runner

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/runner/workspace"
)

// TestUnresponsiveSticks checks that an agent marked unresponsive stays so
// while it handles other messages (a nudge it does not answer), and is
// idle again once it sends something.
func TestUnresponsiveSticks(t *testing.T) {
	ws := newWorkspace(t, "lead")
	s := loadStateBook(ws, time.Now)
	defer s.close()
	s.set("mute", workspace.StateUnresponsive, "ask-1")
	s.set("mute", workspace.StateWorking, "nudge-1")
	s.set("mute", workspace.StateIdle, "")
	if a := s.agents["mute"]; a.State != workspace.StateUnresponsive || a.Message != "ask-1" {
		t.Errorf("after handling a nudge without answering: %+v, want unresponsive about ask-1", a)
	}
	s.spoke("mute")
	if a := s.agents["mute"]; a.State != workspace.StateIdle {
		t.Errorf("after it spoke: %+v, want idle", a)
	}
	s.set("mute", workspace.StateWorking, "ask-2")
	s.set("mute", workspace.StateIdle, "")
	if a := s.agents["mute"]; a.State != workspace.StateIdle {
		t.Errorf("after handling a message: %+v, want idle", a)
	}
}
