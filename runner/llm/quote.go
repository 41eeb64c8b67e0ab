package llm

import (
	"fmt"
	"unicode/utf8"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// quoteEnds is how much of each end of an answer over max_message_size
// is quoted back to the model to repair, and in the transcript.
const quoteEnds = 4 << 10

// quoted returns an answer of the model as it is shown again: to the
// model, as its turn before the refusal it is asked to repair, and in
// the transcript that goes to dead/. An answer within max, the
// workspace's router.max_message_size, is shown whole; a longer one can
// never be sent as it is, and showing it whole cost a request of its
// size for each repair, each holding the answers before (a 3 MB answer
// made requests of 3 then 6 MB, and a reason file of 9 MB): its first
// and last quoteEnds bytes are shown, with a line between them saying
// how much was cut, and the limit.
func quoted(said string, max int64) string {
	if int64(len(said)) <= max || len(said) <= 2*quoteEnds {
		return said
	}
	head, tail := quoteEnds, len(said)-quoteEnds
	for head > 0 && !utf8.RuneStart(said[head]) {
		head-- // not half a character
	}
	for tail < len(said) && !utf8.RuneStart(said[tail]) {
		tail++
	}
	return fmt.Sprintf("%s\n\n[... %s cut here by parley: the answer was %s, over the %s limit of a message (router.max_message_size in %s); only its first and last %s are shown ...]\n\n%s",
		said[:head], mailbox.SizeOver(int64(tail-head), max), mailbox.SizeOver(int64(len(said)), max), mailbox.SizeString(max), workspace.ConfigFile, mailbox.SizeString(quoteEnds), said[tail:])
}
