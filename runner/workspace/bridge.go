package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"

	"github.com/parley-dev/parley/mailbox"
)

// Bridge is the bridge: section of parley.yaml: how this workspace
// reaches the others over NATS JetStream (see runner/bridge). Its keys:
//
//	bridge:
//	  name: tavern                   # this workspace's name on the bridge (kebab-case)
//	  url: nats://127.0.0.1:4222     # one URL or a list; tls:// (or a ca_file) for TLS
//	  stream: PARLEY                 # the JetStream stream (default PARLEY)
//	  credentials: tavern.creds      # a NATS credentials file (optional)
//	  token_env: PARLEY_NATS_TOKEN   # or: the environment variable holding a token
//	  user_env: PARLEY_NATS_USER     # or: the variables holding a user and password
//	  password_env: PARLEY_NATS_PASSWORD
//	  ca_file: ca.pem                # the CA that signs the server's certificate
//	  max_deliver: 5                 # tries to deliver an incoming message before dead/
//	  listen: 0.0.0.0:4222           # where `parley bridge --serve` listens
//
// Secrets are never written in parley.yaml, which is committed: a token,
// user name or password inline (or in the URL) is refused.
type Bridge struct {
	Name        string
	URLs        []string
	Stream      string
	Credentials string
	TokenEnv    string
	UserEnv     string
	PasswordEnv string
	CAFile      string
	MaxDeliver  int
	Listen      string
	Line        int // line of bridge: in parley.yaml
}

// SameBridge reports whether two bridge: sections say the same, wherever
// they are in parley.yaml (nil for none).
func SameBridge(a, b *Bridge) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Line, y.Line = 0, 0
	return reflect.DeepEqual(x, y)
}

// Defaults of the bridge: section.
const (
	DefaultStream     = "PARLEY"
	DefaultMaxDeliver = 5
	DefaultBridgeURL  = "nats://127.0.0.1:4222"
)

// BridgeRefused starts the reason the bridge writes beside a message it
// refused (in its recipient's dead/, or in .parley/bridge/refused/), so
// that what it refused is told apart from what an agent gave up: an
// agent's own reason starts with its name and a colon ("w: gave up after
// 3 attempts"), and no agent's name has a space.
const BridgeRefused = "refused by the bridge: "

// inlineSecrets are keys that would put a secret into parley.yaml.
var inlineSecrets = []string{"token", "password", "user", "pass", "nkey", "seed", "jwt", "secret"}

func parseBridge(v *yaml.Node, bad badFunc) (*Bridge, error) {
	b := &Bridge{Stream: DefaultStream, MaxDeliver: DefaultMaxDeliver, Line: v.Line}
	if v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			k := v.Content[i]
			for _, s := range inlineSecrets {
				if k.Value == s {
					return nil, bad(k, "bridge."+k.Value, "inline credentials are refused: parley.yaml is committed to git; name an environment variable (%s_env: PARLEY_NATS_%s) or a NATS credentials file (credentials: PATH)", secretEnvKey(s), strings.ToUpper(secretEnvKey(s)))
				}
			}
		}
	}
	env := func(key string, dst *string) func(*yaml.Node) error {
		return func(v *yaml.Node) error {
			if err := scalar(v, "bridge."+key, dst, bad); err != nil {
				return err
			}
			if !isEnvName(*dst) {
				return bad(v, "bridge."+key, "%q is not the name of an environment variable (like PARLEY_NATS_TOKEN): the secret itself stays out of parley.yaml", *dst)
			}
			return nil
		}
	}
	err := eachKey(v, "bridge", bad, map[string]func(*yaml.Node) error{
		"name": func(v *yaml.Node) error {
			if err := scalar(v, "bridge.name", &b.Name, bad); err != nil {
				return err
			}
			if err := mailbox.CheckName(b.Name); err != nil {
				return bad(v, "bridge.name", "%v", err)
			}
			return nil
		},
		"url": func(v *yaml.Node) error {
			var urls []string
			if err := wordList(v, "bridge.url", &urls, bad); err != nil {
				return err
			}
			for _, u := range urls {
				if err := checkURL(u); err != nil {
					return bad(v, "bridge.url", "%v", err)
				}
			}
			b.URLs = urls
			return nil
		},
		"stream": func(v *yaml.Node) error {
			if err := scalar(v, "bridge.stream", &b.Stream, bad); err != nil {
				return err
			}
			if b.Stream == "" || strings.ContainsAny(b.Stream, ". *>\t/\\") {
				return bad(v, "bridge.stream", "%q is not a stream name (letters, digits, - and _)", b.Stream)
			}
			return nil
		},
		"credentials":  func(v *yaml.Node) error { return scalar(v, "bridge.credentials", &b.Credentials, bad) },
		"ca_file":      func(v *yaml.Node) error { return scalar(v, "bridge.ca_file", &b.CAFile, bad) },
		"token_env":    env("token_env", &b.TokenEnv),
		"user_env":     env("user_env", &b.UserEnv),
		"password_env": env("password_env", &b.PasswordEnv),
		"max_deliver": func(v *yaml.Node) error {
			if err := count(v, "bridge.max_deliver", &b.MaxDeliver, bad); err != nil {
				return err
			}
			if b.MaxDeliver < 1 {
				return bad(v, "bridge.max_deliver", "must be 1 or more")
			}
			return nil
		},
		"listen": func(v *yaml.Node) error {
			if err := scalar(v, "bridge.listen", &b.Listen, bad); err != nil {
				return err
			}
			_, port, err := net.SplitHostPort(b.Listen)
			if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
				return bad(v, "bridge.listen", "%q is not HOST:PORT (like 0.0.0.0:4222)", b.Listen)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	if b.Name == "" {
		return nil, bad(v, "bridge.name", "%w: the name of this workspace on the bridge (name: tavern)", ErrMissing)
	}
	if len(b.URLs) == 0 {
		b.URLs = []string{DefaultBridgeURL}
	}
	if (b.UserEnv == "") != (b.PasswordEnv == "") {
		return nil, bad(v, "bridge.user_env", "user_env and password_env go together")
	}
	if b.TokenEnv != "" && b.UserEnv != "" {
		return nil, bad(v, "bridge.token_env", "a token or a user and password, not both")
	}
	return b, nil
}

func secretEnvKey(k string) string {
	switch k {
	case "user":
		return "user"
	case "password", "pass":
		return "password"
	}
	return "token"
}

// checkURL accepts nats://, tls://, ws:// and wss:// URLs (and a bare
// host:port) without credentials in them.
func checkURL(s string) error {
	raw := s
	if !strings.Contains(s, "://") {
		s = "nats://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not a URL (like nats://127.0.0.1:4222, or tls://host:4222 for TLS)", raw)
	}
	switch u.Scheme {
	case "nats", "tls", "ws", "wss":
	default:
		return fmt.Errorf("%q: scheme %q is not nats, tls, ws or wss", raw, u.Scheme)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q: port %s is not a port (1 to 65535)", raw, p)
		}
	}
	if u.User != nil {
		return fmt.Errorf("%q: inline credentials are refused: parley.yaml is committed to git; name an environment variable (token_env:, or user_env: and password_env:) or a NATS credentials file (credentials: PATH)", u.Redacted())
	}
	return nil
}

func isEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// checkRemotes checks the agents that live in another workspace: there
// must be a bridge to reach them, the workspace they live in is not this
// one, and they have no driver here (it runs where they live).
func checkRemotes(cfg *Config, path string) error {
	for i, a := range cfg.Agents {
		if a.Remote == "" {
			continue
		}
		key := fmt.Sprintf("agents[%d].remote", i)
		if cfg.Bridge == nil {
			return &ConfigError{Path: path, Line: a.Line, Key: key, Err: fmt.Errorf("%s lives in workspace %q, but parley.yaml has no bridge: section to reach it", a.Name, a.Remote)}
		}
		if a.Remote == cfg.Bridge.Name {
			return &ConfigError{Path: path, Line: a.Line, Key: key, Err: fmt.Errorf("%q is this workspace's own name (bridge.name): leave remote: out for an agent that lives here", a.Remote)}
		}
	}
	return nil
}

// Remotes returns the names of the other workspaces agents live in, in
// the order parley.yaml first names them.
func (c *Config) Remotes() []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range c.Agents {
		if a.Remote != "" && !seen[a.Remote] {
			seen[a.Remote] = true
			out = append(out, a.Remote)
		}
	}
	return out
}

// IsRemote reports whether an agent of the workspace lives in another
// workspace, reached over the bridge.
func (w *Workspace) IsRemote(agent string) bool {
	a, ok := w.Agent(agent)
	return ok && a.Remote != ""
}

// Outgoing is what waits in the inbox of an agent that lives in another
// workspace: the messages the bridge forwards to it.
type Outgoing struct {
	Agent Agent
	IDs   []string // in id order
}

// Outgoing returns what waits here for other workspaces: for each agent
// of another workspace (remote: in parley.yaml) with messages in its
// inbox, in parley.yaml's order, their ids. The bridge forwards these,
// and status counts them. An inbox that cannot be read is left out and
// its error joined into err.
func (w *Workspace) Outgoing() ([]Outgoing, error) {
	var out []Outgoing
	var errs []error
	for _, a := range w.Config.Agents {
		if a.Remote == "" {
			continue
		}
		ids, err := w.Mailbox(a.Name).IDs(mailbox.Inbox)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(ids) > 0 {
			out = append(out, Outgoing{Agent: a, IDs: ids})
		}
	}
	return out, errors.Join(errs...)
}

