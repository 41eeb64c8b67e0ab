package pipe

import (
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// locked is a buffer that a reader's goroutine writes while the test
// reads it.
type locked struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *locked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *locked) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCatchUp: once CatchUp returns, all that was written to the pipe
// before it is in the writer, however late the reader would have read
// it; the reader goes on reading after, to the pipe's end.
func TestCatchUp(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got locked
	var wg sync.WaitGroup
	p := Read(&wg, r, &got)
	for i, line := range []string{"warning: one\n", "two\n", "three\n"} {
		if _, err := w.WriteString(line); err != nil {
			t.Fatal(err)
		}
		p.CatchUp()
		want := []string{"warning: one\n", "warning: one\ntwo\n", "warning: one\ntwo\nthree\n"}[i]
		if s := got.String(); s != want {
			t.Fatalf("after CatchUp %d: read %q, want %q", i+1, s, want)
		}
	}
	w.WriteString("last\n")
	w.Close()
	wg.Wait()
	if s := got.String(); s != "warning: one\ntwo\nthree\nlast\n" {
		t.Errorf("read to its end: %q", s)
	}
	p.CatchUp() // read to its end: returns at once
}

// TestUnread: what was written to a pipe and not read is counted from
// its writing end, after its reader has gone too; what was read is not.
func TestUnread(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString("turn one\n"); err != nil {
		t.Fatal(err)
	}
	n, ok := Unread(w)
	if !ok {
		t.Skip("this system does not say what waits in a pipe")
	}
	if n != 9 {
		t.Errorf("Unread = %d, want 9", n)
	}
	buf := make([]byte, 4)
	r.Read(buf)
	if n, _ := Unread(w); n != 5 {
		t.Errorf("Unread after 4 bytes read = %d, want 5", n)
	}
	r.Close()
	if n, _ := Unread(w); n != 5 {
		t.Errorf("Unread once the reader closed = %d, want 5", n)
	}
}

// slow is a writer slower than a program that writes without a pause:
// the pipe read into it is never empty. going is closed once it has
// taken 256 KiB: the program writes.
type slow struct {
	n     atomic.Int64
	going chan struct{}
}

func (s *slow) Write(p []byte) (int, error) {
	sum := sha256.Sum256(p)
	for range 100 {
		sum = sha256.Sum256(append(sum[:], p...))
	}
	if n := s.n.Add(int64(len(p))); n >= 256<<10 && n-int64(len(p)) < 256<<10 {
		close(s.going)
	}
	return len(p), nil
}

// TestCatchUpFastWriter: a catch-up reads what waited in the pipe when
// it was asked, not until the pipe is empty: a program that writes
// faster than the writer takes it does not keep it waiting. Before, it
// read on as long as the program wrote (0.46 s against a fast writer,
// for ever against this one).
func TestCatchUpFastWriter(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// A program of its own, which the kernel wakes as soon as the pipe
	// has room.
	yes := exec.Command("yes", "warning: again")
	yes.Stdout = w
	if err := yes.Start(); err != nil {
		t.Skipf("no program that writes without a pause: %v", err)
	}
	w.Close()
	var wg sync.WaitGroup
	sink := &slow{going: make(chan struct{})}
	p := Read(&wg, r, sink)
	<-sink.going
	caught := make(chan struct{})
	var read int64 // what the sink took while CatchUp ran
	go func() {
		n := sink.n.Load()
		p.CatchUp()
		read = sink.n.Load() - n
		close(caught)
	}()
	select {
	case <-caught:
		// What waited (64 KiB, what a pipe holds), and what the
		// reader had read and read next: not what the program wrote
		// meanwhile.
		if read > 256<<10 {
			t.Errorf("CatchUp read %d KiB while the program wrote, want what waited (at most 256 KiB)", read>>10)
		}
	case <-time.After(10 * time.Second):
		t.Error("CatchUp did not return in 10s while the program wrote")
	}
	yes.Process.Kill()
	yes.Wait()
	r.SetReadDeadline(time.Now()) // the reader ends
	wg.Wait()
	r.Close()
	<-caught
}
