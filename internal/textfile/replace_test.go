package textfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// withHook sets BeforeRename for the test: fn runs once, at the first
// write of path.
func withHook(t *testing.T, path string, fn func()) {
	t.Helper()
	done := false
	BeforeRename = func(p string) {
		if p == path && !done {
			done = true
			fn()
		}
	}
	t.Cleanup(func() { BeforeRename = nil })
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// A person's save between parley's fsync and its rename is seen: Replace
// writes nothing over it, and Edit makes its change again on it.
func TestEditKeepsSaveBeforeRename(t *testing.T) {
	path := filepath.Join(t.TempDir(), "story-state.md")
	if err := os.WriteFile(path, []byte("# State\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withHook(t, path, func() { appendTo(t, path, "by hand\n") })
	calls := 0
	err := Edit(path, func(old []byte) ([]byte, error) {
		calls++
		return append(old, "by parley\n"...), nil
	})
	if err != nil {
		t.Fatalf("Edit = %v", err)
	}
	got, _ := os.ReadFile(path)
	if want := "# State\nby hand\nby parley\n"; string(got) != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	if calls != 2 {
		t.Errorf("change called %d times, want 2", calls)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want the file's own 0600", st.Mode().Perm())
	}
	if left, _ := filepath.Glob(path + ".*"); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestReplaceChanged(t *testing.T) {
	dir := t.TempDir()
	t.Run("written meanwhile", func(t *testing.T) {
		path := filepath.Join(dir, "a.md")
		os.WriteFile(path, []byte("a\n"), 0o644)
		withHook(t, path, func() { appendTo(t, path, "b\n") })
		if err := Replace(path, []byte("a\n"), []byte("c\n")); !errors.Is(err, ErrChanged) {
			t.Errorf("Replace = %v, want ErrChanged", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "a\nb\n" {
			t.Errorf("file = %q, want the person's", got)
		}
	})
	t.Run("created meanwhile", func(t *testing.T) {
		path := filepath.Join(dir, "new.md")
		withHook(t, path, func() { appendTo(t, path, "mine\n") })
		if err := Replace(path, nil, []byte("parley's\n")); !errors.Is(err, ErrChanged) {
			t.Errorf("Replace = %v, want ErrChanged", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "mine\n" {
			t.Errorf("file = %q, want the person's", got)
		}
	})
	t.Run("removed meanwhile", func(t *testing.T) {
		path := filepath.Join(dir, "gone.md")
		os.WriteFile(path, []byte("a\n"), 0o644)
		withHook(t, path, func() { os.Remove(path) })
		if err := Replace(path, []byte("a\n"), []byte("c\n")); !errors.Is(err, ErrChanged) {
			t.Errorf("Replace = %v, want ErrChanged", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the file removed by hand is back: %v", err)
		}
	})
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// Edit gives up after editTries saves in a row, with ErrChanged.
func TestEditGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.md")
	os.WriteFile(path, []byte("a\n"), 0o644)
	BeforeRename = func(string) { appendTo(t, path, "x\n") }
	t.Cleanup(func() { BeforeRename = nil })
	calls := 0
	err := Edit(path, func(old []byte) ([]byte, error) {
		calls++
		return append(old, "p\n"...), nil
	})
	if !errors.Is(err, ErrChanged) || calls != editTries {
		t.Errorf("Edit = %v after %d calls, want ErrChanged after %d", err, calls, editTries)
	}
}
