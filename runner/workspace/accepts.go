package workspace

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/skills"
)

// Accepts says which messages wake an agent's driver:
//
//	accepts:                       # optional: without it, every message wakes it
//	  types: [GM_TO_PLAYER, NARRATIVE]
//	  signals: [review]
//
// or, for types alone, a list: accepts: [GM_TO_PLAYER, NARRATIVE].
//
// A message the agent does not accept is still delivered to its inbox;
// its worker files it in done/ at once, the journal saying "kept as
// context", and hands it to the agent with its next accepted message
// (see the runner's Delivery.Context). A message wakes the agent when
// its type is one of Types or its signal one of Signals; a structured
// request or response (one with a request_id, such as a
// shutdown_request) always does, since its sender waits for the answer.
// parley's own notices that the driver takes (a message_refused about
// the agent's own message, say) wake it whatever its accepts: the runner
// decides that before asking Wakes.
type Accepts struct {
	Types   []string
	Signals []string
	Line    int // line of accepts: in parley.yaml
	Key     string
	// lines of each type and signal, for errors
	typeLines, signalLines []int
}

// Wakes reports whether a message wakes an agent with these accepts; a
// nil Accepts accepts every message.
func (ac *Accepts) Wakes(m *mailbox.Message) bool {
	if ac == nil {
		return true
	}
	h := m.Header()
	if rid, _ := h.Get("request_id"); rid != "" {
		return true
	}
	if typ, _ := h.Get("type"); typ != "" && slices.Contains(ac.Types, typ) {
		return true
	}
	if sig, _ := h.Get("signal"); sig != "" && slices.Contains(ac.Signals, sig) {
		return true
	}
	return false
}

// parseAccepts reads an agent's accepts: a list of types, or a mapping
// with types: and signals:.
func parseAccepts(v *yaml.Node, key string, bad badFunc) (*Accepts, error) {
	ac := &Accepts{Line: v.Line, Key: key}
	words := func(v *yaml.Node, key string, dst *[]string, lines *[]int) error {
		var items []*yaml.Node
		switch v.Kind {
		case yaml.ScalarNode:
			items = []*yaml.Node{v}
		case yaml.SequenceNode:
			items = v.Content
		default:
			return bad(v, key, "expected a word or a list of words")
		}
		for _, it := range items {
			if it.Kind != yaml.ScalarNode || strings.TrimSpace(it.Value) == "" {
				return bad(it, key, "expected a word")
			}
			*dst = append(*dst, strings.Trim(it.Value, "[]"))
			*lines = append(*lines, it.Line)
		}
		return nil
	}
	switch v.Kind {
	case yaml.SequenceNode:
		if err := words(v, key, &ac.Types, &ac.typeLines); err != nil {
			return nil, err
		}
	case yaml.MappingNode:
		err := eachKey(v, key, bad, map[string]func(*yaml.Node) error{
			"types":   func(v *yaml.Node) error { return words(v, key+".types", &ac.Types, &ac.typeLines) },
			"signals": func(v *yaml.Node) error { return words(v, key+".signals", &ac.Signals, &ac.signalLines) },
		})
		if err != nil {
			return nil, err
		}
	default:
		return nil, bad(v, key, "expected a list of message types, or types: and signals: (accepts: {types: [NARRATIVE], signals: [review]})")
	}
	if len(ac.Types)+len(ac.Signals) == 0 {
		return nil, bad(v, key, "accepts nothing: the agent would never be woken (leave accepts: out to accept every message)")
	}
	return ac, nil
}

// checkTypes checks the message types and signals parley.yaml names
// against the protocol: every agent's accepts:, stop_on: and the match
// types of timeouts:. Each must be one a skill defines, written with or
// without the brackets of a tagged type ([SESSION_END]): a misspelt one
// would never match, and the agent would never be woken, the run never
// stop, the silence never be seen, without a word. Every one that is not
// is said, with the type it is nearest to (a *ConfigErrors for several).
// A route's types are warned about instead (see Lint): a route for a
// type no skill defines still routes informal messages of that type.
// Without skills nothing is checked.
func checkTypes(cfg *Config, path string, protocol *skills.Set) error {
	if protocol == nil {
		return nil
	}
	var errs []*ConfigError
	typ := func(t string, line int, key string) {
		if _, _, ok := protocol.Type(t); !ok {
			errs = append(errs, &ConfigError{Path: path, Line: line, Key: key, Err: unknownType(t, cfg.Skills, protocol)})
		}
	}
	for _, a := range cfg.Agents {
		ac := a.Accepts
		if ac == nil {
			continue
		}
		for i, t := range ac.Types {
			typ(t, ac.typeLines[i], ac.Key+".types")
		}
		for i, s := range ac.Signals {
			if _, _, ok := protocol.Signal(s); !ok {
				errs = append(errs, &ConfigError{Path: path, Line: ac.signalLines[i], Key: ac.Key + ".signals",
					Err: fmt.Errorf("%q is no signal of the skills %s", s, strings.Join(cfg.Skills, ", "))})
			}
		}
	}
	for i, t := range cfg.StopOn {
		typ(t, lineAt(cfg.StopOnLines, i), "stop_on")
	}
	for _, p := range cfg.Timeouts {
		for i, t := range p.Type {
			typ(t, lineAt(p.typeLines, i), p.Key+".match.type")
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	slices.SortStableFunc(errs, func(a, b *ConfigError) int { return a.Line - b.Line })
	return &ConfigErrors{Errs: errs}
}

// unknownType says that t is no message type of the protocol, with the
// type it is nearest to in spelling (SESSION_ENDS for SESSION_END), or
// else every type.
func unknownType(t string, skillNames []string, protocol *skills.Set) error {
	names := protocol.TypeNames()
	if near := spell.Nearest(t, names, 2); near != "" {
		return fmt.Errorf("%q is no message type of the skills %s (did you mean %s?)", t, strings.Join(skillNames, ", "), near)
	}
	return fmt.Errorf("%q is no message type of the skills %s (types: %s)", t, strings.Join(skillNames, ", "), strings.Join(names, ", "))
}

// lineAt returns lines[i], or 0 when there is none (a Config made by
// hand, not read from a file).
func lineAt(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 0
}
