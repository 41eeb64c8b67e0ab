package llm

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// ConversationFile is the name of an openai agent's conversation file in
// its mailbox directory (mailboxes/<agent>/conversation.md).
const ConversationFile = "conversation.md"

// Roles of the turns of a conversation.
const (
	RoleUser      = "user"      // a message the agent received, or what parley said of its answer
	RoleAssistant = "assistant" // what the model answered
)

// Turn is one turn of a conversation.
type Turn struct {
	Role string
	Text string
}

// Conversation is an openai agent's memory: the messages it received and
// what it answered, oldest first, kept in a markdown file a person can
// read, edit and commit. Turns dropped to keep it within its token
// budget are counted in its summary line.
//
// The file reads:
//
//	# conversation: gm
//
//	dropped: 4 turns, about 1200 tokens (kept within memory_tokens)
//
//	## user
//
//	```
//	the message received, as delivered
//	```
//
//	## assistant
//
//	```
//	what the model answered
//	```
//
// Each turn's text is fenced with more backticks than it holds in a row,
// so any text reads back unchanged.
type Conversation struct {
	Agent         string
	Dropped       int // turns dropped so far
	DroppedTokens int // their tokens, estimated
	Turns         []Turn
}

// Tokens estimates the tokens of a text: about four bytes each, as
// OpenAI's tokenizers count English. It is what memory_tokens is counted
// in; the endpoint's own counts are what usage and budgets use.
func Tokens(s string) int { return (len(s) + 3) / 4 }

// Tokens returns the estimated tokens of every turn.
func (c *Conversation) Tokens() int {
	n := 0
	for _, t := range c.Turns {
		n += Tokens(t.Text)
	}
	return n
}

// Trim drops the oldest turns until the rest is within budget tokens,
// counting them in the summary; the newest turn is always kept. A budget
// of 0 keeps everything.
func (c *Conversation) Trim(budget int) {
	if budget <= 0 {
		return
	}
	total := c.Tokens()
	drop := 0
	for drop < len(c.Turns)-1 && total > budget {
		n := Tokens(c.Turns[drop].Text)
		total -= n
		c.DroppedTokens += n
		drop++
	}
	c.Dropped += drop
	c.Turns = append(c.Turns[:0:0], c.Turns[drop:]...)
}

