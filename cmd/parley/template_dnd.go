package main

import (
	"fmt"
	"strings"

	"github.com/parley-dev/parley/campaigns"
)

// dndTable is what `parley init --template dnd` lays out: a campaign, and
// the characters of the table.
type dndTable struct {
	Campaign string
	Human    string   // the human's character; "" to ask at the first `parley play`
	AI       []string // the characters AI players play
}

// agentFor returns the name of the agent that plays a character: its
// first name (tilda for tilda-brannock), or the whole name when that is
// taken.
func agentFor(character string, taken map[string]bool) string {
	name, _, _ := strings.Cut(character, "-")
	if taken[name] {
		name = character
	}
	taken[name] = true
	return name
}

// config returns the table's parley.yaml.
func (t dndTable) config() string {
	var b strings.Builder
	b.WriteString(`# A D&D table, laid out by parley init --template dnd.
#
#   gm, narrator  wait for a person (parley inbox gm, parley reply) until
#                 you give them a program: driver: command with run: [...],
#                 or driver: session for one that stays running
#   lead          the team lead, built in: starts the session from the
#                 campaign's preferences.md, fans [AWAIT_PLAYERS] out,
#                 applies the game master's deltas, saves in git, closes
#                 the session
#   you           you, at ` + "`parley play`" + `: you see the story and answer for
#                 your character
#   one agent per character: role human for the one that plays yours (it
#   passes you the game master's prompts), role player for the AI players;
#   give them programs as for the gm
#   scribe, journal, tools  built in: scene files, journals, sheets
skills: [dnd-team, dnd-journal, team-requests]
phase: 2
`)
	fmt.Fprintf(&b, "campaign: %s\n", t.Campaign)
	b.WriteString(`git: auto        # the team lead commits the campaign at saves and at the end
agents:
  - name: gm
  - name: narrator
  - name: lead
    role: team-lead
    driver: builtin
    handler: team-lead
  - name: you
`)
	taken := map[string]bool{"gm": true, "narrator": true, "lead": true, "you": true, "scribe": true, "journal": true, "tools": true}
	if t.Human != "" {
		fmt.Fprintf(&b, "  - name: %s\n    role: human\n    character: %s\n", agentFor(t.Human, taken), t.Human)
	}
	for _, c := range t.AI {
		fmt.Fprintf(&b, "  - name: %s\n    role: player\n    character: %s\n", agentFor(c, taken), c)
	}
	b.WriteString(`  - {name: scribe, driver: builtin, handler: scribe}
  - {name: journal, driver: builtin, handler: journal}
  - {name: tools, driver: builtin, handler: tools}

routes:
  # You see what the protocol sends the team lead for the human.
  - match: {type: [ASK_PLAYER, RELAY_TO_HUMAN, SESSION_END, NARRATIVE]}
    cc: [you]

# An agent that says nothing for this long after a message it should answer
# is marked unresponsive: parley status shows it, and you are told at
# parley play.
timeouts:
  - match: {type: [PLAYER_TO_GM, PLAYER_ACTION, PLAYER_ANSWER, DICE_RESULT]}
    after: 5m
  - match: {type: GM_TO_PLAYER, to_role: [player]}
    after: 3m

# The game master's [SESSION_END] ends the run, once the team lead has
# closed the session.
stop_on: [SESSION_END]
`)
	return b.String()
}

// check refuses names that cannot name a campaign or a character, and a
// character named twice.
func (t dndTable) check() error {
	if err := campaigns.ValidName(t.Campaign); err != nil {
		return usagef("--campaign: %v", err)
	}
	seen := map[string]bool{}
	for _, c := range append([]string{t.Human}, t.AI...) {
		if c == "" {
			continue
		}
		if err := campaigns.ValidName(c); err != nil {
			return usagef("character %v", err)
		}
		if seen[c] {
			return usagef("character %q is named twice", c)
		}
		seen[c] = true
	}
	return nil
}
