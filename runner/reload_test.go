package runner

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// watching starts a runner that watches until the test ends.
func watching(t *testing.T, ws *workspace.Workspace, opts Options) *Runner {
	t.Helper()
	return watchingWith(t, ws, opts, nil)
}

// watchingWith is watching, with setup called on the runner before it
// runs.
func watchingWith(t *testing.T, ws *workspace.Workspace, opts Options, setup func(*Runner)) *Runner {
	t.Helper()
	r, err := Open(ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := r.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		r.Close()
	})
	return r
}

// saveConfig writes parley.yaml as an editor would, in place; aged, it is
// dated a minute back, as a file saved a while ago.
func saveConfig(t *testing.T, ws *workspace.Workspace, config string, aged bool) {
	t.Helper()
	path := filepath.Join(ws.Root, workspace.ConfigFile)
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if aged {
		age(t, path)
	}
}

func runnerInfo(t *testing.T, ws *workspace.Workspace) workspace.RunnerInfo {
	t.Helper()
	info := workspace.ReadRunnerInfo(ws.Root)
	if info == nil {
		return workspace.RunnerInfo{}
	}
	return *info
}

// TestReloadAgents checks that agents added to parley.yaml while the
// runner runs are routed to, driven and reported, and that agents removed
// are no longer routed to.
func TestReloadAgents(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	script(t, ws, "echo.sh", "echo \"echo: $(tail -n 1 \"$PARLEY_MESSAGE\")\"\n")
	watching(t, ws, Options{})
	if got := runnerInfo(t, ws).Agents; strings.Join(got, ",") != "alice,bob" {
		t.Fatalf("runner.json agents = %v", got)
	}

	saveConfig(t, ws, "agents:\n  - alice\n  - carol\n  - name: echo\n    driver: command\n    run: [./echo.sh]\n", true)
	// Written in place, parley.yaml may be read half written (an error,
	// the old configuration kept), then again once written.
	waitFor(t, 10*time.Second, func() bool { return runnerInfo(t, ws).Knows("echo") })
	info := runnerInfo(t, ws)
	if strings.Join(info.Agents, ",") != "alice,carol,echo" || info.ConfigError != "" {
		t.Fatalf("after the reload, runner.json = %+v", info)
	}
	for _, d := range []string{mailbox.Inbox, mailbox.Outbox} {
		if _, err := os.Stat(ws.Mailbox("carol").Path(d, "")); err != nil {
			t.Errorf("carol's mailbox was not made: %v", err)
		}
	}
	send(t, ws, "alice", "carol", "hello carol")
	send(t, ws, "alice", "echo", "ping")
	send(t, ws, "alice", "bob", "bob is gone")
	waitFor(t, 10*time.Second, func() bool {
		return len(names(t, ws, "carol", mailbox.Inbox)) == 1 && len(names(t, ws, "alice", mailbox.Inbox)) == 1 &&
			len(names(t, ws, "alice", mailbox.Rejected)) >= 1
	})
	if got := bodies(t, ws, "alice", mailbox.Inbox); got[0] != "echo: ping" {
		t.Errorf("echo answered %q", got)
	}
	if n := len(names(t, ws, "bob", mailbox.Inbox)); n != 0 {
		t.Errorf("bob, removed, received %d messages", n)
	}
}

