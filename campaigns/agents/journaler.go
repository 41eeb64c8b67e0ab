package agents

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/parley-dev/parley/campaigns/journal"
	"github.com/parley-dev/parley/mailbox"
)

// JournalType is the type of the message a player sends to have an entry
// added to their journal.
const JournalType = "JOURNAL_ENTRY"

// Journaler adds entries to the characters' journals: a [JOURNAL_ENTRY]
// whose fields (title, happened, did, learned, feel) or free text (with
// labels, see journal.Parse) give the parts. The character is the one the
// message names, else the one its sender plays. It answers nothing.
type Journaler struct {
	Campaigns
	// Players maps an agent to the character it plays.
	Players map[string]string
	// Now dates the entries; nil means time.Now.
	Now func() time.Time
}

// Handle adds one entry.
func (j *Journaler) Handle(ctx context.Context, in *mailbox.Message) ([]*mailbox.Message, error) {
	if typeOf(in) != JournalType {
		if direct(in) {
			return []*mailbox.Message{mailbox.Reply(in, fmt.Appendf(nil, "I keep the characters' journals and nothing else: send a [%s] (type: %s) with a title and what happened, what you did, what you learned and how you feel.\n", JournalType, JournalType))}, nil
		}
		return nil, nil
	}
	return nil, j.add(in)
}

// add writes in into the journal of the character it names, else of the
// one its sender plays: a [JOURNAL_ENTRY], or a player's plain reply to
// the team lead's [JOURNAL_CHECKPOINT] (TeamLead). It is the one place an
// agent's entry is written.
func (j *Journaler) add(in *mailbox.Message) error {
	camp, err := j.For(in)
	if err != nil {
		return err
	}
	character := characterOf(in, j.Players)
	if character == "" {
		character = playerOf(in, j.Players, camp)
	}
	if character == "" {
		from, _ := in.Header().Get("from")
		return fmt.Errorf("%s: whose journal? name the character (character: tilda-brannock): %s plays none", JournalType, from)
	}
	if _, err := camp.Sheet(character); err != nil {
		return err
	}
	e := journal.Parse(entryText(in))
	// A frontmatter entry's fields come first: "title: ...",
	// "happened: ...". (A tag-first entry's are in its text.)
	if in.Tag == "" {
		for _, key := range in.Payload().Keys() {
			e.Set(key, field(in, key))
		}
	}
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	e.Date = now()
	e.ID, _ = in.Header().Get("id")
	_, err = journal.Add(camp.JournalPath(character), character, e)
	return err
}

// entryText is the text of a journal entry: the body of a frontmatter
// message, or the whole of a tag-first one after its tag line, its
// "Title:" and "What I learned:" lines with the free text, but for the
// fields that are no part of an entry (character:, campaign:).
func entryText(in *mailbox.Message) string {
	if in.Tag == "" {
		return string(in.Body)
	}
	_, rest, _ := strings.Cut(string(in.Content()), "\n")
	other := map[string]bool{}
	for _, key := range in.Payload().Keys() {
		other[key] = !new(journal.Entry).Set(key, "")
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(rest, "\n") {
		if key, _, ok := strings.Cut(line, ":"); ok && other[key] {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}
