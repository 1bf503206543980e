package rules

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// lineReader walks a file's lines (LF or CRLF) with their 1-based numbers,
// without copying the input.
type lineReader struct {
	data []byte
	pos  int
	num  int
}

// next returns the next line, trimmed of surrounding white space, its
// untrimmed length, and false at the end of the input.
func (r *lineReader) next() (line string, rawLen int, ok bool) {
	if r.pos >= len(r.data) {
		return "", 0, false
	}
	rest := r.data[r.pos:]
	end := len(rest)
	for i, c := range rest {
		if c == '\n' {
			end = i
			break
		}
	}
	raw := rest[:end]
	r.pos += end + 1
	r.num++
	return strings.TrimSpace(string(raw)), len(raw), true
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

// done returns the Warnings, the last one counting those left out.
func (w *warnings) done() []Warning {
	if w.dropped > 0 {
		w.list = append(w.list, Warning{File: w.file, Reason: fmt.Sprintf(
			"%d more lines were not applied (only the first %d are listed)", w.dropped, MaxWarnings-1)})
	}
	return w.list
}

// cut shortens text to about maxWarningText bytes, on a rune boundary,
// and replaces invalid UTF-8 so the Warning encodes as JSON cleanly.
func cut(text string) string {
	if len(text) > maxWarningText {
		i := maxWarningText
		for i > 0 && !utf8.RuneStart(text[i]) {
			i--
		}
		text = text[:i] + "…"
	}
	return strings.ToValidUTF8(text, "\uFFFD")
}