// BridgeState is what a running bridge last said of itself, in
// .parley/bridge.json, for `parley status`.
type BridgeState struct {
	PID       int    `json:"pid"`
	Name      string `json:"name"`              // this workspace on the bridge
	URL       string `json:"url"`               // the server it is connected to, or tries
	Connected bool   `json:"connected"`         // connected now
	Serving   string `json:"serving,omitempty"` // the address of the server it runs itself (--serve)
	// StoreFull says, of the server it runs itself, that its store is
	// out of room, where and why: it refuses what is published until
	// there is room (then it takes it again by itself).
	StoreFull string    `json:"store_full,omitempty"`
	Updated   time.Time `json:"updated"`
	// Outgoing is how many messages for agents of other workspaces wait
	// in their inboxes here; PendingAcks how many of them are published
	// and not yet acknowledged by the stream.
	Outgoing    int `json:"outgoing"`
	PendingAcks int `json:"pending_acks"`
	// Lag is how many messages for this workspace wait in the stream,
	// not yet delivered here, as the bridge last counted: stale once it
	// stopped, or when LagStale.
	Lag uint64 `json:"lag"`
	// LagStale is set when the bridge, connected, could not count the
	// lag at its last look (the stream did not answer): Lag is older.
	LagStale  bool      `json:"lag_stale,omitempty"`
	Forwarded int64     `json:"forwarded"` // since the bridge started
	Received  int64     `json:"received"`
	Bounced   int64     `json:"bounced"`
	LastError string    `json:"last_error,omitempty"`
	ErrorAt   time.Time `json:"error_at,omitzero"`
	// Unread is the remote workspaces (remote: of this workspace's
	// agents) that no workspace reads the stream as: what is forwarded to
	// their agents waits in the stream.
	Unread []string `json:"unread_remotes,omitempty"`
	// NameHeldBy is the other workspace that reads the stream as this
	// one's bridge name, while this one takes and forwards nothing;
	// NameAlsoClaimedBy one that tried to, and was refused.
	NameHeldBy        string `json:"name_held_by,omitempty"`
	NameAlsoClaimedBy string `json:"name_also_claimed_by,omitempty"`
	// Peers are the remote workspaces (remote: of this workspace's
	// agents) that read the stream, as the bridge last asked it, in
	// name order: what is forwarded to an agent of one is taken there
	// only when that workspace's bridge runs.
	Peers []PeerState `json:"peers,omitempty"`
}

// PeerState is what the stream says of a remote workspace's consumer.
type PeerState struct {
	Name string `json:"name"` // its bridge name
	// Pending is how many messages for it the stream holds that it has
	// not taken yet (not delivered there, or delivered and not yet
	// acknowledged), from every workspace that sends to it.
	Pending uint64 `json:"pending"`
	// Reading is set when its bridge claimed its name lately (it beats
	// every few seconds while it runs): it takes what comes.
	Reading bool `json:"reading"`
	// LastSeen is the last sign of its bridge the stream kept, or this
	// bridge saw: a beat, a message taken or acknowledged, its consumer
	// made; zero when none is known.
	LastSeen time.Time `json:"last_seen,omitzero"`
}

// BridgeStatePath is where the bridge writes its state.
// NATSDir is where the NATS server of parley run --serve or parley
// bridge --serve stores its streams.
func (w *Workspace) NATSDir() string { return filepath.Join(w.Root, StateDir, "nats") }

// Token returns the token the bridge's token_env names, read with getenv
// (os.Getenv); "" when it names none, and an error when the variable is
// not set.
func (b *Bridge) Token(getenv func(string) string) (string, error) {
	if b.TokenEnv == "" {
		return "", nil
	}
	tok := getenv(b.TokenEnv)
	if tok == "" {
		return "", fmt.Errorf("%s: bridge.token_env: $%s is not set", ConfigFile, b.TokenEnv)
	}
	return tok, nil
}

func (w *Workspace) BridgeStatePath() string { return filepath.Join(w.Root, StateDir, "bridge.json") }

// BridgeRefusedDir is where the bridge keeps a message it refused that
// names no agent of this workspace, with the reason beside it.
func (w *Workspace) BridgeRefusedDir() string {
	return filepath.Join(w.Root, StateDir, "bridge", "refused")
}

// ReadBridgeState reads what the bridge last wrote; ok is false when no
// bridge ever ran here.
func (w *Workspace) ReadBridgeState() (st BridgeState, ok bool, err error) {
	data, err := os.ReadFile(w.BridgeStatePath())
	if errors.Is(err, fs.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, false, fmt.Errorf("%s: %w", w.BridgeStatePath(), err)
	}
	return st, true, nil
}

// BridgeLockPath is the file a running bridge holds an flock on.
func (w *Workspace) BridgeLockPath() string { return filepath.Join(w.Root, StateDir, "bridge.lock") }

// BridgeRunning reports whether a bridge holds the workspace's bridge
// lock now. It asks the lock itself, with a shared lock taken and given
// back at once.
func (w *Workspace) BridgeRunning() bool {
	f, err := os.Open(w.BridgeLockPath())
	if err != nil {
		return false
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		f.Close()
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	mailbox.Unlock(f) // for all who share it, not only closed
	return false
}
