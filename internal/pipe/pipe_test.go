package pipe

import (
	"bytes"
	"os"
	"sync"
	"testing"
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
