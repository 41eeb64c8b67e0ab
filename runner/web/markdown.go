package web

import (
	"bytes"
	"html/template"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/parley-dev/parley/mailbox"
)

// md renders markdown without raw HTML (goldmark leaves it out unless
// told otherwise) and without dangerous links (javascript:, vbscript:,
// file:, data: other than images, which goldmark drops): a body is
// untrusted.
var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// markdown renders untrusted markdown as HTML that is safe to show. A
// body goldmark cannot render is shown as text.
func markdown(src []byte) template.HTML {
	var buf bytes.Buffer
	if err := md.Convert(src, &buf); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(string(src)) + "</pre>")
	}
	return template.HTML(buf.String())
}

// withoutFrontmatter returns a markdown file's text after its
// frontmatter, if it has one (as mailbox.SplitFrontmatter finds it).
func withoutFrontmatter(src []byte) []byte {
	if fm, err := mailbox.SplitFrontmatter(src); err == nil {
		return fm.Body
	}
	return src
}
