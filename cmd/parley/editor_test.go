package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
)

// An editor that fails (reply's, at a terminal) was said as
// `parley: false: exit status 1`: the error names the editor and the
// variable that chose it, and says nothing was sent; the draft is gone.
func TestEditBodyEditorFails(t *testing.T) {
	tests := []struct {
		vars []string
		want string
	}{
		{[]string{"EDITOR=false"}, "not sent: the editor false ($EDITOR) failed: exit status 1"},
		{[]string{"VISUAL=false", "EDITOR=vi"}, "not sent: the editor false ($VISUAL) failed: exit status 1"},
	}
	for _, tt := range tests {
		t.Run(tt.vars[0], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "aria")
			if err := os.MkdirAll(filepath.Join(dir, mailbox.Tmp), 0o755); err != nil {
				t.Fatal(err)
			}
			e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, vars: tt.vars}
			_, err := editBody(e, mailbox.Dir(dir), editorOf(e), "")
			if err == nil || err.Error() != tt.want {
				t.Errorf("editBody with %q = %v, want %s", tt.vars, err, tt.want)
			}
			if left, _ := os.ReadDir(filepath.Join(dir, mailbox.Tmp)); len(left) != 0 {
				t.Errorf("tmp/ holds %d files after a failed editor, want none", len(left))
			}
		})
	}
}
