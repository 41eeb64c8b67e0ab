package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestPlayPipedWhileWaiting drives `parley play` with its stdin a pipe
// nobody writes to (`sleep 300 | parley play`), a question waiting for
// the person. It blocked the seat's runner on the read: nothing was
// routed while it waited (a `parley send` stayed in its outbox), an
// answer given with `parley answer` was never noticed, and SIGTERM and
// SIGINT were ignored. Now the seat routes while it waits, says what was
// answered elsewhere, tells plainly (once, and with no raw log line)
// that an AI player's program failed and its message was given up, and
// a signal ends it cleanly.
func TestPlayPipedWhileWaiting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := parleyProgram(t)
	ws := filepath.Join(dir, "table")
	parley := parleyIn(t, bin, ws)
	newSeatTable(t, parley, ws, "  - {name: tilda, role: player, character: tilda-brannock, driver: command, retries: 0, run: [sh, -c, 'exit 1']}\n")
	prompt := func(to, text string) string {
		f := filepath.Join(dir, to+".md")
		m := "[GM_TO_PLAYER]\nto: " + to + "\nrequest_type: QUICK_REACTION\nscene_number: \"001\"\nscene_slug: the-gate\n\n" + text + "\n"
		if err := os.WriteFile(f, []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(parley("send", "--from", "gm", "--file", f))
	}
	question := prompt("mira-quickfoot", "The gate slams shut. Quick: what do you do?")

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			play := startPiped(t, bin, ws)
			play.waitFor(t, "the seat", `You sit at the-hollow`)
			if sig == syscall.SIGTERM {
				play.waitFor(t, "the question", `\? gm asks mira-quickfoot`)

				// Tilda's program fails: the seat says so, once, plainly.
				lost := prompt("tilda-brannock", "Tilda, the gate creaks.")
				play.waitFor(t, "the give-up notice", `(?s)tilda could not handle \[GM_TO_PLAYER\] from gm\s+`+lost+`.*parley retry\s+`+lost)

				// Routed while the seat waits for the person.
				parley("send", "--from", "gm", "--to", "you", "--body", "psst")
				play.waitFor(t, "the message sent meanwhile", `gm: psst`)

				// Answered elsewhere: said, and the answer routed.
				if out := parley("answer", question, "I duck."); !strings.Contains(out, "answered") {
					t.Fatalf("parley answer: %s", out)
				}
				play.waitFor(t, "the answer given elsewhere", regexp.QuoteMeta(question)+`, .*, was answered elsewhere: "I duck\."`)
				waitForFile(t, filepath.Join(ws, "mailboxes", "gm", "inbox"), "I duck.")
			}
			play.stop(t, sig)
			if n := strings.Count(play.stdout.String(), "could not handle"); sig == syscall.SIGTERM && n != 1 {
				t.Errorf("the give-up is told %d times, want once:\n%s", n, play.stdout.String())
			}
			if strings.Contains(play.stderr.String(), "level=ERROR") {
				t.Errorf("a raw log line on stderr:\n%s", play.stderr.String())
			}
		})
	}
}

// pipedPlay is a `parley play` whose stdin is a pipe held open.
type pipedPlay struct {
	cmd            *exec.Cmd
	in             *os.File
	done           chan error
	stdout, stderr *syncBuffer
}

func startPiped(t *testing.T, bin, ws string) *pipedPlay {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &pipedPlay{cmd: exec.Command(bin, "-C", ws, "play"), in: w, done: make(chan error, 1), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = r, p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		w.Close()
	})
	return p
}

// waitFor waits (up to 30s) until the seat's stdout matches re.
func (p *pipedPlay) waitFor(t *testing.T, what, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(30 * time.Second)
	for !rx.MatchString(p.stdout.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30s; stdout:\n%s\nstderr:\n%s", what, p.stdout.String(), p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop signals the seat, whose stdin is still open, and wants it to end
// cleanly (exit 0) within 10s.
func (p *pipedPlay) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("after %v: %v\nstdout:\n%s\nstderr:\n%s", sig, err, p.stdout.String(), p.stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%v did not end the seat within 10s (its stdin open); stdout:\n%s", sig, p.stdout.String())
	}
}

// syncBuffer is a bytes.Buffer safe to write from a process's copier
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
