package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// `parley bench --serve`: what a person waits for at parley serve's
// pages on a session of 10,000 messages, and what the server holds in
// memory.

type serveBenchOptions struct {
	Dir      string
	Messages int // journal entries (and messages) in the workspace
	Runs     int
	Browser  string // the Chromium to drive; "" finds /usr/bin/chromium, or measures without a browser
	JSON     bool
}

// Targets of the web view.
const (
	servePaintTarget = 1000.0 // ms: the timeline's first paint, p50
	serveLiveTarget  = 500.0  // ms: a delivered message to an open page, p50
	serveRSSTarget   = 64.0   // MiB: the server's peak resident memory
)

// serveBenchReport is what `parley bench --serve` measured, in rounds
// that interleave a page load and a message sent.
type serveBenchReport struct {
	Messages     int     `json:"messages"`
	JournalLines int     `json:"journal_lines"`
	Runs         int     `json:"runs"`
	Browser      string  `json:"browser,omitempty"` // the browser that painted the pages; empty when none was found
	BuildSeconds float64 `json:"build_s"`
	// Figures, each in ms: the timeline's HTML (the server's answer, read
	// whole), its first contentful paint in the browser, a message from
	// its outbox to the event on an open event stream, and to its row on
	// the open page in the browser.
	Figures []readingFigure `json:"figures"`
	// PeakRSS is the server's peak resident memory (VmHWM) after every
	// round, in MiB; 0 where the system does not say.
	PeakRSS float64        `json:"peak_rss_mib"`
	Targets []targetResult `json:"targets"`
}

func runServeBench(ctx context.Context, e *env, opts serveBenchOptions) error {
	base, say, cleanup, err := startBench(e, opts.Dir, opts.JSON)
	if err != nil {
		return err
	}
	defer cleanup()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	rep := serveBenchReport{Messages: opts.Messages, Runs: opts.Runs}
	say("building a workspace of %d messages, once ...", opts.Messages)
	start := time.Now()
	var rrep readingBenchReport
	root, err := buildReadingWorkspace(filepath.Join(base, "session"), opts.Messages, &rrep)
	if err != nil {
		return err
	}
	rep.JournalLines = rrep.JournalLines
	rep.BuildSeconds = time.Since(start).Seconds()
	ws, err := workspace.Open(root)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// parley serve and parley run, each a process of its own, as a person
	// runs them.
	const token = "bench-token-0123456789"
	serve := exec.CommandContext(ctx, self, "-C", root, "serve", "--addr", "127.0.0.1:0", "--token", token)
	out, err := serve.StdoutPipe()
	if err != nil {
		return err
	}
	serve.Stderr = io.Discard
	if err := serve.Start(); err != nil {
		return err
	}
	defer serve.Wait()
	defer serve.Process.Kill()
	first, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("parley serve said nothing: %w", err)
	}
	go io.Copy(io.Discard, out)
	i := strings.Index(first, "http://")
	j := strings.Index(first, "?token=")
	if i < 0 || j < i {
		return fmt.Errorf("parley serve said %q, not its address", first)
	}
	url := first[i:j]
	run := exec.CommandContext(ctx, self, "-C", root, "run")
	run.Stdout, run.Stderr = io.Discard, io.Discard
	if err := run.Start(); err != nil {
		return err
	}
	defer run.Wait()
	defer run.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); ws.RunnerPID() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("parley run did not start")
		}
	}

	// Every page needs the token: this process holds it in a cookie, as
	// a browser does once it opened the address printed.
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	resp, err := client.Get(url + "?token=" + token)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s?token=...: %s", url, resp.Status)
	}
	// An open page's event stream, read by this process.
	events, err := openEvents(ctx, client, url)
	if err != nil {
		return err
	}
	// And the page itself, in a browser when there is one.
	var browser context.Context
	if path := findChromium(opts.Browser); path != "" {
		b, stop, err := startChromium(ctx, path, filepath.Join(base, "chromium"))
		if err != nil {
			return err
		}
		defer stop()
		browser, rep.Browser = b, path
		if err := chromedp.Do(b, chromedp.Navigate(url+"?token="+token)); err != nil {
			return err
		}
	} else {
		say("no chromium found: the first paint and the page's own figures are not measured")
	}

	names := []string{"the timeline's HTML, read whole", "a message sent -> its event on an open stream"}
	if browser != nil {
		names = append(names, "the timeline's first contentful paint", "a message sent -> its row on the open page")
	}
	times := make([][]float64, len(names))
	say("%d interleaved rounds (and one not counted, to warm the cache) ...", opts.Runs)
	box := ws.Mailbox("gm")
	for round := -1; round < opts.Runs; round++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		keep := func(k int, v float64) {
			if round >= 0 {
				times[k] = append(times[k], v)
			}
		}
		// The page, loaded whole by a client that does not render.
		t := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		keep(0, float64(time.Since(t))/float64(time.Millisecond))
		if browser != nil {
			if err := chromedp.Do(browser, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#conn.on"))); err != nil {
				return err
			}
			// The paint is reported a moment after it happens.
			pctx, stop := context.WithTimeout(browser, 10*time.Second)
			paint, err := chromedp.Run(pctx, chromedp.Evaluate[float64](
				`new Promise(done => { const look = () => { const p = performance.getEntriesByName("first-contentful-paint")[0]; if (p) done(p.startTime); else setTimeout(look, 10); }; look(); })`,
				chromedp.EvalAwaitPromise))
			stop()
			if err != nil {
				return err
			}
			if paint < 0 {
				return errors.New("the browser reported no first contentful paint")
			}
			keep(2, paint)
		}
		// A message, from its outbox to the open stream and the page.
		m := mailbox.New(nil)
		m.Set("to", "aria")
		m.SetBody([]byte(fmt.Sprintf("Round %d: are you there?\n", round)))
		t = time.Now()
		id, _, err := box.Post(m)
		if err != nil {
			return err
		}
		if err := events.waitFor(id, 10*time.Second); err != nil {
			return err
		}
		keep(1, float64(time.Since(t))/float64(time.Millisecond))
		if browser != nil {
			wctx, stop := context.WithTimeout(browser, 10*time.Second)
			err := chromedp.Do(wctx, chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`li.row.o-delivered[data-id=%q]`, id)), chromedp.RetryInterval(2*time.Millisecond)))
			stop()
			if err != nil {
				return fmt.Errorf("the page did not show %s: %w", id, err)
			}
			keep(3, float64(time.Since(t))/float64(time.Millisecond))
		}
	}
	rep.PeakRSS = float64(peakRSS(serve.Process.Pid)) / (1 << 20)
	for k, name := range names {
		rep.Figures = append(rep.Figures, readingFigure{Name: name, P10: percentile(times[k], 0.1), P50: percentile(times[k], 0.5), P90: percentile(times[k], 0.9)})
	}
	paint := rep.Figures[0]
	paintName := "timeline of " + fmt.Sprint(opts.Messages) + " messages, HTML read whole (no browser), p50"
	if browser != nil {
		paint = rep.Figures[2]
		paintName = "timeline of " + fmt.Sprint(opts.Messages) + " messages, first paint, p50"
	}
	rep.Targets = append(rep.Targets, targetResult{Name: paintName, Got: ms(paint.P50), Want: fmt.Sprintf("< %.0f ms", servePaintTarget), Met: paint.P50 < servePaintTarget})
	live := rep.Figures[1]
	liveName := "a delivered message to an open event stream, p50"
	if browser != nil {
		live = rep.Figures[3]
		liveName = "a delivered message to the open page, p50"
	}
	rep.Targets = append(rep.Targets, targetResult{Name: liveName, Got: ms(live.P50), Want: fmt.Sprintf("< %.0f ms", serveLiveTarget), Met: live.P50 < serveLiveTarget})
	if rep.PeakRSS > 0 {
		rep.Targets = append(rep.Targets, targetResult{Name: "parley serve's peak memory (VmHWM)", Got: fmt.Sprintf("%.1f MiB", rep.PeakRSS), Want: fmt.Sprintf("< %.0f MiB", serveRSSTarget), Met: rep.PeakRSS < serveRSSTarget})
	}
	return reportBench(e, opts.JSON, rep, rep.Targets, func(w io.Writer) {
		fmt.Fprintf(w, "parley bench --serve: a journal of %d lines (%d messages), built in %.1f s; %d interleaved rounds", rep.JournalLines, rep.Messages, rep.BuildSeconds, rep.Runs)
		if rep.Browser != "" {
			fmt.Fprintf(w, "; pages painted by %s", rep.Browser)
		}
		fmt.Fprintf(w, "\n\n")
		for _, f := range rep.Figures {
			fmt.Fprintf(w, "%-52s p50 %s (p10 %s, p90 %s)\n", f.Name, ms(f.P50), ms(f.P10), ms(f.P90))
		}
		if rep.PeakRSS > 0 {
			fmt.Fprintf(w, "%-52s %.1f MiB\n", "parley serve's peak memory (VmHWM)", rep.PeakRSS)
		}
		printTargets(w, rep.Targets)
	})
}

