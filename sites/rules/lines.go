package rules

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// lineReader walks a file's lines (LF or CRLF) with their 1-based numbers.
// It makes the file a string a chunk of whole lines at a time (about
// lineChunk bytes, or one longer line), and each line is a substring of
// its chunk: reading costs no allocation per line, a parse that stops
// early (ParseRedirectsN) copies at most one chunk past where it stopped,
// and what the rules keep of their lines (patterns, names, values) shares
// the chunks, which the rule set's memory estimate counts anyway (see
// sites/serve's siteRules). Warnings copy their text (cut), so a report
// keeps no chunk.
type lineReader struct {
	data    []byte
	pos     int    // where the next line starts in data
	chunk   string // data[chunkAt:chunkAt+len(chunk)], whole lines
	chunkAt int
	num     int
}

// lineChunk is about how much of a file lineReader copies at a time.
const lineChunk = 64 << 10

// next returns the next line, trimmed of surrounding white space, its
// untrimmed length, and false at the end of the input.
func (r *lineReader) next() (line string, rawLen int, ok bool) {
	if r.pos >= len(r.data) {
		return "", 0, false
	}
	if r.pos >= r.chunkAt+len(r.chunk) {
		r.nextChunk()
	}
	rest := r.chunk[r.pos-r.chunkAt:]
	end := strings.IndexByte(rest, '\n')
	if end < 0 {
		end = len(rest)
	}
	raw := rest[:end]
	r.pos += end + 1
	r.num++
	return strings.TrimSpace(raw), len(raw), true
}

// nextChunk copies the lines from r.pos: up to lineChunk bytes cut after
// the last whole line, or the one line that starts there when it is
// longer.
func (r *lineReader) nextChunk() {
	end := len(r.data)
	if r.pos+lineChunk < end {
		end = r.pos + lineChunk
		if i := bytes.LastIndexByte(r.data[r.pos:end], '\n'); i >= 0 {
			end = r.pos + i + 1
		} else if i := bytes.IndexByte(r.data[end:], '\n'); i >= 0 {
			end += i + 1
		} else {
			end = len(r.data)
		}
	}
	r.chunk, r.chunkAt = string(r.data[r.pos:end]), r.pos
}

// warnings collects the Warnings of one file, at most MaxWarnings of them.
type warnings struct {
	file    string
	list    []Warning
	dropped int
}

// add records that line num (its text) was not applied, and why.
func (w *warnings) add(num int, text, reason string) {
	if len(w.list) >= MaxWarnings-1 {
		w.dropped++
		return
	}
	w.list = append(w.list, Warning{File: w.file, Line: num, Text: cut(text), Reason: reason})
}

// full tells whether no more Warnings are kept: a line not applied now
// is only counted, so why need not be written out (see explain).
func (w *warnings) full() bool { return len(w.list) >= MaxWarnings-1 }

// done returns the Warnings, the last one counting those left out.
func (w *warnings) done() []Warning {
	if w.dropped > 0 {
		w.list = append(w.list, Warning{File: w.file, Reason: fmt.Sprintf(
			"%d more lines were not applied (only the first %d are listed)", w.dropped, MaxWarnings-1)})
	}
	return w.list
}

// cut shortens text to about maxWarningText bytes, on a rune boundary,
// and replaces invalid UTF-8 so the Warning encodes as JSON cleanly. The
// result is a copy: text is a substring of the whole file.
func cut(text string) string {
	if len(text) > maxWarningText {
		i := maxWarningText
		for i > 0 && !utf8.RuneStart(text[i]) {
			i--
		}
		text = text[:i] + "…"
	}
	return strings.Clone(strings.ToValidUTF8(text, "\uFFFD"))
}

// explain tells a check whether to write out why a line or rule is not
// applied. A parse past MaxWarnings keeps no more Warnings, and
// CompileRedirects and CompileHeaders keep only whether a rule checks:
// formatting a reason for each line would then be most of what a file of
// bad lines costs (see sites/serve's BenchmarkCompileRules), so they ask
// for none and get notExplained.
type explain bool

// notExplained is the reason of a line whose reason was not asked for.
const notExplained = "not applied"

// str is fmt.Sprintf(format, s) when e is set.
func (e explain) str(format, s string) string {
	if !e {
		return notExplained
	}
	return fmt.Sprintf(format, s)
}

// num is fmt.Sprintf(format, n) when e is set.
func (e explain) num(format string, n int) string {
	if !e {
		return notExplained
	}
	return fmt.Sprintf(format, n)
}
