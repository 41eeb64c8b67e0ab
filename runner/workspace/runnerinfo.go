package workspace

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// RunnerInfo is what a running runner says about the configuration it
// routes with (.parley/runner.json): parley.yaml can be edited while it
// runs, and it reloads it; a file it cannot load leaves the previous
// configuration running, and this says why.
type RunnerInfo struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Loaded is when the configuration it routes with was read, and
	// Agents the agents it has.
	Loaded time.Time `json:"loaded"`
	Agents []string  `json:"agents"`
	// Looked is when it last looked at every outbox (its rescan, every
	// router.rescan_interval): much older, it holds the workspace but
	// does nothing (stopped with SIGSTOP, its machine asleep, stuck).
	Looked time.Time `json:"looked,omitzero"`
	// ConfigError says why parley.yaml (or a skill it names), as it was
	// at ConfigErrorAt, was not loaded; empty when the files on disk are
	// the ones loaded.
	ConfigError   string    `json:"config_error,omitempty"`
	ConfigErrorAt time.Time `json:"config_error_at,omitzero"`
	// Files identifies the files it read last (ConfigStamp.String): when
	// they changed since, it has not read them yet.
	Files string `json:"files"`
	// Unwatched are the agents whose outbox the runner gets no file
	// events for (the kernel's watches are used up): it lists them every
	// second instead.
	Unwatched []string `json:"unwatched,omitempty"`
	// Mailboxes says, by agent, why a mailbox cannot be used.
	Mailboxes map[string]string `json:"mailbox_problems,omitempty"`
	// Failing are the outbox files whose routing keeps failing, by
	// sender and name: the runner tries each again, and its sender's
	// later files wait behind it.
	Failing []FailingDelivery `json:"failing_deliveries,omitempty"`

	// JournalLost counts the lines of the journal that the file at its
	// path lacks since git (a stash, a checkout) or a person replaced it,
	// at JournalLostAt: parley log and parley usage leave them out until
	// a file that holds them is put back. 0 when it lacks none.
	JournalLost   int       `json:"journal_lost,omitempty"`
	JournalLostAt time.Time `json:"journal_lost_at,omitzero"`
}

// JournalLostText says that the journal lacks n lines since it was
// replaced, what that does and what puts them back: the runner's log
// and parley status say it.
func JournalLostText(n int) string {
	lines := "lines"
	if n == 1 {
		lines = "line"
	}
	return fmt.Sprintf("%s was replaced (by git: a stash or a checkout; or by hand) with a file that lacks %d %s the runner had written: parley log and parley usage leave them out, and the runner writes on into the file there now; putting back a file that holds them restores them (git stash pop, or a checkout of it, while the runner has written nothing since; else merge the two files: README, \"The journal follows its file\")",
		filepath.ToSlash(filepath.Join(StateDir, "journal.jsonl")), n, lines)
}

// JournalRemovedText says that the journal was removed or emptied under
// the runner: the runner's log says it, once.
const JournalRemovedText = StateDir + "/journal.jsonl was removed or emptied (by hand, or by a checkout of a commit without it): parley log and parley usage no longer show the lines it held; the runner writes on into a new file (git restore .parley/journal.jsonl, or a copy put back, shows them again)"

// FailingDelivery is an outbox file whose routing failed, and is tried
// again: a full disk, a recipient's inbox made read-only. One sender's
// files go in order, so its later files wait behind it.
type FailingDelivery struct {
	Agent string `json:"agent"` // its sender
	Path  string `json:"path"`  // mailboxes/<agent>/outbox/<name>
	// To is the recipient whose delivery failed, when it was a delivery
	// that failed (not the sync of a batch, or the journal).
	To       string    `json:"to,omitempty"`
	Reason   string    `json:"reason"`   // why the last attempt failed
	Since    time.Time `json:"since"`    // when the first attempt in a row failed
	Attempts int       `json:"attempts"` // failed attempts in a row
	Next     time.Time `json:"next"`     // when it is tried again
	Waiting  int       `json:"waiting"`  // the sender's files waiting behind it
}

// RunnerInfoPath returns the path of the file a running runner keeps its
// RunnerInfo in.
func RunnerInfoPath(root string) string { return filepath.Join(root, StateDir, "runner.json") }

// ReadRunnerInfo returns what the runner routing the workspace at root
// says of its configuration; nil when no runner runs there, or it has
// written nothing yet.
func ReadRunnerInfo(root string) *RunnerInfo {
	w := &Workspace{Root: root}
	pid := w.RunnerPID()
	if pid == 0 {
		return nil
	}
	info, ok := readRunnerInfo(root)
	if !ok || (pid > 0 && info.PID != pid) {
		return nil // left by an earlier runner
	}
	return &info
}

