package web

import (
	"bytes"
	"html/template"
	"regexp"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/parley-dev/parley/mailbox"
)

// md renders a message's markdown with its raw HTML shown as text
// (rawHTMLAsText), and mdFile a campaign file's the same way but for
// its comments, which it leaves out: they are notes (parley's markers
// of the message a scene or journal entry came from, the game master's
// notes), not text. Neither renders a dangerous link (javascript:,
// vbscript:, file:, data: other than images, which goldmark drops): a
// body is untrusted.
var (
	md     = newMarkdown(rawHTMLAsText{})
	mdFile = newMarkdown(rawHTMLAsText{dropComments: true})
)

func newMarkdown(raw rawHTMLAsText) goldmark.Markdown {
	return goldmark.New(
		// GFM, its tables' cells aligned by a class (alignClasses): the
		// style attribute goldmark writes is refused by the pages' own
		// Content-Security-Policy (style-src 'self'), an error in the
		// console per cell, and the alignment lost.
		goldmark.WithExtensions(extension.Linkify, extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignNone)), extension.Strikethrough, extension.TaskList),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(alignClasses{}, 1000))),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(raw, 100))),
	)
}

// alignClasses gives each aligned cell of a table the class that aligns
// it (align-left, align-center, align-right; style.css).
type alignClasses struct{}

// Transform sets the classes.
func (alignClasses) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if c, ok := n.(*east.TableCell); ok && entering && c.Alignment != east.AlignNone {
			c.SetAttributeString("class", []byte("align-"+c.Alignment.String()))
		}
		return ast.WalkContinue, nil
	})
}

// rawHTMLAsText renders the raw HTML of a markdown text, inline
// (<b>, <img onerror=...>) and in blocks (a line that starts with
// <script>, <div>, <!-- ...), as the text it is, escaped: never run, and
// nothing of it lost. goldmark, told nothing, leaves it out whole, with
// what shares its lines (a body "<script>alert(1)</script> plain" showed
// as an HTML comment, "plain" gone). Its priority (100) puts it before
// goldmark's own HTML renderer (1000).
type rawHTMLAsText struct {
	// dropComments leaves HTML comments out (see mdFile).
	dropComments bool
}

// comment matches an HTML comment, or one left open to the end.
var comment = regexp.MustCompile(`(?s)<!--.*?(?:-->|$)`)

// RegisterFuncs registers the renderer of raw HTML, inline and in
// blocks.
func (r rawHTMLAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, r.renderRawHTML)
	reg.Register(ast.KindHTMLBlock, r.renderHTMLBlock)
}

// text returns the raw HTML as it will be shown.
func (r rawHTMLAsText) text(src []byte) []byte {
	if r.dropComments {
		src = comment.ReplaceAll(src, nil)
	}
	return src
}

func (r rawHTMLAsText) renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		var src []byte
		segs := node.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			src = append(src, seg.Value(source)...)
		}
		template.HTMLEscape(w, r.text(src))
	}
	return ast.WalkSkipChildren, nil
}

// renderHTMLBlock writes a block of HTML as preformatted text, its lines
// as they are.
func (r rawHTMLAsText) renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.HTMLBlock)
	var src []byte
	lines := n.Lines()
	for i := range lines.Len() {
		line := lines.At(i)
		src = append(src, line.Value(source)...)
	}
	if n.HasClosure() {
		src = append(src, n.ClosureLine.Value(source)...)
	}
	src = r.text(src)
	if len(bytes.TrimSpace(src)) == 0 {
		return ast.WalkSkipChildren, nil
	}
	w.WriteString(`<pre class="html">`)
	template.HTMLEscape(w, src)
	w.WriteString("</pre>\n")
	return ast.WalkSkipChildren, nil
}

// markdown renders a message's untrusted markdown as HTML that is safe
// to show, its raw HTML as text. A body goldmark cannot render is shown
// as text.
func markdown(src []byte) template.HTML {
	return convert(md, src)
}

// markdownFile renders a campaign file as markdown does a message, but
// for its comments, which it leaves out (see mdFile).
func markdownFile(src []byte) template.HTML {
	return convert(mdFile, src)
}

func convert(m goldmark.Markdown, src []byte) template.HTML {
	var buf bytes.Buffer
	if err := m.Convert(src, &buf); err != nil {
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
