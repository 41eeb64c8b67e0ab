package workspace

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/mailbox"
)

// Route adds recipients to the messages it matches, beside those the
// message names and those its protocol gives:
//
//	routes:
//	  - match:                     # every condition must hold; all optional
//	      type: [PLAYER_TO_PLAYER] # one type or a list
//	      signal: fail
//	      from: aria               # sender names
//	      from_role: player        # sender roles
//	      fields: {verdict: no}    # field values, exact
//	    to: [gm]                   # names, roles, "*", "$field", "reply"
//	    cc: [narrator]             # copies: the same, for readability
//
// A target "$character" is the agent named (or the character played) in
// the message's character field, or each of a list (nobody when the
// message has none; a from, to or cc the protocol's fields leave out is
// the header's); "reply" is the sender of the
// message it answers (nobody when it has no reply_to); a word is an
// agent's name, or else a role (every agent with it), and "role:x" is
// always a role.
type Route struct {
	Type     []string
	Signal   []string
	From     []string
	FromRole []string
	Fields   map[string]string
	To       []string
	CC       []string
	Line     int
	Key      string // routes[i], for messages
	// ToLine and CCLine are the lines of to: and cc: (0: none), for an
	// error about a target they name.
	ToLine, CCLine int
}

var fieldTarget = regexp.MustCompile(`^\$[A-Za-z_][A-Za-z0-9_]*$`)

func parseRoute(n *yaml.Node, key string, bad badFunc) (Route, error) {
	r := Route{Line: n.Line, Key: key}
	if n.Kind != yaml.MappingNode {
		return r, bad(n, key, "expected match:, to: and cc:")
	}
	err := eachKey(n, key, bad, map[string]func(*yaml.Node) error{
		"match": func(v *yaml.Node) error {
			return eachKey(v, key+".match", bad, map[string]func(*yaml.Node) error{
				"type":      func(v *yaml.Node) error { return wordList(v, key+".match.type", &r.Type, bad) },
				"signal":    func(v *yaml.Node) error { return wordList(v, key+".match.signal", &r.Signal, bad) },
				"from":      func(v *yaml.Node) error { return nameList(v, key+".match.from", &r.From, bad) },
				"from_role": func(v *yaml.Node) error { return nameList(v, key+".match.from_role", &r.FromRole, bad) },
				"fields": func(v *yaml.Node) error {
					if v.Kind != yaml.MappingNode {
						return bad(v, key+".match.fields", "expected field: value pairs")
					}
					r.Fields = map[string]string{}
					for i := 0; i+1 < len(v.Content); i += 2 {
						if twice, err := given(v, i, key+".match.fields", bad); twice {
							if err != nil {
								return err
							}
							continue
						}
						if v.Content[i+1].Kind != yaml.ScalarNode {
							return bad(v.Content[i+1], key+".match.fields."+v.Content[i].Value, "expected one value")
						}
						r.Fields[v.Content[i].Value] = v.Content[i+1].Value
					}
					return nil
				},
			})
		},
		"to": func(v *yaml.Node) error { r.ToLine = v.Line; return wordList(v, key+".to", &r.To, bad) },
		"cc": func(v *yaml.Node) error { r.CCLine = v.Line; return wordList(v, key+".cc", &r.CC, bad) },
	})
	if err != nil {
		return r, err
	}
	for i, t := range r.Type {
		r.Type[i] = strings.Trim(t, "[]")
	}
	if len(r.To)+len(r.CC) == 0 {
		return r, bad(n, key+".to", "%w: the route sends nowhere (give to: or cc:)", ErrMissing)
	}
	return r, nil
}

// targets returns every target of the route.
func (r *Route) targets() []string { return append(append([]string(nil), r.To...), r.CC...) }

// checkRoutes checks that every route target names an agent or a role,
// and that routes do not send every message of automated agents around in
// a circle.
func checkRoutes(cfg *Config, path string) error {
	agents := map[string]Agent{}
	roles := map[string]bool{}
	for _, a := range cfg.Agents {
		agents[a.Name] = a
		roles[a.Name] = true
		for _, r := range a.Roles {
			roles[r] = true
		}
	}
	names := slices.Sorted(maps.Keys(roles)) // every agent's name and role
	for _, r := range cfg.Routes {
		for _, tk := range []struct {
			targets []string
			key     string
			line    int
		}{{r.To, ".to", r.ToLine}, {r.CC, ".cc", r.CCLine}} {
			for _, t := range tk.targets {
				switch {
				case t == "*" || t == "reply" || fieldTarget.MatchString(t):
				case strings.HasPrefix(t, "role:"):
					// A role nobody holds yet is a warning (see Lint): the
					// agent that will hold it may be added later.
				default:
					if _, ok := agents[t]; !ok && !roles[t] {
						line := tk.line
						if line == 0 {
							line = r.Line
						}
						err := fmt.Errorf("routes to %q, which is no agent and no agent's role", t)
						if near := spell.Nearest(t, names, 2); near != "" {
							err = fmt.Errorf("routes to %q, which is no agent and no agent's role (did you mean %s?)", t, near)
						}
						return &ConfigError{Path: path, Line: line, Key: r.Key + tk.key, Err: err}
					}
				}
			}
		}
		for _, f := range r.From {
			if _, ok := agents[f]; !ok {
				return &ConfigError{Path: path, Line: r.Line, Key: r.Key + ".match.from", Err: fmt.Errorf("%q is no agent", f)}
			}
		}
	}
	return checkRouteCycle(cfg, path, agents)
}