// lockedLog is what a runner logged, safe to read while it runs.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestReloadWarnsOfOldMailbox: an agent renamed while the runner runs
// leaves its mailbox, with whatever it wrote as it was renamed, to no
// agent; the runner says so at the reload, as it does when it starts (it
// said nothing, and an answer waited in the old outbox unseen).
func TestReloadWarnsOfOldMailbox(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	log := &lockedLog{}
	watching(t, ws, Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	saveConfig(t, ws, "agents:\n  - alice\n  - robert\n", true)
	waitFor(t, 10*time.Second, func() bool { return runnerInfo(t, ws).Knows("robert") })
	waitFor(t, 10*time.Second, func() bool {
		return strings.Contains(log.String(), "a mailbox of no agent") && strings.Contains(log.String(), "mailbox=mailboxes/bob")
	})
}

// TestReloadRacesASend checks that a message sent right after parley.yaml
// was saved is checked against what was saved, not against the
// configuration loaded before.
func TestReloadRacesASend(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	watching(t, ws, Options{})
	saveConfig(t, ws, "agents: [alice, bob, carol]\n", false)
	send(t, ws, "alice", "carol", "are you there?")
	waitFor(t, 10*time.Second, func() bool {
		in, _ := os.ReadDir(ws.Mailbox("carol").Path(mailbox.Inbox, ""))
		return len(in)+len(names(t, ws, "alice", mailbox.Rejected)) > 0
	})
	if n := len(names(t, ws, "alice", mailbox.Rejected)); n != 0 {
		t.Fatalf("the message to carol was rejected: %v", names(t, ws, "alice", mailbox.Rejected))
	}
}

// TestReloadKeptChanging: routing waits for a parley.yaml being written
// to settle, but not for as long as it goes on changing: an editor
// saving every 100 ms held a message back for as long as it saved (14-24
// s in a tryout). The files are loaded once they settle, without waiting
// for a rescan.
func TestReloadKeptChanging(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	watching(t, ws, Options{})
	var stop, gaveUp atomic.Bool
	saved := make(chan struct{})
	go func() {
		defer close(saved)
		for end := time.Now().Add(20 * time.Second); !stop.Load(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(end) {
				gaveUp.Store(true)
				return
			}
			saveConfig(t, ws, "agents: [alice, bob]\n", false)
		}
		saveConfig(t, ws, "agents: [alice, bob, carol]\n", false)
	}()
	sent := time.Now()
	send(t, ws, "alice", "bob", "routed while parley.yaml is being saved")
	waitFor(t, 25*time.Second, func() bool { return len(names(t, ws, "bob", mailbox.Inbox)) == 1 })
	took := time.Since(sent)
	stop.Store(true)
	<-saved
	if gaveUp.Load() {
		t.Fatal("the message was routed only once parley.yaml was left alone")
	}
	// Held for workspace.MaxHold at most: a hold of several times that is
	// the bug come back (a loaded machine's margin aside).
	if took > 4*workspace.MaxHold {
		t.Errorf("the message was routed %v after it was sent, parley.yaml being saved meanwhile; want within about %v (workspace.MaxHold)", took, workspace.MaxHold)
	}
	waitFor(t, 5*time.Second, func() bool { return runnerInfo(t, ws).Knows("carol") })
}

// TestReloadBroken checks that a parley.yaml that cannot be loaded keeps
// the previous configuration routing, says why in runner.json and in the
// error any command gets, and that mending it loads it.
func TestReloadBroken(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	watching(t, ws, Options{})
	saveConfig(t, ws, "agents: [alice, bob, carol\n", true)
	waitFor(t, 10*time.Second, func() bool { return runnerInfo(t, ws).ConfigError != "" })
	info := runnerInfo(t, ws)
	if !strings.Contains(info.ConfigError, "parley.yaml:") || info.Knows("carol") {
		t.Errorf("runner.json = %+v; want the YAML error with its line, and no carol", info)
	}
	if _, err := workspace.Open(ws.Root); err == nil {
		t.Error("the broken parley.yaml opens")
	}
	if note := workspace.RunnerKeeps(ws.Root); !strings.Contains(note, "keeps routing with the configuration it loaded at") {
		t.Errorf("RunnerKeeps = %q; want it to say the runner goes on", note)
	}
	send(t, ws, "alice", "bob", "still routed")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "bob", mailbox.Inbox)) == 1 })

	// An unknown handler is refused before anything changes.
	saveConfig(t, ws, "agents:\n  - alice\n  - bob\n  - {name: x, driver: builtin, handler: nosuch}\n", true)
	waitFor(t, 10*time.Second, func() bool { return strings.Contains(runnerInfo(t, ws).ConfigError, "nosuch") })
	if runnerInfo(t, ws).Knows("x") {
		t.Error("an agent with an unknown handler was loaded")
	}

	saveConfig(t, ws, "agents: [alice, bob, carol]\n", true)
	waitFor(t, 10*time.Second, func() bool { return runnerInfo(t, ws).Knows("carol") })
	if info := runnerInfo(t, ws); info.ConfigError != "" {
		t.Errorf("mended, runner.json still says %q", info.ConfigError)
	}
}