// Summary says what was dropped; empty when nothing was.
func (c *Conversation) Summary() string {
	if c.Dropped == 0 && c.DroppedTokens == 0 {
		return ""
	}
	return fmt.Sprintf("dropped: %d %s, about %d tokens (kept within memory_tokens)", c.Dropped, plural(c.Dropped, "turn", "turns"), c.DroppedTokens)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Bytes renders the conversation file.
func (c *Conversation) Bytes() []byte {
	var b bytes.Buffer
	n := 64
	for _, t := range c.Turns {
		n += len(t.Text) + 32
	}
	b.Grow(n)
	fmt.Fprintf(&b, "# conversation: %s\n", c.Agent)
	if s := c.Summary(); s != "" {
		fmt.Fprintf(&b, "\n%s\n", s)
	}
	for _, t := range c.Turns {
		fence := fenceFor(t.Text)
		b.WriteString("\n## ")
		b.WriteString(t.Role)
		b.WriteString("\n\n")
		b.WriteString(fence)
		b.WriteByte('\n')
		b.WriteString(t.Text)
		if t.Text != "" && !strings.HasSuffix(t.Text, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(fence)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// fenceFor returns a code fence longer than any run of backticks in text.
func fenceFor(text string) string {
	if !strings.Contains(text, "```") {
		return "```" // no run of three: the usual case, found fast
	}
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// ConversationError is a conversation file that cannot be read: the line
// and what is wrong there.
type ConversationError struct {
	Path string
	Line int
	Err  error
}

func (e *ConversationError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
}

func (e *ConversationError) Unwrap() error { return e.Err }

var (
	titleLine   = regexp.MustCompile(`^# conversation: (.*)$`)
	droppedLine = regexp.MustCompile(`^dropped: (\d+) turns?, about (\d+) tokens\b`)
	roleLine    = regexp.MustCompile(`^## (user|assistant)\s*$`)
	fenceLine   = regexp.MustCompile("^(```+)\\s*$")
)

// ParseConversation reads a conversation file (see Conversation); path
// names it in errors. Blank lines between the parts do not matter; text
// outside a turn's fence is an error, so that nothing a person wrote is
// dropped when parley writes the file again.
func ParseConversation(path string, data []byte) (*Conversation, error) {
	c := &Conversation{}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	bad := func(i int, format string, args ...any) error {
		return &ConversationError{Path: path, Line: i + 1, Err: fmt.Errorf(format, args...)}
	}
	i := 0
	skip := func() {
		for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
			i++
		}
	}
	skip()
	if i == len(lines) {
		return c, nil
	}
	m := titleLine.FindStringSubmatch(lines[i])
	if m == nil {
		return nil, bad(i, "expected the title: # conversation: AGENT")
	}
	c.Agent = strings.TrimSpace(m[1])
	i++
	skip()
	if i < len(lines) {
		if m := droppedLine.FindStringSubmatch(lines[i]); m != nil {
			var err error
			if c.Dropped, err = strconv.Atoi(m[1]); err != nil {
				return nil, bad(i, "dropped: %v", err)
			}
			if c.DroppedTokens, err = strconv.Atoi(m[2]); err != nil {
				return nil, bad(i, "dropped: %v", err)
			}
			i++
		}
	}
	for {
		skip()
		if i == len(lines) {
			return c, nil
		}
		var m []string
		if strings.HasPrefix(lines[i], "## ") {
			m = roleLine.FindStringSubmatch(lines[i])
		}
		if m == nil {
			return nil, bad(i, "expected a turn: ## user or ## assistant")
		}
		role := m[1]
		i++
		skip()
		if i == len(lines) {
			return nil, bad(i-1, "## %s: no text (a fenced block) follows", role)
		}
		var f []string
		if strings.HasPrefix(lines[i], "```") {
			f = fenceLine.FindStringSubmatch(lines[i])
		}
		if f == nil {
			return nil, bad(i, "## %s: expected its text in a fenced block (```)", role)
		}
		open := i
		i++
		var text []string
		for i < len(lines) && (!strings.HasPrefix(lines[i], f[1]) || strings.TrimRight(lines[i], " \t") != f[1]) {
			text = append(text, lines[i])
			i++
		}
		if i == len(lines) {
			return nil, bad(open, "## %s: the fence opened here is not closed", role)
		}
		i++
		t := strings.Join(text, "\n")
		if len(text) > 0 {
			t += "\n"
		}
		c.Turns = append(c.Turns, Turn{Role: role, Text: t})
	}
}

// conversationPath returns where an agent's conversation file is.
func conversationPath(ws *workspace.Workspace, agent string) string {
	return filepath.Join(ws.Root, workspace.MailboxesDir, agent, ConversationFile)
}

// CheckConversation reads an agent's conversation file as the agent
// reads it before each message, and returns why it cannot be read: a
// *ConversationError naming the line, when an edit by hand broke it (the
// agent gives up every message until it is mended). A missing file is
// an empty conversation: nil.
func CheckConversation(ws *workspace.Workspace, agent string) error {
	_, err := loadConversation(conversationPath(ws, agent), agent)
	return err
}

// loadConversation reads an agent's conversation; a missing file is an
// empty conversation.
func loadConversation(path, agent string) (*Conversation, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Conversation{Agent: agent}, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := ParseConversation(path, data)
	if err != nil {
		return nil, err
	}
	c.Agent = agent
	return c, nil
}

// save writes the conversation durably (mailbox.WriteFileAtomic: its
// temporary file ends in .tmp, which a workspace's .gitignore ignores).
func (c *Conversation) save(path string) error {
	return mailbox.WriteFileAtomic(path, c.Bytes())
}

// memory keeps the conversation last read or written, with the identity
// of its file then: it is read again only when the file changed (a
// person edited it, git checked out another), and each call does not
// parse it anew.
type memory struct {
	mu   sync.Mutex
	conv *Conversation
	info os.FileInfo
}

// load returns a copy of the conversation in the file at path.
func (m *memory) load(path, agent string) (*Conversation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	info, err := os.Stat(path)
	if err == nil && m.conv != nil && m.info != nil && os.SameFile(info, m.info) && info.ModTime().Equal(m.info.ModTime()) && info.Size() == m.info.Size() {
		return m.conv.clone(), nil
	}
	c, err := loadConversation(path, agent)
	if err != nil {
		return nil, err
	}
	m.conv, m.info = c.clone(), info
	return c, nil
}

// save writes the conversation and keeps it.
func (m *memory) save(path string, c *Conversation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.conv, m.info = nil, nil
	if err := c.save(path); err != nil {
		return err
	}
	if info, err := os.Stat(path); err == nil {
		m.conv, m.info = c.clone(), info
	}
	return nil
}

func (c *Conversation) clone() *Conversation {
	out := *c
	out.Turns = append([]Turn(nil), c.Turns...)
	return &out
}
