// Command standin is the stand-in model endpoint of parley's tests, to
// try a driver: openai agent with no model and no network. It serves an
// OpenAI-compatible chat-completions endpoint that answers each request
// with the next step of a script (one JSON step a line: {"content":
// "..."}, {"status": 500}, {"delay": "90s", "content": "late"}), the
// last step again once past the end, until interrupted.
//
//	go run ./internal/standin/cmd/standin [-addr HOST:PORT] SCRIPT.jsonl
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/parley-dev/parley/internal/standin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintf(os.Stderr, "standin: %v\n", err)
		os.Exit(2)
	}
}

// run serves the script named in args until ctx ends; it says the base
// URL to give as base_url on stdout, and sends it on ready when not nil.
func run(ctx context.Context, args []string, stdout io.Writer, ready chan<- string) error {
	fs := flag.NewFlagSet("standin", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:8088", "where to listen")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: standin [-addr HOST:PORT] SCRIPT.jsonl")
	}
	path := fs.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	steps, err := standin.ParseScript(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	s := standin.Listen(l, steps...)
	defer s.Close()
	fmt.Fprintf(stdout, "base_url: %s (answering from %s; Ctrl-C stops)\n", s.URL(), path)
	if ready != nil {
		ready <- s.URL()
	}
	<-ctx.Done()
	return nil
}
