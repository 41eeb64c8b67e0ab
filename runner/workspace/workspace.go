// Package workspace owns what a parley workspace is: finding, opening and
// creating one; parley.yaml (agents, roles, characters, skills, routes,
// timeouts, policies) with errors that name the line and the key; the
// layout of its directories; the one Check that says whether a message is
// valid and where it goes; and the read side of the runtime state in
// .parley/ (the journal, what each agent is doing, who holds the lock).
// The runner routes by it; commands that do not route use it alone.
package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/skills"
)

// ConfigFile is the name of a workspace's configuration file.
const ConfigFile = "parley.yaml"

// Directories of a workspace, relative to its root.
const (
	MailboxesDir = "mailboxes" // one mailbox per agent
	StateDir     = ".parley"   // runtime state: lock, journal
)

// ErrNoWorkspace is the error when no parley.yaml is found in a directory
// or any directory above it.
var ErrNoWorkspace = errors.New("not in a parley workspace (no parley.yaml here or in any parent directory)")

// MissingConfigError is the error for a workspace whose parley.yaml is
// gone (removed by mistake, a checkout) while its mailboxes/ and .parley/
// are there: it is to be put back, not made anew.
type MissingConfigError struct {
	Root string // the directory that holds mailboxes/ and .parley/
	// InGit is set when Root is in a git work tree: git checkout may
	// put the file back.
	InGit bool
}

func (e *MissingConfigError) Error() string {
	return fmt.Sprintf("%s is missing in %s (%s/ and %s/ are there): %s", ConfigFile, e.Root, MailboxesDir, StateDir, PutBack(e.InGit))
}

// PutBack says how to put back a parley.yaml removed by mistake: from
// git when the workspace is in a git work tree (inGit, see InGit), from
// the person's copy otherwise.
func PutBack(inGit bool) string {
	if inGit {
		return fmt.Sprintf("put it back (git checkout %s, or from your copy if it was never committed)", ConfigFile)
	}
	return "put it back from your copy (the workspace is not in git: git checkout cannot restore it)"
}

// InGit reports whether dir is in a git work tree: it, or a directory
// above it, holds .git (a directory, or the file of a worktree).
func InGit(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// missingConfig returns a *MissingConfigError when dir holds a
// workspace's mailboxes/ and .parley/ but no parley.yaml; nil otherwise.
func missingConfig(dir string) error {
	for _, sub := range []string{MailboxesDir, StateDir} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			return nil
		}
	}
	return &MissingConfigError{Root: dir, InGit: InGit(dir)}
}

// Workspace is a directory holding parley.yaml, the agents' mailboxes and
// parley's runtime state.
type Workspace struct {
	Root   string
	Config *Config

	protocolOnce sync.Once
	protocol     *skills.Set
	protocolErr  error

	secretFiles secretFiles // the campaign's secrets, read once per version of each file
}

// Find returns the workspace root that holds dir: the nearest
// directory at or above dir with a parley.yaml. A directory on the way
// with mailboxes/ and .parley/ but no parley.yaml is a workspace whose
// parley.yaml is missing: Find returns it with a *MissingConfigError.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err == nil {
			return dir, nil
		}
		if err := missingConfig(dir); err != nil {
			return dir, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNoWorkspace
		}
		dir = parent
	}
}

// Open reads the parley.yaml of the workspace at root. The workspace's
// Root is absolute, so that the paths it gives stay right for programs
// started in other directories (an agent's PARLEY_MESSAGE).
// A parley.yaml that lists no agents is refused (ErrNoAgents), and so
// is one with a key parley does not know (ErrUnknownKey).
func Open(root string) (*Workspace, error) {
	return OpenWith(root, LoadOptions{})
}

