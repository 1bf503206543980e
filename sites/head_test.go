package sites

import (
	"flag"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/head/*.txt golden files")

// headSeparator separates a golden file's input document from its expected
// output.
const headSeparator = "\n----------\n"

// headGolden is one testdata/head/*.txt file: three header lines
// (title=, description=, favicon=), the input document, a line of ten
// hyphens, and the expected output followed by one newline.
type headGolden struct {
	title, description, favicon string
	input, want                 string
}

func parseHeadGolden(t *testing.T, name, text string) headGolden {
	t.Helper()
	var g headGolden
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) != 4 {
		t.Fatalf("%s: want three header lines and a document", name)
	}
	for i, field := range []struct {
		key string
		dst *string
	}{{"title=", &g.title}, {"description=", &g.description}, {"favicon=", &g.favicon}} {
		v, ok := strings.CutPrefix(lines[i], field.key)
		if !ok {
			t.Fatalf("%s: line %d must start with %q", name, i+1, field.key)
		}
		*field.dst = v
	}
	before, after, ok := strings.Cut("\n"+lines[3], headSeparator)
	if !ok {
		t.Fatalf("%s: no %q line", name, strings.TrimSpace(headSeparator))
	}
	g.input = before[1:]
	g.want = strings.TrimSuffix(after, "\n")
	return g
}

func (g headGolden) format(got string) string {
	return "title=" + g.title + "\ndescription=" + g.description + "\nfavicon=" + g.favicon +
		"\n" + g.input + headSeparator + got + "\n"
}

func TestInjectHeadGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "head", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no golden files in testdata/head")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			g := parseHeadGolden(t, p, string(raw))
			got := string(InjectHead([]byte(g.input), g.title, g.description, g.favicon))
			if *update {
				if err := os.WriteFile(p, []byte(g.format(got)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != g.want {
				t.Errorf("InjectHead output differs\n got: %q\nwant: %q", got, g.want)
			}
			// Injecting again must change nothing: everything is there now.
			again := string(InjectHead([]byte(got), g.title, g.description, g.favicon))
			if again != got {
				t.Errorf("InjectHead is not idempotent\nonce:  %q\ntwice: %q", got, again)
			}
		})
	}
}

func TestInjectHeadUnchangedIsSameSlice(t *testing.T) {
	doc := []byte(`<html><head><title>x</title><meta name="description" content="d"><link rel="icon" href="/f.ico"></head></html>`)
	for _, args := range [][3]string{
		{"T", "D", "🚀"},
		{"", "", ""},
		{" ", "\t", "\n"},
	} {
		out := InjectHead(doc, args[0], args[1], args[2])
		if len(out) != len(doc) || &out[0] != &doc[0] {
			t.Errorf("InjectHead(%q) returned a new slice, want doc itself", args)
		}
	}
	if out := InjectHead(nil, "", "", ""); out != nil {
		t.Errorf("InjectHead(nil) with nothing to add = %q, want nil", out)
	}
}

func TestInjectHeadDoesNotModifyInput(t *testing.T) {
	// Spare capacity after the document must not be written to either.
	buf := []byte("<head></head>" + strings.Repeat("z", 32))
	doc := buf[:len("<head></head>")]
	orig := string(buf)
	out := InjectHead(doc, "T", "", "")
	if string(buf) != orig {
		t.Errorf("input modified: %q", buf)
	}
	if want := "<head><title>T</title></head>"; string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestInjectHeadBOM(t *testing.T) {
	doc := []byte("\xef\xbb\xbf<p>hi</p>")
	got := string(InjectHead(doc, "T", "", ""))
	if want := "\xef\xbb\xbf<head><title>T</title></head><p>hi</p>"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	doc = []byte("\xef\xbb\xbf<!DOCTYPE html><p>hi</p>")
	got = string(InjectHead(doc, "T", "", ""))
	if want := "\xef\xbb\xbf<!DOCTYPE html><head><title>T</title></head><p>hi</p>"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestInjectHeadDetection(t *testing.T) {
	// Each document's head already has a title, a description and an icon,
	// in some unusual spelling: nothing may be added.
	has := []string{
		`<head><TITLE>x</TITLE><META NAME=Description CONTENT=x><LINK REL=ICON HREF=/i></head>`,
		`<head><title></title><meta content='x' name='DESCRIPTION'><link href="/i" rel="shortcut icon"></head>`,
		`<head><title>x</title ><meta name = "description " content=""><link rel="mask-icon" href="/m.svg"></head>`,
		`<title>x</title><meta name="descr&#105;ption"><link rel="apple-touch-icon">`,
		`<!doctype html><html><head><meta charset="utf-8"><script>if (a < b) {}</script><title>x</title>` +
			`<meta name="description"><link rel="icon"></head><body></body></html>`,
		`<head><meta data-x="a>b" name="description"><title>x</title><link rel=icon></head>`,
		// A browser puts head elements after </head> in the head too.
		`<head><meta name="description"></head><title>x</title><link rel=icon><body></body>`,
	}
	for i, doc := range has {
		got := InjectHead([]byte(doc), "T", "D", "🚀")
		if string(got) != doc {
			t.Errorf("doc %d: InjectHead added tags to %q:\n%q", i, doc, got)
		}
	}

	// Only the head region counts; hidden or misplaced tags do not.
	icon := `<link rel="icon" href="` + html.EscapeString(emojiIconURL("🚀")) + `">`
	lacks := []struct {
		doc, title, desc, fav, want string
	}{
		{
			doc:   `<head></head><body><title>x</title><meta name="description"><link rel="icon"></body>`,
			title: "T", desc: "D",
			want: `<head><title>T</title><meta name="description" content="D"></head><body><title>x</title><meta name="description"><link rel="icon"></body>`,
		},
		{
			doc:   `<head><style>/* <title>x</title> <link rel="icon"> */</style></head>`,
			title: "T", fav: "🚀",
			want: `<head><title>T</title>` + icon + `<style>/* <title>x</title> <link rel="icon"> */</style></head>`,
		},
		{
			doc:   `<head><script>document.write("<title>x</title>")</script></head>`,
			title: "T",
			want:  `<head><title>T</title><script>document.write("<title>x</title>")</script></head>`,
		},
		{
			doc:  `<head><noscript><link rel="icon" href="/x.ico"></noscript></head>`,
			fav:  "🚀",
			want: `<head>` + icon + `<noscript><link rel="icon" href="/x.ico"></noscript></head>`,
		},
		{
			// A <p> starts the body in a browser, so the late title is not in the head.
			doc:   `<p>text</p><title>late</title>`,
			title: "T",
			want:  `<head><title>T</title></head><p>text</p><title>late</title>`,
		},
		{
			// So does text.
			doc:   `Hello <title>late</title>`,
			title: "T",
			want:  `<head><title>T</title></head>Hello <title>late</title>`,
		},
		{
			// An SVG's <title> is not the document's.
			doc:   `<h1>Hi</h1><svg><title>circle</title></svg>`,
			title: "T",
			want:  `<head><title>T</title></head><h1>Hi</h1><svg><title>circle</title></svg>`,
		},
		{
			doc:  `<head><meta property="og:description" content="x"><meta name="descriptionx"></head>`,
			desc: "D",
			want: `<head><meta name="description" content="D"><meta property="og:description" content="x"><meta name="descriptionx"></head>`,
		},
		{
			doc:  `<head><link rel="stylesheet" href="icon.css"><link rel="preload" href="/icon.png"></head>`,
			fav:  "🚀",
			want: `<head>` + icon + `<link rel="stylesheet" href="icon.css"><link rel="preload" href="/icon.png"></head>`,
		},
		{
			doc:   "  \n<!-- build 7 -->\n<!DOCTYPE html>\n<p>x</p>",
			title: "T",
			want:  "  \n<!-- build 7 -->\n<!DOCTYPE html><head><title>T</title></head>\n<p>x</p>",
		},
		{
			doc:   `<?xml version="1.0"?><!DOCTYPE html><p>x</p>`,
			title: "T",
			want:  `<?xml version="1.0"?><!DOCTYPE html><head><title>T</title></head><p>x</p>`,
		},
		{
			// A doctype after other content is not leading.
			doc:   "<p>x</p><!DOCTYPE html>",
			title: "T",
			want:  "<head><title>T</title></head><p>x</p><!DOCTYPE html>",
		},
		{
			doc:   `<!doctype html><html><header><title>x</title></header>`,
			title: "T",
			want:  `<!doctype html><html><head><title>T</title></head><header><title>x</title></header>`,
		},
		{
			doc:   `<html><head data-x="a>b"><meta charset="utf-8"></head></html>`,
			title: "  T  ",
			want:  `<html><head data-x="a>b"><meta charset="utf-8"><title>T</title></head></html>`,
		},
	}
	for i, tt := range lacks {
		got := string(InjectHead([]byte(tt.doc), tt.title, tt.desc, tt.fav))
		if got != tt.want {
			t.Errorf("case %d: InjectHead(%q)\n got %q\nwant %q", i, tt.doc, got, tt.want)
		}
	}
}

func TestEmojiIconURL(t *testing.T) {
	for _, emoji := range []string{"🚀", "A", `"'<>&#%`, "a b", "👩‍💻"} {
		u := emojiIconURL(emoji)
		if strings.ContainsAny(u, "\"'<>&# \t\n") {
			t.Errorf("emojiIconURL(%q) = %q has characters unsafe in an attribute or URL", emoji, u)
		}
		data, ok := strings.CutPrefix(u, "data:image/svg+xml,")
		if !ok {
			t.Fatalf("emojiIconURL(%q) = %q: not an SVG data URL", emoji, u)
		}
		svg, err := url.PathUnescape(data)
		if err != nil {
			t.Fatalf("emojiIconURL(%q): %v", emoji, err)
		}
		want := "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 100 100'><text y='.9em' font-size='90'>" +
			html.EscapeString(emoji) + "</text></svg>"
		if svg != want {
			t.Errorf("emojiIconURL(%q) decodes to %q, want %q", emoji, svg, want)
		}
	}
}

