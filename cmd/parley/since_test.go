package main

import (
	"testing"
	"time"
)

func TestSinceTimeOfDay(t *testing.T) {
	now := time.Date(2026, 11, 27, 0, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"00:10", time.Date(2026, 11, 27, 0, 10, 0, 0, time.UTC)},
		{"00:10:05", time.Date(2026, 11, 27, 0, 10, 5, 0, time.UTC)},
		{"23:00", time.Date(2026, 11, 26, 23, 0, 0, 0, time.UTC)}, // just after midnight: yesterday's
	} {
		got, err := parseSince(c.in, now, time.UTC)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	tokyo := time.FixedZone("JST", 9*3600)
	got, err := parseSince("09:00", now, tokyo) // 09:30 in Tokyo
	if want := time.Date(2026, 11, 27, 9, 0, 0, 0, tokyo); err != nil || !got.Equal(want) {
		t.Errorf("parseSince(09:00) in Tokyo = %v, %v; want %v", got, err, want)
	}
}
