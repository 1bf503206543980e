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
// the document to </head>, <body>, or the first element or text that
// cannot be in a head (which ends the head in a browser too). Comments and
// the bodies of <script>, <style>, <title>, <noscript> and similar raw text
// elements are skipped. A <meta> counts when its name attribute is
// "description" (any case); a <link> counts when its rel contains "icon"
// (so apple-touch-icon counts).
//
// New tags go right after the opening <head> tag. Without one, they are
// wrapped in <head>...</head> and put right after <html ...>, else after a
// leading <!doctype ...>, else at the start of the document (after a UTF-8
// byte order mark). When nothing needs adding, doc itself is returned;
// otherwise a new slice is, and doc is not modified.
func InjectHead(doc []byte, title, description, favicon string) []byte {
	title = strings.TrimSpace(title)
	description = strings.TrimSpace(description)
	favicon = strings.TrimSpace(favicon)
	if title == "" && description == "" && favicon == "" {
		return doc
	}

	sc := scanHead(doc)
	var add strings.Builder
	if title != "" && !sc.hasTitle {
		add.WriteString("<title>" + html.EscapeString(title) + "</title>")
	}
	if description != "" && !sc.hasDescription {
		add.WriteString(`<meta name="description" content="` + html.EscapeString(description) + `">`)
	}
	if favicon != "" && !sc.hasIcon {
		add.WriteString(`<link rel="icon" href="` + html.EscapeString(emojiIconURL(favicon)) + `">`)
	}
	if add.Len() == 0 {
		return doc
	}

	at, tags := sc.headOpenEnd, add.String()
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
	out := make([]byte, 0, len(doc)+len(tags))
	out = append(out, doc[:at]...)
	out = append(out, tags...)
	out = append(out, doc[at:]...)
	return out
}

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
	headOpenEnd    int // offset just after <head ...>, or -1
	htmlOpenEnd    int // offset just after <html ...>, or -1
	doctypeEnd     int // offset just after a leading <!doctype ...>, or -1
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
	sc := headScan{headOpenEnd: -1, htmlOpenEnd: -1, doctypeEnd: -1}
	leading := true // only white space and comments seen so far
	prev := 0
	if bytes.HasPrefix(doc, utf8BOM) {
		prev = len(utf8BOM)
	}
	scanHTMLTokens(doc, func(t htmlToken) bool {
		if len(bytes.Trim(doc[prev:t.start], " \t\n\f\r")) > 0 {
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
			if leading && len(t.name) >= 9 && strings.EqualFold(t.name[:9], "<!doctype") {
				sc.doctypeEnd = t.end
			}
			// An XML declaration (<?xml ...?>) may precede the doctype.
			leading = leading && strings.HasPrefix(t.name, "<?")
			return true
		case htmlEndTag:
			leading = false
			return t.name != "head" && t.name != "body" && t.name != "html"
		}
		leading = false
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
			if name, ok := t.attr("name"); ok && strings.EqualFold(strings.TrimSpace(name), "description") {
				sc.hasDescription = true
			}
		case "link":
			if rel, ok := t.attr("rel"); ok && strings.Contains(strings.ToLower(rel), "icon") {
				sc.hasIcon = true
			}
		}
		return true
	})
	return sc
}

// htmlTokenKind says what an htmlToken is.
type htmlTokenKind int

// The kinds of htmlToken.
const (
	htmlStartTag htmlTokenKind = iota
	htmlEndTag
	htmlComment
	htmlDecl // <!doctype>, other <!...> and <?...>
)

// htmlToken is a tag, comment or declaration found by scanHTMLTokens.
type htmlToken struct {
	kind       htmlTokenKind
	name       string // lowercase tag name; for htmlDecl, the raw text
	start, end int    // doc[start:end] is the whole token
	// contentEnd is where the markup after the token resumes: the end tag
	// of a raw text element (script, style, title...), else end.
	contentEnd int
	attrs      []htmlAttr
}

// htmlAttr is one attribute of a start tag, its value entity-decoded.
type htmlAttr struct{ name, value string }

// attr returns the value of the first attribute called name (lowercase).
func (t htmlToken) attr(name string) (string, bool) {
	for _, a := range t.attrs {
		if a.name == name {
			return a.value, true
		}
	}
	return "", false
}

// htmlRawTextElements are the elements whose content is not markup: the
// scanner skips to their end tag.
var htmlRawTextElements = map[string]bool{
	"script": true, "style": true, "title": true, "textarea": true,
	"noscript": true, "xmp": true, "iframe": true, "noembed": true,
	"noframes": true, "plaintext": true,
}

