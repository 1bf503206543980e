package report

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"golang.org/x/net/html"
)

// refKind says what a link asks for, which matters in a single-page app:
// its index.html answers any page path, not an asset's.
type refKind uint8

const (
	refAsset refKind = iota // an image, script, stylesheet, media…
	refPage                 // <a>, <area>, <iframe>: a page
)

// ref is one link of a page, as written.
type ref struct {
	url  string
	kind refKind
}

// form is one <form> of a page.
type form struct {
	action    string
	hasAction bool // an action attribute that is not blank
	post      bool
	inputs    bool // it holds an input, select or textarea
}

// pageScan is what one pass over an HTML document found.
type pageScan struct {
	refs     []ref
	forms    []form
	hasTitle bool   // a <title> with text
	base     string // the first <base href>, "" if none
	capped   bool   // links past maxRefs were left out
	stopped  bool   // ctx was done before the end
}

// maxTokenBytes bounds the memory the tokenizer holds for one token (a
// text run, a comment, a script): it grows its buffer to hold the whole
// token, by doubling. A page with a longer token is examined up to it and
// the report says Truncated.
const maxTokenBytes = 1 << 20

// ctxCheckEvery is how many tokens pass between two looks at the context.
const ctxCheckEvery = 1024

// scanHTML reads doc once with the HTML tokenizer and collects its links
// (at most maxRefs), forms, title and <base>. Raw text elements are
// skipped as a browser skips them, except <style>, whose url()s count.
func scanHTML(ctx context.Context, doc []byte, maxRefs int) pageScan {
	var ps pageScan
	add := func(url string, kind refKind) {
		if len(ps.refs) >= maxRefs {
			ps.capped = true
			return
		}
		ps.refs = append(ps.refs, ref{url, kind})
	}
	addCSS := func(css []byte) {
		cssURLs(css, func(u string) bool {
			add(u, refAsset)
			return !ps.capped
		})
	}
	z := html.NewTokenizer(bytes.NewReader(doc))
	z.SetMaxBuf(maxTokenBytes)
	var inTitle, inStyle bool
	cur := -1 // the open form's index in ps.forms
	for n := 0; ; n++ {
		if n%ctxCheckEvery == 0 && ctx.Err() != nil {
			ps.stopped = true
			return ps
		}
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if errors.Is(z.Err(), html.ErrBufferExceeded) {
				ps.stopped = true // a token too long to hold: the rest is not examined
			}
			return ps
		case html.TextToken:
			switch {
			case inTitle && len(bytes.TrimSpace(z.Text())) > 0:
				ps.hasTitle = true
			case inStyle:
				addCSS(z.Text())
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "title":
				inTitle = false
			case "style":
				inStyle = false
			case "form":
				cur = -1
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			inTitle, inStyle = tag == "title" && tt == html.StartTagToken, tag == "style" && tt == html.StartTagToken
			if tag == "form" {
				ps.forms = append(ps.forms, form{})
				cur = len(ps.forms) - 1
			}
			if cur >= 0 && (tag == "input" || tag == "select" || tag == "textarea") {
				ps.forms[cur].inputs = true
			}
			for hasAttr {
				var key, val []byte
				key, val, hasAttr = z.TagAttr()
				scanAttr(&ps, tag, string(key), val, cur, add, addCSS)
			}
		}
	}
}

// scanAttr records what one attribute of a tag links to.
func scanAttr(ps *pageScan, tag, key string, val []byte, cur int, add func(string, refKind), addCSS func([]byte)) {
	switch key {
	case "href":
		switch tag {
		case "a", "area":
			add(string(val), refPage)
		case "link":
			add(string(val), refAsset)
		case "base":
			if ps.base == "" {
				ps.base = strings.TrimSpace(string(val))
			}
		}
	case "src":
		switch tag {
		case "iframe", "frame":
			add(string(val), refPage)
		case "img", "script", "source", "audio", "video", "track", "embed", "input":
			add(string(val), refAsset)
		}
	case "srcset":
		if tag == "img" || tag == "source" {
			for _, u := range srcsetURLs(string(val)) {
				add(u, refAsset)
			}
		}
	case "poster":
		if tag == "video" {
			add(string(val), refAsset)
		}
	case "style":
		addCSS(val)
	case "action":
		if tag == "form" && cur >= 0 {
			ps.forms[cur].action = strings.TrimSpace(string(val))
			ps.forms[cur].hasAction = ps.forms[cur].action != ""
		}
	case "method":
		if tag == "form" && cur >= 0 {
			ps.forms[cur].post = strings.EqualFold(strings.TrimSpace(string(val)), "post")
		}
	}
}

// srcsetURLs are the URLs of a srcset attribute's candidates ("a.png 1x,
// b.png 2x"): each candidate's first word.
func srcsetURLs(v string) []string {
	var out []string
	for _, c := range strings.Split(v, ",") {
		if f := strings.Fields(c); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}