// TestInjectHeadHostile feeds truncated and malformed markup: no panics, and
// the original document always survives inside the output.
func TestInjectHeadHostile(t *testing.T) {
	docs := []string{
		"", "<", "<!", "<!-", "<!--", "<!-- x", "<!-->", "<!--->", "<!-- --!>", "</", "</>", "<?", "<a",
		"<head", "<head ", "<head a=", "<head a='", `<head a="x`, "<head/", "<html", "<!doctype",
		"<script>", "<head><script>", "<head><title>", "<head><title>x</titl", "<head><title>x</title",
		"<plaintext><title>", "<<<>>>", "<head>\x00<title>", "<\xff\xfe>", "<head a=b c d=>",
		"<head><noscript><link rel=icon></noscript></head>",
		"<head><textarea><title></textarea></head>",
	}
	for _, d := range docs {
		for _, full := range []bool{false, true} {
			doc := d
			if full {
				doc = "<!DOCTYPE html><html><head>" + d
			}
			out := string(InjectHead([]byte(doc), "T", "D", "x"))
			if !isSubsequence(doc, out) {
				t.Errorf("InjectHead(%q) = %q lost input bytes", doc, out)
			}
		}
	}
}

// isSubsequence reports whether out is in with bytes inserted at one point.
func isSubsequence(in, out string) bool {
	if len(out) < len(in) {
		return false
	}
	i := 0
	for i < len(in) && in[i] == out[i] {
		i++
	}
	return strings.HasSuffix(out, in[i:])
}

