package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

var updateParity = flag.Bool("update-parity", false, "rewrite testdata/parity/expected.txt from what validate says")

// parityAlreadySent is the id of the message the corpus's workspace has
// in gm's sent/, for the files that reuse it.
const parityAlreadySent = "20261121-101500.000000Z-gm-00000a"

// TestParity proves that the commands agree on what a valid message is and
// where it goes: every file of testdata/parity/corpus/SENDER/ goes through
// `validate`, `send --dry-run --file`, `routes explain`, `compose
// --dry-run` (the file is what the editor saves) and a real `run
// --until-idle`, and each path must give the same verdict: delivered to
// the same agents with the same warnings, or refused with the same field,
// line and reason. The verdicts are also kept in expected.txt, so that a
// change of verdict shows in review (go test -run TestParity
// -update-parity rewrites it).
func TestParity(t *testing.T) {
	t.Parallel()
	root, corpus := parityWorkspace(t)
	files := corpusFiles(t, corpus)
	if len(files) < 60 {
		t.Fatalf("the corpus has %d files, want at least 60", len(files))
	}
	got := make(map[string]map[string]parityVerdict) // file -> path -> verdict
	for _, f := range files {
		got[f.rel] = map[string]parityVerdict{
			"validate": parityJSON(t, root, nil, "validate", "--json", "--from", f.sender, f.path),
			"send":     parityJSON(t, root, nil, "send", "--dry-run", "--json", "--from", f.sender, "--file", f.path),
			"explain":  parityJSON(t, root, nil, "routes", "explain", "--json", "--from", f.sender, f.path),
		}
		if f.regular && !f.blank {
			// An editor saves a regular file: links and pipes are not
			// something compose can be given; and emptying the draft is
			// how a person tells compose not to send it.
			editor := map[string]string{"EDITOR": "cp " + f.path, "VISUAL": ""}
			got[f.rel]["compose"] = parityJSON(t, root, editor, "compose", "--edit", "--dry-run", "--json", "--from", f.sender, "NARRATIVE")
		}
	}
	for path, v := range parityRun(t, root, files) {
		got[path]["run"] = v
	}

	var lines []string
	for _, f := range files {
		want := got[f.rel]["validate"]
		for path, v := range got[f.rel] {
			if d := cmp.Diff(want, v); d != "" {
				t.Errorf("%s: %s and validate disagree (-validate +%s):\n%s", f.rel, path, path, d)
			}
		}
		if len(got[f.rel]) < 4 {
			t.Errorf("%s went through %d paths, want at least 4", f.rel, len(got[f.rel]))
		}
		lines = append(lines, f.rel+": "+want.String())
	}
	golden := testdataPath("parity", "expected.txt")
	text := strings.Join(lines, "\n") + "\n"
	if *updateParity {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), text); d != "" {
		t.Errorf("verdicts differ from %s (-want +got; -update-parity rewrites it):\n%s", golden, d)
	}
}

// parityVerdict is what every path must agree on.
type parityVerdict struct {
	Accepted   bool
	Recipients []string
	Warnings   []string
	Line       int
	Field      string
	Reason     string
}

func (v parityVerdict) String() string {
	if !v.Accepted {
		// A line a file: its further problems after "; and line".
		return fmt.Sprintf("refused: line %d: %s: %s", v.Line, v.Field, strings.ReplaceAll(v.Reason, "\n", "; and line "))
	}
	s := "delivered to " + strings.Join(v.Recipients, ", ")
	for _, w := range v.Warnings {
		s += "; warning: " + w
	}
	return s
}

type corpusFile struct {
	rel, path, sender string
	regular           bool
	blank             bool // empty, or only white space
}