// OpenWith reads the parley.yaml of the workspace at root as Open does,
// as opts say: with SkipUnknown, the unknown keys it skipped are in
// Config.Skipped.
func OpenWith(root string, opts LoadOptions) (*Workspace, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(root, ConfigFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := missingConfig(root); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", root, ErrNoWorkspace)
	}
	if err != nil {
		return nil, err
	}
	// Errors name the file as the workspace names it (parley.yaml:3:),
	// the form every other message about it takes.
	cfg, err := ParseConfigWith(ConfigFile, data, opts)
	if err != nil {
		return nil, err
	}
	// A key skipped may be the agents, misspelt (agnets:): the file is
	// taken as it is, and the key skipped says what is wrong.
	if len(cfg.Skipped) == 0 {
		if err := requireAgents(ConfigFile, data, cfg); err != nil {
			return nil, err
		}
	}
	return &Workspace{Root: root, Config: cfg}, nil
}

// ErrWorkspaceExists is the error for initialising a directory that
// already holds a parley.yaml.
var ErrWorkspaceExists = errors.New("a workspace already exists here (parley.yaml)")

// Init creates a workspace in dir: parley.yaml naming the agents
// (with their roles) and the skills messages are checked against, a
// mailbox for each agent, the shipped skills copied into skills/ (to read
// and to edit: a workspace file overrides the shipped one), the .parley
// runtime directory, and a .gitignore for what is not the session's record
// (see gitignore). It refuses a directory that already has a parley.yaml.
func Init(dir string, agents []Agent, skillNames []string) (*Workspace, error) {
	if len(agents) == 0 {
		return nil, errors.New("name at least one agent")
	}
	seen := map[string]bool{}
	for _, a := range agents {
		if err := mailbox.CheckName(a.Name); err != nil {
			return nil, fmt.Errorf("agent %w", err)
		}
		for _, r := range a.Roles {
			if err := mailbox.CheckName(r); err != nil {
				return nil, fmt.Errorf("agent %s: role %w", a.Name, err)
			}
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("agent %q is named twice", a.Name)
		}
		seen[a.Name] = true
	}
	var b strings.Builder
	b.WriteString(configHeader)
	if len(skillNames) > 0 {
		fmt.Fprintf(&b, "skills: [%s]  # the protocols messages are checked against\n", strings.Join(skillNames, ", "))
	} else {
		b.WriteString("# skills: [dnd-team]  # check messages against protocols (parley skills list)\n")
	}
	b.WriteString("agents:\n")
	for _, a := range agents {
		fmt.Fprintf(&b, "  - name: %s\n", a.Name)
		switch len(a.Roles) {
		case 0:
		case 1:
			fmt.Fprintf(&b, "    role: %s\n", a.Roles[0])
		default:
			fmt.Fprintf(&b, "    roles: [%s]\n", strings.Join(a.Roles, ", "))
		}
	}
	b.WriteString(configRouter)
	return InitConfig(dir, b.String())
}

// InitConfig creates a workspace in dir from the text of its parley.yaml,
// as Init does: the file is checked first (a file parley cannot load is
// refused, and nothing is written), then written with the .gitignore, the
// shipped skills in skills/, and a mailbox for each agent.
func InitConfig(dir, config string) (*Workspace, error) {
	path := filepath.Join(dir, ConfigFile)
	cfg, err := ParseConfig(ConfigFile, []byte(config))
	if err != nil {
		return nil, err
	}
	if err := requireAgents(ConfigFile, []byte(config), cfg); err != nil {
		return nil, err
	}
	if len(cfg.Skills) > 0 {
		lib, err := skills.LoadLibrary(filepath.Join(dir, "skills"))
		if err != nil {
			return nil, err
		}
		if _, err := lib.Set(cfg.Skills); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrWorkspaceExists)
	}
	if err := mailbox.WriteFileAtomic(path, []byte(config)); err != nil {
		return nil, err
	}
	if err := writeGitFiles(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "skills"), 0o755); err != nil {
		return nil, err
	}
	for name, data := range skills.Builtin() {
		if err := writeIfMissing(filepath.Join(dir, "skills", name), string(data)); err != nil {
			return nil, err
		}
	}
	ws, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if err := ws.MakeDirs(); err != nil {
		return nil, err
	}
	// Nothing was delivered here before now: a message sent from now on
	// is delivered without looking for an earlier copy (see DeliveryRecord).
	return ws, ws.WriteDeliveryRecord(DeliveryRecord{Newest: time.Now().UTC()})
}

