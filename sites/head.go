package sites

import (
	"bytes"
	"html"
	"strings"
)

// InjectHead adds to an HTML document's head the tags it lacks for the
// deployment's metadata: a <title> for title, a <meta name="description">
// for description, and a <link rel="icon"> whose href is an SVG data URL
// showing the emoji favicon. An empty (or all white space) value adds
// nothing; values are trimmed and HTML-escaped.
//
// Existing tags are looked for in the head region only: from the start of
// the document to <body>, </body>, </html>, or the first other element or
// text that cannot be in a head (which ends the head in a browser too; a
// <title> after </head> still goes to the head). Comments and the bodies
// of <script>, <style>, <title>, <noscript> and similar raw text elements
// are skipped, following the HTML tokenizer (a </script> inside
// "<!--<script>" does not end a script, for one). The content of a
// <template> is inert: what it holds neither counts nor ends the head.
// A <meta> counts when its name attribute is "description" (in any ASCII
// case); a <link> counts when its rel contains "icon" (in any ASCII case,
// so apple-touch-icon counts). Tag and attribute names and these values
// are compared in ASCII case only, as a browser does: "tİtle" is no title.
//
// New tags go right after the head's first <meta> that declares the
// encoding (<meta charset>, or <meta http-equiv="content-type">): a
// browser looks for it in the first 1024 bytes only, so nothing may push
// it further. Without one, they go right after the opening <head> tag.
// Without that either, they are wrapped in <head>...</head> and put right
// after <html ...>, else after a leading <!doctype ...>, else at the start
// of the document (after a UTF-8 byte order mark). When nothing needs adding, doc itself is returned;
// otherwise a new slice is, and doc is not modified.
//
// The scan takes time linear in what it reads, and reads at most the
// first maxHeadScan bytes (1 MiB): a document whose head region does not
// end within them (a head full of inline scripts, say) is returned as it
// is, with nothing added, since the tags that follow are unknown.
func InjectHead(doc []byte, title, description, favicon string) []byte {
	out, _ := injectHead(doc, title, description, favicon)
	return out
}

// injectHead is InjectHead that also returns where the tags went: out is
// doc[:at] + tags + doc[at:]; at is -1 when doc is returned unchanged.
func injectHead(doc []byte, title, description, favicon string) (out []byte, at int) {
	at, tags := newHeadTags(title, description, favicon).plan(doc)
	if at < 0 {
		return doc, -1
	}
	return insertTags(doc, at, tags), at
}

// headTags are the tags InjectHead may add for a deployment's metadata,
// escaped once (a deploy builds them once for all its pages); "" for an
// empty value.
type headTags struct {
	title, description, icon string
}

func newHeadTags(title, description, favicon string) headTags {
	var t headTags
	if title = strings.TrimSpace(title); title != "" {
		t.title = "<title>" + html.EscapeString(title) + "</title>"
	}
	if description = strings.TrimSpace(description); description != "" {
		t.description = `<meta name="description" content="` + html.EscapeString(description) + `">`
	}
	if favicon = strings.TrimSpace(favicon); favicon != "" {
		t.icon = `<link rel="icon" href="` + html.EscapeString(emojiIconURL(favicon)) + `">`
	}
	return t
}

// plan returns the tags doc lacks and where they go (see InjectHead): at
// is -1 when nothing is to be added. The page with them is
// insertTags(doc, at, tags), len(doc)+len(tags) bytes.
func (t headTags) plan(doc []byte) (at int, tags string) {
	if t == (headTags{}) {
		return -1, ""
	}
	sc := scanHead(doc)
	if !sc.complete {
		return -1, ""
	}
	var add strings.Builder
	if t.title != "" && !sc.hasTitle {
		add.WriteString(t.title)
	}
	if t.description != "" && !sc.hasDescription {
		add.WriteString(t.description)
	}
	if t.icon != "" && !sc.hasIcon {
		add.WriteString(t.icon)
	}
	if add.Len() == 0 {
		return -1, ""
	}

	at, tags = sc.headOpenEnd, add.String()
	if sc.charsetEnd >= 0 {
		// in the head (a <meta> before any <head> opens one), wherever
		// the author put it
		return sc.charsetEnd, tags
	}
	if at < 0 {
		tags = "<head>" + tags + "</head>"
		switch {
		case sc.htmlOpenEnd >= 0:
			at = sc.htmlOpenEnd
		case sc.doctypeEnd >= 0:
			at = sc.doctypeEnd
		case bytes.HasPrefix(doc, utf8BOM):
			at = len(utf8BOM)
		default:
			at = 0
		}
	}
	return at, tags
}

// insertTags returns a new slice: doc[:at] + tags + doc[at:].
func insertTags(doc []byte, at int, tags string) []byte {
	out := make([]byte, 0, len(doc)+len(tags))
	out = append(out, doc[:at]...)
	out = append(out, tags...)
	out = append(out, doc[at:]...)
	return out
}

// maxHeadScan is how much of a document the head scan reads.
const maxHeadScan = 1 << 20

