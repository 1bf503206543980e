package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"sitedrop/sites"
)

// How often progress is shown: a terminal's line is redrawn at most every
// ttyRedraw; elsewhere (a CI log) a line is printed at each tenth of the
// files and at least every plainEvery while the upload goes on.
const (
	ttyRedraw  = 100 * time.Millisecond
	plainEvery = 5 * time.Second
)

// uploadProgress shows how far an upload is, as
// "uploading 1,234/3,411 files, 12.3/40.1 MB": on a terminal, one line
// redrawn in place; elsewhere, plain lines now and then, the last when
// every file is uploaded. It is safe for concurrent use.
type uploadProgress struct {
	w         io.Writer
	tty       bool
	files     int
	bytes     int64
	mu        sync.Mutex
	doneFiles int
	doneBytes int64
	tenths    int       // tenths of the files shown (plain lines)
	last      time.Time // when a line was last shown
	drawn     bool      // a terminal line is on screen
}

// newUploadProgress shows the progress of uploading files files of bytes
// bytes in all on w, a terminal when tty.
func newUploadProgress(w io.Writer, tty bool, files int, bytes int64) *uploadProgress {
	now := time.Now()
	return &uploadProgress{w: w, tty: tty, files: files, bytes: bytes, last: now}
}

// add counts one uploaded file of size bytes.
func (p *uploadProgress) add(size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.doneFiles++
	p.doneBytes += size
	now := time.Now()
	complete := p.doneFiles == p.files
	if p.tty {
		if complete || now.Sub(p.last) >= ttyRedraw || !p.drawn {
			fmt.Fprintf(p.w, "\r%s\x1b[K", p.line())
			p.drawn, p.last = true, now
		}
		return
	}
	tenths := p.doneFiles * 10 / max(p.files, 1)
	if tenths > p.tenths || now.Sub(p.last) >= plainEvery {
		fmt.Fprintln(p.w, p.line())
		p.tenths, p.last = tenths, now
	}
}

// finish ends the terminal's line, so that what follows (an error, the
// URL) starts on a line of its own.
func (p *uploadProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// line is the progress as shown: bytes in MB, or in kB for an upload
// under 1 MB (which would otherwise read "0.0/0.0 MB").
func (p *uploadProgress) line() string {
	unit, div := "MB", 1e6
	if p.bytes < 1e6 {
		unit, div = "kB", 1e3
	}
	return fmt.Sprintf("uploading %s/%s files, %.1f/%.1f %s", sites.FormatCount(int64(p.doneFiles)), sites.FormatCount(int64(p.files)),
		float64(p.doneBytes)/div, float64(p.bytes)/div, unit)
}

// isTerminal tells whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
