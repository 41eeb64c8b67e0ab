package workspace

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/internal/yamlerr"
	"github.com/parley-dev/parley/mailbox"
)

// Defaults for the router section of parley.yaml.
const (
	DefaultRescanInterval = 30 * time.Second
	DefaultSettle         = 200 * time.Millisecond
	DefaultMaxMessageSize = 1 << 20
)

// Config is what parley.yaml says. Its fields, with their keys:
//
//	skills: [dnd-team]       # the protocols messages are checked against
//	phase: 2                 # optional: the session's phase, for phased protocols
//	strict: false            # refuse deprecated and wrong-phase messages
//	agents:                  # every agent that has a mailbox
//	  - name: gm             # lower-case kebab-case, unique
//	    role: gm             # what the agent does in the protocol (default: its name)
//	  - name: aria
//	    roles: [player, human]
//	router:
//	  rescan_interval: 30s   # full rescan of every outbox, besides file events
//	  settle: 200ms          # a file written in place is taken once unchanged this long
//	  max_message_size: 1MiB # larger files are rejected
type Config struct {
	Skills     []string
	SkillsLine int // line of skills: in parley.yaml (0: none), for an unknown skill
	Phase      int
	Strict     bool
	Agents     []Agent
	Routes     []Route
	// Timeouts are liveness policies: nudge an agent that does not
	// answer, then mark it unresponsive.
	Timeouts []Timeout
	// StopOn lists message types whose delivery ends the session: the
	// agents finish what is in flight (the closing message included),
	// then the runner stops every driver and exits. Each must be a type
	// of the skills (see Workspace.Protocol), as accepts: types must.
	StopOn []string
	// StopOnLines are the lines of the types of StopOn in parley.yaml,
	// one each, for an error about a type.
	StopOnLines []int
	// Git is "auto" when the story is saved in git by itself: the D&D
	// team lead makes a checkpoint (a commit of the campaign files) at
	// each save and at the end of a session. Empty, or "off": only
	// `parley checkpoint` commits.
	Git string
	// Campaign is the campaign under campaigns/ that the campaign
	// commands and the D&D built-in agents use when none is named. Empty:
	// the workspace's only campaign.
	Campaign string
	// CampaignLine is the line of campaign: in parley.yaml (0: none), for
	// a campaign that does not exist.
	CampaignLine int
	// Concurrency caps how many agents' drivers run at once; 0, the
	// default, sets no cap beyond the agents themselves (each handles one
	// message at a time). An agent waiting on its program (an LLM call, a
	// hung command) holds a slot while it waits, so a cap suits only
	// programs that compute.
	Concurrency int
	// HopLimit caps how many messages in a row two program agents may
	// send each other, answering one another: the guard against loops
	// (see Loops). Default 20.
	HopLimit int
	// MaxOutput caps what a command or session may print for one
	// message. Default 4 MiB.
	MaxOutput int64
	// Budget caps what the openai agents of one session (a run of the
	// runner) use together; Prices are what each model costs, by model
	// name, for the cost figures and cost budgets.
	Budget Budget
	Prices map[string]Price
	// CostLine and PricesLine are the lines of budget: cost: and of
	// prices: in parley.yaml (0: none), for a cost budget a model has no
	// price for.
	CostLine, PricesLine int
	Router               RouterConfig
	// Bridge, when set, connects this workspace to others over NATS
	// JetStream (the bridge: section); nil for a workspace on its own.
	Bridge *Bridge
	// Skipped lists the unknown keys skipped when the file was read with
	// LoadOptions.SkipUnknown, each a *ConfigError wrapping ErrUnknownKey;
	// empty when read strictly (an unknown key is then an error). An
	// entry an unknown key left without a key it needs is listed once,
	// by the error that names both (wrapping ErrMissing too): an agent
	// with rnu: for run: is kept without a driver (Agent.ConfigError),
	// any other entry (a route, a timeout, the bridge, an agent with
	// nmae: for name:) is left out.
	Skipped []*ConfigError
}