// TestInjectHeadASCIIFolding: the HTML tokenizer lowercases tag and
// attribute names in ASCII only, and name and rel values are compared
// ASCII case-insensitively; Unicode case folding (U+0130 İ to "i", the
// Kelvin sign U+212A to "k", U+017F ſ to "s") must not make a tag, a
// description or an icon out of something a browser does not read as one.
func TestInjectHeadASCIIFolding(t *testing.T) {
	icon := `<link rel="icon" href="` + html.EscapeString(emojiIconURL("🚀")) + `">`
	for _, tt := range []struct {
		doc, title, desc, fav, want string
	}{
		{
			// <tİtle> is an unknown element that starts the body, not a
			// title whose text hides the <script>.
			doc:   "<!doctype html><t\u0130tle><script>var a='</title><head>';</script>",
			title: "T",
			want:  "<!doctype html><head><title>T</title></head><t\u0130tle><script>var a='</title><head>';</script>",
		},
		{
			doc:   "<scr\u0130pt><!--</script><head>-->",
			title: "T",
			want:  "<head><title>T</title></head><scr\u0130pt><!--</script><head>-->",
		},
		{
			doc:  "<head><lin\u212a rel=icon></head>",
			fav:  "🚀",
			want: "<head>" + icon + "<lin\u212a rel=icon></head>",
		},
		{
			doc:  `<head><meta name="de` + "\u017f" + `cription"></head>`,
			desc: "D",
			want: `<head><meta name="description" content="D"><meta name="de` + "\u017f" + `cription"></head>`,
		},
		{
			doc:  `<head><meta name="DESCR` + "\u0130" + `PTION"></head>`,
			desc: "D",
			want: `<head><meta name="description" content="D"><meta name="DESCR` + "\u0130" + `PTION"></head>`,
		},
		{
			doc:  "<head><link rel=\"\u0130con\"><link rel=\"shortcut \u0130CON\"></head>",
			fav:  "🚀",
			want: "<head>" + icon + "<link rel=\"\u0130con\"><link rel=\"shortcut \u0130CON\"></head>",
		},
	} {
		got := string(InjectHead([]byte(tt.doc), tt.title, tt.desc, tt.fav))
		if got != tt.want {
			t.Errorf("InjectHead(%q)\n got %q\nwant %q", tt.doc, got, tt.want)
		}
	}
}

