package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/parley-dev/parley/runner/workspace"
)

// ExportOptions say what Export writes.
type ExportOptions struct {
	// Spectator writes only what a spectator may see: the story as the
	// spectator view shows it (no story state, no secret part of a file,
	// no note for the GM), and no timeline or lanes, which hold every
	// message, the private ones too.
	Spectator bool
	// Now is the time the copy says it was made; zero means time.Now().
	Now time.Time
}

// ErrNoStory is Export's error for a copy for spectators of a workspace
// without a campaign: there is nothing they may see.
var ErrNoStory = errors.New("a copy for spectators holds the story alone, and the workspace has no campaign")

// Export writes a self-contained static copy of a session into dir: the
// timeline with every message (index.html), the lanes (lanes.html), the
// story of a D&D campaign (story.html) and the style sheet; no script,
// nothing fetched from anywhere. With opts.Spectator it writes the story
// alone (story.html) and the style sheet. Neither copy is written into a
// directory that holds the other. dir is made if it is not there; each
// file is written whole (to a temporary name, then renamed) so that a
// copy cut short leaves no half-written page.
func Export(ctx context.Context, ws *workspace.Workspace, dir string, opts ExportOptions) error {
	if ws.InMailboxes(dir) {
		return fmt.Errorf("%s: in %s/, parley's, where the pages would be taken for messages (in an outbox, sent): export elsewhere, like ./site", dir, workspace.MailboxesDir)
	}
	s, err := New(Options{Workspace: ws})
	if err != nil {
		return err
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	type message struct {
		row
		Detail *messageData
	}
	type exportPage struct {
		Title, Path, Root, When string
		Spectator               bool
		Messages                []message
		Lanes                   lanesData
		Story                   *storyData
	}
	base := exportPage{Root: filepath.Base(ws.Root), When: opts.Now.UTC().Format("2006-01-02 15:04 UTC"), Spectator: opts.Spectator}
	story := s.storyData(opts.Spectator)
	story.Static = true
	if story.Name != "" {
		base.Story = &story
	}
	if opts.Spectator && base.Story == nil {
		return fmt.Errorf("%w (%s)", ErrNoStory, story.Err)
	}
	entries := s.feed.slice(0, s.feed.len())
	idx := base
	idx.Title, idx.Path = "Timeline", "index.html"
	if opts.Spectator {
		entries = nil // the timeline holds every message, private ones too
	}
	for i, e := range entries {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		m := message{row: rowOf(i, e)}
		if e.Arrived() || e.Outcome == workspace.Refused || e.Outcome == workspace.GivenUp || e.Outcome == workspace.Bounced {
			d := s.messageData(i, e)
			m.Detail = &d
		}
		idx.Messages = append(idx.Messages, m)
	}
	lanes := base
	lanes.Title, lanes.Path = "Lanes", "lanes.html"
	if !opts.Spectator {
		lanes.Lanes = s.lanesAll()
	}
	pages := []exportPage{idx, lanes}
	if opts.Spectator {
		pages = nil
	}
	if base.Story != nil {
		st := base
		st.Title, st.Path = "Story", "story.html"
		pages = append(pages, st)
	}
	var writes []string
	for _, p := range pages {
		writes = append(writes, p.Path)
	}
	writes = append(writes, "style.css")
	if err := checkExportDir(dir, opts.Spectator, writes); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range pages {
		var buf bytes.Buffer
		if err := execute(&buf, "export", "export", p); err != nil {
			return fmt.Errorf("rendering %s: %w", p.Path, err)
		}
		if err := writeFile(filepath.Join(dir, p.Path), buf.Bytes()); err != nil {
			return err
		}
	}
	css, err := fs.ReadFile(assets, "assets/static/style.css")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "style.css"), append([]byte(styleMark), css...))
}

// The marks an exported file carries, by which Export knows its own
// files again: a page names the copy it belongs to in a meta element, the
// style sheet starts with a comment.
const (
	fullMark      = `<meta name="parley-export" content="full">`
	spectatorMark = `<meta name="parley-export" content="spectator">`
	styleMark     = "/* parley-export */\n"
)

// The kinds of file checkExportDir finds in the directory.
const (
	absent    = iota
	foreign   // not written by parley export: a person's own
	fullCopy  // a page of a full copy, or the style sheet
	spectCopy // a page of a spectators' copy
)

// exportedKind says whose file dir/name is: absent, foreign, or which
// copy Export wrote it for. Only a regular file that starts with the mark
// is Export's own.
func exportedKind(dir, name string) (int, error) {
	path := filepath.Join(dir, name)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return absent, nil
	}
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return foreign, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, err
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte(styleMark)), bytes.Contains(head, []byte(fullMark)):
		return fullCopy, nil
	case bytes.Contains(head, []byte(spectatorMark)):
		return spectCopy, nil
	}
	return foreign, nil
}

// checkExportDir refuses to write over a file Export did not write (a
// person's own index.html or style.css), and to mix the two copies in one
// directory: a full copy made there before would stay beside the
// spectators' one, every message in it; a full copy written where the
// spectators' copy is would replace its story.html with the game master's
// view and put every message beside it. writes names the files this copy
// writes.
func checkExportDir(dir string, spectator bool, writes []string) error {
	for _, name := range writes {
		kind, err := exportedKind(dir, name)
		if err != nil {
			return err
		}
		if kind == foreign {
			return fmt.Errorf("%s was not written by parley export: it is left as it is; write the copy into another directory, or move the file away", filepath.Join(dir, name))
		}
	}
	if spectator {
		for _, name := range []string{"index.html", "lanes.html"} {
			kind, err := exportedKind(dir, name)
			if err != nil {
				return err
			}
			if kind == fullCopy {
				return fmt.Errorf("%s holds %s, a copy with every message: write the spectators' copy into another directory", dir, name)
			}
		}
		return nil
	}
	kind, err := exportedKind(dir, "story.html")
	if err != nil {
		return err
	}
	if kind == spectCopy {
		return fmt.Errorf("%s holds story.html, a copy for spectators: write the full copy into another directory", dir)
	}
	return nil
}

// writeFile writes a file whole: to a temporary name beside it, then
// renamed over it.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp-" + randomHex(4)
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