// Agent is one agent of a workspace.
type Agent struct {
	Name string
	// Roles are what the agent does in the protocol (gm, player, worker,
	// ...). An agent given none has its name as its role.
	Roles []string
	// Driver is how the agent runs: human (the default: messages wait in
	// its inbox), command, session or builtin.
	Driver string
	// Run is the program of a command or session driver, as argv: no
	// shell, no message content in the arguments.
	Run []string
	// Handler names the built-in handler of a builtin driver.
	Handler string
	// Character is the character the agent plays, when it is not named
	// after it: a message addressed to the character (to: tilda-brannock)
	// goes to the agent.
	Character string
	// CharacterLine is the line of character: in parley.yaml (0: none),
	// for a warning about a character the campaign has no sheet of.
	CharacterLine int
	// Isolate, for a command or session agent that plays a character in a
	// workspace with a campaign, says whether its program sees only what
	// the character may know (see Isolated). Nil: yes.
	Isolate *bool
	// Timeout bounds one message's handling (default 5m); Retries is how
	// often a failed message is tried again (default 2).
	Timeout time.Duration
	Retries int
	// Model is the endpoint of an openai agent (its openai: section);
	// nil for any other driver.
	Model *Model
	// Budget caps what an openai agent uses in one session.
	Budget Budget
	// Accepts says which messages wake the agent's driver; nil: every
	// message does. The others are kept as context for its next call.
	Accepts *Accepts
	// Remote names the workspace the agent lives in when it is not this
	// one: its messages reach it over the bridge (see Bridge), and what
	// it sends comes from there. Empty for an agent of this workspace.
	Remote string
	Line   int    // line of the entry in parley.yaml
	Key    string // the entry's key in parley.yaml: agents[2]
	// RolesLine and RolesKey are the line and key of role: (or roles:)
	// in parley.yaml (0, "": none), for a warning about a role.
	RolesLine int
	RolesKey  string
	// HandlerLine is the line of handler: in parley.yaml (0: none), for
	// an error about the handler it names.
	HandlerLine int
	// RunLine is the line of run: in parley.yaml (0: none), for a
	// warning about a file it names.
	RunLine int
	// CostLine is the line of budget: cost: in parley.yaml (0: none),
	// for a cost budget whose model has no price.
	CostLine int
	// ConfigError, for parley.yaml read with LoadOptions.SkipUnknown, is
	// why nothing can drive the agent: its entry lacks a key its driver
	// needs (run:, handler:, driver:, openai:), an unknown key beside it
	// most likely that key misspelt (rnu: for run:). The agent is kept,
	// its name, roles and mailbox, for the commands that only read;
	// parley run, which reads parley.yaml strictly, refuses the file.
	// Nil for every other agent.
	ConfigError *ConfigError
}

// Person reports whether the agent is a person of this workspace: no
// program drives it (driver human, the default), and it lives here, not
// in another workspace (remote:, whose inbox here holds what the bridge
// forwards).
func (a Agent) Person() bool {
	return !a.Driven() && a.Remote == ""
}

// PersonThere reports whether the agent is a person where it lives: a
// person of this workspace (Person), or an agent of another workspace
// (remote:) with the role human (HumanRole: the person). How another
// workspace drives its agents is its own parley.yaml's; this one knows
// only the roles it lists them with, so an agent of another workspace
// without the role human is not taken for a person.
func (a Agent) PersonThere() bool {
	return a.Person() || a.Remote != "" && slices.Contains(a.Roles, HumanRole)
}

// Driven reports whether this workspace's runner drives the agent: a
// built-in handler or a program (command, session, openai), not a person
// and not an agent of another workspace (which is driver human here). An
// agent whose entry lacks a key its driver needs (ConfigError) is meant
// to be driven too, though nothing can drive it until that is mended.
func (a Agent) Driven() bool {
	return a.ConfigError != nil || a.Driver != "" && a.Driver != DriverHuman
}

// RunsProgram reports whether a program the runner starts plays the
// agent: driver command, session or openai (a built-in handler is part
// of parley, not a program).
func (a Agent) RunsProgram() bool {
	return a.Driven() && a.Driver != DriverBuiltin
}

// Isolated reports whether the agent's program runs confined to its
// character's view of the workspace: a command or session agent that
// plays a character, unless parley.yaml says isolate: false.
func (a Agent) Isolated() bool {
	if a.Driver != DriverCommand && a.Driver != DriverSession || a.Character == "" {
		return false
	}
	return a.Isolate == nil || *a.Isolate
}

// Drivers an agent may have.
const (
	DriverHuman   = "human"
	DriverCommand = "command"
	DriverSession = "session"
	DriverBuiltin = "builtin"
)

// Values of git: in parley.yaml.
const (
	GitAuto = "auto"
	GitOff  = "off"
)

// Defaults for agents and dispatch.
const (
	DefaultTimeout   = 5 * time.Minute
	DefaultRetries   = 2
	DefaultHopLimit  = 20
	DefaultMaxOutput = 4 << 20
)

// RouterConfig tunes the router.
type RouterConfig struct {
	// RescanInterval is how often every outbox is listed again, in case a
	// file event was missed. Default 30s.
	RescanInterval time.Duration
	// Settle is how long a file that was not renamed into the outbox must
	// stay unchanged before it is taken. Default 200ms.
	Settle time.Duration
	// MaxMessageSize is the largest message file accepted, in bytes.
	// Default 1 MiB.
	MaxMessageSize int64
}

// ConfigError is an error in parley.yaml. It reads
// "parley.yaml:LINE: KEY: reason", naming the line and the key.
type ConfigError struct {
	// Path is the file as the workspace names it (ConfigFile), which a
	// command may rewrite to the path its user would open.
	Path string
	Line int // 0 when the error has no line
	Key  string
	Err  error
}