// utf8BOM is the UTF-8 byte order mark.
var utf8BOM = []byte("\xef\xbb\xbf")

// emojiIconURL returns a data: URL of an SVG image showing emoji, for use as
// a favicon. The emoji is XML-escaped inside the SVG and the SVG is
// percent-encoded, so the URL contains no quotes, spaces, '<', '>', '&' or
// '#', and is safe in a double-quoted attribute.
func emojiIconURL(emoji string) string {
	svg := "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 100 100'>" +
		"<text y='.9em' font-size='90'>" + html.EscapeString(emoji) + "</text></svg>"
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.WriteString("data:image/svg+xml,")
	for i := 0; i < len(svg); i++ {
		c := svg[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-._~!$()*,;=:@/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// headScan is what scanHead learns about a document's head.
type headScan struct {
	// complete is false when the scan budget ran out before the end of
	// the head region was known: then nothing is added.
	complete       bool
	headOpenEnd    int // offset just after <head ...>, or -1
	htmlOpenEnd    int // offset just after <html ...>, or -1
	doctypeEnd     int // offset just after a leading <!doctype ...>, or -1
	charsetEnd     int // offset just after the first <meta> declaring the encoding, or -1
	hasTitle       bool
	hasDescription bool
	hasIcon        bool
}

// headElements are the elements that may appear in a document's head; any
// other start tag ends the head region.
var headElements = map[string]bool{
	"html": true, "head": true, "title": true, "meta": true, "link": true,
	"base": true, "basefont": true, "bgsound": true, "style": true,
	"script": true, "noscript": true, "noframes": true, "template": true,
}

// scanHead walks doc's head region; see InjectHead for what it looks for.
func scanHead(doc []byte) headScan {
	sc, _ := scanHeadWork(doc)
	return sc
}

// scanHeadWork is scanHead that also returns the work done. It reads at
// most maxHeadScan bytes of doc.
func scanHeadWork(doc []byte) (headScan, int) {
	truncated := len(doc) > maxHeadScan
	if truncated {
		doc = doc[:maxHeadScan]
	}
	s := &htmlScanner{doc: doc}
	sc := headScan{headOpenEnd: -1, htmlOpenEnd: -1, doctypeEnd: -1, charsetEnd: -1}
	leading := true // only white space and comments seen so far
	template := 0   // how many <template> elements are open: their content is inert
	prev := 0
	if bytes.HasPrefix(doc, utf8BOM) {
		prev = len(utf8BOM)
	}
	stopped, rest := s.scanHTMLTokens(func(t htmlToken) bool {
		s.work += t.start - prev
		if template == 0 && len(bytes.Trim(doc[prev:t.start], " \t\n\f\r")) > 0 {
			return false // text starts the body
		}
		prev = t.end
		if t.contentEnd > prev {
			prev = t.contentEnd // a title's or script's text is not body text
		}
		switch t.kind {
		case htmlComment:
			return true
		case htmlDecl:
			if leading && t.name == declDoctype {
				sc.doctypeEnd = t.end
			}
			// An XML declaration (<?xml ...?>) may precede the doctype.
			leading = leading && t.name == declPI
			return true
		case htmlEndTag:
			leading = false
			if t.name == "template" {
				// A stray </template> is ignored, in a browser too.
				template = max(template-1, 0)
				return true
			}
			// After </head>, a browser still puts head elements (a
			// <title>, say) in the head; </body>, </html> and </br> end
			// it, as text and other elements do, but not inside a
			// template, which ignores them.
			return template > 0 || t.name != "body" && t.name != "html" && t.name != "br"
		}
		leading = false
		if t.name == "template" {
			template++
			return true
		}
		if template > 0 {
			return true // a template's content is inert: <head>, <title>... included
		}
		if !headElements[t.name] {
			return false
		}
		switch t.name {
		case "head":
			if sc.headOpenEnd < 0 {
				sc.headOpenEnd = t.end
			}
		case "html":
			if sc.htmlOpenEnd < 0 {
				sc.htmlOpenEnd = t.end
			}
		case "title":
			sc.hasTitle = true
		case "meta":
			if t.charset && sc.charsetEnd < 0 {
				sc.charsetEnd = t.end
			}
			if asciiEqualFold(bytes.Trim(attrValue(t.attr), " \t\n\f\r"), "description") {
				sc.hasDescription = true
			}
		case "link":
			if asciiContainsFold(attrValue(t.attr), "icon") {
				sc.hasIcon = true
			}
		}
		return true
	})
	// Within the budget, the document's end (even inside an unterminated
	// construct) ends the head. Past it, only what ends the head does
	// (text, here, before the markup that runs past the budget): what
	// follows the budget is unknown.
	if !stopped && prev <= rest {
		s.work += rest - prev
		stopped = template == 0 && len(bytes.Trim(doc[prev:rest], " \t\n\f\r")) > 0
	}
	sc.complete = stopped || !truncated
	return sc, s.work
}
