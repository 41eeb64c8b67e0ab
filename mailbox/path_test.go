package mailbox

import (
	"path/filepath"
	"testing"
)

// pathDirs and pathNames are mailboxes and names Path is given, or may
// be: a workspace's (made by filepath.Join), and ones a person or a
// program might pass that need cleaning.
var (
	pathDirs = []string{
		"/work/ws/mailboxes/alice", "ws/mailboxes/bob", "alice", "/tmp/x/",
		"/tmp//x", "./ws/mailboxes/carol", "ws/./mailboxes/dave", "../ws/mailboxes/eve",
		"ws/mailboxes/../mailboxes/fay", "/", "", ".", "..", "//", "a/b/.", "a/b/..",
	}
	pathNames = []string{
		Inbox, Tmp, "20261126-232631.742546Z-dave-967a14.md", "note-1.md",
		"", ".", "..", "x/y.md", "../y.md", "x/", ".hidden",
	}
)

// TestPath checks that Dir's paths are what filepath.Join makes of the
// same parts, byte for byte, whether they are built by concatenation
// (clean parts) or joined.
func TestPath(t *testing.T) {
	for _, d := range pathDirs {
		for _, state := range pathNames {
			if got, want := Dir(d).dir(state), filepath.Join(d, state); got != want {
				t.Errorf("Dir(%q).dir(%q) = %q, want %q", d, state, got, want)
			}
			for _, name := range pathNames {
				if got, want := Dir(d).Path(state, name), filepath.Join(d, state, name); got != want {
					t.Errorf("Dir(%q).Path(%q, %q) = %q, want %q", d, state, name, got, want)
				}
			}
		}
	}
}

// FuzzPath checks Path against filepath.Join on any parts.
func FuzzPath(f *testing.F) {
	for _, d := range pathDirs {
		for _, name := range pathNames {
			f.Add(d, Inbox, name)
		}
	}
	f.Fuzz(func(t *testing.T, d, state, name string) {
		if got, want := Dir(d).Path(state, name), filepath.Join(d, state, name); got != want {
			t.Errorf("Dir(%q).Path(%q, %q) = %q, want %q", d, state, name, got, want)
		}
	})
}
