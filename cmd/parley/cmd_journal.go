package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns/journal"
	"github.com/parley-dev/parley/internal/textfile"
)

func journalCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "journal",
		Usage: "keep a character's journal (party/CHARACTER-journal.md)",
		Subcommands: []*cli.Command{{
			Name:      "add",
			Usage:     "append a dated entry: what happened, what I did, what I learned, how I feel",
			ArgsUsage: "CHARACTER",
			Description: "The parts come from the flags, or from stdin when no part is given as a\n" +
				"flag: text with optional labels (Title:, What happened:, What I did:,\n" +
				"What I learned:, How I feel:); text before any label is what happened.",
			Flags: []cli.Flag{
				campaignFlag,
				&cli.StringFlag{Name: "title", Usage: "the entry's `TITLE`"},
				&cli.StringFlag{Name: "happened", Usage: "what happened (`TEXT`)"},
				&cli.StringFlag{Name: "did", Usage: "what I did (`TEXT`)"},
				&cli.StringFlag{Name: "learned", Usage: "what I learned (`TEXT`)"},
				&cli.StringFlag{Name: "feel", Usage: "how I feel (`TEXT`)"},
				&cli.TimestampFlag{Name: "date", Layout: "2006-01-02", Usage: "the entry's `DATE` (YYYY-MM-DD; default: today)"},
			},
			Action: func(c *cli.Context) error {
				if err := exactArgs(c, 1, "the CHARACTER whose journal it is (the sheet's name, like tilda-brannock)"); err != nil {
					return err
				}
				camp, ws, err := openCampaign(c, "")
				if err != nil {
					return err
				}
				character := c.Args().First()
				if _, err := camp.Sheet(character); err != nil {
					return err
				}
				entry := journal.Entry{Title: c.String("title"), Happened: c.String("happened"), Did: c.String("did"), Learned: c.String("learned"), Feel: c.String("feel")}
				if entry == (journal.Entry{}) {
					text, err := io.ReadAll(e.stdin)
					if err != nil {
						return err
					}
					entry = journal.Parse(string(text))
				}
				entry.Date = time.Now()
				if d := c.Timestamp("date"); d != nil {
					entry.Date = *d
				}
				path := camp.JournalPath(character)
				if _, err := journal.Add(path, character, entry); err != nil {
					if ce := (*textfile.ConflictError)(nil); errors.As(err, &ce) {
						ce.Path = ws.Short(ce.Path) // it names the file and the line
						return err
					}
					return fmt.Errorf("%s: %w", ws.Short(path), err)
				}
				fmt.Fprintf(e.stdout, "added an entry to %s\n", ws.Short(path))
				return nil
			},
		}},
	}
}
