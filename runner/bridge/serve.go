package bridge

import (
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServeOptions say how Serve runs a NATS server.
type ServeOptions struct {
	// Dir is where JetStream stores its streams (.parley/nats).
	Dir string
	// Listen is HOST:PORT to listen on; empty: all interfaces, on the
	// port of URL (4222 when it has none).
	Listen string
	// URL is the workspace's first bridge URL, for the default port.
	URL string
	// Name names the server (parley-<workspace>).
	Name string
	// Token, when set, is required of every client.
	Token string
	// MaxMessageSize is the largest message file the workspace accepts
	// (router.max_message_size): the server carries one that large, with
	// the bridge's headers (see PayloadFor). Zero: NATS's default.
	MaxMessageSize int64
	// Logger is told when the server's store runs out of room, and when
	// it has room again (see Server); nil discards it.
	Logger *slog.Logger
}

// headers is room enough for what the bridge publishes besides a
// message file: its subject, Nats-Msg-Id and the expected stream.
const headers = 4 << 10

// maxPayload is the most a NATS server is let carry in one message.
const maxPayload = 64 << 20

// PayloadFor is the max_payload a NATS server needs to carry message
// files of up to size bytes, with the bridge's headers: never below
// NATS's default of 1 MiB. A server --serve runs is given at most 64 MiB
// (serverPayload); the bridge warns when the server it is connected to
// carries less than this (see Bridge.checkPayload).
func PayloadFor(size int64) int64 {
	if size > math.MaxInt64-headers {
		return math.MaxInt64
	}
	return max(size+headers, server.MAX_PAYLOAD_SIZE)
}

// serverPayload is the max_payload Serve gives its server: PayloadFor,
// up to the most a NATS server is let carry.
func serverPayload(size int64) int32 {
	return int32(min(PayloadFor(size), maxPayload))
}

// Serve starts a NATS server with JetStream in this process, storing its
// streams in opts.Dir with every write flushed to disk before it is
// acknowledged (sync_always): two workspaces on two machines need nothing
// else installed. Shut it down with Shutdown.
func Serve(opts ServeOptions) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	listen := opts.Listen
	if listen == "" {
		port := "4222"
		if u, err := url.Parse(withScheme(opts.URL)); err == nil && u.Port() != "" {
			port = u.Port()
		}
		listen = net.JoinHostPort("0.0.0.0", port)
	}
	host, port, err := ParseListen(listen)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		port = server.RANDOM_PORT
	} else {
		// A port another program holds is said at once: the server itself
		// would only fail to become ready (after ten seconds).
		l, err := net.Listen("tcp", listen)
		if err != nil {
			return nil, fmt.Errorf("the NATS server cannot listen on %s: %w", listen, err)
		}
		l.Close()
	}
	ns, err := server.NewServer(&server.Options{
		ServerName:    opts.Name,
		Host:          host,
		Port:          port,
		JetStream:     true,
		StoreDir:      opts.Dir,
		SyncAlways:    true,
		Authorization: opts.Token,
		NoLog:         true,
		NoSigs:        true,
		MaxPayload:    serverPayload(opts.MaxMessageSize),
	})
	if err != nil {
		return nil, err
	}
	s := &Server{Server: ns, dir: opts.Dir, log: opts.Logger}
	ns.SetLogger(serverLog{s}, false, false)
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("the NATS server did not start listening on %s within 10s (is the port taken?)", listen)
	}
	return s, nil
}

// ParseListen reads where a server listens, HOST:PORT (a port of 0:
// any free one).
func ParseListen(listen string) (host string, port int, err error) {
	host, portText, err := net.SplitHostPort(listen)
	if err == nil {
		port, err = strconv.Atoi(portText)
	}
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("listen %q: want HOST:PORT, as 0.0.0.0:4222 or 127.0.0.1:0", listen)
	}
	return host, port, nil
}

func withScheme(s string) string {
	if !strings.Contains(s, "://") {
		return "nats://" + s
	}
	return s
}

// Permissions returns the subjects a NATS user for the workspace named
// name may publish to and subscribe to, for a bridge on stream: it
// publishes only as its own agents (parley.*.*.<name>.*) and reaches
// only its own consumer's part of the JetStream API; replies come to
// _INBOX.>. The stream itself is made by the server's operator.
func Permissions(stream, name string) (publish, subscribe []string) {
	c := ConsumerName(name)
	return []string{
			SubjectPrefix + ".*.*." + name + ".*",
			"$JS.API.STREAM.INFO." + stream,
			"$JS.API.CONSUMER.CREATE." + stream + "." + c + ".>",
			"$JS.API.CONSUMER.INFO." + stream + ".*", // its own, and whether others read (see Readers)
			"$JS.API.CONSUMER.NAMES." + stream,
			"$JS.API.CONSUMER.MSG.NEXT." + stream + "." + c,
			"$JS.API.CONSUMER.RESET." + stream + "." + c,
			"$JS.ACK." + stream + "." + c + ".>",
		},
		[]string{"_INBOX.>"}
}
