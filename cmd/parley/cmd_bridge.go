package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/bridge"
	"github.com/parley-dev/parley/runner/workspace"
)

var (
	serveFlag  = &cli.BoolFlag{Name: "serve", Usage: "also run a NATS server (JetStream, stored in .parley/nats) in this process"}
	listenFlag = &cli.StringFlag{Name: "listen", Usage: "where --serve listens, `HOST:PORT` (default: bridge.listen, else 0.0.0.0 and the port of bridge.url)"}
)

func bridgeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "bridge",
		Usage: "bridge this workspace to others over NATS JetStream (parley run does it too when parley.yaml has bridge:)",
		Description: "Publishes what the router delivered to agents that live in other workspaces\n" +
			"(remote: in parley.yaml) and delivers what other workspaces sent to agents of\n" +
			"this one. --serve also runs a NATS server in this process, so two machines need\n" +
			"nothing else installed. --until-idle forwards and takes what waits, then exits.",
		Flags: []cli.Flag{
			serveFlag, listenFlag,
			&cli.BoolFlag{Name: "until-idle", Usage: "forward and take what waits, then exit (for scripts and tests)"},
			&cli.BoolFlag{Name: "verbose", Usage: "log more"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "log only errors"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			level := logLevel(c)
			ctx, stop := interruptible(c.Context)
			defer stop()
			return runBridge(ctx, e, ws, bridgeOptions{Serve: c.Bool("serve"), Listen: c.String("listen"), UntilIdle: c.Bool("until-idle"), Level: level, JSON: c.Bool("json")})
		},
	}
}

type bridgeOptions struct {
	Serve     bool
	Listen    string
	UntilIdle bool
	Level     slog.Level
	JSON      bool
}

// errListenWithoutServe is the usage error of a --listen given alone:
// left unsaid, it would be ignored, and no server would listen.
var errListenWithoutServe = usagef("--listen says where --serve's NATS server listens: give --serve too")

// checkListen says what is wrong with --serve and --listen as given: a
// --listen alone, or one that is no HOST:PORT (a usage error, exit 2).
func checkListen(serve bool, listen string) error {
	if listen == "" {
		return nil
	}
	if !serve {
		return errListenWithoutServe
	}
	if _, _, err := bridge.ParseListen(listen); err != nil {
		return usagef("--%v", err)
	}
	return nil
}

func runBridge(ctx context.Context, e *env, ws *workspace.Workspace, opts bridgeOptions) error {
	if err := checkListen(opts.Serve, opts.Listen); err != nil {
		return err
	}
	if ws.Config.Bridge == nil {
		return fmt.Errorf("%s has no bridge: section: name this workspace and the NATS server (bridge: {name: tavern, url: nats://HOST:4222})", workspace.ConfigFile)
	}
	log := e.logger(opts.Level)
	ns, err := serveIfAsked(e, ws, opts.Serve, opts.Listen, log)
	if err != nil {
		return err
	}
	if ns != nil {
		defer ns.Shutdown()
	}
	saved := &savedConfig{ws: ws, settling: workspace.NewSettling(ws.Root), looked: time.Now(), log: log}
	b, err := bridge.Open(ws, bridge.Options{Logger: log, Server: ns, UntilIdle: opts.UntilIdle, Getenv: e.getenv, Current: saved.current})
	if err != nil {
		return err
	}
	defer b.Close()
	stats, err := b.Run(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		err = e.printJSON(stats)
	} else {
		_, err = fmt.Fprintf(e.stdout, "bridged: forwarded %d, received %d, refused %d\n", stats.Forwarded, stats.Received, stats.Bounced)
	}
	if err != nil {
		return err
	}
	if opts.UntilIdle && ctx.Err() == nil && stats.Bounced > 0 {
		return &bridgeRefusedError{stats}
	}
	return nil
}

// bridgeRefusedError ends a bridge run until idle during which messages
// were refused or given up (kept in dead/ or .parley/bridge/refused/):
// exit code 5, as a run that refused files.
type bridgeRefusedError struct{ stats bridge.Stats }