// scanHTMLTokens calls fn for each tag, comment and declaration of doc in
// order, following the HTML tokenizer closely enough to skip comments,
// quoted attribute values and raw text element bodies. It stops when fn
// returns false or at an unterminated construct.
func scanHTMLTokens(doc []byte, fn func(htmlToken) bool) {
	i := 0
	for i < len(doc) {
		k := bytes.IndexByte(doc[i:], '<')
		if k < 0 {
			return
		}
		k += i
		rest := doc[k:]
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			end := htmlCommentEnd(doc, k+4)
			if end < 0 || !fn(htmlToken{kind: htmlComment, start: k, end: end}) {
				return
			}
			i = end
		case len(rest) > 1 && (rest[1] == '!' || rest[1] == '?' ||
			rest[1] == '/' && (len(rest) < 3 || !isASCIILetter(rest[2]))):
			// A declaration, processing instruction or bogus comment: up to '>'.
			gt := bytes.IndexByte(rest, '>')
			if gt < 0 {
				return
			}
			kind := htmlDecl
			if rest[1] == '/' {
				kind = htmlComment // "</>" or "</ ..."
			}
			if !fn(htmlToken{kind: kind, name: string(rest[:gt+1]), start: k, end: k + gt + 1}) {
				return
			}
			i = k + gt + 1
		case len(rest) > 2 && rest[1] == '/' || len(rest) > 1 && isASCIILetter(rest[1]):
			t, ok := scanHTMLTag(doc, k)
			if !ok {
				return
			}
			t.contentEnd = t.end
			if t.kind == htmlStartTag && htmlRawTextElements[t.name] {
				t.contentEnd = htmlRawTextEnd(doc, t.end, t.name)
			}
			if !fn(t) {
				return
			}
			i = t.contentEnd
		default:
			i = k + 1 // a '<' that starts no tag is text
		}
	}
}

// htmlCommentEnd returns the offset just after the comment whose body starts
// at from (just after "<!--"), or -1 when it never ends.
func htmlCommentEnd(doc []byte, from int) int {
	body := doc[from:]
	switch {
	case bytes.HasPrefix(body, []byte(">")):
		return from + 1 // <!-->
	case bytes.HasPrefix(body, []byte("->")):
		return from + 2 // <!--->
	}
	end := -1
	if j := bytes.Index(body, []byte("-->")); j >= 0 {
		end = from + j + 3
	}
	if j := bytes.Index(body, []byte("--!>")); j >= 0 && (end < 0 || from+j+4 < end) {
		end = from + j + 4
	}
	return end
}

// htmlRawTextEnd returns the offset of the end tag </name that closes a raw
// text element whose content starts at from, or len(doc) when there is none.
func htmlRawTextEnd(doc []byte, from int, name string) int {
	if name == "plaintext" {
		return len(doc)
	}
	for i := from; ; {
		j := bytes.Index(doc[i:], []byte("</"))
		if j < 0 {
			return len(doc)
		}
		j += i
		n := j + 2 + len(name)
		if n <= len(doc) && bytes.EqualFold(doc[j+2:n], []byte(name)) &&
			(n == len(doc) || isHTMLSpace(doc[n]) || doc[n] == '/' || doc[n] == '>') {
			return j
		}
		i = j + 2
	}
}

// scanHTMLTag reads the start or end tag at doc[k] ('<'), with its
// attributes. ok is false when the tag is not closed by '>'.
func scanHTMLTag(doc []byte, k int) (t htmlToken, ok bool) {
	t = htmlToken{kind: htmlStartTag, start: k}
	i := k + 1
	if doc[i] == '/' {
		t.kind = htmlEndTag
		i++
	}
	n := i
	for n < len(doc) && !isHTMLSpace(doc[n]) && doc[n] != '/' && doc[n] != '>' {
		n++
	}
	t.name = strings.ToLower(string(doc[i:n]))
	i = n
	for {
		for i < len(doc) && (isHTMLSpace(doc[i]) || doc[i] == '/') {
			i++
		}
		if i >= len(doc) {
			return t, false
		}
		if doc[i] == '>' {
			t.end = i + 1
			return t, true
		}
		// Attribute name; a leading '=' is part of it.
		n = i + 1
		for n < len(doc) && !isHTMLSpace(doc[n]) && doc[n] != '/' && doc[n] != '>' && doc[n] != '=' {
			n++
		}
		name := strings.ToLower(string(doc[i:n]))
		i = n
		for i < len(doc) && isHTMLSpace(doc[i]) {
			i++
		}
		value := ""
		if i < len(doc) && doc[i] == '=' {
			i++
			for i < len(doc) && isHTMLSpace(doc[i]) {
				i++
			}
			if i >= len(doc) {
				return t, false
			}
			if q := doc[i]; q == '"' || q == '\'' {
				j := bytes.IndexByte(doc[i+1:], q)
				if j < 0 {
					return t, false
				}
				value = string(doc[i+1 : i+1+j])
				i += j + 2
			} else {
				n = i
				for n < len(doc) && !isHTMLSpace(doc[n]) && doc[n] != '>' {
					n++
				}
				value = string(doc[i:n])
				i = n
			}
		}
		t.attrs = append(t.attrs, htmlAttr{name: name, value: html.UnescapeString(value)})
	}
}

// isHTMLSpace reports whether c is HTML white space.
func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// isASCIILetter reports whether c is an ASCII letter.
func isASCIILetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
