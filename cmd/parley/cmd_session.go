package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/runner"
)

func sessionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "session",
		Usage:     "run a stream-json program (claude -p --input-format stream-json) as a session agent: each message one turn",
		ArgsUsage: "[--prompt FILE] -- PROGRAM [ARGS...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "prompt", Usage: "a `FILE` (the role's prompt) put before the first turn the program is given"},
		},
		Description: "For `driver: session`: run: [parley, session, --, claude, -p, --input-format, stream-json,\n" +
			"--output-format, stream-json, --verbose]. Each message parley gives the session\n" +
			"goes to the program as one user turn ({\"type\":\"user\",...} on a line): the\n" +
			"agent's context file ($PARLEY_CONTEXT), then the message; --prompt puts a\n" +
			"file before the first. The text of the\n" +
			"program's {\"type\":\"result\"} event is the agent's answer; a result that is an\n" +
			"error ends parley session, so that parley starts it again for the message.",
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) > 0 && args[0] == "--" {
				args = args[1:]
			}
			if len(args) == 0 {
				return usagef("name the program to run: parley session -- claude -p --input-format stream-json --output-format stream-json --verbose")
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			opts := sessionOptions{Program: args, Context: e.getenv("PARLEY_CONTEXT")}
			if p := c.String("prompt"); p != "" {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				opts.Prompt = string(data)
			}
			return runSession(ctx, opts, e.stdin, e.stdout, e.stderr)
		},
	}
}

// sessionOptions are what parley session runs: the program, the agent's
// context file (empty: none), and the text put before the first turn.
type sessionOptions struct {
	Program []string
	Context string
	Prompt  string
}

// runSession runs a program that speaks stream-json (one JSON event a
// line) for a session agent, which speaks parley's frames: each message
// read from in, up to its FrameEnd line, is written to the program as a
// user turn; the program's events are read up to its result, whose text
// is written to out as the answer, then the empty frame that says the
// session is done with the message. It returns when in ends (the
// program's stdin is closed and it is waited for), or with an error when
// the program fails or ends before its result.
func runSession(ctx context.Context, opts sessionOptions, in io.Reader, out, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, opts.Program[0], opts.Program[1:]...)
	cmd.Stderr = stderr
	toProg, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	fromProg, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	events := bufio.NewScanner(fromProg)
	events.Buffer(nil, 64<<20)
	frames := bufio.NewReader(in)
	fail := func(err error) error {
		toProg.Close()
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	for {
		msg, err := readFrame(frames)
		if errors.Is(err, io.EOF) {
			toProg.Close()
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("session: %s: %w", opts.Program[0], err)
			}
			return nil
		}
		if err != nil {
			return fail(err)
		}
		var content strings.Builder
		if opts.Prompt != "" {
			content.WriteString(strings.TrimRight(opts.Prompt, "\n") + "\n\n")
			opts.Prompt = "" // the program keeps its conversation
		}
		if opts.Context != "" {
			if data, err := os.ReadFile(opts.Context); err == nil {
				content.Write(data)
				content.WriteString("\n# The message to answer\n\n")
			}
		}
		content.WriteString(msg)
		turn := map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": content.String()}}
		line, err := json.Marshal(turn)
		if err != nil {
			return fail(err)
		}
		if _, err := toProg.Write(append(line, '\n')); err != nil {
			return fail(fmt.Errorf("session: writing to %s: %w", opts.Program[0], err))
		}
		answer, err := readResult(events)
		if err != nil {
			return fail(fmt.Errorf("session: %s: %w", opts.Program[0], err))
		}
		answer = strings.TrimRight(answer, "\n")
		var b strings.Builder
		if answer != "" {
			b.WriteString(answer + "\n" + runner.FrameEnd + "\n")
		}
		b.WriteString(runner.FrameEnd + "\n")
		if _, err := io.WriteString(out, b.String()); err != nil {
			return fail(err)
		}
	}
}

// readFrame reads one message of a session's input: the lines up to one
// that holds only FrameEnd. io.EOF when the input ends first with
// nothing read.
func readFrame(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		if strings.TrimSuffix(line, "\n") == runner.FrameEnd {
			return b.String(), nil
		}
		b.WriteString(line)
		if err != nil {
			if errors.Is(err, io.EOF) && b.Len() > 0 {
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
	}
}

// readResult reads a stream-json program's events up to its result, and
// returns the result's text. Lines that are not JSON are skipped.
func readResult(events *bufio.Scanner) (string, error) {
	for events.Scan() {
		var ev struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
			IsError bool   `json:"is_error"`
			Result  string `json:"result"`
		}
		if json.Unmarshal(events.Bytes(), &ev) != nil || ev.Type != "result" {
			continue
		}
		if ev.IsError || ev.Subtype != "success" {
			return "", fmt.Errorf("its result is an error (%s): %s", ev.Subtype, ev.Result)
		}
		return ev.Result, nil
	}
	if err := events.Err(); err != nil {
		return "", err
	}
	return "", errors.New("it ended before its result")
}