// findChromium returns the browser to drive: path when given, else
// Debian's chromium when it is installed; "" when there is none.
func findChromium(path string) string {
	if path != "" {
		return path
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// startChromium starts headless Chromium with a fresh profile in dir.
func startChromium(ctx context.Context, path, dir string) (context.Context, func(), error) {
	actx, cancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 860))
	bctx, cancel2 := chromedp.NewContext(actx)
	stop := func() { cancel2(); cancel() }
	if err := chromedp.Do(bctx); err != nil {
		stop()
		return nil, nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return bctx, stop, nil
}

// eventStream is an open /events stream, read line by line.
type eventStream struct {
	ids chan string
}

// openEvents opens the server's event stream from now on, with client
// (its cookie holds the token), and hands on the id of each message
// delivered, from the rows it sends.
func openEvents(ctx context.Context, client *http.Client, url string) (*eventStream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"events", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%sevents: %s", url, resp.Status)
	}
	s := &eventStream{ids: make(chan string, 1024)}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			// Only a row of a delivery counts: a refusal has an id too.
			if i := strings.Index(line, `data-id="`); i >= 0 && strings.HasPrefix(line, "data: ") && strings.Contains(line, "o-delivered") {
				rest := line[i+len(`data-id="`):]
				if j := strings.IndexByte(rest, '"'); j >= 0 {
					select {
					case s.ids <- rest[:j]:
					default:
					}
				}
			}
		}
		close(s.ids)
	}()
	return s, nil
}

// waitFor waits for a row of the message id.
func (s *eventStream) waitFor(id string, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		select {
		case got, ok := <-s.ids:
			if !ok {
				return errors.New("the event stream ended")
			}
			if got == id {
				return nil
			}
		case <-deadline:
			return fmt.Errorf("no event for %s within %v", id, timeout)
		}
	}
}