func (e *ConfigError) Error() string {
	s := e.Path
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	s += ": "
	if e.Key != "" {
		s += e.Key + ": "
	}
	return s + e.Err.Error()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// yamlError is a *ConfigError for a file that does not parse as YAML,
// at the line the problem is on (yamlerr.Line), when there is one.
func yamlError(path string, data []byte, err error) *ConfigError {
	line, msg := yamlerr.Line(data, err)
	return &ConfigError{Path: path, Line: line, Err: errors.New(yamlerr.Hint(data, line, msg))}
}

// ErrNoAgents is the error for a parley.yaml that lists no agents and
// has no bridge: such a workspace has no mailbox to send from or deliver
// to, and nothing to serve. (A hub, bridge: and no agents, only serves
// the bridge to other workspaces.)
var ErrNoAgents = errors.New("none listed: a workspace needs at least one agent (agents: [gm, aria]; then parley init makes their mailboxes)")

// requireAgents returns a *ConfigError wrapping ErrNoAgents, at the line
// of agents: (line 1 when the file has none), when cfg, read from data,
// lists no agents and has no bridge. ParseConfig itself takes a file
// without them: it reads parts of a parley.yaml too.
func requireAgents(path string, data []byte, cfg *Config) error {
	if len(cfg.Agents) > 0 || cfg.Bridge != nil {
		return nil
	}
	line := 1
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) == nil && len(doc.Content) > 0 {
		root := doc.Content[0]
		for i := 0; i+1 < len(root.Content) && root.Kind == yaml.MappingNode; i += 2 {
			if root.Content[i].Value == "agents" {
				line = root.Content[i].Line
			}
		}
	}
	return &ConfigError{Path: path, Line: line, Key: "agents", Err: ErrNoAgents}
}

// ErrUnknownKey is the error for a key parley.yaml may not hold there: a
// typo, or a key of a newer parley. A *ConfigError wraps it, naming the
// line, the key, and the keys known there.
var ErrUnknownKey = errors.New("unknown key")

// ErrMissing is the error for a key an entry of parley.yaml needs and
// does not have: the program of a command agent, a timeout's after:. A
// *ConfigError wraps it. When the same mapping holds an unknown key
// (most likely the missing one, misspelt), the error is that key's, at
// its line, and wraps ErrUnknownKey too: "agents[5].rnu: unknown key
// (did you mean run?); agents[5].run is missing: ...".
var ErrMissing = errors.New("missing")

// LoadOptions says how parley.yaml is read.
type LoadOptions struct {
	// SkipUnknown skips a key parley does not know (ErrUnknownKey)
	// instead of refusing the file, and lists it in Config.Skipped, for
	// the commands that only read (status, inbox, read, log, pipeline,
	// usage): a typo
	// must not keep a person from their messages. An entry that an
	// unknown key leaves without a key it needs (ErrMissing) is listed
	// in Skipped too: an agent that has its name is kept without a
	// driver (Agent.ConfigError), so that its mailbox can be read; any
	// other entry (a route, a timeout, the bridge, a nameless agent) is
	// left out, and the checks across entries (routes naming agents,
	// agents naming the bridge) are then not made, since what was left
	// out may be what they name. Every other problem
	// (a malformed value of a known key, say) is still an error, and the
	// commands that write or route read the file strictly.
	SkipUnknown bool
	// collect, with SkipUnknown, is a strict reading that goes on past
	// unknown keys to say each (see ParseConfigWith): what is skipped is
	// listed as it is, not with what became of its entry.
	collect bool
}

// ParseConfig reads parley.yaml text strictly: an unknown key is an
// error. path is used in errors.
func ParseConfig(path string, data []byte) (*Config, error) {
	return ParseConfigWith(path, data, LoadOptions{})
}

// ParseConfigWith reads parley.yaml text as opts say. path is used in
// errors. Read strictly, every key parley does not know is an error, and
// each is said: the file is read as with SkipUnknown, and what that
// skips, with the first other problem, is the error (a *ConfigErrors
// when there are several), so that parley run names the keys parley
// status lists. After a problem other than an unknown key (YAML that
// does not parse, a malformed value) the file is read no further.
func ParseConfigWith(path string, data []byte, opts LoadOptions) (*Config, error) {
	if opts.SkipUnknown {
		cfg, err := parseConfig(path, data, opts)
		if err != nil {
			return nil, err
		}
		return cfg, nil
	}
	cfg, err := parseConfig(path, data, LoadOptions{SkipUnknown: true, collect: true})
	var errs []*ConfigError
	if cfg != nil {
		for _, k := range cfg.Skipped {
			errs = append(errs, k)
		}
	}
	var ce *ConfigError
	switch {
	case err == nil:
	case errors.As(err, &ce) && len(errs) > 0:
		errs = append(errs, ce)
	default:
		return nil, err
	}
	switch len(errs) {
	case 0:
		return cfg, nil
	case 1:
		return nil, errs[0]
	}
	slices.SortStableFunc(errs, func(a, b *ConfigError) int { return a.Line - b.Line })
	return nil, &ConfigErrors{Errs: errs}
}

// ConfigErrors is the error for a parley.yaml with several problems:
// each, in line order, on a line of its own (at most MaxProblems, then
// how many more). errors.Is and errors.As find each.
type ConfigErrors struct {
	Errs []*ConfigError
}

