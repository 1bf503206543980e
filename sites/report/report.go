package report

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"sitedrop/sites"
	"sitedrop/sites/rules"
	"sitedrop/sites/serve"
	"sitedrop/sites/wire"
)

// The report's types are the wire's (sitedrop/sites/wire), where the
// deploy's answer, the client and the API's description share them; the
// names here are the same types.
type (
	// Report is a deploy's quality report, as the deploy's answer
	// carries it in "report". Truncated is also set when a list had
	// more than MaxEntries to hold.
	Report = wire.Report
	// BrokenLink is a link to a path of the site it does not serve.
	BrokenLink = wire.BrokenLink
	// FormProblem is a form whose submissions go nowhere.
	FormProblem = wire.FormProblem
	// RuleProblem is a line of _redirects or _headers not applied.
	RuleProblem = wire.RuleProblem
	// LargeImage is an image over LargeImageBytes.
	LargeImage = wire.LargeImage
)

// Input is what a report is built from.
type Input struct {
	// Files are the deployed files, as the deploy received them.
	Files []sites.File
	// Redirects are the rules of the site's _redirects (sites.CheckRules):
	// a redirected or rewritten path is not broken.
	Redirects []rules.Redirect
	// IsSPA tells whether the site is served as a single-page app.
	IsSPA bool
	// Title is the deployment's title: a page without a <title> gets it.
	Title string
	// Warnings are the rule-file lines not applied (sites.CheckRules).
	Warnings []rules.Warning
}

// Empty returns a report with no findings (every list empty).
func Empty() Report {
	return Report{
		BrokenLinks: []BrokenLink{}, Forms: []FormProblem{}, Rules: []RuleProblem{},
		UntitledPages: []string{}, LargeImages: []LargeImage{},
	}
}

// Build examines the files of in and returns their report. It stops
// early, with Truncated set, when ctx is done.
func Build(ctx context.Context, in Input) Report {
	b := &builder{ctx: ctx, r: Empty(), linksLeft: MaxLinks, bytesLeft: MaxScanBytes}
	b.rules(in.Warnings)
	files := slices.Clone(in.Files)
	slices.SortFunc(files, func(x, y sites.File) int { return strings.Compare(x.Path, y.Path) })
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	var redirects *rules.Redirects
	if len(in.Redirects) > 0 {
		redirects = rules.CompileRedirects(in.Redirects)
	}
	b.check = serve.NewChecker(paths, redirects, in.IsSPA)
	untitled := strings.TrimSpace(in.Title) == ""
	for _, f := range files {
		if ctx.Err() != nil {
			b.r.Truncated = true
			break
		}
		switch {
		case strings.HasPrefix(f.ContentType, "image/") && len(f.Data) > LargeImageBytes:
			b.r.LargeImages = appendCapped(b, b.r.LargeImages, LargeImage{Path: f.Path, Size: int64(len(f.Data))})
		case sites.IsHTML(f.ContentType):
			if b.take(len(f.Data)) {
				b.page(f, untitled)
			}
		case isCSS(f.ContentType):
			if b.take(len(f.Data)) {
				b.styleSheet(f)
			}
		}
	}
	return b.r
}

// builder is the state of one Build.
type builder struct {
	ctx       context.Context
	r         Report
	check     *serve.Checker
	linksLeft int // links that may still be examined
	bytesLeft int // HTML and CSS bytes that may still be read
}

// take reserves n bytes of the scan budget; false (and Truncated) when
// they do not fit.
func (b *builder) take(n int) bool {
	if n > b.bytesLeft {
		b.r.Truncated = true
		return false
	}
	b.bytesLeft -= n
	return true
}

// appendCapped appends v to list unless list holds MaxEntries already
// (then the report is Truncated).
func appendCapped[T any](b *builder, list []T, v T) []T {
	if len(list) >= MaxEntries {
		b.r.Truncated = true
		return list
	}
	return append(list, v)
}

// rules carries the rule-file warnings over, by file and line.
func (b *builder) rules(ws []rules.Warning) {
	ws = slices.Clone(ws)
	slices.SortStableFunc(ws, func(x, y rules.Warning) int {
		if c := strings.Compare(x.File, y.File); c != 0 {
			return c
		}
		if x.Line == 0 || y.Line == 0 { // the summary of the lines left out comes last
			return cmp.Compare(boolInt(x.Line == 0), boolInt(y.Line == 0))
		}
		return cmp.Compare(x.Line, y.Line)
	})
	for _, w := range ws {
		b.r.Rules = appendCapped(b, b.r.Rules, RuleProblem{File: w.File, Line: w.Line, Message: w.Reason})
	}
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// isCSS reports whether a Content-Type is a style sheet's.
func isCSS(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/css")
}
