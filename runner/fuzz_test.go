package runner

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzFrames: an agent's output, however odd, splits into frames that
// hold no separator line, lose no text, and read the same from a session's
// stream as from a command's output.
func FuzzFrames(f *testing.F) {
	for _, s := range []string{
		"plain reply\n",
		"---\nto: a\n---\none\n---\nstill one\n\x1e\n[NOTE]\nto: a\n\ntwo\n\x1e\n",
		"\x1e\n\x1e\n",
		"no newline at the end",
		"a\r\n\x1e\r\nb\n",
		"\x1e\x1e\n\x1e \n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		frames := splitFrames(out)
		var text int
		for _, fr := range frames {
			if len(bytes.TrimSpace(fr)) == 0 {
				t.Errorf("an empty frame was kept: %q", fr)
			}
			for _, line := range bytes.Split(fr, []byte("\n")) {
				if string(bytes.TrimRight(line, "\r")) == FrameEnd {
					t.Errorf("frame %q holds a separator line", fr)
				}
			}
			text += len(bytes.TrimSpace(fr))
		}
		if text > len(out) {
			t.Errorf("frames hold more text (%d) than the output (%d)", text, len(out))
		}
		// A session prints the same, then the empty frame that ends it.
		stream := append(append([]byte(nil), out...), '\n')
		stream = append(stream, FrameEnd+"\n"+FrameEnd+"\n"...)
		fr := &frameReader{r: bufio.NewReader(bytes.NewReader(stream)), max: 1 << 20}
		got, err := fr.next()
		if err != nil {
			t.Fatalf("reading a session's output: %v", err)
		}
		// The session stops at the first empty frame; up to there, it
		// reads what the command's split holds.
		if len(got) > len(frames) {
			t.Fatalf("session read %d frames, command split %d", len(got), len(frames))
		}
		for i := range got {
			if !bytes.Equal(bytes.TrimSpace(got[i]), bytes.TrimSpace(frames[i])) {
				t.Errorf("frame %d: session %q, command %q", i, got[i], frames[i])
			}
		}
	})
}