func (e *ConfigErrors) Error() string {
	lines := make([]string, 0, min(len(e.Errs), MaxProblems)+1)
	for i, ce := range e.Errs {
		if i == MaxProblems {
			left := len(e.Errs) - MaxProblems
			lines = append(lines, fmt.Sprintf("%s: and %d more %s", ce.Path, left, plural(left, "problem", "problems")))
			break
		}
		lines = append(lines, ce.Error())
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns each problem.
func (e *ConfigErrors) Unwrap() []error {
	out := make([]error, len(e.Errs))
	for i, ce := range e.Errs {
		out[i] = ce
	}
	return out
}

// parseConfig is ParseConfigWith. With SkipUnknown, the Config is
// returned with its error, so that what it skipped before can be said.
func parseConfig(path string, data []byte, opts LoadOptions) (*Config, error) {
	cfg := &Config{
		HopLimit:  DefaultHopLimit,
		MaxOutput: DefaultMaxOutput,
		Router: RouterConfig{
			RescanInterval: DefaultRescanInterval,
			Settle:         DefaultSettle,
			MaxMessageSize: DefaultMaxMessageSize,
		},
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(path, data, err)
	}
	if len(doc.Content) == 0 {
		return cfg, nil
	}
	root := doc.Content[0]
	bad := func(n *yaml.Node, key, format string, args ...any) error {
		err := &ConfigError{Path: path, Line: n.Line, Key: key, Err: fmt.Errorf(format, args...)}
		if errors.Is(err, ErrMissing) {
			// An unknown key skipped in the same mapping is most
			// likely the key missing, misspelt: the error names it,
			// and is said once, instead of it (see leaveOut). Read
			// strictly, that key was an error already.
			i := typoFor(cfg.Skipped, key)
			if i < 0 {
				return err
			}
			typo := cfg.Skipped[i]
			cfg.Skipped = slices.Delete(cfg.Skipped, i, i+1)
			return &ConfigError{Path: path, Line: typo.Line, Key: typo.Key, Err: fmt.Errorf("%w; %s is %w", typo.Err, key, err.Err)}
		}
		if opts.SkipUnknown && errors.Is(err, ErrUnknownKey) {
			cfg.Skipped = append(cfg.Skipped, err)
			return nil // the key is skipped (see eachKey)
		}
		return err
	}
	// typoMissing returns err as a *ConfigError when it is a key an
	// entry needs that an unknown key skipped left it without, nil
	// otherwise (and when read strictly).
	typoMissing := func(err error) *ConfigError {
		var ce *ConfigError
		if !opts.SkipUnknown || !errors.Is(err, ErrMissing) || !errors.Is(err, ErrUnknownKey) || !errors.As(err, &ce) {
			return nil
		}
		return ce
	}
	// skip lists ce, met reading the entry named entry, in Skipped,
	// saying what became of the entry.
	skip := func(ce *ConfigError, entry, what string) {
		if opts.collect {
			cfg.Skipped = append(cfg.Skipped, ce)
			return
		}
		cfg.Skipped = append(cfg.Skipped, &ConfigError{Path: ce.Path, Line: ce.Line, Key: ce.Key, Err: fmt.Errorf("%w; %s %s", ce.Err, entry, what)})
	}
	// leaveOut reports whether err, met reading the entry named entry,
	// is a key it needs that an unknown key skipped left it without
	// (typoMissing): the entry is then left out, and err listed in
	// Skipped.
	leftOut := false
	leaveOut := func(err error, entry string) bool {
		ce := typoMissing(err)
		if ce == nil {
			return false
		}
		skip(ce, entry, "left out")
		leftOut = true
		return true
	}
	if root.Kind != yaml.MappingNode {
		return nil, bad(root, "", "expected keys such as agents:, skills: and router:")
	}
	err := eachKey(root, "", bad, map[string]func(*yaml.Node) error{
		"skills": func(v *yaml.Node) error {
			cfg.SkillsLine = v.Line
			return nameList(v, "skills", &cfg.Skills, bad)
		},
		"phase": func(v *yaml.Node) error {
			n, err := strconv.Atoi(v.Value)
			if err != nil || v.Kind != yaml.ScalarNode || n < 1 {
				return bad(v, "phase", "%q is not a phase (1, 2, ...)", v.Value)
			}
			cfg.Phase = n
			return nil
		},
		"strict": func(v *yaml.Node) error {
			b, err := strconv.ParseBool(v.Value)
			if err != nil || v.Kind != yaml.ScalarNode {
				return bad(v, "strict", "%q is not true or false", v.Value)
			}
			cfg.Strict = b
			return nil
		},
		"agents": func(v *yaml.Node) error {
			if v.Kind != yaml.SequenceNode {
				return bad(v, "agents", "expected a list of agents")
			}
			// agent reads the entry item into a and adds it to the
			// agents. An agent a typo leaves without a key its driver
			// needs is kept without a driver (undriven).
			agent := func(key string, item *yaml.Node, a *Agent) error {
				undriven := func(err error) error {
					if ce := typoMissing(err); ce != nil {
						if a.ConfigError == nil {
							a.ConfigError = ce
						}
						return nil
					}
					return err
				}
				switch item.Kind {
				case yaml.ScalarNode: // "- gm" is short for "- name: gm"
					a.Name = item.Value
				case yaml.MappingNode:
					err := eachKey(item, key, bad, map[string]func(*yaml.Node) error{
						"name": func(v *yaml.Node) error { return scalar(v, key+".name", &a.Name, bad) },
						"role": func(v *yaml.Node) error {
							a.RolesLine, a.RolesKey = v.Line, key+".role"
							return nameList(v, key+".role", &a.Roles, bad)
						},
						"roles": func(v *yaml.Node) error {
							a.RolesLine, a.RolesKey = v.Line, key+".roles"
							return nameList(v, key+".roles", &a.Roles, bad)
						},
						"driver": func(v *yaml.Node) error {
							if err := scalar(v, key+".driver", &a.Driver, bad); err != nil {
								return err
							}
							switch a.Driver {
							case DriverHuman, DriverCommand, DriverSession, DriverBuiltin, DriverOpenAI:
								return nil
							}
							drivers := []string{DriverHuman, DriverCommand, DriverSession, DriverBuiltin, DriverOpenAI}
							if near := spell.Nearest(a.Driver, drivers, 2); near != "" {
								return bad(v, key+".driver", "unknown driver %q (did you mean %s?)", a.Driver, near)
							}
							return bad(v, key+".driver", "unknown driver %q (drivers: %s)", a.Driver, strings.Join(drivers, ", "))
						},
						"run": func(v *yaml.Node) error {
							a.RunLine = v.Line
							switch v.Kind {
							case yaml.ScalarNode:
								a.Run = strings.Fields(v.Value)
							case yaml.SequenceNode:
								for _, it := range v.Content {
									if it.Kind != yaml.ScalarNode {
										return bad(it, key+".run", "expected the program and its arguments, as a list of words")
									}
									a.Run = append(a.Run, it.Value)
								}
							default:
								return bad(v, key+".run", "expected the program and its arguments, as a list of words")
							}
							if len(a.Run) == 0 {
								return bad(v, key+".run", "names no program")
							}
							return nil
						},
						"handler": func(v *yaml.Node) error {
							a.HandlerLine = v.Line
							return scalar(v, key+".handler", &a.Handler, bad)
						},
						"character": func(v *yaml.Node) error {
							a.CharacterLine = v.Line
							if err := scalar(v, key+".character", &a.Character, bad); err != nil {
								return err
							}
							if err := mailbox.CheckName(a.Character); err != nil {
								return bad(v, key+".character", "%v: a character is named as its sheet's file (tilda-brannock)", err)
							}
							return nil
						},
						"timeout": func(v *yaml.Node) error { return duration(v, key+".timeout", &a.Timeout, bad) },
						"retries": func(v *yaml.Node) error { return count(v, key+".retries", &a.Retries, bad) },
						"openai": func(v *yaml.Node) error {
							m, err := parseModel(v, key+".openai", bad)
							a.Model = m
							return undriven(err)
						},
						"budget": func(v *yaml.Node) error { return parseBudget(v, key+".budget", &a.Budget, &a.CostLine, bad) },
						"accepts": func(v *yaml.Node) error {
							ac, err := parseAccepts(v, key+".accepts", bad)
							a.Accepts = ac
							return err
						},
						"remote": func(v *yaml.Node) error {
							if err := scalar(v, key+".remote", &a.Remote, bad); err != nil {
								return err
							}
							if err := mailbox.CheckName(a.Remote); err != nil {
								return bad(v, key+".remote", "%v: a workspace is named as its bridge.name", err)
							}
							return nil
						},
						"isolate": func(v *yaml.Node) error {
							b, err := strconv.ParseBool(v.Value)
							if err != nil || v.Kind != yaml.ScalarNode {
								return bad(v, key+".isolate", "%q is not true or false", v.Value)
							}
							a.Isolate = &b
							return nil
						},
					})
					if err != nil {
						return err
					}
					if a.Remote != "" && (a.Driver != DriverHuman || a.Model != nil || a.Accepts != nil) {
						return bad(item, key+".driver", "%s lives in workspace %q: its driver is set in that workspace's parley.yaml, not here", a.Name, a.Remote)
					}
					// What the driver needs is checked once: an agent
					// kept without a driver has none to check.
					if a.ConfigError == nil {
						if err := undriven(checkDriver(a, key, item, bad)); err != nil {
							return err
						}
					}
					if a.ConfigError == nil {
						if err := undriven(checkModel(a, key, item, bad)); err != nil {
							return err
						}
					}
				default:
					return bad(item, key, "expected name: and role:")
				}
				if a.Name == "" {
					return bad(item, key+".name", "%w: every agent has one (name: gm)", ErrMissing)
				}
				if err := mailbox.CheckName(a.Name); err != nil {
					return bad(item, key+".name", "%v", err)
				}
				if a.Name == Runner {
					return bad(item, key+".name", "%q is taken: parley's runner sends its own notices under that name", a.Name)
				}
				for _, prev := range cfg.Agents {
					if prev.Name == a.Name {
						return bad(item, key+".name", "%q is already the name of the agent on line %d", a.Name, prev.Line)
					}
				}
				cfg.Agents = append(cfg.Agents, *a)
				return nil
			}
			for i, item := range v.Content {
				key := fmt.Sprintf("agents[%d]", i)
				a := Agent{Line: item.Line, Key: key, Driver: DriverHuman, Timeout: DefaultTimeout, Retries: DefaultRetries}
				err := agent(key, item, &a)
				entry := key
				if a.Name != "" {
					entry += " (" + a.Name + ")"
				}
				if err != nil && !leaveOut(err, entry) {
					return err
				}
				if ce := a.ConfigError; ce != nil {
					what := "cannot be driven"
					if err != nil {
						what = "left out" // nameless too (nmae: and rnu:)
					}
					skip(ce, entry, what)
				}
			}
			return nil
		},
		"routes": func(v *yaml.Node) error {
			if v.Kind != yaml.SequenceNode {
				return bad(v, "routes", "expected a list of routes")
			}
			for i, item := range v.Content {
				key := fmt.Sprintf("routes[%d]", i)
				r, err := parseRoute(item, key, bad)
				if leaveOut(err, key) {
					continue
				}
				if err != nil {
					return err
				}
				cfg.Routes = append(cfg.Routes, r)
			}
			return nil
		},
		"timeouts": func(v *yaml.Node) error {
			if v.Kind != yaml.SequenceNode {
				return bad(v, "timeouts", "expected a list of timeouts")
			}
			for i, item := range v.Content {
				key := fmt.Sprintf("timeouts[%d]", i)
				t, err := parseTimeout(item, key, bad)
				if leaveOut(err, key) {
					continue
				}
				if err != nil {
					return err
				}
				cfg.Timeouts = append(cfg.Timeouts, t)
			}
			return nil
		},
		"campaign": func(v *yaml.Node) error {
			if err := scalar(v, "campaign", &cfg.Campaign, bad); err != nil {
				return err
			}
			if err := mailbox.CheckName(cfg.Campaign); err != nil {
				return bad(v, "campaign", "%v", err)
			}
			cfg.CampaignLine = v.Line
			return nil
		},
		"git": func(v *yaml.Node) error {
			if err := scalar(v, "git", &cfg.Git, bad); err != nil {
				return err
			}
			if cfg.Git != GitAuto && cfg.Git != GitOff {
				return bad(v, "git", "%q is not auto or off", cfg.Git)
			}
			return nil
		},
		"stop_on": func(v *yaml.Node) error {
			var types []string
			if err := wordList(v, "stop_on", &types, bad); err != nil {
				return err
			}
			for _, t := range types {
				cfg.StopOn = append(cfg.StopOn, strings.Trim(t, "[]"))
			}
			cfg.StopOnLines = append(cfg.StopOnLines, wordLines(v)...)
			return nil
		},
		"budget": func(v *yaml.Node) error { return parseBudget(v, "budget", &cfg.Budget, &cfg.CostLine, bad) },
		"bridge": func(v *yaml.Node) error {
			b, err := parseBridge(v, bad)
			if leaveOut(err, "bridge") {
				return nil
			}
			cfg.Bridge = b
			return err
		},
		"prices": func(v *yaml.Node) error {
			cfg.PricesLine = v.Line
			p, err := parsePrices(v, bad)
			cfg.Prices = p
			return err
		},
		"concurrency": func(v *yaml.Node) error {
			return count(v, "concurrency", &cfg.Concurrency, bad) // 0: no cap
		},
		"hop_limit": func(v *yaml.Node) error {
			if err := count(v, "hop_limit", &cfg.HopLimit, bad); err != nil {
				return err
			}
			if cfg.HopLimit < 1 {
				return bad(v, "hop_limit", "must be 1 or more")
			}
			return nil
		},
		"max_output": func(v *yaml.Node) error {
			n, err := ParseSize(v.Value)
			if err != nil || v.Kind != yaml.ScalarNode || n <= 0 {
				return bad(v, "max_output", "%q is not a size (like 4MiB)", v.Value)
			}
			cfg.MaxOutput = n
			return nil
		},
		"router": func(v *yaml.Node) error {
			r := &cfg.Router
			return eachKey(v, "router", bad, map[string]func(*yaml.Node) error{
				"rescan_interval": func(v *yaml.Node) error {
					if err := duration(v, "router.rescan_interval", &r.RescanInterval, bad); err != nil {
						return err
					}
					if r.RescanInterval <= 0 {
						return bad(v, "router.rescan_interval", "must be more than 0 (the router lists every outbox this often)")
					}
					return nil
				},
				"settle": func(v *yaml.Node) error { return duration(v, "router.settle", &r.Settle, bad) },
				"max_message_size": func(v *yaml.Node) error {
					n, err := ParseSize(v.Value)
					if err != nil || v.Kind != yaml.ScalarNode {
						return bad(v, "router.max_message_size", "%q is not a size (like 1MiB, 512KiB or 65536)", v.Value)
					}
					if n <= 0 {
						return bad(v, "router.max_message_size", "%q: no message would fit; leave it out for the default, %s", v.Value, "1MiB")
					}
					r.MaxMessageSize = n
					return nil
				},
			})
		},
	})
	if err != nil {
		return cfg, err
	}
	if err := checkCharacters(cfg, path); err != nil {
		return cfg, err
	}
	if leftOut {
		return cfg, nil // what the checks below look up may be what was left out
	}
	if err := checkRoutes(cfg, path); err != nil {
		return cfg, err
	}
	if err := checkRemotes(cfg, path); err != nil {
		return cfg, err
	}
	if err := checkPrices(cfg, path); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// checkCharacters refuses a character two agents play, and one named like
// another agent: a message to that name could not say whom it is for.
func checkCharacters(cfg *Config, path string) error {
	player := map[string]Agent{}
	for i, a := range cfg.Agents {
		if a.Character == "" {
			continue
		}
		key := fmt.Sprintf("agents[%d].character", i)
		if other, ok := player[a.Character]; ok {
			return &ConfigError{Path: path, Line: a.Line, Key: key, Err: fmt.Errorf("%q is played by %s already (line %d): a message to it could not say which agent it is for", a.Character, other.Name, other.Line)}
		}
		for _, b := range cfg.Agents {
			if b.Name == a.Character && b.Name != a.Name {
				return &ConfigError{Path: path, Line: a.Line, Key: key, Err: fmt.Errorf("%q is the name of another agent (line %d): a message to it could not say which agent it is for", a.Character, b.Line)}
			}
		}
		player[a.Character] = a
	}
	return nil
}

// checkDriver checks that an agent has what its driver needs.
func checkDriver(a *Agent, key string, item *yaml.Node, bad badFunc) error {
	switch a.Driver {
	case DriverCommand, DriverSession:
		if len(a.Run) == 0 {
			return bad(item, key+".run", "%w: a %s agent needs the program to run (run: [./agent.sh])", ErrMissing, a.Driver)
		}
	case DriverBuiltin:
		if a.Handler == "" {
			return bad(item, key+".handler", "%w: a builtin agent needs the name of its handler", ErrMissing)
		}
	}
	if a.Driver == DriverHuman && a.Accepts != nil {
		return bad(item, a.Accepts.Key, "a human agent is never woken: every message waits in its inbox (accepts: is for agents with a driver)")
	}
	if a.Driver != DriverCommand && a.Driver != DriverSession && len(a.Run) > 0 && !hasKey(item, "driver") {
		// No driver: said, most likely misspelt (drvier:).
		return bad(item, key+".driver", "%w: an agent that runs a program needs driver: command or session", ErrMissing)
	}
	if a.Driver != DriverCommand && a.Driver != DriverSession && len(a.Run) > 0 {
		return bad(keyNode(item, "run"), key+".run", "only command and session agents run a program (driver: command)")
	}
	if a.Driver != DriverBuiltin && a.Handler != "" && !hasKey(item, "driver") {
		// Without driver:, the agent would be a person's: what is sent
		// to it would wait in its inbox, unhandled, without a word.
		return bad(item, key+".driver", "%w: an agent with a handler: needs driver: builtin", ErrMissing)
	}
	if a.Driver != DriverBuiltin && a.Handler != "" {
		return bad(keyNode(item, "handler"), key+".handler", "only builtin agents have a handler (driver: builtin)")
	}
	return nil
}

// count reads a non-negative whole number.
func count(v *yaml.Node, key string, dst *int, bad badFunc) error {
	n, err := strconv.Atoi(v.Value)
	if err != nil || v.Kind != yaml.ScalarNode {
		return bad(v, key, "%q is not a whole number", v.Value)
	}
	if n < 0 {
		return bad(v, key, "%d: must be 0 or more", n)
	}
	*dst = n
	return nil
}

// wordList reads one word or a list of words.
func wordList(v *yaml.Node, key string, dst *[]string, bad badFunc) error {
	switch v.Kind {
	case yaml.ScalarNode:
		*dst = append(*dst, v.Value)
		return nil
	case yaml.SequenceNode:
		for _, it := range v.Content {
			if it.Kind != yaml.ScalarNode {
				return bad(it, key, "expected a word")
			}
			*dst = append(*dst, it.Value)
		}
		return nil
	}
	return bad(v, key, "expected a word or a list of words")
}

// wordLines returns the line of each word of what wordList reads.
func wordLines(v *yaml.Node) []int {
	if v.Kind == yaml.SequenceNode {
		lines := make([]int, len(v.Content))
		for i, it := range v.Content {
			lines[i] = it.Line
		}
		return lines
	}
	return []int{v.Line}
}

type badFunc func(n *yaml.Node, key, format string, args ...any) error

// eachKey calls the handler of every key of a mapping and refuses unknown
// keys (ErrUnknownKey), naming the ones it knows; an unknown key bad
// lets pass (LoadOptions.SkipUnknown) is skipped.
func eachKey(m *yaml.Node, prefix string, bad badFunc, handlers map[string]func(*yaml.Node) error) error {
	if m.Kind != yaml.MappingNode {
		return bad(m, prefix, "expected keys, not %q", m.Value)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if twice, err := given(m, i, prefix, bad); twice {
			if err != nil {
				return err
			}
			continue
		}
		h, ok := handlers[k.Value]
		if !ok {
			known := make([]string, 0, len(handlers))
			for name := range handlers {
				known = append(known, name)
			}
			sort.Strings(known)
			var err error
			if near := spell.Nearest(k.Value, known, 2); near != "" {
				err = bad(k, join(prefix, k.Value), "%w (did you mean %s?)", ErrUnknownKey, near)
			} else {
				err = bad(k, join(prefix, k.Value), "%w (known here: %s)", ErrUnknownKey, strings.Join(known, ", "))
			}
			if err != nil {
				return err
			}
			continue
		}
		if err := h(v); err != nil {
			return err
		}
	}
	return nil
}

// given refuses the key at m.Content[i] when an earlier key of the
// mapping m is the same (role: player, then role: gm, in one agent): the
// later would silently win. It reports whether it is such a key, and the
// error bad made of it (nil when bad lets it pass: the first stands).
func given(m *yaml.Node, i int, prefix string, bad badFunc) (bool, error) {
	k := m.Content[i]
	for j := 0; j < i; j += 2 {
		if m.Content[j].Value == k.Value {
			return true, bad(k, join(prefix, k.Value), "given twice, here and on line %d: keep one", m.Content[j].Line)
		}
	}
	return false, nil
}

// typoFor returns the index in skipped of the unknown key most likely
// meant for key, which is missing: of those skipped in the same mapping,
// the one nearest to it in spelling, or else the first; -1 when that
// mapping held none.
func typoFor(skipped []*ConfigError, key string) int {
	parent, name := splitKey(key)
	var names []string
	var at []int
	for i, s := range skipped {
		if errors.Is(s, ErrMissing) {
			continue // an entry left out, said already
		}
		if p, n := splitKey(s.Key); p == parent && errors.Is(s, ErrUnknownKey) {
			names, at = append(names, n), append(at, i)
		}
	}
	if len(at) == 0 {
		return -1
	}
	if near := spell.Nearest(name, names, 2); near != "" {
		return at[slices.Index(names, near)]
	}
	return at[0]
}

// hasKey reports whether the mapping n holds key.
// keyNode returns the node of key in the mapping n, for an error about
// it to name its line; n itself when it has no such key.
func keyNode(n *yaml.Node, key string) *yaml.Node {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i]
			}
		}
	}
	return n
}

