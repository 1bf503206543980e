package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// siteMix is the share of each kind of file in a generated site, in
// hundredths: pages, stylesheets, scripts, images.
var siteMix = []struct {
	kind  string
	share int
}{{"html", 45}, {"css", 15}, {"js", 20}, {"png", 20}}

// Sizes of a generated site's files: uniform in [siteMinSize, siteMaxSize].
const (
	siteMinSize = 1 << 10
	siteMaxSize = 30 << 10
)

// writeSite writes a site of n files into dir, as a static site generator
// lays one out: index.html, pages under posts/NNN/, hashed assets under
// assets/. Each file is 1–30 KB, its bytes unique to (seed, its index):
// HTML, CSS and JavaScript of words (compressible), images of
// pseudo-random bytes (not). It returns the bytes written.
func writeSite(dir string, n int, seed uint64) (int64, error) {
	r := rng(seed*0x9E3779B97F4A7C15 + 1)
	var total int64
	for i := range n {
		kind := siteKind(i)
		size := siteMinSize + r.intn(siteMaxSize-siteMinSize+1)
		var name string
		var data []byte
		tag := fmt.Sprintf("s%d-f%d", seed, i)
		switch {
		case i == 0:
			name, data = "index.html", sitePage(&r, tag, size)
		case kind == "html":
			name, data = fmt.Sprintf("posts/%03d/%s-%d/index.html", i/100, r.word(), i), sitePage(&r, tag, size)
		case kind == "css":
			name, data = fmt.Sprintf("assets/css/%s.%08x.css", r.word(), uint32(r.next())), siteText(&r, "/* "+tag+" */\n", ".%s { margin: %dpx; color: #%06x; }\n", size)
		case kind == "js":
			name, data = fmt.Sprintf("assets/js/%s.%08x.js", r.word(), uint32(r.next())), siteText(&r, "/* "+tag+" */\n", "export const %s = %d;\n", size)
		default:
			name, data = fmt.Sprintf("assets/img/%s-%d.%08x.png", r.word(), i, uint32(r.next())), siteImage(&r, tag, size)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return total, err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return total, err
		}
		total += int64(len(data))
	}
	return total, nil
}

// siteKind is the kind of the i-th file, following siteMix.
func siteKind(i int) string {
	k := i % 100
	for _, m := range siteMix {
		if k < m.share {
			return m.kind
		}
		k -= m.share
	}
	return siteMix[len(siteMix)-1].kind
}

// sitePage is an HTML page of exactly size bytes.
func sitePage(r *rng, tag string, size int) []byte {
	head := "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + tag +
		"</title>\n<link rel=\"stylesheet\" href=\"/assets/css/site.css\">\n</head>\n<body>\n<main>\n"
	var b strings.Builder
	b.WriteString(head)
	for b.Len() < size-400 {
		fmt.Fprintf(&b, "<h2>%s</h2>\n<p>%s %s</p>\n", r.sentence(3, 6), r.sentence(8, 16), r.sentence(6, 12))
	}
	return fit(r, b.String(), "<p>", "</p>\n", "</main>\n</body>\n</html>\n", size)
}

// siteText is a stylesheet or script of exactly size bytes: head, then
// lines of format (a word, a number, a number).
func siteText(r *rng, head, format string, size int) []byte {
	var b strings.Builder
	b.WriteString(head)
	for b.Len() < size-200 {
		fmt.Fprintf(&b, format, r.ident(), r.intn(1000), r.intn(1<<24))
	}
	return fit(r, b.String(), "/* ", " */\n", "", size)
}

// siteImage is size bytes starting with the PNG signature and tag, then
// pseudo-random bytes: it compresses as little as a real image.
func siteImage(r *rng, tag string, size int) []byte {
	b := make([]byte, 0, size)
	b = append(b, "\x89PNG\r\n\x1a\n"...)
	b = append(b, tag...)
	for len(b) < size {
		v := r.next()
		for k := 0; k < 8 && len(b) < size; k++ {
			b = append(b, byte(v>>(8*k)))
		}
	}
	return b
}
