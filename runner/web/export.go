package web

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	// PageSize is how many messages a page of the timeline holds; zero
	// means ExportPageSize.
	PageSize int
}

// ExportPageSize is how many messages a page of an exported timeline
// holds: the newest in index.html, the older ones in timeline-N.html
// (1 the oldest), each page linked to the one before and after it. A
// night's session of 18,000 messages was one page of 21 MB that a
// browser took 12 s to open.
const ExportPageSize = 1000

// ErrNoStory is Export's error for a copy for spectators of a workspace
// without a campaign: there is nothing they may see.
var ErrNoStory = errors.New("a copy for spectators holds the story alone, and the workspace has no campaign")

// Export writes a self-contained static copy of a session into dir: the
// timeline with every message (index.html, the newest, and pages of
// older ones: see ExportPageSize), the lanes (lanes.html), the
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
		// Of a page of the timeline: its messages, the pages before
		// and after it ("" for none), and which of how many it is,
		// with the number of its first message and of all.
		Timeline              bool
		Messages              []message
		Older, Newer          string
		Page, Pages, From, To int
		Of                    int
		Lanes                 lanesData
		Story                 *storyData
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
	size := cmp.Or(opts.PageSize, ExportPageSize)
	entries := s.feed.slice(0, s.feed.len())
	var pages []exportPage
	if !opts.Spectator { // the timeline holds every message, private ones too
		count := max((len(entries)+size-1)/size, 1)
		for n := 1; n <= count; n++ {
			p := base
			p.Title, p.Path, p.Timeline = "Timeline", timelinePage(n, count), true
			p.Page, p.Pages, p.Of = n, count, len(entries)
			if n > 1 {
				p.Older = timelinePage(n-1, count)
			}
			if n < count {
				p.Newer = timelinePage(n+1, count)
				p.Title = fmt.Sprintf("Timeline, page %d of %d", n, count)
			}
			first := (n - 1) * size
			p.From = min(first+1, len(entries))
			for i := first; i < min(first+size, len(entries)); i++ {
				if i%256 == 0 && ctx.Err() != nil {
					return ctx.Err()
				}
				e := entries[i]
				m := message{row: rowOf(i, e)}
				if e.Arrived() || e.Outcome == workspace.Refused || e.Outcome == workspace.GivenUp || e.Outcome == workspace.Bounced {
					d := s.messageData(i, e)
					m.Detail = &d
				}
				p.Messages = append(p.Messages, m)
			}
			p.To = first + len(p.Messages)
			pages = append(pages, p)
		}
		lanes := base
		lanes.Title, lanes.Path = "Lanes", "lanes.html"
		lanes.Lanes = s.lanesAll()
		pages = append(pages, lanes)
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
	if err := removeOldPages(dir, writes); err != nil {
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

// timelinePage is the file of page n of count of the timeline: the
// newest, index.html; the others timeline-N.html, 1 the oldest.
func timelinePage(n, count int) string {
	if n == count {
		return "index.html"
	}
	return fmt.Sprintf("timeline-%d.html", n)
}

// removeOldPages removes the pages of the timeline a copy made before
// wrote into dir that this one does not (it had more messages, or a
// smaller page): each Export's own, never a person's file.
func removeOldPages(dir string, writes []string) error {
	names, err := filepath.Glob(filepath.Join(dir, "timeline-*.html"))
	if err != nil {
		return err
	}
	for _, path := range names {
		if slices.Contains(writes, filepath.Base(path)) {
			continue
		}
		if kind, err := exportedKind(dir, filepath.Base(path)); err != nil || kind != fullCopy {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
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
