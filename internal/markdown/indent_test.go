package markdown

import "testing"

func TestIndent(t *testing.T) {
	for _, tt := range []struct {
		line string
		want int
	}{
		{"text", 0}, {"   - item", 3}, {"    code", 4}, {"\tcode", 4}, {"  \tcode", 4}, {" \t \tx", 8}, {"   ", 3}, {"", 0},
	} {
		if got := Indent(tt.line); got != tt.want {
			t.Errorf("Indent(%q) = %d, want %d", tt.line, got, tt.want)
		}
	}
}
