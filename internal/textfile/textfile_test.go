package textfile

import (
	"errors"
	"testing"
)

func TestConflict(t *testing.T) {
	tests := []struct {
		name string
		data string
		line int
		ok   bool
	}{
		{"none", "# Tor\n\n- Rope\n", 0, false},
		{"setext heading", "Inventory\n=======\n\n- Rope\n", 0, false},
		{"separator alone", "a\n=======\nb\n", 0, false},
		{"opening alone", "a\n<<<<<<< HEAD\nb\n", 0, false},
		{"closing alone", "a\n>>>>>>> other\nb\n", 0, false},
		{"closing before opening", ">>>>>>> other\n<<<<<<< HEAD\n", 0, false},
		{"longer run is no marker", "<<<<<<<< x\n>>>>>>>> y\n", 0, false},
		{"conflict", "# Tor\n- Locket\n<<<<<<< HEAD\n- Lantern\n=======\n- Rope\n>>>>>>> other\n", 3, true},
		{"crlf", "# Tor\r\n<<<<<<< HEAD\r\na\r\n=======\r\nb\r\n>>>>>>> other\r\n", 2, true},
		{"bare markers", "<<<<<<<\na\n=======\nb\n>>>>>>>\n", 1, true},
		{"diff3", "x\n<<<<<<< ours\na\n||||||| base\n=======\nb\n>>>>>>> theirs\n", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, ok := Conflict([]byte(tt.data))
			if line != tt.line || ok != tt.ok {
				t.Errorf("Conflict(%q) = %d, %v, want %d, %v", tt.data, line, ok, tt.line, tt.ok)
			}
		})
	}
}

func TestCheckConflict(t *testing.T) {
	err := CheckConflict("party/tor.md", []byte("a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> x\n"))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("CheckConflict = %v, want ErrConflict", err)
	}
	want := "party/tor.md:2: unresolved merge conflict (<<<<<<< here): resolve it, then git add"
	if err.Error() != want {
		t.Errorf("CheckConflict = %q, want %q", err, want)
	}
	if err := CheckConflict("x", []byte("Title\n=======\n")); err != nil {
		t.Errorf("CheckConflict(setext heading) = %v, want nil", err)
	}
}

func TestNewline(t *testing.T) {
	for data, want := range map[string]string{"": "\n", "a\nb\r\n": "\n", "a\r\nb\n": "\r\n", "\r\n": "\r\n"} {
		if got := Newline([]byte(data)); got != want {
			t.Errorf("Newline(%q) = %q, want %q", data, got, want)
		}
	}
	if got := WithNewline("a\nb\r\nc\n", "\r\n"); got != "a\r\nb\r\nc\r\n" {
		t.Errorf("WithNewline(crlf) = %q", got)
	}
	if got := WithNewline("a\r\nb\n", "\n"); got != "a\nb\n" {
		t.Errorf("WithNewline(lf) = %q", got)
	}
}
