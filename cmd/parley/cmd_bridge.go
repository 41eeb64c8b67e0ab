package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

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
	b, err := bridge.Open(ws, bridge.Options{Logger: log, Server: ns, UntilIdle: opts.UntilIdle, Getenv: e.getenv})
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