func hasKey(n *yaml.Node, key string) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// splitKey splits a key as errors name it (agents[5].run) into the
// mapping that holds it (agents[5]) and its own name (run).
func splitKey(key string) (parent, name string) {
	if i := strings.LastIndex(key, "."); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func scalar(v *yaml.Node, key string, dst *string, bad badFunc) error {
	if v.Kind != yaml.ScalarNode {
		return bad(v, key, "expected a single value")
	}
	*dst = v.Value
	return nil
}

// nameList reads one name or a list of names, each lower-case kebab-case.
func nameList(v *yaml.Node, key string, dst *[]string, bad badFunc) error {
	var items []*yaml.Node
	switch v.Kind {
	case yaml.ScalarNode:
		items = []*yaml.Node{v}
	case yaml.SequenceNode:
		items = v.Content
	default:
		return bad(v, key, "expected a name or a list of names")
	}
	for _, it := range items {
		if it.Kind != yaml.ScalarNode {
			return bad(it, key, "expected a name")
		}
		if err := mailbox.CheckName(it.Value); err != nil {
			if lower := strings.ToLower(it.Value); mailbox.CheckName(lower) == nil {
				return bad(it, key, "%v (did you mean %s?)", err, lower) // Boss for boss
			}
			return bad(it, key, "%v", err)
		}
		*dst = append(*dst, it.Value)
	}
	return nil
}

func duration(v *yaml.Node, key string, dst *time.Duration, bad badFunc) error {
	d, err := time.ParseDuration(v.Value)
	if err != nil || v.Kind != yaml.ScalarNode || d < 0 {
		return bad(v, key, "%q is not a duration (like 30s or 200ms)", v.Value)
	}
	*dst = d
	return nil
}

// ParseSize reads a byte count: a number with an optional unit (B, KB, KiB,
// MB, MiB, GB, GiB; case does not matter).
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') {
		i--
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	mult := map[string]int64{
		"": 1, "b": 1, "kb": 1000, "kib": 1 << 10, "k": 1 << 10,
		"mb": 1000 * 1000, "mib": 1 << 20, "m": 1 << 20,
		"gb": 1000 * 1000 * 1000, "gib": 1 << 30, "g": 1 << 30,
	}[strings.ToLower(strings.TrimSpace(s[i:]))]
	if mult == 0 {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	return n * mult, nil
}