// AgentsNamed returns agents with these names and no roles of their own.
func AgentsNamed(names ...string) []Agent {
	out := make([]Agent, len(names))
	for i, n := range names {
		out[i] = Agent{Name: n}
	}
	return out
}

const configHeader = `# parley workspace. Each agent has a mailbox under mailboxes/<name>/;
# it sends by putting a message file into its outbox/, and ` + "`parley run`" + `
# delivers it to the inbox/ of every recipient. An agent's role (what it
# does in the protocol) is its name unless role: says otherwise.
`

const configRouter = `
# How the router behaves (these are the defaults).
router:
  rescan_interval: 30s    # list every outbox again this often, besides file events
  settle: 200ms           # a file written in place is taken once unchanged this long
  max_message_size: 1MiB  # larger message files are rejected
`

// gitignore is the .gitignore a workspace gets. Messages are the session's
// record and stay in git: every mailbox state, the .reason files, and the
// routing journal. What is left out is the runner's own state (the lock,
// what each agent is doing, and whatever else it keeps in .parley/), files
// being written (tmp/), editor scratch files, which the router never
// takes (mailbox.IsScratch; vim's later probes, 5036 and on, live for a
// moment only), and, anywhere in the workspace, editor scratch files
// (mailbox.IsEditorScratch) and .env files but the examples people commit
// on purpose (.env.example), which a checkpoint never saves either
// (checkpoint.LeftOut, checkpoint.MayHoldSecrets).
// TestGitignoreEditorScratch and TestGitignoreSecrets check these lines
// against IsEditorScratch and MayHoldSecrets, name by name, with git
// check-ignore.
const gitignore = `# parley: the runner's state, files being written, editor scratch files.
# Messages (mailboxes/) and the routing journal are the session's record.
.parley/*
!.parley/journal.jsonl
mailboxes/*/tmp/
mailboxes/**/.*
mailboxes/**/*~
mailboxes/**/#*#
mailboxes/**/*.sw[opx]
mailboxes/**/*.swpx
mailboxes/**/*.tmp
mailboxes/**/4913
# Anywhere: editor scratch files, and .env files (they hold secrets),
# but the examples committed on purpose.
*~
\#*\#
.#*
*.sw[nopx]
*.swpx
.env
.env.*
!.env.example
!.env.sample
!.env.template
`

// gitattributes is the .gitattributes a workspace gets: how git merges
// and checks out the files parley writes when two people keep one
// workspace in git (two clones, pulls, merges). The files parley only
// appends to are merged with git's built-in union driver, which keeps the
// lines both sides added (the routing journal, the characters' journals,
// the decision log): each stays readable, where a merge would stop at a
// conflict on every pull after both sides played. Scenes are not among
// them: the scribe writes into their frontmatter too. Scripts, and the
// routing journal parley appends LF lines to, keep LF line endings in a
// clone with core.autocrlf (Git for Windows' default): a CR at the end of
// a script's line breaks it.
const gitattributes = `# parley: how git merges and checks out the files parley writes.
# Only ever appended to: a merge keeps the lines both sides added.
.parley/journal.jsonl merge=union text eol=lf
campaigns/*/party/*-journal.md merge=union
campaigns/*/decision-log.md merge=union
# Scripts (the agents' programs) break with CRLF line endings.
*.sh text eol=lf
`

// writeGitFiles writes the .gitignore and .gitattributes of the
// workspace at dir, or adds at the end of each the lines it lacks, so
// that a person's own lines stay as they are.
func writeGitFiles(dir string) error {
	if err := addMissingLines(filepath.Join(dir, ".gitignore"), gitignore); err != nil {
		return err
	}
	return addMissingLines(filepath.Join(dir, ".gitattributes"), gitattributes)
}

