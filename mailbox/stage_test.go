package mailbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	out1 = "20261121-101501.000001Z-bob-0000a1"
	out2 = "20261121-101501.000002Z-bob-0000a2"
)

// claimed delivers a message to d and claims it: it is in cur/, being
// handled.
func claimed(t *testing.T, d Dir, s *Syncer, id string) {
	t.Helper()
	if ok, err := d.Deliver(id, []byte("msg "+id), s); err != nil || !ok {
		t.Fatalf("Deliver(%s) = %v, %v", id, ok, err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := d.Claim(id); err != nil {
		t.Fatal(err)
	}
}

// syncLog records, through the Syncer's test hook, the paths synced,
// relative to the mailbox, in order.
type syncLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *syncLog) watch(t *testing.T, d Dir, s *Syncer) {
	s.onSync = func(path string) {
		rel, err := filepath.Rel(string(d), path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = path
		}
		l.mu.Lock()
		l.paths = append(l.paths, filepath.ToSlash(rel))
		l.mu.Unlock()
	}
	t.Cleanup(func() { s.onSync = nil })
}

func (l *syncLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.paths
	l.paths = nil
	return p
}

// TestStage: what a program wrote itself is taken, the answers added,
// committed and published into the outbox in name order, and the message
// answered finished; nothing is left in tmp/.
func TestStage(t *testing.T) {
	d, s := newDir(t)
	claimed(t, d, s, id1)
	st := d.Stage(id1, s)
	if err := st.Open(); err != nil {
		t.Fatalf("Open() = %v", err)
	}
	writeTestFile(t, filepath.Join(st.Path(), "left over"), "from an earlier attempt")
	if err := st.Open(); err != nil {
		t.Fatalf("second Open() = %v", err)
	}
	if got := names(t, d, Tmp+"/"+id1+".out"); len(got) != 0 {
		t.Errorf("after Open, the stage holds %q, want it empty", got)
	}
	// A program writes into its PARLEY_OUTBOX.
	writeTestFile(t, filepath.Join(st.Path(), "b.md"), "second file")
	writeTestFile(t, filepath.Join(st.Path(), "a.md"), "first file")
	writeTestFile(t, filepath.Join(st.Path(), ".a.md.swp"), "vim's")
	taken, err := st.Take(1 << 20)
	if err != nil {
		t.Fatalf("Take() = %v", err)
	}
	if diff := cmp.Diff([]string{".a.md.swp: !", "a.md: first file", "b.md: second file"}, strs(taken)); diff != "" {
		t.Errorf("Take() mismatch (-want +got):\n%s", diff)
	}
	// The scratch file is not sent: refused, with its reason.
	refusedName, err := st.Refuse(".a.md.swp", "a scratch name\nmore")
	if err != nil || !strings.HasSuffix(refusedName, "-.a.md.swp") {
		t.Fatalf("Refuse() = %q, %v", refusedName, err)
	}
	for _, f := range []struct{ name, data string }{{FileName(out2), "two"}, {FileName(out1), "one"}} {
		if err := st.Add(f.name, []byte(f.data)); err != nil {
			t.Fatalf("Add(%s) = %v", f.name, err)
		}
	}
	if st.Committed() {
		t.Errorf("Committed() before Commit = true")
	}
	if err := st.Commit(); err != nil {
		t.Fatalf("Commit() = %v", err)
	}
	if !st.Committed() {
		t.Errorf("Committed() after Commit = false")
	}
	want := map[string][]string{Tmp: {id1 + ".out.ready"}, Cur: {FileName(id1)}}
	if diff := cmp.Diff(want, tree(t, d)); diff != "" {
		t.Errorf("after Commit (-want +got):\n%s", diff)
	}
	if got, err := st.Names(); err != nil || !slices.Equal(got, []string{FileName(out1), FileName(out2)}) {
		t.Errorf("Names() = %q, %v, want the two answers", got, err)
	}
	if got, err := st.Refusals(); err != nil || len(got) != 1 || got[0] != (Refusal{Name: refusedName, Reason: "a scratch name"}) {
		t.Errorf("Refusals() = %+v, %v, want the scratch file", got, err)
	}
	n, err := st.Publish()
	if err != nil || n != 2 {
		t.Fatalf("Publish() = %d, %v, want 2, nil", n, err)
	}
	// The ready directory, empty, is kept for the next stage.
	want = map[string][]string{Outbox: {FileName(out1), FileName(out2)}, Rejected: {refusedName, refusedName + ReasonSuffix}, Done: {FileName(id1)}, Tmp: {"spare.out"}}
	if diff := cmp.Diff(want, tree(t, d)); diff != "" {
		t.Errorf("after Publish (-want +got):\n%s", diff)
	}
	next := d.Stage(id2, s)
	if err := next.Open(); err != nil {
		t.Fatal(err)
	}
	want[Tmp] = []string{id2 + ".out"}
	if diff := cmp.Diff(want, tree(t, d)); diff != "" {
		t.Errorf("after the next Open (-want +got):\n%s", diff)
	}
	if err := next.Discard(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, d.Path(Rejected, refusedName)); got != "vim's" {
		t.Errorf("rejected %s = %q, want the program's file unchanged", refusedName, got)
	}
	if got := readFile(t, d.Path(Outbox, FileName(out1))); got != "one" {
		t.Errorf("published %s = %q, want %q", out1, got, "one")
	}
}

func strs(outs []Output) []string {
	out := make([]string, len(outs))
	for i, o := range outs {
		out[i] = o.Name + ": " + string(o.Data)
		if o.Err != nil {
			out[i] = o.Name + ": !"
		}
	}
	return out
}

// TestStageTakeTooLarge: a file over the limit is returned with a
// *TooLargeError and left in the stage; the others are taken.
func TestStageTakeTooLarge(t *testing.T) {
	d, s := newDir(t)
	st := d.Stage(id1, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(st.Path(), "big.md"), "0123456789")
	writeTestFile(t, filepath.Join(st.Path(), "small.md"), "01")
	taken, err := st.Take(5)
	if err != nil || len(taken) != 2 {
		t.Fatalf("Take(5) = %+v, %v, want two outputs", taken, err)
	}
	var tl *TooLargeError
	if taken[0].Name != "big.md" || !errors.As(taken[0].Err, &tl) {
		t.Errorf("Take(5)[0] = %+v, want big.md with a *TooLargeError", taken[0])
	}
	if taken[1].Err != nil || string(taken[1].Data) != "01" {
		t.Errorf("Take(5)[1] = %+v, want small.md taken", taken[1])
	}
	if got := names(t, d, Tmp+"/"+id1+".out"); !slices.Equal(got, []string{"big.md"}) {
		t.Errorf("the stage holds %q, want big.md left there", got)
	}
}

// TestStagePublishRefusalAgain: a runner stopped between moving a refused
// file and its reason leaves the reason alone in the ready stage; it goes
// to rejected/ too, never to the outbox.
func TestStagePublishRefusalAgain(t *testing.T) {
	d, s := newDir(t)
	claimed(t, d, s, id1)
	st := d.Stage(id1, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	name, err := st.AddRefused(FileName(out1), time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC), []byte("twice"), "duplicate")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	ready := d.Path(Tmp, id1+".out.ready")
	if err := os.Rename(filepath.Join(ready, name), d.Path(Rejected, name)); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Publish(); err != nil || n != 0 {
		t.Fatalf("Publish() = %d, %v, want 0, nil", n, err)
	}
	want := map[string][]string{Rejected: {name, name + ReasonSuffix}, Done: {FileName(id1)}, Tmp: {"spare.out"}}
	if diff := cmp.Diff(want, tree(t, d)); diff != "" {
		t.Errorf("after Publish (-want +got):\n%s", diff)
	}
}

// TestStagePublishNeverReplaces: publishing moves nothing over a file
// already there — a person's message in the outbox under the name of an
// answer, a file in rejected/ under a refused one's: the answer goes
// beside it under a free name, a refused file with its reason.
func TestStagePublishNeverReplaces(t *testing.T) {
	d, s := newDir(t)
	claimed(t, d, s, id1)
	st := d.Stage(id1, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	if err := st.Add(FileName(out1), []byte("answer")); err != nil {
		t.Fatal(err)
	}
	refused, err := st.AddRefused("x.md", time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC), []byte("refused"), "why")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string]string{d.Path(Outbox, FileName(out1)): "a person's", d.Path(Rejected, refused): "older"} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := st.Publish(); err != nil || n != 1 {
		t.Fatalf("Publish() = %d, %v, want 1, nil", n, err)
	}
	moved := strings.TrimSuffix(refused, ".md") + "-2.md"
	want := map[string]string{
		d.Path(Outbox, FileName(out1)):       "a person's",
		d.Path(Outbox, out1+"-2.md"):         "answer",
		d.Path(Rejected, refused):            "older",
		d.Path(Rejected, moved):              "refused",
		d.Path(Rejected, moved+ReasonSuffix): "why",
	}
	for path, data := range want {
		got, err := os.ReadFile(path)
		if err != nil || !strings.HasPrefix(string(got), data) {
			t.Errorf("%s holds %q, %v; want %q", path, got, err, data)
		}
	}
}