// TestReloadDriver checks that an agent whose program changed finishes
// the message it is handling with the old program, then answers the next
// with the new one, and handles each message once.
func TestReloadDriver(t *testing.T) {
	ws := newWorkspace(t, "alice")
	gate := filepath.Join(ws.Root, "go")
	script(t, ws, "old.sh", "while [ ! -e "+gate+" ]; do sleep 0.01; done\necho old\n")
	script(t, ws, "new.sh", "echo new\n")
	saveConfig(t, ws, "agents:\n  - alice\n  - {name: bot, driver: command, run: [./old.sh]}\n", true)
	ws, err := workspace.Open(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.MakeDirs(); err != nil {
		t.Fatal(err)
	}
	watching(t, ws, Options{})
	send(t, ws, "alice", "bot", "first")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "bot", mailbox.Cur)) == 1 })

	saveConfig(t, ws, "agents:\n  - alice\n  - {name: bot, driver: command, run: [./new.sh]}\n", true)
	waitFor(t, 10*time.Second, func() bool {
		info := runnerInfo(t, ws)
		return info.Loaded.After(info.Started)
	})
	send(t, ws, "alice", "bot", "second")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// An answer can reach alice before its message is filed in done/.
	waitFor(t, 10*time.Second, func() bool {
		return len(names(t, ws, "alice", mailbox.Inbox)) == 2 && len(names(t, ws, "bot", mailbox.Done)) == 2
	})
	if got := strings.Join(bodies(t, ws, "alice", mailbox.Inbox), ","); got != "old,new" {
		t.Errorf("answers = %s, want old,new", got)
	}
}

// TestReloadSkill checks that a skill edited while the runner runs is the
// one the next message is checked against.
func TestReloadSkill(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "skills: [crew]\nagents:\n  - {name: boss, role: mastermind}\n  - {name: eyes, role: lookout}\n")
	skill := func(hours string) string {
		return "---\nname: crew\ndescription: A crew.\n---\n\n### `[CASE]`\n\n- **Sender**: mastermind\n- **Recipient**: lookout\n\n" +
			"| Field | Required | Description |\n|---|---|---|\n| `hours` | Yes | One of: " + hours + " |\n"
	}
	path := filepath.Join(ws.SkillsDir(), "crew.md")
	if err := os.MkdirAll(ws.SkillsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(skill("`day`, `night`")), 0o644); err != nil {
		t.Fatal(err)
	}
	watching(t, ws, Options{})
	if err := os.WriteFile(path, []byte(skill("`day`, `night`, `evening`")), 0o644); err != nil {
		t.Fatal(err)
	}
	drop(t, ws, "boss", "evening.md", "[CASE]\nhours: evening\n")
	waitFor(t, 10*time.Second, func() bool {
		in, _ := os.ReadDir(ws.Mailbox("eyes").Path(mailbox.Inbox, ""))
		return len(in)+len(names(t, ws, "boss", mailbox.Rejected)) > 0
	})
	if got := names(t, ws, "boss", mailbox.Rejected); len(got) != 0 {
		t.Errorf("checked against the skill as it was: rejected %v", got)
	}
}

// roster is a built-in handler that answers with the agents of the
// workspace it was given last (a Reloader).
type roster struct {
	ws atomic.Pointer[workspace.Workspace]
}

func (h *roster) Reload(ws *workspace.Workspace) { h.ws.Store(ws) }

func (h *roster) Handle(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
	ws := h.ws.Load()
	if ws == nil {
		ws = d.Loaded
	}
	m := mailbox.New([]byte(strings.Join(ws.AgentNames(), ",") + "\n"))
	from, _ := d.Message.Header().Get("from")
	m.Set("to", from)
	return []*mailbox.Message{m}, nil
}

// TestReloadBuiltins: a built-in handler is given the workspace as
// loaded again after parley.yaml changed (the team lead went on asking
// an agent removed from parley.yaml for its journal, and to shut down:
// refused, unknown agent).
func TestReloadBuiltins(t *testing.T) {
	ws := newWorkspace(t, "alice")
	saveConfig(t, ws, "agents:\n  - alice\n  - {name: who, driver: builtin, handler: roster}\n", true)
	ws, err := workspace.Open(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.MakeDirs(); err != nil {
		t.Fatal(err)
	}
	h := &roster{}
	h.Reload(ws)
	watching(t, ws, Options{Handlers: Handlers{"roster": h}})
	send(t, ws, "alice", "who", "who is there?")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "alice", mailbox.Inbox)) == 1 })

	saveConfig(t, ws, "agents:\n  - alice\n  - carol\n  - {name: who, driver: builtin, handler: roster}\n", true)
	waitFor(t, 10*time.Second, func() bool { return runnerInfo(t, ws).Knows("carol") })
	send(t, ws, "alice", "who", "and now?")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "alice", mailbox.Inbox)) == 2 })
	if got, want := strings.Join(bodies(t, ws, "alice", mailbox.Inbox), " "), "alice,who alice,carol,who"; got != want {
		t.Errorf("the handler answered %q, want %q: given the workspace as loaded again", got, want)
	}
}