// addMissingLines writes content to path when there is no such file, else
// appends the lines of content (but comments) that the file does not
// have, in the file's own line ending; a file that has them all is not
// written.
func addMissingLines(path, content string) error {
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return mailbox.WriteFileAtomic(path, []byte(content))
	}
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(old), "\n") {
		have[strings.Join(strings.Fields(line), " ")] = true
	}
	var add strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
		if !strings.HasPrefix(line, "#") && !have[line] {
			add.WriteString(line + "\n")
		}
	}
	if add.Len() == 0 {
		return nil
	}
	var b bytes.Buffer
	b.Write(old)
	nl := textfile.Newline(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteString(nl)
	}
	b.WriteString(textfile.WithNewline("# parley: lines it needs (see parley's README, git)\n"+add.String(), nl))
	return mailbox.WriteFileAtomic(path, b.Bytes())
}

func writeIfMissing(path, content string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	return mailbox.WriteFileAtomic(path, []byte(content))
}

// MakeMailboxes creates what a hand-written parley.yaml needs: the
// mailbox of every agent, the runtime directory, and the .gitignore and
// .gitattributes of a workspace (see writeGitFiles). Existing ones are
// left as they are.
func (w *Workspace) MakeMailboxes() error {
	if err := writeGitFiles(w.Root); err != nil {
		return err
	}
	return w.MakeDirs()
}

// MakeDirs creates the mailboxes of every agent and the runtime directory;
// existing ones are left as they are.
func (w *Workspace) MakeDirs() error {
	if err := os.MkdirAll(filepath.Join(w.Root, StateDir), 0o755); err != nil {
		return err
	}
	for _, a := range w.Config.Agents {
		if err := w.Mailbox(a.Name).Init(); err != nil {
			return err
		}
	}
	return nil
}

// Mailbox returns the mailbox directory of an agent.
func (w *Workspace) Mailbox(agent string) mailbox.Dir {
	return mailbox.Dir(filepath.Join(w.Root, MailboxesDir, agent))
}

