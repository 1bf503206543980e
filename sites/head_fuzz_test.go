package sites

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// FuzzInjectHead checks InjectHead against golang.org/x/net/html's
// tokenizer (which follows the HTML spec's tokenizer states, script
// escapes included): it never panics, it returns the input unchanged or
// with tags inserted at one point, that point is never inside a tag, a
// comment or the text of a raw text element, and injecting twice adds
// nothing more.
func FuzzInjectHead(f *testing.F) {
	for _, seed := range []string{
		strings.Repeat("<!---->", 200),
		`<script><!--<script>document.write("</script><head>")--></script><p>x</p>`,
		`<head><script><!--<script></script>--></script><title>x</title></head>`,
		"<!-- <head>", "<!-- --!> <head>", "<!--->", "<!-->", "<head", `<head a="`, "<title>x",
		"<head><script>", "<plaintext><head>", "<style>", "<textarea></textarea >",
		"\xef\xbb\xbf<p>x</p>", "\xef\xbb\xbf<!DOCTYPE html><html><head></head>",
		"<!doctype html><html lang=en><head><meta charset=utf-8></head><body></body></html>",
		`<?xml version="1.0"?><!DOCTYPE html><p>x</p>`, "</ x><head>", "<!x><head>",
		// Tag names fold ASCII only: these are not title or script.
		"<!doctype html><t\u0130tle><script>var a='</title><head>';</script>",
		"<scr\u0130pt><!--</script><head>-->", "<lin\u212a rel=icon><head>",
		"<head><template><head></template><title>x</title>",
		`<!doctype html><head><link rel=preload href=a><META http-equiv="content-type" content="text/html; charset=utf-8"><meta charset=x>`,
	} {
		f.Add([]byte(seed), "T", "D", "🚀")
	}
	f.Fuzz(func(t *testing.T, doc []byte, title, desc, fav string) {
		in := bytes.Clone(doc)
		out, at := injectHead(doc, title, desc, fav)
		if !bytes.Equal(doc, in) {
			t.Fatalf("input modified")
		}
		if at < 0 {
			if !bytes.Equal(out, in) {
				t.Fatalf("at = -1 but output %q differs from input %q", out, in)
			}
			return
		}
		if strings.TrimSpace(title)+strings.TrimSpace(desc)+strings.TrimSpace(fav) == "" {
			t.Fatalf("nothing to add, but tags inserted at %d: %q", at, out)
		}
		d := len(out) - len(in)
		if d <= 0 || at > len(in) || !bytes.Equal(out[:at], in[:at]) || !bytes.Equal(out[at+d:], in[at:]) {
			t.Fatalf("output %q is not input %q with tags inserted at %d", out, in, at)
		}
		if sc := scanHead(in); sc.charsetEnd >= 0 && at < sc.charsetEnd {
			t.Fatalf("tags inserted at %d, before the <meta> declaring the encoding (ending at %d), in %q", at, sc.charsetEnd, in)
		}
		if inside := insideMarkup(in, at); inside != "" {
			t.Fatalf("tags inserted at %d, inside %s, in %q", at, inside, in)
		}
		if again := InjectHead(out, title, desc, fav); !bytes.Equal(again, out) {
			t.Fatalf("second injection changed %q into %q", out, again)
		}
	})
}

// insideMarkup tells, following x/net/html's tokenizer, whether offset at
// of doc is inside a tag, a comment, a doctype or a raw text element's
// content (from the end of its start tag to the start of its end tag,
// both included): it names what, or returns "".
func insideMarkup(doc []byte, at int) string {
	z := html.NewTokenizer(bytes.NewReader(doc))
	pos := 0
	rawFrom, rawTag := -1, "" // an open raw text element's content start
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if !errors.Is(z.Err(), io.EOF) {
				return "a tokenizer error: " + z.Err().Error()
			}
			if rawFrom >= 0 && at >= rawFrom {
				return "unclosed <" + rawTag + ">"
			}
			return ""
		}
		start := pos
		pos += len(z.Raw())
		if rawFrom >= 0 && tt != html.TextToken {
			if at >= rawFrom && at <= start {
				return "<" + rawTag + "> content"
			}
			rawFrom = -1
		}
		if tt != html.TextToken && at > start && at < pos {
			return tt.String() + " " + string(z.Raw())
		}
		if tt == html.StartTagToken {
			name, _ := z.TagName()
			if htmlRawTextElements[string(name)] {
				rawFrom, rawTag = pos, string(name)
			}
		}
	}
}
