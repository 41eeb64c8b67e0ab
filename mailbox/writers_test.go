package mailbox

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestBeingWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "draft.md")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("---\nto: bob\n---\nhalf a messa")
	got, err := BeingWritten(path)
	if runtime.GOOS != "linux" {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("BeingWritten = %v, %v; want ErrUnsupported off Linux", got, err)
		}
		return
	}
	if err != nil || !got {
		t.Errorf("BeingWritten while open for writing = %v, %v; want true", got, err)
	}
	// A reader does not count.
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.Close()
	if got, err := BeingWritten(path); err != nil || got {
		t.Errorf("BeingWritten after the writer closed = %v, %v; want false", got, err)
	}
}
