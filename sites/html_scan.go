package sites

import (
	"bytes"
	"html"
)

// htmlScanner reads one document from start to end: every search starts
// where the previous one stopped, so a scan costs time linear in the part
// of the document it reads. work counts the bytes examined, so tests can
// check that.
type htmlScanner struct {
	doc  []byte
	work int
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

// htmlToken is a tag, comment or declaration found by scanHTMLTokens. It
// holds no copy of the document's bytes, so a scan allocates little
// whatever the document's tags and attributes.
type htmlToken struct {
	kind htmlTokenKind
	// name is a tag's name in lowercase when it is one of knownTagNames,
	// else "". For an htmlDecl, it is declDoctype, declPI or "".
	name       string
	start, end int // doc[start:end] is the whole token
	// contentEnd is where the markup after the token resumes: the end tag
	// of a raw text element (script, style, title...), else end.
	contentEnd int
	// attr is the raw value (not entity-decoded) of a <meta> start tag's
	// first name attribute or of a <link>'s first rel attribute, a
	// subslice of the document; nil for other tags or without one.
	attr []byte
	// charset is true for a <meta> start tag that declares the document's
	// encoding: it has a charset attribute, or http-equiv="content-type"
	// (in any ASCII case), as a browser's encoding prescan looks for.
	charset bool
}

// What an htmlDecl token's name says it is.
const (
	declDoctype = "!doctype" // <!doctype ...>, in any ASCII case
	declPI      = "?"        // a processing instruction, <?xml ...?> say
)

// knownTagNames maps each tag name the head scan tells apart to itself:
// the head elements, the raw text elements, and what ends a head.
var knownTagNames = func() map[string]string {
	m := map[string]string{"body": "body", "br": "br"}
	for name := range headElements {
		m[name] = name
	}
	for name := range htmlRawTextElements {
		m[name] = name
	}
	return m
}()

// maxKnownTagName is the length of the longest of knownTagNames.
const maxKnownTagName = len("plaintext")

// knownTagName returns the lowercase form of the tag name b, lowercasing
// ASCII letters only as the HTML tokenizer does, when it is one of
// knownTagNames, else "". It does not allocate.
func knownTagName(b []byte) string {
	if len(b) > maxKnownTagName {
		return ""
	}
	var buf [maxKnownTagName]byte
	for i, c := range b {
		buf[i] = lowerASCIIByte(c)
	}
	return knownTagNames[string(buf[:len(b)])]
}

// attrValue returns the attribute value raw entity-decoded, allocating
// only when it holds a character reference.
func attrValue(raw []byte) []byte {
	if bytes.IndexByte(raw, '&') < 0 {
		return raw
	}
	return []byte(html.UnescapeString(string(raw)))
}

// lowerASCIIByte returns c lowercased if it is an ASCII capital letter.
func lowerASCIIByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiContainsFold reports whether b contains sub (lowercase ASCII) in
// any ASCII case.
func asciiContainsFold(b []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(b); i++ {
		if asciiEqualFold(b[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// htmlRawTextElements are the elements whose content is not markup: the
// scanner skips to their end tag.
var htmlRawTextElements = map[string]bool{
	"script": true, "style": true, "title": true, "textarea": true,
	"noscript": true, "xmp": true, "iframe": true, "noembed": true,
	"noframes": true, "plaintext": true,
}

// scanHTMLTokens calls fn for each tag, comment and declaration of the
// document in order, following the HTML tokenizer closely enough to skip
// comments, quoted attribute values and raw text element bodies (with the
// script data escaped states). It stops when fn returns false, and then
// reports stopped, or at the end of the document or at an unterminated
// construct, whose offset it returns as rest (len(doc) at the end).
func (s *htmlScanner) scanHTMLTokens(fn func(htmlToken) bool) (stopped bool, rest int) {
	doc := s.doc
	i := 0
	for i < len(doc) {
		k := s.indexByte(i, '<')
		if k < 0 {
			return false, len(doc)
		}
		tail := doc[k:]
		switch {
		case bytes.HasPrefix(tail, []byte("<!--")):
			end := s.htmlCommentEnd(k + 4)
			if end < 0 {
				return false, k
			}
			if !fn(htmlToken{kind: htmlComment, start: k, end: end}) {
				return true, k
			}
			i = end
		case len(tail) > 1 && (tail[1] == '!' || tail[1] == '?' ||
			tail[1] == '/' && (len(tail) < 3 || !isASCIILetter(tail[2]))):
			// A declaration, processing instruction or bogus comment: up to '>'.
			gt := s.indexByte(k, '>')
			if gt < 0 {
				return false, k
			}
			t := htmlToken{kind: htmlDecl, start: k, end: gt + 1}
			switch {
			case tail[1] == '/':
				t.kind = htmlComment // "</>" or "</ ..."
			case tail[1] == '?':
				t.name = declPI
			case gt+1-k >= len("<!doctype") && asciiEqualFold(tail[2:len("<!doctype")], declDoctype[1:]):
				t.name = declDoctype
			}
			if !fn(t) {
				return true, k
			}
			i = gt + 1
		case len(tail) > 2 && tail[1] == '/' || len(tail) > 1 && isASCIILetter(tail[1]):
			t, ok := s.scanHTMLTag(k)
			if !ok {
				return false, k
			}
			t.contentEnd = t.end
			if t.kind == htmlStartTag && htmlRawTextElements[t.name] {
				t.contentEnd = s.htmlRawTextEnd(t.end, t.name)
			}
			if !fn(t) {
				return true, k
			}
			i = t.contentEnd
		case len(tail) == 1:
			return false, k // what the last '<' starts is unknown
		default:
			i = k + 1 // a '<' that starts no tag is text
		}
	}
	return false, len(doc)
}

// indexByte returns the offset of the first c at or after from, or -1.
func (s *htmlScanner) indexByte(from int, c byte) int {
	j := bytes.IndexByte(s.doc[from:], c)
	if j < 0 {
		s.work += len(s.doc) - from
		return -1
	}
	s.work += j + 1
	return from + j
}

// htmlCommentEnd returns the offset just after the comment whose body
// starts at from (just after "<!--"), or -1 when it never ends. A comment
// ends at the first "-->" or "--!>" (whose dashes are in the body), or at
// once for "<!-->" and "<!--->"; it looks at each '>' once.
func (s *htmlScanner) htmlCommentEnd(from int) int {
	doc := s.doc
	switch body := doc[from:]; {
	case bytes.HasPrefix(body, []byte(">")):
		return from + 1 // <!-->
	case bytes.HasPrefix(body, []byte("->")):
		return from + 2 // <!--->
	}
	for i := from; ; {
		gt := s.indexByte(i, '>')
		if gt < 0 {
			return -1
		}
		if gt-2 >= from && doc[gt-1] == '-' && doc[gt-2] == '-' ||
			gt-3 >= from && doc[gt-1] == '!' && doc[gt-2] == '-' && doc[gt-3] == '-' {
			return gt + 1
		}
		i = gt + 1
	}
}

// htmlRawTextEnd returns the offset of the end tag </name that closes a raw
// text element whose content starts at from, or len(doc) when there is none.
func (s *htmlScanner) htmlRawTextEnd(from int, name string) int {
	switch name {
	case "plaintext":
		s.work += len(s.doc) - from
		return len(s.doc)
	case "script":
		return s.scriptDataEnd(from)
	}
	for i := from; ; {
		j := s.indexByte(i, '<')
		if j < 0 {
			return len(s.doc)
		}
		if s.isEndTag(j, name) {
			return j
		}
		i = j + 1
	}
}

// isEndTag reports whether doc[j:] starts with "</name" (any case) followed
// by white space, '/' or '>': the end tag that closes a raw text element.
func (s *htmlScanner) isEndTag(j int, name string) bool {
	doc := s.doc
	n := j + 2 + len(name)
	return n < len(doc) && doc[j+1] == '/' && asciiEqualFold(doc[j+2:n], name) && isTagNameEnd(doc[n])
}

// isStartTag is isEndTag for the start tag "<name".
func (s *htmlScanner) isStartTag(j int, name string) bool {
	doc := s.doc
	n := j + 1 + len(name)
	return n < len(doc) && asciiEqualFold(doc[j+1:n], name) && isTagNameEnd(doc[n])
}

// asciiEqualFold reports whether b is name (lowercase ASCII) in any ASCII
// case, as the tokenizer compares tag names.
func asciiEqualFold(b []byte, name string) bool {
	if len(b) != len(name) {
		return false
	}
	for i := range len(b) {
		if lowerASCIIByte(b[i]) != name[i] {
			return false
		}
	}
	return true
}

// isTagNameEnd reports whether c ends a tag name.
func isTagNameEnd(c byte) bool { return isHTMLSpace(c) || c == '/' || c == '>' }

// scriptDataEnd returns the offset of the </script end tag that closes a
// script whose content starts at from, or len(doc) when there is none. It
// follows the HTML tokenizer's script data states in one pass: inside
// "<!--" (escaped) a </script still ends the script, but after a further
// <script (double escaped) it does not, up to the next </script or "-->".
func (s *htmlScanner) scriptDataEnd(from int) int {
	const (
		data          = iota // script data
		escaped              // after "<!--": script data escaped
		doubleEscaped        // after "<!--" and "<script": double escaped
	)
	doc := s.doc
	state, dashes := data, 0 // dashes: the '-' just read in an escaped state
	i := from
	defer func() { s.work += i - from }()
	for i < len(doc) {
		c := doc[i]
		switch {
		case c == '-' && state != data:
			dashes++
			i++
			continue
		case c == '>' && dashes >= 2:
			state = data // "-->" ends either escaped state
		case c != '<':
		case state == data && bytes.HasPrefix(doc[i:], []byte("<!--")):
			state, dashes = escaped, 2 // "<!-->" ends it at once
			i += 4
			continue
		case state != doubleEscaped && s.isEndTag(i, "script"):
			return i
		case state == escaped && s.isStartTag(i, "script"):
			state = doubleEscaped
			// The white space, '/' or '>' that ends the name is skipped
			// by the i++ below, as the tokenizer consumes it: it is
			// neither '-' nor '<', so no "-->" or tag starts there.
			i += len("<script")
		case state == doubleEscaped && s.isEndTag(i, "script"):
			state = escaped
			i += len("</script") // and the i++ below skips what ends the name
		}
		dashes = 0
		i++
	}
	return len(doc)
}

// scanHTMLTag reads the start or end tag at doc[k] ('<'), with its
// attributes, of which it keeps only a <meta>'s first name and a <link>'s
// first rel (see htmlToken.attr), and whether a <meta> declares the
// encoding (htmlToken.charset). ok is false when the tag is not closed by
// '>'.
func (s *htmlScanner) scanHTMLTag(k int) (t htmlToken, ok bool) {
	doc := s.doc
	t = htmlToken{kind: htmlStartTag, start: k}
	i := k + 1
	defer func() { s.work += i - k }()
	if doc[i] == '/' {
		t.kind = htmlEndTag
		i++
	}
	n := i
	for n < len(doc) && !isTagNameEnd(doc[n]) {
		n++
	}
	t.name = knownTagName(doc[i:n])
	want := "" // the attribute to keep
	switch {
	case t.kind == htmlEndTag:
	case t.name == "meta":
		want = "name"
	case t.name == "link":
		want = "rel"
	}
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
		for n < len(doc) && !isTagNameEnd(doc[n]) && doc[n] != '=' {
			n++
		}
		attrName := doc[i:n]
		keep := want != "" && t.attr == nil && asciiEqualFold(attrName, want)
		i = n
		for i < len(doc) && isHTMLSpace(doc[i]) {
			i++
		}
		value := doc[i:i] // empty, not nil: the attribute is there
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
					i = len(doc)
					return t, false
				}
				value = doc[i+1 : i+1+j]
				i += j + 2
			} else {
				n = i
				for n < len(doc) && !isHTMLSpace(doc[n]) && doc[n] != '>' {
					n++
				}
				value = doc[i:n]
				i = n
			}
		}
		if keep {
			t.attr = value
		}
		if t.name == "meta" && t.kind == htmlStartTag && (asciiEqualFold(attrName, "charset") ||
			asciiEqualFold(attrName, "http-equiv") && asciiEqualFold(bytes.Trim(value, " \t\n\f\r"), "content-type")) {
			t.charset = true
		}
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