// checkRouteCycle refuses routes that forward everything a program-driven
// agent sends to another such agent, and back: each would answer the
// other for ever.
func checkRouteCycle(cfg *Config, path string, agents map[string]Agent) error {
	automated := func(name string) bool {
		a, ok := agents[name]
		return ok && a.Driven()
	}
	edges := map[string][]string{}
	lines := map[[2]string]Route{}
	for _, r := range cfg.Routes {
		if len(r.Type)+len(r.Signal)+len(r.Fields) > 0 {
			continue // routes only some messages: not a loop by itself
		}
		var from []string
		for _, a := range cfg.Agents {
			if slices.Contains(r.From, a.Name) || overlaps(r.FromRole, rolesOf(a)) {
				from = append(from, a.Name)
			}
		}
		for _, f := range from {
			for _, t := range r.targets() {
				for _, a := range cfg.Agents {
					if a.Name == t || (!isAgent(agents, t) && slices.Contains(rolesOf(a), strings.TrimPrefix(t, "role:"))) {
						if automated(f) && automated(a.Name) && f != a.Name {
							edges[f] = append(edges[f], a.Name)
							lines[[2]string{f, a.Name}] = r
						}
					}
				}
			}
		}
	}
	// Depth-first search for a cycle.
	state := map[string]int{} // 1 visiting, 2 done
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = 1
		stack = append(stack, n)
		for _, m := range edges[n] {
			if state[m] == 1 {
				for i, s := range stack {
					if s == m {
						return append(append([]string(nil), stack[i:]...), m)
					}
				}
			}
			if state[m] == 0 {
				if c := visit(m); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = 2
		return nil
	}
	names := make([]string, 0, len(edges))
	for n := range edges {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if state[n] == 0 {
			if cycle := visit(n); cycle != nil {
				r := lines[[2]string{cycle[0], cycle[1]}]
				return &ConfigError{Path: path, Line: r.Line, Key: r.Key, Err: fmt.Errorf("routes send every message around a circle of agents that answer by program (%s): match a type or a signal", strings.Join(cycle, " -> "))}
			}
		}
	}
	return nil
}

func isAgent(agents map[string]Agent, name string) bool {
	_, ok := agents[name]
	return ok
}

func rolesOf(a Agent) []string {
	if len(a.Roles) > 0 {
		return a.Roles
	}
	return []string{a.Name}
}

// routed is one route's contribution to a message's recipients.
type routed struct {
	Route  *Route
	Agents []string
}

// matches reports whether a route applies to a message from sender.
func (r *Route) matches(ws *Workspace, sender string, m *mailbox.Message) bool {
	typ := TypeOf(m)
	signal, _ := m.Header().Get("signal")
	if len(r.Type) > 0 && !slices.Contains(r.Type, typ) {
		return false
	}
	if len(r.Signal) > 0 && !slices.Contains(r.Signal, signal) {
		return false
	}
	if len(r.From) > 0 && !slices.Contains(r.From, sender) {
		return false
	}
	if len(r.FromRole) > 0 && !overlaps(r.FromRole, ws.Roles(sender)) {
		return false
	}
	for k, want := range r.Fields {
		if got, ok := m.For(k).Get(k); !ok || got != want {
			return false
		}
	}
	return true
}

// resolve turns a route's targets into agents, for a message from sender.
func (r *Route) resolve(ws *Workspace, sender string, m *mailbox.Message) ([]string, error) {
	var out []string
	add := func(n string) {
		if n != sender && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, t := range r.targets() {
		switch {
		case t == "*":
			for _, a := range ws.AgentNames() {
				add(a)
			}
		case t == "reply":
			id, ok := m.Header().Get("reply_to")
			if !ok || id == "" {
				continue // it answers no message: nobody to send it back to
			}
			_, from, err := mailbox.ParseID(id)
			if err != nil {
				return nil, fmt.Errorf("%s (line %d): reply_to: %v", r.Key, r.Line, err)
			}
			if _, ok := ws.Agent(from); !ok {
				return nil, fmt.Errorf("%s (line %d): reply_to names %q, which is no agent", r.Key, r.Line, from)
			}
			out = appendNew(out, from)
		case fieldTarget.MatchString(t):
			names, err := m.For(t[1:]).Names(t[1:])
			if err != nil {
				return nil, fmt.Errorf("%s (line %d) sends it to %s, which is not a name or a list of names", r.Key, r.Line, t)
			}
			// A message that does not say adds nobody.
			for _, v := range names {
				agent, ok := ws.Resolve(v)
				if !ok {
					return nil, fmt.Errorf("%s (line %d) sends it to %s = %q, which is no agent and no agent's character", r.Key, r.Line, t, v)
				}
				out = appendNew(out, agent)
			}
		default:
			role := strings.TrimPrefix(t, "role:")
			if _, ok := ws.Agent(t); ok && !strings.HasPrefix(t, "role:") {
				add(t)
				continue
			}
			for _, a := range ws.AgentNames() {
				if slices.Contains(ws.Roles(a), role) {
					add(a)
				}
			}
		}
	}
	return out, nil
}

// applyRoutes returns the recipients the workspace's routes add to a
// message, with the routes that added them.
func (w *Workspace) applyRoutes(sender string, m *mailbox.Message) ([]routed, error) {
	var out []routed
	for i := range w.Config.Routes {
		r := &w.Config.Routes[i]
		if !r.matches(w, sender, m) {
			continue
		}
		agents, err := r.resolve(w, sender, m)
		if err != nil {
			return nil, err
		}
		out = append(out, routed{Route: r, Agents: agents})
	}
	return out, nil
}
