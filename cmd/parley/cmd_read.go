package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

func readCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "read",
		Usage:     "print a message, by id or path: its header, then its body",
		ArgsUsage: "ID|PATH",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "raw", Usage: "print the file exactly as it is"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := exactArgs(c, 1, "a message ID or a PATH"); err != nil {
				return err
			}
			arg := c.Args().First()
			path := arg
			if _, err := os.Lstat(arg); err != nil {
				if strings.ContainsRune(arg, os.PathSeparator) || strings.HasSuffix(arg, ".md") {
					if errors.Is(err, fs.ErrNotExist) {
						return fmt.Errorf("%s: no such file", arg) // not "lstat X: ..."
					}
					return err // a path, not an id
				}
				ws, configErr, werr := e.openWorkspaceOrMailboxes(c)
				if werr != nil {
					return werr
				}
				e.warnUnloaded(ws.Root, configErr)
				if path, err = ws.FindMessage(arg); errors.Is(err, workspace.ErrMessageNotFound) && !mailbox.IsID(arg) {
					if len(arg) < workspace.MinShortID {
						return fmt.Errorf("%s: no such file, and a short id needs %d characters or more", arg, workspace.MinShortID)
					}
					return fmt.Errorf("%s: no such file, and no message id starts or ends with it", arg)
				}
				if err != nil {
					return err
				}
			}
			return runRead(e, path, c.Bool("raw"), c.Bool("json"))
		},
	}
}

func runRead(e *env, path string, raw, asJSON bool) error {
	data, err := mailbox.ReadFile(path, 64<<20)
	var pe *fs.PathError
	if err != nil && !errors.As(err, &pe) {
		err = fmt.Errorf("%s: %w", path, err) // the error does not name the file
	}
	if err != nil {
		return err
	}
	if raw {
		_, err := e.stdout.Write(data)
		return err
	}
	// A refused or given-up message has the reason beside it.
	reason, _ := os.ReadFile(path + mailbox.ReasonSuffix)
	m, err := mailbox.Parse(data)
	if err != nil {
		var pe *mailbox.ParseError
		if errors.As(err, &pe) {
			pe.Path = path
		}
		return err
	}
	if asJSON {
		header := make(map[string]any)
		for _, k := range m.Header().Keys() {
			header[k] = m.Header().Value(k)
		}
		fields := make(map[string]any)
		for _, k := range m.Payload().Keys() {
			fields[k] = m.Payload().Value(k)
		}
		return e.printJSON(map[string]any{
			"path": path, "keys": m.Header().Keys(), "header": header,
			"tag": m.Tag, "fields": fields, "body": string(m.Body),
			"reason": string(reason),
		})
	}
	// Reserved fields first, in parley's order, then the payload as written.
	keys := m.Header().Keys()
	sort.SliceStable(keys, func(i, j int) bool { return mailbox.ReservedRank(keys[i]) < mailbox.ReservedRank(keys[j]) })
	width := 0
	for _, k := range keys {
		width = max(width, len(k))
	}
	var b strings.Builder
	for _, k := range keys {
		// A value of several lines goes on under its first line.
		value := strings.ReplaceAll(m.Header().Text(k), "\n", "\n"+strings.Repeat(" ", width+3))
		fmt.Fprintf(&b, "%-*s  %s\n", width+1, k+":", value)
	}
	b.WriteString(strings.Repeat("─", 40))
	b.WriteString("\n")
	content := m.Content() // a tag-first message is shown as written
	b.Write(content)
	if len(content) > 0 && content[len(content)-1] != '\n' {
		b.WriteString("\n")
	}
	if len(reason) > 0 {
		fmt.Fprintf(&b, "%s\nwhy it is in %s/ (%s):\n%s", strings.Repeat("─", 40), filepath.Base(filepath.Dir(path)), filepath.Base(path)+mailbox.ReasonSuffix, reason)
	}
	// Shown, not copied: what the sender wrote cannot drive the terminal
	// (--raw prints the bytes as they are).
	_, err = fmt.Fprint(e.stdout, printableText(b.String()))
	return err
}
