package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// FrameEnd is the line that ends one message in a stream of messages
// (mailbox.FrameEnd). A session prints an empty message when it is done
// with the message it was given: FrameEnd right after the one ending its
// last answer, or FrameEnd alone when it had nothing to say.
const FrameEnd = mailbox.FrameEnd

// splitFrames splits a command's output at FrameEnd lines
// (mailbox.SplitFrames).
func splitFrames(out []byte) [][]byte { return mailbox.SplitFrames(out) }

// splitAnswers splits each frame a program printed into the messages it
// holds (mailbox.SplitAnswer: a second frontmatter header written right
// after a first message is a message of its own).
func splitAnswers(opens mailbox.Opens, frames [][]byte) [][]byte {
	var out [][]byte
	for _, f := range frames {
		out = append(out, opens.SplitAnswer(f)...)
	}
	return out
}

// writeFrame writes one message to a stream, ended by a FrameEnd line.
func writeFrame(w io.Writer, data []byte) error {
	var b bytes.Buffer
	b.Grow(len(data) + 3)
	b.Write(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(FrameEnd + "\n")
	_, err := w.Write(b.Bytes())
	return err
}

// errOutputTooLarge is the error for a program that prints more than the
// workspace allows for one message.
var errOutputTooLarge = errors.New("printed more than max_output for one message")

// outputTooLarge is the error of a program killed for printing more than
// max, the workspace's max_output: the same for a command and a session,
// with the limit and where it is set.
func outputTooLarge(max int64) error {
	return fmt.Errorf("%w (%s; max_output in %s sets it): killed", errOutputTooLarge, mailbox.SizeString(max), workspace.ConfigFile)
}

// errSessionEnded is the error for a session whose output ended (most
// often: it exited) before the empty frame that finishes a message. The
// session driver adds what the program said last on stderr, its cause.
var errSessionEnded = errors.New("the session ended its output before finishing the message")

// frameReader reads a session's output: frames ended by FrameEnd lines,
// and the empty frame that says the session is done with its message.
type frameReader struct {
	r   *bufio.Reader
	max int64
}

// stray drops what the session printed after the empty frame that ended
// its last message, as far as it has already arrived: it answers nothing,
// and read as the start of the next answer it would end that one before
// the session had read it. It returns how many bytes were dropped.
func (fr *frameReader) stray() int {
	n := fr.r.Buffered()
	_, _ = fr.r.Discard(n)
	return n
}

// next returns the messages a session printed for the message it was
// given, up to the empty frame that ends them.
func (fr *frameReader) next() ([][]byte, error) {
	var frames [][]byte
	var cur bytes.Buffer
	var total int64
	var line []byte
	for {
		// A line is read piece by piece, so that one endless line is
		// stopped at max_output, not held whole in memory.
		line = line[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = fr.r.ReadSlice('\n')
			total += int64(len(chunk))
			if total > fr.max {
				return nil, errOutputTooLarge
			}
			line = append(line, chunk...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if len(line) > 0 && string(bytes.TrimRight(line, "\r\n")) == FrameEnd {
			if len(bytes.TrimSpace(cur.Bytes())) == 0 {
				return frames, nil // the empty frame: done
			}
			frames = append(frames, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			continue
		}
		cur.Write(line)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errSessionEnded
			}
			return nil, err
		}
	}
}
