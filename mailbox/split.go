package mailbox

import "bytes"

// FrameEnd is the line that ends one message in a stream of messages: a
// command's or session's standard output, a session's standard input, a
// model's answer. It is the ASCII record separator (0x1E) alone on a
// line, which no markdown body holds by accident (bodies may well hold
// "---"). A program prints it with printf '\036\n'.
const FrameEnd = "\x1e"

// Opens says whether a header found in a message's body, at a '---'
// line, opens a message of its own (see SplitAnswer): its to: names the
// agents it goes to, and its type: a type of the protocol. Recipient
// reports whether a name of to: is one a message may go to ("*" too);
// Type whether a type is one of the protocol's. A nil func takes any
// valid name (CheckName), any type.
type Opens struct {
	Recipient func(name string) bool
	Type      func(typ string) bool
}

// SplitAnswer splits what an agent's program printed, or what its model
// answered, into the messages it holds, the one way both are split:
//
//   - at lines holding only FrameEnd;
//   - in a message whose header is on line one (frontmatter, or a
//     tag-first message's tag), before a later '---' line, outside a
//     code fence, that opens a frontmatter header of a message of its
//     own (see Opens.header) — a second message written right after
//     the first, as a model writes a [NARRATIVE] to everyone and then a
//     prompt to one player. Sent as one, the second would reach the
//     first one's recipients in its body. A code fence that is the whole
//     of the answer and holds such messages is taken out first.
//
// A text with no header on line one (plain text) is not split at '---'
// lines: a plain reply may well quote a message. Parts holding nothing
// but blank lines are dropped; a part split off before a header keeps
// its text up to its last line that is not blank.
func (o Opens) SplitAnswer(out []byte) [][]byte {
	var parts [][]byte
	for _, f := range SplitFrames(out) {
		if inner, _, ok := unfence(f); ok && o.nextHeader(inner) >= 0 {
			// Messages written one after the other, all in one code
			// fence: taken out of it, as one message would be
			// (ParseAnswer), then split.
			f = inner
		}
		for len(f) > 0 {
			at := o.nextHeader(f)
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

// SplitAnswer is Opens{}.SplitAnswer: any valid name a recipient, any
// type a type.
func SplitAnswer(out []byte) [][]byte { return Opens{}.SplitAnswer(out) }

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

// maxHeaderTries is how many '---' lines of one message nextHeader
// reads as a header before it gives up: a message is split in a few
// places, and in a long text of many '---' lines (a log, YAML
// documents) not every one is decoded.
const maxHeaderTries = 256

// nextHeader returns the offset in a message with a header on line one
// (frontmatter or a tag) of the '---' line where a second message begins
// (see SplitAnswer), or -1.
func (o Opens) nextHeader(f []byte) int {
	var off int
	if fm, err := SplitFrontmatter(f); err == nil {
		off = fm.BodyStart
	} else if text := bytes.TrimPrefix(f, bom); tagLine.Match(lineOne(text)) {
		first := lineOne(text)
		off = len(f) - len(text) + len(first) + eolLen(text[len(first):])
	} else {
		return -1
	}
	fence, blank, tries := "", false, 0
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
		case isDelimiter(l, "---") && tries < maxHeaderTries:
			tries++
			if o.header(f[off:], blank) {
				return off
			}
		}
		blank = len(t) == 0
		off += len(l) + eolLen(f[off+len(l):])
	}
	return -1
}

// header reports whether the frontmatter block at the start of f opens a
// message of its own: it has none of the fields of a message sent
// already (id:, from:, created:, which a program quoting or passing on a
// message copies), and its to: names recipients (Recipient) — or, after
// a blank line only, it has no to: and its type: is one of the protocol's
// (Type). Right after a line of text, a header with type: alone is a
// document of another kind (a YAML document's type: Opaque, a note's
// front matter) more often than a message. Only the block is read.
func (o Opens) header(f []byte, afterBlank bool) bool {
	fm, err := SplitFrontmatter(f)
	if err != nil {
		return false
	}
	m, err := Parse(f[:fm.BodyStart])
	if err != nil {
		return false
	}
	h := m.Header()
	if h.Has("id") || h.Has("from") || h.Has("created") {
		return false
	}
	if !h.Has("to") {
		typ, _ := h.Get("type")
		return afterBlank && typ != "" && (o.Type == nil || o.Type(typ))
	}
	names, err := h.Names("to")
	if err != nil || len(names) == 0 {
		return false
	}
	for _, n := range names {
		if o.Recipient != nil && !o.Recipient(n) || o.Recipient == nil && n != "*" && CheckName(n) != nil {
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

// lineOne returns text's first line, without its line break.
func lineOne(text []byte) []byte {
	l, _ := cutLine(text)
	return l
}
