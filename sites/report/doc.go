// Package report builds a deploy's quality report: the problems of a
// site that a deploy accepts but a visitor would meet. It finds broken
// internal links and missing assets (href, src, srcset, action, poster,
// and CSS url() and @import in .css files, <style> and style=), each
// with the page that references it; forms that post nowhere; the lines
// of _redirects and _headers that were not applied; pages without a
// title; and images over LargeImageBytes.
//
// A link is resolved exactly as the site server resolves a request
// (sites/serve's Checker): clean URLs, directory indexes, _redirects
// (a redirected or rewritten path is not broken) and single-page apps
// (a page path reaches index.html; an asset still has to exist).
//
// The work is linear and bounded: one pass of a tokenizer over each HTML
// and CSS file, at most MaxScanBytes of them in all, MaxLinksPerPage
// links examined per file and MaxLinks in all, a token of at most 1 MiB
// held at a time (a page with a longer one is examined up to it), each
// list of findings cut
// at MaxEntries; past any limit, or when the context is done, the report
// says Truncated.
package report

// Limits of a report.
const (
	// MaxEntries is the most entries of each list of a Report.
	MaxEntries = 100
	// MaxLinksPerPage is the most links examined in one HTML or CSS file.
	MaxLinksPerPage = 2000
	// MaxLinks is the most links examined in a whole site.
	MaxLinks = 50000
	// MaxScanBytes is the most HTML and CSS read for one report; the
	// files past it (in path order) are not examined.
	MaxScanBytes = 64 << 20
	// LargeImageBytes is the size above which an image is reported.
	LargeImageBytes = 1 << 20
)
