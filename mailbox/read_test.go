package mailbox

import "testing"

func TestSizeOver(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		n, limit int64
		want     string
	}{
		{2*mib + 16, mib, "2.0 MiB"}, // the README's big.md
		{mib + 24, mib, "1048600 bytes"},
		{3 * mib, mib, "3 MiB"},
		{mib + mib/2, mib, "1.5 MiB"},
		{2970, 2048, "2.9 KiB"},
		{2050, 2048, "2050 bytes"},
		{201, 200, "201 bytes"},
		{mib + 24, 1024, "1.0 MiB"},
	}
	for _, tt := range tests {
		if got := SizeOver(tt.n, tt.limit); got != tt.want {
			t.Errorf("SizeOver(%d, %d) = %q, want %q", tt.n, tt.limit, got, tt.want)
		}
	}
}

func TestSizeString(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{200, "200 bytes"},
		{1 << 20, "1 MiB"},
		{1536, "1.5 KiB"},
		{1<<20 + 24, "1048600 bytes"},
		{2<<20 + 16, "2097168 bytes"},
	}
	for _, tt := range tests {
		if got := SizeString(tt.n); got != tt.want {
			t.Errorf("SizeString(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
