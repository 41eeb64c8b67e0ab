package mailbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCache: a file is parsed once while it is unchanged; a file
// rewritten in place (even at the same size), replaced by a rename or
// removed is read again; Keep forgets the names a directory no longer
// lists; a file that is no message is never kept.
func TestCache(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := NewCache(func(m *Message) *Message { return m })
	read := func(name string) *Message {
		t.Helper()
		m, err := c.Read(dir, name, 1<<20)
		if err != nil {
			t.Fatalf("Read(%s): %v", name, err)
		}
		return m
	}
	typ := func(m *Message) string { v, _ := m.Header().Get("type"); return v }

	write("a.md", "---\ntype: aaa\n---\nbody\n")
	// Written an hour ago: an edit now has a later time even where the
	// filesystem's clock ticks coarsely (Linux before 6.13).
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "a.md"), hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	first := read("a.md")
	if again := read("a.md"); again != first {
		t.Error("an unchanged file was parsed again")
	}

	// In place, same size: the change time and the modification time
	// say it changed.
	f, err := os.OpenFile(filepath.Join(dir, "a.md"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("bbb"), int64(len("---\ntype: "))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := typ(read("a.md")); got != "bbb" {
		t.Errorf("after an edit in place, type = %q, want bbb", got)
	}

	// Replaced by a rename: another file.
	write("b.tmp", "---\ntype: ccc\n---\n")
	if err := os.Rename(filepath.Join(dir, "b.tmp"), filepath.Join(dir, "a.md")); err != nil {
		t.Fatal(err)
	}
	if got := typ(read("a.md")); got != "ccc" {
		t.Errorf("after a rename over it, type = %q, want ccc", got)
	}

	// Removed: an error, and nothing kept.
	os.Remove(filepath.Join(dir, "a.md"))
	if _, err := c.Read(dir, "a.md", 1<<20); !os.IsNotExist(err) {
		t.Errorf("a removed file: err = %v, want not exist", err)
	}
	if c.Len() != 0 {
		t.Errorf("after the file was removed the cache holds %d", c.Len())
	}

	// No message: an error each time, never kept.
	write("bad.md", "")
	for range 2 {
		if _, err := c.Read(dir, "bad.md", 1<<20); err == nil {
			t.Error("an empty file read as a message")
		}
	}
	if c.Len() != 0 {
		t.Errorf("a file that is no message was kept (%d)", c.Len())
	}

	// Keep forgets what the directory no longer lists.
	write("x.md", "---\ntype: x\n---\n")
	write("y.md", "---\ntype: y\n---\n")
	read("x.md")
	read("y.md")
	c.Keep(dir, []string{"y.md"})
	if c.Len() != 1 {
		t.Errorf("after Keep(y.md) the cache holds %d, want 1", c.Len())
	}
}
