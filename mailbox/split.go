package mailbox

import "bytes"

// FrameEnd is the line that ends one message in a stream of messages: a
// command's or session's standard output, a session's standard input, a
// model's answer. It is the ASCII record separator (0x1E) alone on a
// line, which no markdown body holds by accident (bodies may well hold
// "---"). A program prints it with printf '\036\n'.
const FrameEnd = "\x1e"

// SplitAnswer splits what an agent's program printed, or what its model
// answered, into the messages it holds, the one way both are split:
//
//   - at lines holding only FrameEnd;
//   - in a message whose header is on line one (frontmatter, or a
//     tag-first message's tag), before a later '---' line, outside a
//     code fence, that opens a frontmatter header naming to: (agents)
//     or type:, and none of id:, from:, created: (see opensMessage), in
//     a code fence that is the whole answer too — a second
//     message written right after the first, as a model writes a
//     [NARRATIVE] to everyone and then a prompt to one player. Sent as
//     one, the second would reach the first one's recipients in its body.
//
// A text with no header on line one (plain text) is not split at '---'
// lines: a plain reply may well quote a message.
// Parts holding nothing but blank lines are dropped; a part split off
// before a header keeps its text up to its last line that is not blank.
func SplitAnswer(out []byte) [][]byte {
	var parts [][]byte
	for _, f := range SplitFrames(out) {
		if inner, _, ok := unfence(f); ok && nextHeader(inner) >= 0 {
			// Messages written one after the other, all in one code
			// fence: taken out of it, as one message would be
			// (ParseAnswer), then split.
			f = inner
		}
		for len(f) > 0 {
			at := nextHeader(f)
			if at < 0 {
				parts = append(parts, f)
				break
			}
			parts = append(parts, trimBlankEnd(f[:at]))
			f = f[at:]
		}
	}
	return parts
}

// SplitFrames splits a stream of messages at FrameEnd lines. Frames
// holding nothing but blank lines are dropped.
func SplitFrames(out []byte) [][]byte {
	var frames [][]byte
	var cur bytes.Buffer
	flush := func() {
		if len(bytes.TrimSpace(cur.Bytes())) > 0 {
			frames = append(frames, append([]byte(nil), cur.Bytes()...))
		}
		cur.Reset()
	}
	for len(out) > 0 {
		line, rest, found := bytes.Cut(out, []byte("\n"))
		if string(bytes.TrimRight(line, "\r")) == FrameEnd {
			flush()
		} else {
			cur.Write(line)
			if found {
				cur.WriteByte('\n')
			}
		}
		out = rest
	}
	flush()
	return frames
}

// nextHeader returns the offset in a message with a header on line one
// (frontmatter or a tag) of the '---' line where a second message begins
// (see SplitAnswer), or -1.
func nextHeader(f []byte) int {
	var off int
	if fm, err := SplitFrontmatter(f); err == nil {
		off = fm.BodyStart
	} else if m, err := Parse(f); err == nil && m.Tag != "" {
		first, _ := cutLine(f)
		off = len(first) + eolLen(f[len(first):])
	} else {
		return -1
	}
	fence := ""
	for off < len(f) {
		l, _ := cutLine(f[off:])
		t := bytes.TrimSpace(l)
		switch {
		case fence != "":
			if bytes.HasPrefix(t, []byte(fence)) && len(bytes.Trim(t, "`~")) == 0 {
				fence = ""
			}
		case bytes.HasPrefix(t, []byte("```")) || bytes.HasPrefix(t, []byte("~~~")):
			fence = string(t[:3])
		case isDelimiter(l, "---"):
			// Right after a line of text too: a heading underlined
			// with '---' followed by a header that opens a message
			// cannot be told from a message written right after
			// another, and a secret sent to everyone is the worse
			// mistake.
			if m, err := Parse(f[off:]); err == nil && opensMessage(m) {
				return off
			}
		}
		off += len(l) + eolLen(f[off+len(l):])
	}
	return -1
}

// opensMessage reports whether a header found in a message's body opens
// a message of its own (see SplitAnswer): it names to: or type:, its to:
// names agents (valid names, or "*"), and it has none of the fields of a
// message sent already (id:, from:, created:), which a program quoting
// or passing on a message copies. "to: whom it may concern" in a letter
// quoted in a body is no recipient.
func opensMessage(m *Message) bool {
	h := m.Header()
	if h.Has("id") || h.Has("from") || h.Has("created") || !h.Has("to") && !h.Has("type") {
		return false
	}
	names, err := h.Names("to")
	if err != nil {
		return false
	}
	for _, n := range names {
		if n != "*" && CheckName(n) != nil {
			return false
		}
	}
	return true
}

// trimBlankEnd returns text without the blank lines at its end, ending
// with its last line's line break.
func trimBlankEnd(text []byte) []byte {
	t := bytes.TrimRight(text, " \t\r\n")
	if len(t) < len(text) {
		t = text[:len(t)+1] // a trimmed text ends with a line break
		if t[len(t)-1] != '\n' {
			t = append(t[:len(t)-1:len(t)-1], '\n')
		}
	}
	return t
}
