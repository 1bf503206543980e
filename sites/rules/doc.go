// Package rules parses and matches a site's Netlify-style _redirects and
// _headers files: ParseRedirects and CompileRedirects give the first rule
// that applies to a request (splats, :placeholders, query conditions,
// shadowing and "!" force), ParseHeaders and CompileHeaders the headers and
// Basic-Auth credentials of the blocks whose pattern matches a path.
//
// Lines that do not parse, or use what sitedrop does not support (proxying
// to another origin, host-qualified rules, Netlify's Country=, Language=,
// Role=, Cookie= conditions and signed proxies), are not applied: they come
// back as Warnings (line, text, reason) and never fail the parse.
//
// The work an input causes is bounded: parsing is linear in the input, and
// the limits below cap what is kept; past a cap, a Warning says so and the
// rest is ignored. A compiled rule set is read-only and safe for concurrent
// use; matching a request that no rule matches allocates nothing.
package rules

import "sitedrop/sites/wire"

// Limits of what a _redirects or _headers file may hold.
const (
	// MaxLineBytes is the longest line kept; a longer line is a Warning
	// and is skipped.
	MaxLineBytes = 4096
	// MaxRedirectRules is the most redirect rules kept; the lines after it
	// are ignored (one Warning).
	MaxRedirectRules = 100_000
	// MaxPlaceholders is the most :placeholders (path and query together)
	// one redirect rule may bind.
	MaxPlaceholders = 16
	// MaxTargetPlaceholders is the most ":name" a redirect rule's
	// destination may hold: each stands for up to a whole request path,
	// so many of them would make one short line expand to megabytes.
	MaxTargetPlaceholders = 16
	// MaxHeaderBlocks is the most path blocks of _headers kept; the lines
	// after it are ignored (one Warning).
	MaxHeaderBlocks = 1_000
	// MaxHeadersPerBlock is the most header names one block may set; the
	// further lines of the block are ignored (one Warning).
	MaxHeadersPerBlock = 64
	// MaxHeadersPerAnswer is the most header names the matching blocks
	// together set on one answer; further names are not sent.
	MaxHeadersPerAnswer = 128
	// MaxHeaderValueBytes is the longest header value, repeated lines of
	// one name joined; a line that would make it longer is a Warning.
	MaxHeaderValueBytes = 8192
	// MaxWarnings is the most Warnings reported for one file; the last one
	// counts those left out.
	MaxWarnings = 100
	// maxWarningText is where a Warning's Text is cut.
	maxWarningText = 200
)

// The files this package reads, as named in a Warning.
const (
	RedirectsFile = "_redirects"
	HeadersFile   = "_headers"
)

// Warning is a line of _redirects or _headers that was not applied:
// File is RedirectsFile or HeadersFile, Line is 1-based (0 for the
// summary of the lines left out past MaxWarnings), Text the line trimmed
// and cut to about 200 bytes, Reason why, in plain words. It is the
// wire's type (sitedrop/sites/wire): a deploy's answer carries it as
// the parser made it.
type Warning = wire.Warning