// joinNoter is a built-in handler that notes the agents it is told
// joined (a Joiner).
type joinNoter struct {
	mu     sync.Mutex
	joined []string
}

func (h *joinNoter) Joined(ctx context.Context, agent string, joined []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.joined = append(h.joined, agent+":"+strings.Join(joined, ","))
	return nil
}

func (h *joinNoter) told() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.joined...)
}

func (h *joinNoter) Handle(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
	return nil, nil
}

// TestReloadJoined: an agent put back into parley.yaml while the runner
// runs is told to the built-in agents, as one new is (the team lead
// catches it up as after a restart); one removed is not. (A tryout: a
// player left out, then put back, never got the [CONTEXT_REFRESH] a
// restart would have sent it.)
func TestReloadJoined(t *testing.T) {
	ws := newWorkspace(t, "alice")
	saveConfig(t, ws, "agents:\n  - alice\n  - bob\n  - {name: lead, driver: builtin, handler: noter}\n", true)
	ws, err := workspace.Open(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.MakeDirs(); err != nil {
		t.Fatal(err)
	}
	h := &joinNoter{}
	watching(t, ws, Options{Handlers: Handlers{"noter": h}})
	waitFor(t, 10*time.Second, func() bool { return runnerInfo(t, ws).Knows("bob") })

	saveConfig(t, ws, "agents:\n  - alice\n  - {name: lead, driver: builtin, handler: noter}\n", true)
	waitFor(t, 10*time.Second, func() bool { return !runnerInfo(t, ws).Knows("bob") })
	saveConfig(t, ws, "agents:\n  - alice\n  - bob\n  - {name: lead, driver: builtin, handler: noter}\n", true)
	waitFor(t, 10*time.Second, func() bool { return runnerInfo(t, ws).Knows("bob") })
	if got, want := h.told(), []string{"lead:bob"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the built-in agent was told %q joined, want %q", got, want)
	}
}

// TestReloadBridgeChanged: the bridge follows the agents and skills the
// runner loads again (Runner.Workspace), not its bridge: section, which
// it reads when it starts; a reload that changes it says a restart is
// needed, and one that only moves it says nothing.
func TestReloadBridgeChanged(t *testing.T) {
	ws := newWorkspace(t, "alice")
	saveConfig(t, ws, "bridge: {name: hub, url: nats://127.0.0.1:4222}\nagents:\n  - alice\n", true)
	ws, err := workspace.Open(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	log := &lockedLog{}
	r := watching(t, ws, Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	saveConfig(t, ws, "agents:\n  - alice\n  - bob\nbridge: {name: hub, url: nats://127.0.0.1:4222}\n", true)
	waitFor(t, 10*time.Second, func() bool { return runnerInfo(t, ws).Knows("bob") })
	if got := r.Workspace(); got.Config.Bridge == nil || !slices.Contains(got.AgentNames(), "bob") {
		t.Errorf("Workspace() = agents %v, bridge %v: not the workspace loaded again", got.AgentNames(), got.Config.Bridge)
	}
	if strings.Contains(log.String(), "bridge: changed") {
		t.Errorf("a bridge: section only moved is said changed:\n%s", log.String())
	}
	saveConfig(t, ws, "agents:\n  - alice\n  - bob\n  - carol\nbridge: {name: inn, url: nats://127.0.0.1:4222}\n", true)
	waitFor(t, 10*time.Second, func() bool { return strings.Contains(log.String(), "bridge: changed") })
}

// TestReloadAgreesWithLive: the runner's reload and workspace.Live
// (parley mcp, the web view) decide by one workspace.Settling when a
// parley.yaml saved takes effect. Driven by the same saves on one clock,
// a message routed at a moment and a call of Live.Current at that moment
// see the same configuration, and both wait the same for it: until it
// settles, for workspace.MaxHold at most since the files were found
// changing, past which both go on with the one read before. (Live kept a
// copy of the hold, counted from each call, and read files still being
// written once it was past: where the runner routed with the
// configuration loaded before, parley mcp checked a send against a
// half-saved one.)
func TestReloadAgreesWithLive(t *testing.T) {
	const settle = time.Second
	config := func(agents string) string {
		return "router:\n  settle: 1s\nagents: [" + agents + "]\n"
	}
	ws := newWorkspace(t, "alice", "bob")
	saveConfig(t, ws, config("alice, bob"), true)
	skills, _ := filepath.Glob(filepath.Join(ws.Root, "skills", "*.md"))
	for _, path := range skills {
		age(t, path) // the newest file counts: not one written just now
	}
	ws, err := workspace.Open(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	// One clock for both, which the test moves on to stand for time
	// passing, or back to ask both at one moment.
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	r, err := Open(ws, Options{Now: now, NoDrivers: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	live := workspace.NewLive(ws, now)
	ctx := context.Background()

	// save writes parley.yaml, dated age before now.
	save := func(agents string, age time.Duration) {
		t.Helper()
		path := filepath.Join(ws.Root, workspace.ConfigFile)
		if err := os.WriteFile(path, []byte(config(agents)), 0o644); err != nil {
			t.Fatal(err)
		}
		at := now().Add(-age)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	// routed is what a message routed now is checked against, as the
	// runner's loop routes it: after checkConfig, waiting while it holds
	// routing.
	routed := func() []string {
		for {
			r.config.dirty = true // as a file event says
			again, hold := r.checkConfig(ctx)
			if !hold {
				return r.ws().AgentNames()
			}
			time.Sleep(again.Sub(now()))
		}
	}
	current := func() []string {
		ws, _ := live.Current(ctx)
		return ws.AgentNames()
	}
	// looked is what the runner and Live see at a look that waits for
	// nothing (a rescan; the web view's).
	looked := func() []string {
		r.config.dirty = true
		r.checkConfig(ctx)
		return r.ws().AgentNames()
	}
	look := func() []string {
		ws, _, _ := live.Look()
		return ws.AgentNames()
	}
	// agree asks both at this moment, and returns what they saw and how
	// long each took to see it.
	agree := func(step string, runner, live func() []string, want []string, wait time.Duration) {
		t.Helper()
		start := now()
		gotRunner := runner()
		tookRunner := now().Sub(start)
		offset.Add(-int64(now().Sub(start))) // back to the moment asked
		gotLive := live()
		tookLive := now().Sub(start)
		if !slices.Equal(gotRunner, want) || !slices.Equal(gotLive, want) {
			t.Errorf("%s: the runner routes with agents %v, Live gives %v; want both %v", step, gotRunner, gotLive, want)
		}
		// Waited for the settle time where the files had not settled
		// (the lower bound); the upper one is loose, a busy machine
		// being slow: what each saw is the main check.
		for _, took := range []time.Duration{tookRunner, tookLive} {
			if took < wait-settle/2 || took > wait+2*settle {
				t.Errorf("%s: the runner took %v, Live %v, to see it; want both about %v", step, tookRunner, tookLive, wait)
				break
			}
		}
		if tookLive < tookRunner {
			offset.Add(int64(tookRunner - tookLive)) // on to the later
		}
	}

	save("alice, bob, carol", time.Minute)
	agree("saved a while ago", routed, current, []string{"alice", "bob", "carol"}, 0)
	save("alice, bob, dave", 0)
	agree("just saved", routed, current, []string{"alice", "bob", "dave"}, settle)
	// An editor saving again and again: found changing, then still
	// changing past the hold.
	save("alice, bob, erin", 0)
	agree("being saved, at a look", looked, look, []string{"alice", "bob", "dave"}, 0)
	offset.Add(int64(workspace.MaxHold + time.Second))
	save("alice, bob, frank", 0)
	agree("still being saved past the hold", routed, current, []string{"alice", "bob", "dave"}, 0)
	agree("still being saved, at a look", looked, look, []string{"alice", "bob", "dave"}, 0)
	offset.Add(int64(2 * settle))
	agree("left alone", routed, current, []string{"alice", "bob", "frank"}, 0)
	save("alice, bob, [", time.Minute)
	agree("a parley.yaml that does not load", routed, current, []string{"alice", "bob", "frank"}, 0)
}