func (e *bridgeRefusedError) Error() string {
	n := int(e.stats.Bounced)
	return fmt.Sprintf("the bridge refused %d %s during this run", n, plural(n, "message", "messages"))
}

// serveIfAsked starts the embedded NATS server for --serve.
func serveIfAsked(e *env, ws *workspace.Workspace, serve bool, listen string, log *slog.Logger) (*bridge.Server, error) {
	if !serve {
		return nil, nil
	}
	cfg := ws.Config.Bridge
	if listen == "" {
		listen = cfg.Listen
	}
	token, err := cfg.Token(e.getenv)
	if err != nil {
		return nil, err
	}
	ns, err := bridge.Serve(bridge.ServeOptions{Dir: ws.NATSDir(), Listen: listen, URL: cfg.URLs[0], Name: "parley-" + cfg.Name, Token: token, MaxMessageSize: ws.Config.Router.MaxMessageSize, Logger: log})
	if err != nil {
		err = fmt.Errorf("--serve: %w", err)
		if st, ok, _ := ws.ReadBridgeState(); ok && st.Serving != "" && ws.BridgeRunning() {
			// The port is taken by this workspace's own server, run
			// by a bridge of its own (parley bridge --serve).
			return nil, hintedError{err: err, hint: fmt.Sprintf("this workspace's bridge (pid %d) serves NATS at %s already: leave out --serve", st.PID, st.Serving)}
		}
		return nil, err
	}
	log.Info("serving NATS", "url", ns.ClientURL())
	return ns, nil
}

// startBridge opens the bridge of a runner's workspace; nil, nil when
// another process runs it (a parley bridge of its own).
func startBridge(e *env, ws *workspace.Workspace, ns *bridge.Server, log *slog.Logger, r *runner.Runner) (*bridge.Bridge, error) {
	b, err := bridge.Open(ws, bridge.Options{Logger: log, Server: ns, Wake: r.Wake, GivenUp: r.TellGivenUp, Getenv: e.getenv, Current: r.Workspace})
	if errors.Is(err, bridge.ErrLocked) {
		log.Info("the bridge runs in another process (parley bridge): its deliveries reach the drivers at each rescan")
		return nil, nil
	}
	return b, err
}

// savedConfig follows parley.yaml and the skills as saved, for a bridge
// run on its own (parley bridge), as a runner follows them for the
// bridge it runs (bridge.Options.Current): what arrives is checked
// against them, and an agent made remote is forwarded to. It looks at
// the files at most once a second, and loads them once they have been
// left alone for router.settle (workspace.Settling decides, as for the
// runner; the bridge waits for none); files that do not load change
// nothing, and are logged once. Its bridge: section counts once the
// bridge starts again.
type savedConfig struct {
	mu       sync.Mutex
	ws       *workspace.Workspace
	settling *workspace.Settling // the files last loaded, or tried
	looked   time.Time
	log      *slog.Logger
}

// current returns the workspace as last loaded.
func (c *savedConfig) current() *workspace.Workspace {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if now.Sub(c.looked) < time.Second {
		return c.ws
	}
	c.looked = now
	if read, _, _ := c.settling.Look(c.ws.Root, now, c.ws.Config.Router.Settle); !read {
		return c.ws // unchanged, or read at a later look once settled
	}
	ws, err := workspace.Open(c.ws.Root)
	if err == nil {
		_, err = ws.Protocol()
	}
	if err != nil {
		c.log.Error(workspace.ConfigFile+" not reloaded; the bridge goes on with the configuration loaded before", "err", err)
		return c.ws
	}
	if !workspace.SameBridge(c.ws.Config.Bridge, ws.Config.Bridge) {
		c.log.Warn(workspace.ConfigFile + ": bridge: changed: the bridge goes on as it started (its name, server and stream) until it starts again: restart parley bridge")
	}
	c.ws = ws
	c.log.Info(workspace.ConfigFile+" reloaded by the bridge", "agents", len(ws.Config.Agents))
	return ws
}