// TestInjectHeadTemplate: a <template>'s content is inert. A <head> or
// <html> in it is not where tags go, a <title>, <meta> or <link> in it
// does not count, and what it holds (elements, text, </body>) does not
// end the head.
func TestInjectHeadTemplate(t *testing.T) {
	icon := `<link rel="icon" href="` + html.EscapeString(emojiIconURL("🚀")) + `">`
	for _, tt := range []struct {
		doc, title, desc, fav, want string
	}{
		{
			doc:   `<head><template><title>x</title><meta name="description"><link rel="icon"></template></head>`,
			title: "T", desc: "D", fav: "🚀",
			want: `<head><title>T</title><meta name="description" content="D">` + icon +
				`<template><title>x</title><meta name="description"><link rel="icon"></template></head>`,
		},
		{
			doc:   `<!doctype html><template><head><p>x</p></template><head><meta charset=utf-8></head>`,
			title: "T",
			want:  `<!doctype html><template><head><p>x</p></template><head><meta charset=utf-8><title>T</title></head>`,
		},
		{
			doc:   `<template><html lang=x></template><p>y</p>`,
			title: "T",
			want:  `<head><title>T</title></head><template><html lang=x></template><p>y</p>`,
		},
		{
			// Nested templates: the title is still inside the outer one.
			doc:   `<head><template><template></template><title>x</title></template></head>`,
			title: "T",
			want:  `<head><title>T</title><template><template></template><title>x</title></template></head>`,
		},
	} {
		got := string(InjectHead([]byte(tt.doc), tt.title, tt.desc, tt.fav))
		if got != tt.want {
			t.Errorf("InjectHead(%q)\n got %q\nwant %q", tt.doc, got, tt.want)
		}
	}
	// The head goes on after a template, whatever it holds.
	for _, doc := range []string{
		`<head><template><div>x</div> text </template><title>x</title></head>`,
		`<head><template></body></html></template><title>x</title></head>`,
		`<head></template><template></template><title>x</title></head>`,
	} {
		if got := string(InjectHead([]byte(doc), "T", "", "")); got != doc {
			t.Errorf("InjectHead(%q) = %q, want it unchanged (the title is in the head)", doc, got)
		}
	}
}

