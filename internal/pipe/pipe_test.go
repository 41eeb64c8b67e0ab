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