// parityWorkspace makes the corpus's workspace and a copy of the corpus,
// with a symbolic link and a named pipe beside the files.
func parityWorkspace(t *testing.T) (root, corpus string) {
	t.Helper()
	root = t.TempDir()
	data, err := os.ReadFile(testdataPath("parity", "parley.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ws := newWorkspace(t, root, string(data))
	sent := fmt.Sprintf("---\nid: %s\nfrom: gm\nto: aria\n---\nSent before.\n", parityAlreadySent)
	if err := os.WriteFile(ws.Mailbox("gm").Path(mailbox.Sent, mailbox.FileName(parityAlreadySent)), []byte(sent), 0o644); err != nil {
		t.Fatal(err)
	}
	corpus = filepath.Join(t.TempDir(), "corpus")
	if err := os.CopyFS(corpus, os.DirFS(testdataPath("parity", "corpus"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../"+workspace.ConfigFile, filepath.Join(corpus, "gm", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(corpus, "gm", "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, corpus
}

func corpusFiles(t *testing.T, corpus string) []corpusFile {
	t.Helper()
	var files []corpusFile
	err := filepath.WalkDir(corpus, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(corpus, path)
		f := corpusFile{rel: filepath.ToSlash(rel), path: path, sender: filepath.Base(filepath.Dir(path)), regular: d.Type().IsRegular()}
		if f.regular {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			f.blank = len(bytes.TrimSpace(data)) == 0
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return files
}

// parityJSON runs a command that prints a verdict (or a list of one) as
// JSON, in-process, and returns it. Its exit code must say whether it was
// accepted. set is given on top of this process's environment
// variables.
func parityJSON(t *testing.T, root string, set map[string]string, args ...string) parityVerdict {
	t.Helper()
	var out, errOut bytes.Buffer
	vars := os.Environ()
	for k, v := range set {
		vars = append(vars, k+"="+v)
	}
	code := runInProcessWith(context.Background(), &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, vars: vars}, append([]string{"parley", "-C", root}, args...))
	text := bytes.TrimSpace(out.Bytes())
	if bytes.HasPrefix(text, []byte("[")) {
		text = bytes.TrimSuffix(bytes.TrimPrefix(text, []byte("[")), []byte("]"))
	}
	var v struct {
		Accepted   bool `json:"accepted"`
		Recipients []struct {
			Agent string `json:"agent"`
		} `json:"recipients"`
		Warnings []string           `json:"warnings"`
		Refusal  *workspace.Refusal `json:"refusal"`
	}
	if err := json.Unmarshal(text, &v); err != nil {
		t.Fatalf("parley %s: exit %d, output not a verdict: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, err, out.String(), errOut.String())
	}
	if (code == exitOK) != v.Accepted {
		t.Errorf("parley %s: exit %d for a verdict accepted=%v; stderr: %s", strings.Join(args, " "), code, v.Accepted, errOut.String())
	}
	p := parityVerdict{Accepted: v.Accepted, Warnings: v.Warnings}
	for _, r := range v.Recipients {
		p.Recipients = append(p.Recipients, r.Agent)
	}
	if v.Refusal != nil {
		p.Line, p.Field = v.Refusal.Line, v.Refusal.Field
		p.Reason = parityReason(v.Refusal.Error(), v.Refusal.File, p.Line, p.Field)
	}
	return p
}

// parityReason is what a refusal says, as every path must say it: its
// first problem's reason, then each other problem on a line, the file's
// name left out (validate is given a path, the router a name).
func parityReason(text, file string, line int, field string) string {
	lines := strings.Split(text, "\n")
	lines[0] = strings.TrimPrefix(lines[0], (&workspace.Refusal{File: file, Line: line, Field: field}).Error())
	for i := 1; i < len(lines); i++ {
		lines[i] = strings.TrimPrefix(lines[i], file+":")
	}
	return strings.Join(lines, "\n")
}

// parityRun drops every file into its sender's outbox, routes them with
// `parley run --until-idle`, and reads each one's verdict from the
// journal.
func parityRun(t *testing.T, root string, files []corpusFile) map[string]parityVerdict {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		dst := ws.Mailbox(f.sender).Path(mailbox.Outbox, filepath.Base(f.path))
		if err := os.Rename(f.path, dst); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	// Some files are refused: the run says so with its exit code.
	if code := runInProcess(context.Background(), []string{"parley", "-C", root, "run", "--until-idle"}, strings.NewReader(""), &out, &errOut); code != exitOK && code != exitRefused {
		t.Fatalf("parley run --until-idle: exit %d\n%s", code, errOut.String())
	}
	got := make(map[string]parityVerdict)
	err = workspace.ReadJournal(ws.JournalPath(), func(e workspace.Entry) error {
		if e.Outcome != workspace.Delivered && e.Outcome != workspace.Refused {
			return nil // what became of it after routing
		}
		v := parityVerdict{Accepted: e.Outcome == workspace.Delivered, Recipients: e.To, Warnings: e.Warnings}
		if !v.Accepted {
			v.Line, v.Field = e.Line, e.Field
			v.Reason = parityReason(e.Reason, e.File, e.Line, e.Field)
		}
		got[e.From+"/"+e.File] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := got[f.rel]; !ok {
			t.Errorf("%s: no journal line after the run", f.rel)
		}
	}
	return got
}
