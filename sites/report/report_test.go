package report

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"sitedrop/sites"
)

// site builds deployed files from path → content, typed by extension.
func site(files map[string]string) []sites.File {
	var out []sites.File
	for p, c := range files {
		out = append(out, sites.File{Path: p, ContentType: sites.WithUTF8Charset(sites.ContentTypeFor(p, []byte(c))), Data: []byte(c)})
	}
	return out
}

// page is an HTML page with title (none when "") and body.
func page(title, body string) string {
	head := ""
	if title != "" {
		head = "<title>" + title + "</title>"
	}
	return "<!doctype html><html><head>" + head + "</head><body>" + body + "</body></html>"
}

// input is the report's input for files, with their rules parsed as the
// deploy parses them.
func input(files []sites.File, isSPA bool, title string) Input {
	redirects, warnings := sites.ParseRules(files)
	return Input{Files: files, Redirects: redirects, IsSPA: isSPA, Title: title, Warnings: warnings}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", LargeImageBytes+1)
	broken := map[string]string{
		"index.html": page("", `<a href="/about">About</a> <a href="/nope">x</a> <img src="missing.png">
			<img srcset="/a.png 1x, /gone@2x.png 2x"> <form method="post"><input name="q"></form>
			<form action="/send" method="post"><input name="q"></form> <a href="/old">old</a>`),
		"about.html":      page("About", `<a href="../docs/guide">guide</a> <a href="team.html">team</a>`),
		"docs/index.html": page("Docs", `<a href="guide">guide</a><style>body{background:url('/bg.png')}</style>`),
		"style.css":       `body { background: url(img/bg.png) } /* url(commented.png) */ @import "more.css";`,
		"a.png":           "png",
		"big.jpg":         big,
		"_redirects":      "/old\n/x /y 999\n",
		"_headers":        "/*\n  Set-Cookie: a=b\n",
	}
	fixed := map[string]string{
		"index.html": page("Home", `<a href="/about">About</a> <a href="/about.html#team">team</a> <a href="/docs">docs</a>
			<a href="/docs/">docs</a> <a href="./?q=1#top">top</a> <a href="#x">x</a> <a href="mailto:a@b.c">mail</a>
			<a href="https://example.com/nope">ext</a> <a href="//cdn.example/x.js">cdn</a> <a href="/old">old</a>
			<a href="/app/anything">app</a> <a href="/a%20b">space</a> <img src="a.png?v=2" srcset="a.png 1x, /a@2x.png 2x">
			<form action="{{SUBMIT_URL}}" method="post"><input name="q"></form> <form action="/search"><input name="q"></form>
			<form action="https://forms.example/x" method="post"><input name="q"></form> <form><button>JS</button></form>`),
		"about.html":      page("About", `<a href="docs/guide">guide</a> <a href="./docs/">docs</a> <a href="index.html">home</a>`),
		"docs/index.html": page("Docs", `<a href="guide">guide</a> <a href="../about">about</a><style>body{background:url('/bg.png')}</style>`),
		"docs/guide.html": page("Guide", `<a href="/">home</a> <img style="background:url(../a.png)" src="../a.png">`),
		"search.html":     page("Search", ""),
		"a b.html":        page("Space", ""),
		"style.css":       `body { background: url("img/bg.png") } @import "more.css";`,
		"more.css":        `p { color: red }`,
		"img/bg.png":      "png",
		"bg.png":          "png",
		"a.png":           "png",
		"a@2x.png":        "png",
		"_redirects":      "/old /about 301\n/app/* /index.html 200\n",
	}
	spa := map[string]string{
		"index.html": page("App", `<a href="/dashboard/settings">settings</a> <a href="/docs/manual.pdf">pdf</a>
			<img src="/logo.png"> <script src="/app.js"></script>`),
		"app.js": "x",
	}
	tests := []struct {
		name  string
		files map[string]string
		isSPA bool
		title string
		want  Report
	}{
		{name: "each problem", files: broken, want: Report{
			BrokenLinks: []BrokenLink{
				{Page: "about.html", Target: "/docs/guide"}, {Page: "about.html", Target: "/team.html"},
				{Page: "docs/index.html", Target: "/docs/guide"}, {Page: "docs/index.html", Target: "/bg.png"},
				{Page: "index.html", Target: "/nope"}, {Page: "index.html", Target: "/missing.png"}, {Page: "index.html", Target: "/gone@2x.png"}, {Page: "index.html", Target: "/old"}, // its rule did not parse
				{Page: "style.css", Target: "/img/bg.png"}, {Page: "style.css", Target: "/more.css"},
			},
			Forms: []FormProblem{
				{Page: "index.html", Problem: problemNoAction},
				{Page: "index.html", Problem: fmt.Sprintf(problemMissing, "/send")},
			},
			Rules: []RuleProblem{
				{File: "_headers", Line: 2, Message: "Set-Cookie cannot be changed: not allowed: a site host shares its parent domain with other sites, so sites set no cookies from _headers"},
				{File: "_redirects", Line: 1, Message: "missing destination path or URL"},
				{File: "_redirects", Line: 2, Message: "status 999 is not supported (200, 301, 302, 303, 307, 308, 404, 410)"},
			},
			UntitledPages: []string{"index.html"},
			LargeImages:   []LargeImage{{Path: "big.jpg", Size: int64(len(big))}},
		}},
		{name: "the same site fixed", files: fixed, want: Empty()},
		{name: "a page without title gets the deployment's", files: map[string]string{"index.html": page("", "")},
			title: "Mine", want: Empty()},
		{name: "a single-page app: pages resolve, assets are checked", files: spa, isSPA: true, want: Report{
			BrokenLinks: []BrokenLink{{Page: "index.html", Target: "/docs/manual.pdf"}, {Page: "index.html", Target: "/logo.png"}},
		}},
		{name: "a POST to a static page", files: map[string]string{
			"index.html":  page("Home", `<form action="thanks.html" method="POST"><input name="q"></form>`),
			"thanks.html": page("Thanks", ""),
		}, want: Report{Forms: []FormProblem{{Page: "index.html", Problem: fmt.Sprintf(problemPost, "/thanks.html")}}}},
		{name: "a base href", files: map[string]string{
			"docs/index.html": page("Docs", `<base href="/v2/"><a href="guide">guide</a> <a href="gone">x</a>`),
			"v2/guide.html":   page("Guide", `<base href="https://other.example/"><a href="anything">x</a> <a href="/nope">y</a>`),
		}, want: Report{BrokenLinks: []BrokenLink{{Page: "docs/index.html", Target: "/v2/gone"}, {Page: "v2/guide.html", Target: "/nope"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := site(tt.files)
			got := Build(context.Background(), input(files, tt.isSPA, tt.title))
			want := normalize(tt.want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("report\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// normalize gives a wanted report's nil lists as empty ones, as Build.
func normalize(r Report) Report {
	e := Empty()
	if r.BrokenLinks == nil {
		r.BrokenLinks = e.BrokenLinks
	}
	if r.Forms == nil {
		r.Forms = e.Forms
	}
	if r.Rules == nil {
		r.Rules = e.Rules
	}
	if r.UntitledPages == nil {
		r.UntitledPages = e.UntitledPages
	}
	if r.LargeImages == nil {
		r.LargeImages = e.LargeImages
	}
	return r
}

func TestBuildCapped(t *testing.T) {
	t.Parallel()
	var body strings.Builder
	for i := range MaxEntries + 5 {
		fmt.Fprintf(&body, `<a href="/missing-%d">x</a>`, i)
	}
	files := site(map[string]string{"index.html": page("Home", body.String())})
	got := Build(context.Background(), Input{Files: files})
	if len(got.BrokenLinks) != MaxEntries || !got.Truncated {
		t.Fatalf("%d broken links, truncated %v; want %d, true", len(got.BrokenLinks), got.Truncated, MaxEntries)
	}
	if got.BrokenLinks[0].Target != "/missing-0" {
		t.Fatalf("first finding %+v, want /missing-0 (document order)", got.BrokenLinks[0])
	}
}

func TestBuildCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	files := site(map[string]string{"index.html": page("", `<a href="/nope">x</a>`)})
	got := Build(ctx, Input{Files: files})
	if !got.Truncated || len(got.BrokenLinks) != 0 || len(got.UntitledPages) != 0 {
		t.Fatalf("a cancelled build gave %+v, want nothing but truncated", got)
	}
}
