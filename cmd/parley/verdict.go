package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/parley-dev/parley/runner/workspace"
)

// verdictJSON is a verdict as `send --dry-run`, `compose --dry-run`,
// `validate` and `routes explain` print it with --json.
type verdictJSON struct {
	*workspace.Verdict
	Accepted bool `json:"accepted"`
}

func jsonVerdict(v *workspace.Verdict) verdictJSON {
	return verdictJSON{Verdict: v, Accepted: v.Accepted()}
}

// printVerdict writes where a message goes and why, one recipient a
// line, or why it is refused:
//
//	whisper.md: from aria, type PLAYER_TO_PLAYER
//	  bram      named in to:
//	  gm        the protocol: gm and narrator see every [PLAYER_TO_PLAYER] (...)
//	  goes to:  bram, gm
func printVerdict(w io.Writer, v *workspace.Verdict) {
	name := v.File
	if name == "" {
		name = "message"
	}
	fmt.Fprintf(w, "%s: from %s, type %s\n", name, v.From, dash(v.Type))
	if !v.Accepted() {
		for i, l := range strings.Split(v.Refusal.Error(), "\n") { // one line per problem
			if i == 0 {
				fmt.Fprintf(w, "  refused:  %s\n", l)
			} else {
				fmt.Fprintf(w, "            %s\n", l)
			}
		}
		return
	}
	width := len("goes to:")
	for _, r := range v.Recipients {
		width = max(width, len(r.Agent))
	}
	for _, r := range v.Recipients {
		why := make([]string, len(r.Rules))
		for i, rule := range r.Rules {
			why[i] = rule.Text
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, r.Agent, strings.Join(why, "; "))
	}
	fmt.Fprintf(w, "  %-*s  %s\n", width, "goes to:", strings.Join(v.Agents(), ", "))
	for _, warning := range v.Warnings {
		fmt.Fprintf(w, "  warning:  %s\n", warning)
	}
}
