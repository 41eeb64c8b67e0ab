package runner

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// countingReader yields n bytes of 'x' with no newline, and counts what
// was read from it.
type countingReader struct{ n, read int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	if c.read >= c.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), c.n-c.read)
	for i := range p[:k] {
		p[i] = 'x'
	}
	c.read += k
	return int(k), nil
}

// TestFramesEndlessLine checks that a session printing one endless line
// is stopped at max_output while it is being read: the runner does not
// read (and hold) the whole line first.
func TestFramesEndlessLine(t *testing.T) {
	const max = 1 << 20
	src := &countingReader{n: 256 << 20}
	fr := &frameReader{r: bufio.NewReaderSize(src, 64<<10), max: max}
	if _, err := fr.next(); !errors.Is(err, errOutputTooLarge) {
		t.Fatalf("next() = %v, want errOutputTooLarge", err)
	}
	if src.read > max+128<<10 {
		t.Errorf("read %d bytes of one line before stopping at max_output %d", src.read, max)
	}
}

// TestFramesLongLines checks that lines longer than the read buffer are
// kept whole in their frame.
func TestFramesLongLines(t *testing.T) {
	long := strings.Repeat("y", 200<<10)
	stream := "to: boss\n\n" + long + "\n" + FrameEnd + "\n" + FrameEnd + "\n"
	fr := &frameReader{r: bufio.NewReaderSize(strings.NewReader(stream), 64<<10), max: 1 << 20}
	frames, err := fr.next()
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 1 || string(frames[0]) != "to: boss\n\n"+long+"\n" {
		t.Errorf("frames = %d, first %d bytes; want one frame holding the long line", len(frames), len(frames[0]))
	}
}