// Agent returns the agent with this name.
func (w *Workspace) Agent(name string) (Agent, bool) {
	for _, a := range w.Config.Agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// Resolve returns the agent a message names: an agent by its name, or the
// agent that plays a character of that name.
func (w *Workspace) Resolve(name string) (string, bool) {
	if _, ok := w.Agent(name); ok {
		return name, true
	}
	for _, a := range w.Config.Agents {
		if a.Character != "" && a.Character == name {
			return a.Name, true
		}
	}
	return "", false
}

// Roles returns an agent's roles: those parley.yaml gives it, or its name.
func (w *Workspace) Roles(agent string) []string {
	if a, ok := w.Agent(agent); ok && len(a.Roles) > 0 {
		return a.Roles
	}
	return []string{agent}
}

// Party is an agent as the protocol checks it: its name and roles (see
// Roles).
func (w *Workspace) Party(agent string) skills.Party {
	a, ok := w.Agent(agent)
	return skills.Party{Name: agent, Roles: w.Roles(agent), Named: !ok || len(a.Roles) == 0}
}

// SkillsDir returns the directory of the workspace's own skills.
func (w *Workspace) SkillsDir() string {
	return filepath.Join(w.Root, "skills")
}

// Skills returns every skill the workspace can use: the shipped ones and
// those in its skills/ directory.
func (w *Workspace) Skills() (*skills.Library, error) {
	return skills.LoadLibrary(w.SkillsDir())
}

// Protocol returns the skills parley.yaml names, put together; nil when it
// names none, and messages are then not checked. A skill that is unknown
// or cannot be read is an error that says which and why. The skills are
// read once, the first time they are needed.
func (w *Workspace) Protocol() (*skills.Set, error) {
	w.protocolOnce.Do(func() {
		if len(w.Config.Skills) == 0 {
			return
		}
		lib, err := w.Skills()
		if err != nil {
			w.protocolErr = err
			return
		}
		w.protocol, err = lib.Set(w.Config.Skills)
		if err != nil {
			w.protocolErr = &ConfigError{Path: ConfigFile, Line: w.Config.SkillsLine, Key: "skills", Err: err}
			return
		}
		w.protocolErr = checkTypes(w.Config, ConfigFile, w.protocol)
	})
	return w.protocol, w.protocolErr
}

// AgentNames returns the names of the agents, in parley.yaml order.
func (w *Workspace) AgentNames() []string {
	names := make([]string, len(w.Config.Agents))
	for i, a := range w.Config.Agents {
		names[i] = a.Name
	}
	return names
}

// JournalPath returns the path of the routing journal.
func (w *Workspace) JournalPath() string {
	return filepath.Join(w.Root, StateDir, "journal.jsonl")
}

// StderrDir is where the logs of what agents' programs write to stderr
// are kept, under the runtime directory (see StderrLogPath).
const StderrDir = "stderr"

// StderrLogPath returns the path of the log of what agent's program
// writes to stderr: .parley/stderr/AGENT.log, appended to as the program
// writes, and rotated to AGENT.log.1 once it is large (the runner's
// stderrLog). Left out of git, as all of .parley/ but the journal is.
func (w *Workspace) StderrLogPath(agent string) string {
	return filepath.Join(w.Root, StateDir, StderrDir, agent+".log")
}

// UnknownAgentError is the error for a name that is not an agent of the
// workspace.
type UnknownAgentError struct {
	Name   string
	Agents []string
	// Characters are the characters agents play, where a message may
	// name one for its agent (to:, cc:); nil elsewhere.
	Characters []string
}

func (e *UnknownAgentError) Error() string {
	meant := ""
	if near := spell.Nearest(e.Name, append(slices.Clone(e.Agents), e.Characters...), agentTypoEdits(e.Name)); near != "" {
		meant = "did you mean " + near + "? "
	}
	characters := ""
	if len(e.Characters) > 0 {
		characters = "; characters: " + strings.Join(e.Characters, ", ")
	}
	return fmt.Sprintf("unknown agent %q (%sagents: %s%s)", e.Name, meant, strings.Join(e.Agents, ", "), characters)
}

// Characters returns the characters the workspace's agents play (see
// Resolve), in parley.yaml's order.
func (w *Workspace) Characters() []string {
	var names []string
	for _, a := range w.Config.Agents {
		if a.Character != "" {
			names = append(names, a.Character)
		}
	}
	return names
}

// agentTypoEdits is how many edits make a typo of an agent's name: one
// for a name of up to four letters (orhc for orch; gm is two from any
// other two letters), two for a longer one (tilda-brannok).
func agentTypoEdits(name string) int {
	if len(name) <= 4 {
		return 1
	}
	return 2
}

// CheckAgent returns an error unless name is a valid name and an agent of
// the workspace.
func (w *Workspace) CheckAgent(name string) error {
	if err := mailbox.CheckName(name); err != nil {
		return err
	}
	if _, ok := w.Agent(name); !ok {
		return &UnknownAgentError{Name: name, Agents: w.AgentNames()}
	}
	return nil
}

// HasRole reports whether an agent has any of these roles.
func (w *Workspace) HasRole(agent string, roles ...string) bool {
	return overlaps(w.Roles(agent), roles)
}

// WithProtocol returns the workspace checking messages against this set
// of skills instead of those parley.yaml names: an old version of a
// protocol, to check a finished session against what it ran under.
func (w *Workspace) WithProtocol(set *skills.Set) *Workspace {
	out := &Workspace{Root: w.Root, Config: w.Config}
	out.protocolOnce.Do(func() { out.protocol = set })
	return out
}

// WithSkills returns the workspace as it would be with parley.yaml naming
// these skills: for checking messages against another protocol.
func (w *Workspace) WithSkills(names []string) *Workspace {
	cfg := *w.Config
	cfg.Skills = names
	return &Workspace{Root: w.Root, Config: &cfg}
}

// Short returns a path inside the workspace relative to its root, as
// messages to people name files; any other path as it is.
func (w *Workspace) Short(path string) string {
	if rel, err := filepath.Rel(w.Root, path); err == nil && filepath.IsAbs(path) && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}