// TestInjectHeadAfterCharset: the tags go right after the <meta> that
// declares the encoding, wherever it is in the head, so it stays where
// the author put it (a browser reads it in the first 1024 bytes only);
// without one, right after <head>. A charset inside a template, a
// comment, a script or the body does not count.
func TestInjectHeadAfterCharset(t *testing.T) {
	const tags = `<title>T</title><meta name="description" content="D">`
	for _, c := range []struct{ name, doc, want string }{
		{"charset first in head", `<!doctype html><html><head><meta charset="utf-8"><meta name=viewport content=x></head><body>x</body></html>`,
			`<!doctype html><html><head><meta charset="utf-8">` + tags + `<meta name=viewport content=x></head><body>x</body></html>`},
		{"no charset: after <head>", `<!doctype html><html><head><meta name=viewport content=x></head></html>`,
			`<!doctype html><html><head>` + tags + `<meta name=viewport content=x></head></html>`},
		{"uppercase", `<!DOCTYPE HTML><HTML><HEAD><META CHARSET="UTF-8"></HEAD></HTML>`,
			`<!DOCTYPE HTML><HTML><HEAD><META CHARSET="UTF-8">` + tags + `</HEAD></HTML>`},
		{"unquoted, self-closed", `<head><meta charset=utf-8 /><link rel=stylesheet href=a.css></head>`,
			`<head><meta charset=utf-8 />` + tags + `<link rel=stylesheet href=a.css></head>`},
		{"other attributes first", `<head><meta data-x="a>b" CharSet='utf-8' id=c></head>`,
			`<head><meta data-x="a>b" CharSet='utf-8' id=c>` + tags + `</head>`},
		{"after other head tags", `<head><link rel=preload href=a.woff2><meta charset="utf-8"></head>`,
			`<head><link rel=preload href=a.woff2><meta charset="utf-8">` + tags + `</head>`},
		{"http-equiv content-type", `<head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"><style>p{}</style></head>`,
			`<head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">` + tags + `<style>p{}</style></head>`},
		{"other http-equiv", `<head><meta http-equiv="refresh" content="5"></head>`,
			`<head>` + tags + `<meta http-equiv="refresh" content="5"></head>`},
		{"the first of two", `<head><meta charset=utf-8><meta charset=latin1></head>`,
			`<head><meta charset=utf-8>` + tags + `<meta charset=latin1></head>`},
		{"without <head>", `<!doctype html><meta charset=utf-8><p>x</p>`,
			`<!doctype html><meta charset=utf-8>` + tags + `<p>x</p>`},
		{"in a comment", `<head><!--<meta charset=utf-8>--></head>`,
			`<head>` + tags + `<!--<meta charset=utf-8>--></head>`},
		{"in a template", `<head><template><meta charset=utf-8></template></head>`,
			`<head>` + tags + `<template><meta charset=utf-8></template></head>`},
		{"in a script", `<head><script>"<meta charset=utf-8>"</script></head>`,
			`<head>` + tags + `<script>"<meta charset=utf-8>"</script></head>`},
		{"in the body", `<html><head></head><body><meta charset=utf-8></body></html>`,
			`<html><head>` + tags + `</head><body><meta charset=utf-8></body></html>`},
		{"a charset-like name", `<head><meta name=charset content=utf-8></head>`,
			`<head>` + tags + `<meta name=charset content=utf-8></head>`},
	} {
		if got := string(InjectHead([]byte(c.doc), "T", "D", "")); got != c.want {
			t.Errorf("%s: InjectHead(%q)\n got %q\nwant %q", c.name, c.doc, got, c.want)
		}
	}
}