// TestStageMisuse: a stage is written only before Commit, published only
// after, and discarded only before.
func TestStageMisuse(t *testing.T) {
	d, s := newDir(t)
	claimed(t, d, s, id1)
	st := d.Stage(id1, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", ".", "..", "../outbox/x.md", "sub/x.md"} {
		if err := st.Add(name, []byte("x")); err == nil {
			t.Errorf("Add(%q) = nil, want an error", name)
		}
	}
	if _, err := st.Publish(); !errors.Is(err, errNotCommitted) {
		t.Errorf("Publish() before Commit = %v, want errNotCommitted", err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := st.Add(FileName(out1), []byte("late")); !errors.Is(err, errCommitted) {
		t.Errorf("Add() after Commit = %v, want errCommitted", err)
	}
	if err := st.Discard(); !errors.Is(err, errCommitted) {
		t.Errorf("Discard() after Commit = %v, want errCommitted", err)
	}
	if err := st.Open(); !errors.Is(err, errCommitted) {
		t.Errorf("Open() after Commit = %v, want errCommitted", err)
	}
	if err := st.Commit(); !errors.Is(err, errCommitted) {
		t.Errorf("second Commit() = %v, want errCommitted", err)
	}
}

// TestStageRecovery: what a runner stopped at any point left. A committed
// stage is published exactly once, however far its publishing had got;
// an open one is discarded and its message stays claimed, to be handled
// again.
func TestStageRecovery(t *testing.T) {
	tests := []struct {
		name string
		// crash leaves the mailbox as a runner stopped at some point
		// left it, for a message id1 answered with out1 and out2.
		crash func(t *testing.T, d Dir, s *Syncer)
		want  map[string][]string // after recovery
	}{{
		name: "while the answers were written",
		crash: func(t *testing.T, d Dir, s *Syncer) {
			st := stageAnswers(t, d, s)
			writeTestFile(t, filepath.Join(st.Path(), "program.md"), "half")
		},
		want: map[string][]string{Cur: {FileName(id1)}},
	}, {
		name: "right after the commit",
		crash: func(t *testing.T, d Dir, s *Syncer) {
			commitAnswers(t, d, s)
		},
		want: map[string][]string{Outbox: {FileName(out1), FileName(out2)}, Done: {FileName(id1)}},
	}, {
		name: "after one answer was moved to the outbox",
		crash: func(t *testing.T, d Dir, s *Syncer) {
			commitAnswers(t, d, s)
			ready := d.Path(Tmp, id1+".out.ready")
			if err := os.Rename(filepath.Join(ready, FileName(out1)), d.Path(Outbox, FileName(out1))); err != nil {
				t.Fatal(err)
			}
		},
		want: map[string][]string{Outbox: {FileName(out1), FileName(out2)}, Done: {FileName(id1)}},
	}, {
		name: "after the first answer was routed",
		crash: func(t *testing.T, d Dir, s *Syncer) {
			commitAnswers(t, d, s)
			ready := d.Path(Tmp, id1+".out.ready")
			if err := os.Rename(filepath.Join(ready, FileName(out1)), d.Path(Sent, FileName(out1))); err != nil {
				t.Fatal(err)
			}
		},
		want: map[string][]string{Outbox: {FileName(out2)}, Sent: {FileName(out1)}, Done: {FileName(id1)}},
	}, {
		name: "after the message was finished",
		crash: func(t *testing.T, d Dir, s *Syncer) {
			commitAnswers(t, d, s)
			ready := d.Path(Tmp, id1+".out.ready")
			for _, id := range []string{out1, out2} {
				if err := os.Rename(filepath.Join(ready, FileName(id)), d.Path(Outbox, FileName(id))); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Finish(id1); err != nil {
				t.Fatal(err)
			}
		},
		want: map[string][]string{Outbox: {FileName(out1), FileName(out2)}, Done: {FileName(id1)}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, s := newDir(t)
			claimed(t, d, s, id1)
			tt.crash(t, d, s)
			// Not stages: a directory not named after an id, a file.
			if err := os.Mkdir(d.Path(Tmp, "notes.out.ready"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeTestFile(t, d.Path(Tmp, id2+".out"), "a file")
			recoverStages(t, d, s)
			if err := d.DropSpare(); err != nil {
				t.Fatal(err) // what a worker does as it stops
			}
			tt.want[Tmp] = []string{id2 + ".out", "notes.out.ready"}
			if diff := cmp.Diff(tt.want, tree(t, d)); diff != "" {
				t.Errorf("after recovery (-want +got):\n%s", diff)
			}
			// A second runner stopped during recovery, or after it,
			// recovers again: nothing changes.
			recoverStages(t, d, s)
			if err := d.DropSpare(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, tree(t, d)); diff != "" {
				t.Errorf("after a second recovery (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStageSpare: a stage opens in the empty directory a published one
// left; a spare that holds something is left alone (and not taken into
// the stage), and DropSpare removes only an empty one.
func TestStageSpare(t *testing.T) {
	d, s := newDir(t)
	spare := d.Path(Tmp, "spare.out")
	if err := os.Mkdir(spare, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(spare, "note.md"), "mine")
	st := d.Stage(id1, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadDir(st.Path()); len(got) != 0 {
		t.Errorf("the stage holds %d files, want none", len(got))
	}
	if err := d.DropSpare(); err == nil {
		t.Errorf("DropSpare() removed a spare that holds a file")
	}
	if got := readFile(t, filepath.Join(spare, "note.md")); got != "mine" {
		t.Errorf("the spare's file = %q", got)
	}
	if err := os.Remove(filepath.Join(spare, "note.md")); err != nil {
		t.Fatal(err)
	}
	if err := d.DropSpare(); err != nil {
		t.Errorf("DropSpare() = %v", err)
	}
	if err := d.DropSpare(); err != nil {
		t.Errorf("DropSpare() with none = %v", err)
	}
	if _, err := os.Lstat(spare); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the spare is still there: %v", err)
	}

	// A link to elsewhere in its place (a program's doing) is never taken
	// for the stage: its answers would be read out of, and published
	// from, a directory anywhere.
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, spare); err != nil {
		t.Fatal(err)
	}
	st = d.Stage(id2, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(st.Path()); err != nil || !fi.IsDir() {
		t.Errorf("the stage is %v, %v; want a directory of its own", fi, err)
	}
	if fi, err := os.Lstat(spare); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link = %v, %v; want it left where it was", fi, err)
	}
}

// TestStagesOrder: Stages lists committed and open stages together, in
// the order their messages were sent.
func TestStagesOrder(t *testing.T) {
	d, s := newDir(t)
	for _, id := range []string{id3, id1, id2} {
		claimed(t, d, s, id)
		st := d.Stage(id, s)
		if err := st.Open(); err != nil {
			t.Fatal(err)
		}
		if id != id2 {
			if err := st.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	stages, err := d.Stages(s)
	if err != nil {
		t.Fatalf("Stages() = %v", err)
	}
	type stage struct {
		ID        string
		Committed bool
	}
	var got []stage
	for _, st := range stages {
		got = append(got, stage{st.ID(), st.Committed()})
	}
	want := []stage{{id1, true}, {id2, false}, {id3, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stages() mismatch (-want +got):\n%s", diff)
	}
}

// stageAnswers opens the stage of id1 and adds two answers.
func stageAnswers(t *testing.T, d Dir, s *Syncer) *Stage {
	t.Helper()
	st := d.Stage(id1, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{out1, out2} {
		if err := st.Add(FileName(id), []byte("answer "+id)); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// commitAnswers stages two answers to id1 and commits them.
func commitAnswers(t *testing.T, d Dir, s *Syncer) {
	t.Helper()
	if err := stageAnswers(t, d, s).Commit(); err != nil {
		t.Fatal(err)
	}
}

// recoverStages does what a runner starting does with the stages a
// stopped one left.
func recoverStages(t *testing.T, d Dir, s *Syncer) {
	t.Helper()
	stages, err := d.Stages(s)
	if err != nil {
		t.Fatalf("Stages() = %v", err)
	}
	for _, st := range stages {
		if !st.Committed() {
			if err := st.Discard(); err != nil {
				t.Fatalf("Discard(%s) = %v", st.ID(), err)
			}
			continue
		}
		if _, err := st.Publish(); err != nil {
			t.Fatalf("Publish(%s) = %v", st.ID(), err)
		}
	}
}

// TestStagePerFileSync: where there is no syncfs, every file of a stage
// (the answers added, and the files a program wrote itself) is fsynced
// before the stage directory, the stage directory before it is renamed,
// tmp/ after, and the outbox once the answers are in it; Sync is never
// relied on.
func TestStagePerFileSync(t *testing.T) {
	d, s := newDir(t)
	claimed(t, d, s, id1)
	s.perFile = true
	var log syncLog
	log.watch(t, d, s)

	st := d.Stage(id1, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(st.Path(), "program.md"), "taken and added again")
	writeTestFile(t, filepath.Join(st.Path(), "#draft#"), "a scratch file, published as it is")
	if err := os.Symlink("/etc/passwd", filepath.Join(st.Path(), "link.md")); err != nil {
		t.Fatal(err)
	}
	taken, err := st.Take(1 << 20)
	if err != nil || len(taken) != 3 || taken[2].Err != nil {
		t.Fatalf("Take() = %+v, %v", taken, err)
	}
	at := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	for _, n := range []string{"#draft#", "link.md"} {
		if err := os.Chtimes(filepath.Join(st.Path(), n), at, at); err != nil && n != "link.md" {
			t.Fatal(err)
		}
		if _, err := st.Refuse(n, "refused"); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []struct{ name, data string }{{FileName(out1), string(taken[2].Data)}, {FileName(out2), "two"}} {
		if err := st.Add(f.name, []byte(f.data)); err != nil {
			t.Fatal(err)
		}
	}
	stage := Tmp + "/" + id1 + ".out"
	draft := "20261124-060000.000000Z-#draft#"
	added := log.take()
	linkReason := ""
	for _, a := range added {
		if strings.HasSuffix(a, "-link.md.reason") {
			linkReason = a
		}
	}
	// The link is replaced by a file naming its target (written, so
	// synced, by Add), never kept as a link.
	linkKept := strings.TrimSuffix(linkReason, ReasonSuffix)
	if diff := cmp.Diff([]string{stage + "/" + draft + ".reason", linkKept, linkReason, stage + "/" + FileName(out1), stage + "/" + FileName(out2)}, added); diff != "" || linkReason == "" {
		t.Errorf("synced by Add (-want +got):\n%s", diff)
	}

	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	want := []string{stage + "/" + draft, stage, Tmp}
	if diff := cmp.Diff(want, log.take()); diff != "" {
		t.Errorf("synced by Commit, in order (-want +got):\n%s", diff)
	}
	// Every regular file of the committed stage was synced, under its
	// name in the open stage.
	synced := append(added, want...)
	for _, n := range names(t, d, Tmp+"/"+id1+".out.ready") {
		info, err := os.Lstat(filepath.Join(d.Path(Tmp, id1+".out.ready"), n))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().IsRegular() && !slices.Contains(synced, stage+"/"+n) {
			t.Errorf("%s was committed and never synced", n)
		}
	}

	if _, err := st.Publish(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{Outbox, Rejected}, log.take()); diff != "" {
		t.Errorf("synced by Publish (-want +got):\n%s", diff)
	}
}

// TestStageSyncfs: where there is syncfs, nothing is synced file by file:
// Commit syncs the filesystem, once.
func TestStageSyncfs(t *testing.T) {
	if !haveSyncfs {
		t.Skip("no syncfs here")
	}
	d, s := newDir(t)
	claimed(t, d, s, id1)
	var log syncLog
	log.watch(t, d, s)
	st := stageAnswers(t, d, s)
	writeTestFile(t, filepath.Join(st.Path(), "#draft#"), "scratch")
	if got := log.take(); len(got) != 0 {
		t.Errorf("synced while staging: %q, want nothing", got)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{s.root.Name()}, log.take()); diff != "" {
		t.Errorf("synced by Commit (-want +got):\n%s", diff)
	}
}

// TestStageRefuseLink: a symbolic link a program left in its outbox is
// never kept as a link in rejected/, where a person mending it would edit
// the file it points to: a file naming its target is kept in its place,
// and the reason says so.
func TestStageRefuseLink(t *testing.T) {
	d, s := newDir(t)
	claimed(t, d, s, id1)
	st := d.Stage(id1, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "passwd")
	writeTestFile(t, secret, "root:x:0:0\n")
	if err := os.Symlink(secret, filepath.Join(st.Path(), "link.md")); err != nil {
		t.Fatal(err)
	}
	taken, err := st.Take(1 << 20)
	if err != nil || len(taken) != 1 || taken[0].Err == nil {
		t.Fatalf("Take() = %+v, %v; want the link, refused", taken, err)
	}
	name, err := st.Refuse("link.md", "link.md: a symbolic link")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Publish(); err != nil {
		t.Fatal(err)
	}
	kept := d.Path(Rejected, name)
	fi, err := os.Lstat(kept)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("rejected/%s: %v, %v; want a regular file", name, fi, err)
	}
	if data, _ := os.ReadFile(kept); string(data) != "a symbolic link to "+secret+"\n" {
		t.Errorf("rejected/%s holds %q, want its target named", name, data)
	}
	if reason, _ := os.ReadFile(kept + ReasonSuffix); !strings.Contains(string(reason), "It was a symbolic link to "+secret) {
		t.Errorf("the reason does not say it was a link: %q", reason)
	}
	if data, _ := os.ReadFile(secret); string(data) != "root:x:0:0\n" {
		t.Errorf("the file linked to now holds %q", data)
	}
}

// TestStageCommitSyncFails: a Commit whose sync fails after the rename
// (syncfs finding no room) leaves the stage Ready but not committed; a
// second Commit redoes only the sync, and the stage is published. It
// tried the rename again, which found no open stage to move, so the
// answers could never be committed by the runner that staged them.
func TestStageCommitSyncFails(t *testing.T) {
	for _, perFile := range []bool{false, true} {
		t.Run(map[bool]string{false: "syncfs", true: "per file"}[perFile], func(t *testing.T) {
			d, s := newDir(t)
			claimed(t, d, s, id1)
			s.perFile = perFile || !haveSyncfs
			full := &fs.PathError{Op: "syncfs", Path: string(d), Err: syscall.ENOSPC}
			s.CommitFault = func() error { return full }
			st := stageAnswers(t, d, s)
			if err := st.Commit(); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Commit() with a failing sync = %v, want ENOSPC", err)
			}
			if !st.Ready() || st.Committed() {
				t.Fatalf("after a failed sync: Ready() = %v, Committed() = %v, want true, false", st.Ready(), st.Committed())
			}
			if err := st.Open(); err == nil {
				t.Errorf("Open() of a stage moved to its ready directory = nil, want an error")
			}
			if err := st.Commit(); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("second Commit() with a failing sync = %v, want ENOSPC", err)
			}
			s.CommitFault = nil
			var log syncLog
			log.watch(t, d, s)
			if err := st.Commit(); err != nil {
				t.Fatalf("Commit() once the sync goes through = %v, want nil", err)
			}
			want := []string{Tmp}
			if !s.perFile {
				want = []string{s.root.Name()}
			}
			if diff := cmp.Diff(want, log.take()); diff != "" {
				t.Errorf("synced by the second Commit (-want +got):\n%s", diff)
			}
			if n, err := st.Publish(); n != 2 || err != nil {
				t.Fatalf("Publish() = %d, %v, want 2, nil", n, err)
			}
			if diff := cmp.Diff([]string{FileName(out1), FileName(out2)}, names(t, d, Outbox)); diff != "" {
				t.Errorf("outbox (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStageRemovedWhileRunning: a program that runs `git clean -fdX`
// removes tmp/, its stage with it. Take failed with "open .../tmp/ID.out:
// no such file or directory", and the message was handled again (the
// program run again) and given up. Take now makes the stage again and
// says it was removed (ErrStageRemoved); the answers added after are
// committed and published.
func TestStageRemovedWhileRunning(t *testing.T) {
	d, s := newDir(t)
	claimed(t, d, s, id1)
	st := d.Stage(id1, s)
	if err := st.Open(); err != nil {
		t.Fatalf("Open() = %v", err)
	}
	writeTestFile(t, filepath.Join(st.Path(), "lost.md"), "written before the clean")
	if err := os.RemoveAll(d.Path(Tmp, "")); err != nil {
		t.Fatal(err)
	}
	taken, err := st.Take(1 << 20)
	if !errors.Is(err, ErrStageRemoved) || len(taken) != 0 {
		t.Fatalf("Take() = %q, %v, want nothing, ErrStageRemoved", strs(taken), err)
	}
	if err := st.Add(FileName(out1), []byte("printed")); err != nil {
		t.Fatalf("Add() after the stage was removed = %v", err)
	}
	if err := st.Commit(); err != nil {
		t.Fatalf("Commit() = %v", err)
	}
	if n, err := st.Publish(); err != nil || n != 1 {
		t.Fatalf("Publish() = %d, %v, want 1, nil", n, err)
	}
	want := map[string][]string{Outbox: {FileName(out1)}, Done: {FileName(id1)}, Tmp: {"spare.out"}}
	if diff := cmp.Diff(want, tree(t, d)); diff != "" {
		t.Errorf("after Publish (-want +got):\n%s", diff)
	}
}