func readRunnerInfo(root string) (RunnerInfo, bool) {
	var info RunnerInfo
	data, err := os.ReadFile(RunnerInfoPath(root))
	if err != nil || json.Unmarshal(data, &info) != nil {
		return info, false
	}
	return info, true
}

// Knows reports whether the runner routes for an agent.
func (i RunnerInfo) Knows(agent string) bool { return slices.Contains(i.Agents, agent) }

// RunnerKeeps is what an error opening the workspace at root adds when
// a runner runs on with the configuration it loaded before: "" when none
// runs.
func RunnerKeeps(root string) string {
	info := ReadRunnerInfo(root)
	if info == nil {
		return ""
	}
	return fmt.Sprintf(" (the running runner, pid %d, keeps routing with the configuration it loaded at %s)", info.PID, info.Loaded.Local().Format("15:04:05"))
}

// ConfigStamp identifies the files a workspace's configuration is read
// from: parley.yaml and the skills in skills/. Two stamps differ when any
// of them was written, added, removed or replaced.
type ConfigStamp struct {
	files string
	// Newest is the latest modification time among them: a file changed
	// less than the settle time ago may still be being written.
	Newest time.Time
}

// Equal reports whether two stamps name the same files, unchanged.
func (s ConfigStamp) Equal(o ConfigStamp) bool { return s.files == o.files }

// SettledAt returns when the files stamped s will have been left alone
// for settle, the time a file changed may still be being written: zero
// when they have been already, and may be read now.
func (s ConfigStamp) SettledAt(now time.Time, settle time.Duration) time.Time {
	if age := now.Sub(s.Newest); age >= 0 && age < settle {
		return s.Newest.Add(settle)
	}
	return time.Time{}
}

// String lists the files with their size, time and inode.
func (s ConfigStamp) String() string { return s.files }

// StampConfig stats the files the configuration of the workspace at root
// is read from. It reads no file: a runner calls it on every change it is
// told of in the workspace's directory or in skills/, and on every rescan.
func StampConfig(root string) ConfigStamp {
	var b strings.Builder
	var st ConfigStamp
	add := func(path string, info fs.FileInfo) {
		fmt.Fprintf(&b, "%s %d %d %s\n", path, info.Size(), info.ModTime().UnixNano(), inodeOf(info))
		if info.ModTime().After(st.Newest) {
			st.Newest = info.ModTime()
		}
	}
	if info, err := os.Stat(filepath.Join(root, ConfigFile)); err == nil {
		add(ConfigFile, info)
	}
	dir := filepath.Join(root, "skills")
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".md") || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if info, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && !info.IsDir() {
				add("skills/"+e.Name(), info)
			}
		}
	}
	st.files = b.String()
	return st
}

// inodeOf names the file behind info: a file renamed over another (as
// editors and git save) is another inode, whatever its size and time.
func inodeOf(info fs.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%v:%v", st.Dev, st.Ino)
	}
	return ""
}

// RunnerGap is what the running runner does not know of a message's
// sender and recipients: parley.yaml was edited since it loaded it.
type RunnerGap struct {
	PID     int
	Unknown []string // agents it has not loaded
	// ConfigError is why it did not load parley.yaml as it is now; empty
	// when it simply has not loaded it yet (it does before it routes).
	ConfigError string
}

func (g *RunnerGap) Error() string {
	who := "agent " + strings.Join(g.Unknown, ", agent ")
	if g.ConfigError != "" {
		return fmt.Sprintf("the running runner (pid %d) does not know %s and would reject this message: it could not load %s: %s", g.PID, who, ConfigFile, g.ConfigError)
	}
	return fmt.Sprintf("the running runner (pid %d) has not loaded %s yet; it reloads %s before it routes this message", g.PID, who, ConfigFile)
}

// RunnerGap returns what the running runner does not know of a verdict's
// sender and recipients; nil when no runner runs or it knows them all.
func (w *Workspace) RunnerGap(v *Verdict) *RunnerGap {
	info := ReadRunnerInfo(w.Root)
	if info == nil {
		return nil
	}
	var unknown []string
	for _, name := range append([]string{v.From}, recipientNames(v)...) {
		if name != "" && !info.Knows(name) && !slices.Contains(unknown, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	gap := &RunnerGap{PID: info.PID, Unknown: unknown}
	if StampConfig(w.Root).String() == info.Files {
		gap.ConfigError = info.ConfigError // else it has not read them yet
	}
	return gap
}

func recipientNames(v *Verdict) []string {
	out := make([]string, len(v.Recipients))
	for i, r := range v.Recipients {
		out[i] = r.Agent
	}
	return out
}
