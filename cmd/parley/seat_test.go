package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/dice"
)

func TestRollArgs(t *testing.T) {
	tests := []struct {
		args, expr, check, dc string
		bad                   bool
	}{
		{"1d20+5 --dc 12 Stealth", "1d20+5", "Stealth", "12", false},
		{"1d20 + 5 Sleight of Hand", "1d20+5", "Sleight of Hand", "", false},
		{"--dc=15 2d6", "2d6", "", "15", false},
		{"Perception 1d20", "", "Perception 1d20", "", false},
		{"", "", "", "", false},
		{"1d20 --dc", "", "", "", true},
	}
	for _, tt := range tests {
		expr, check, dc, err := rollArgs(tt.args)
		if (err != nil) != tt.bad {
			t.Errorf("rollArgs(%q) error = %v, want one: %v", tt.args, err, tt.bad)
		}
		if expr != tt.expr || check != tt.check || dc != tt.dc {
			t.Errorf("rollArgs(%q) = %q, %q, %q; want %q, %q, %q", tt.args, expr, check, dc, tt.expr, tt.check, tt.dc)
		}
	}
}

// FuzzSeatLine feeds a seat any line a person could type: it never
// panics, and the only error is the person's /quit.
func FuzzSeatLine(f *testing.F) {
	for _, s := range []string{
		"", "1", "The crypt", "/roll 1d20+5 --dc 12 Stealth", "/roll 1d20+", "/roll --dc x 1d4",
		"/say VETO this is mine", "/say", "/whisper tor-ashgrove psst", "/whisper", "/save", "/end because",
		"/away", "/back", "/status", "/sheet", "/journal", "/help", "/rol", "/", "//", "/quit",
		"/roll 99999999999d99999999999", "/say \x00\xff", "/whisper ../../etc hi",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	cfg := "skills: [dnd-team]\ncampaign: the-hollow\nagents:\n  - gm\n  - {name: lead, role: team-lead}\n  - you\n  - {name: mira, role: human, character: mira-quickfoot}\n"
	ws := newWorkspace(f, dir, cfg)
	camp, err := campaigns.New(dir, "the-hollow")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := camp.NewSheet("mira-quickfoot", ""); err != nil {
		f.Fatal(err)
	}
	if err := camp.WritePrefs("mira-quickfoot", "", "terse"); err != nil {
		f.Fatal(err)
	}
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	s, err := openSeat(e, ws, "", "")
	if err != nil {
		f.Fatal(err)
	}
	s.dice = dice.Seeded(1)
	f.Fuzz(func(t *testing.T, line string) {
		if _, err := s.line(context.Background(), line); err != nil && !errors.Is(err, errQuit) {
			t.Errorf("line(%q) = %v", line, err)
		}
	})
}
