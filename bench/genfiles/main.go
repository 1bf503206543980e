// Command genfiles writes the benchmark's test files into a directory:
//
//	index.html  10,240 bytes of realistic, compressible HTML markup
//	app.js     102,400 bytes of realistic, compressible JavaScript
//	logo.png    a valid ~30 KB PNG of pseudo-random pixels, stored without
//	            compression, so its bytes are incompressible
//
// With -site N it writes instead a site of N files of 1–30 KB (HTML pages,
// CSS, JavaScript, images; see writeSite), different for each -seed.
//
// The output is the same on every run and every machine: the content comes
// from a fixed-seed xorshift generator, not from math/rand.
//
// Usage: go run ./bench/genfiles [-site N [-seed S]] DIR
package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
)

const (
	htmlSize = 10 * 1024
	jsSize   = 100 * 1024
	// 102 rows of 100 RGB pixels plus a filter byte each, stored: ~30.8 KB.
	pngW, pngH = 100, 102
)

func main() {
	site := flag.Int("site", 0, "write a site of this many files of 1-30 KB instead of the three files")
	seed := flag.Uint64("seed", 1, "with -site: the seed of the site's content")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: genfiles [-site N [-seed S]] DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
	}
	if *site > 0 {
		n, err := writeSite(dir, *site, *seed)
		if err != nil {
			fail(err)
		}
		fmt.Printf("%d files, %d bytes\n", *site, n)
		return
	}
	files := map[string][]byte{
		"index.html": genHTML(),
		"app.js":     genJS(),
		"logo.png":   genPNG(),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genfiles:", err)
	os.Exit(1)
}

// rng is xorshift64*: tiny, fast and fixed forever, so the files never
// change with the Go version.
type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = rng(x)
	return x * 2685821657736338717
}

func (r *rng) intn(n int) int { return int(r.next()>>33) % n }

var words = strings.Fields(`the a site page deploy server request response file
content cache header status build static index layout theme style script
module export import render component state value option config account
user plan slot version manifest upload domain host path route link image
icon title description form submit field button input label table row column
quick simple fast secure reliable modern light small clear every each with
from into over under about after before while when where which that this
publish serve store share update replace delete create list read write open
close start stop wait retry check verify measure compare report result`)

func (r *rng) word() string { return words[r.intn(len(words))] }

func (r *rng) sentence(min, max int) string {
	n := min + r.intn(max-min+1)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = r.word()
	}
	s := strings.Join(ws, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func (r *rng) ident() string {
	a, b := r.word(), r.word()
	return a + strings.ToUpper(b[:1]) + b[1:]
}

// fit returns body + filler + suffix at exactly size bytes: filler is
// words from r (inside a comment made with open and close) so that the
// padding compresses like the rest of the file, topped up with spaces.
func fit(r *rng, body, open, close, suffix string, size int) []byte {
	room := size - len(body) - len(suffix)
	if room < len(open)+len(close) {
		panic("genfiles: content too long for its size")
	}
	var b strings.Builder
	b.WriteString(body)
	b.WriteString(open)
	n := room - len(open) - len(close)
	filled := 0
	for {
		w := r.word() + " "
		if filled+len(w) > n {
			break
		}
		b.WriteString(w)
		filled += len(w)
	}
	b.WriteString(strings.Repeat(" ", n-filled))
	b.WriteString(close)
	b.WriteString(suffix)
	return []byte(b.String())
}

func genHTML() []byte {
	r := rng(0x9E3779B97F4A7C15)
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Benchmark page</title>
<link rel="stylesheet" href="/style.css">
<script src="/app.js" defer></script>
</head>
<body>
<header class="site-header">
  <a class="brand" href="/"><img src="/logo.png" alt="Logo" width="100" height="102"></a>
  <nav class="main-nav">
    <ul>
`)
	for i := 0; i < 6; i++ {
		w := r.word()
		fmt.Fprintf(&b, "      <li class=\"nav-item\"><a class=\"nav-link\" href=\"/%s/\">%s</a></li>\n", w, strings.ToUpper(w[:1])+w[1:])
	}
	b.WriteString("    </ul>\n  </nav>\n</header>\n<main class=\"content\">\n")
	for sec := 0; b.Len() < htmlSize-1600; sec++ {
		fmt.Fprintf(&b, "  <section class=\"section\" id=\"section-%d\">\n    <h2 class=\"section-title\">%s</h2>\n", sec, r.sentence(3, 6))
		for p := 0; p < 2; p++ {
			fmt.Fprintf(&b, "    <p class=\"text\">%s %s <a href=\"/%s/%s\">%s</a> %s</p>\n",
				r.sentence(8, 16), r.sentence(6, 12), r.word(), r.word(), r.word(), r.sentence(5, 10))
		}
		if sec%2 == 1 {
			b.WriteString("    <table class=\"data\">\n      <thead><tr><th>Name</th><th>Value</th><th>Status</th></tr></thead>\n      <tbody>\n")
			for row := 0; row < 4; row++ {
				fmt.Fprintf(&b, "        <tr><td>%s</td><td>%d</td><td><span class=\"badge badge-%s\">%s</span></td></tr>\n",
					r.ident(), r.intn(10000), r.word(), r.word())
			}
			b.WriteString("      </tbody>\n    </table>\n")
		} else {
			b.WriteString("    <ul class=\"list\">\n")
			for li := 0; li < 3; li++ {
				fmt.Fprintf(&b, "      <li>%s</li>\n", r.sentence(4, 9))
			}
			b.WriteString("    </ul>\n")
		}
		b.WriteString("  </section>\n")
	}
	suffix := "</main>\n<footer class=\"site-footer\">\n  <p>&copy; 2026 Benchmark. All rights reserved.</p>\n</footer>\n</body>\n</html>\n"
	return fit(&r, b.String(), "  <p class=\"note\">", "</p>\n", suffix, htmlSize)
}

func genJS() []byte {
	r := rng(0xD1B54A32D192ED03)
	var b strings.Builder
	b.WriteString("'use strict';\n/* Benchmark bundle: generated, deterministic. */\n")
	for n := 0; b.Len() < jsSize-1000; n++ {
		name := fmt.Sprintf("%s%d", r.ident(), n)
		a, c, d := r.word(), r.word()+"Items", r.ident()
		switch n % 4 {
		case 0:
			fmt.Fprintf(&b, `export function %s(%s, options = {}) {
  const %s = Array.isArray(%s) ? %s : [%s];
  const result = [];
  for (let i = 0; i < %s.length; i++) {
    if (%s[i] && %s[i].%s !== undefined) {
      result.push({ id: i, %s: %s[i].%s, label: "%s" });
    }
  }
  return options.limit ? result.slice(0, options.limit) : result;
}

`, name, a, c, a, a, a, c, c, c, d, d, c, d, r.sentence(2, 4))
		case 1:
			fmt.Fprintf(&b, `export class %s {
  constructor(%s) {
    this.%s = %s;
    this.%s = new Map();
  }
  get(key) {
    return this.%s.has(key) ? this.%s.get(key) : this.%s[key];
  }
  set(key, value) {
    this.%s.set(key, value);
    return this;
  }
}

`, strings.ToUpper(name[:1])+name[1:], a, a, a, c, c, c, a, c)
		case 2:
			fmt.Fprintf(&b, `export async function %s(url, %s) {
  const response = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(%s) });
  if (!response.ok) {
    throw new Error("%s: " + response.status);
  }
  return response.json();
}

`, name, a, a, r.sentence(3, 6))
		default:
			fmt.Fprintf(&b, `export const %s = Object.freeze({
  %s: %d,
  %s: "%s",
  %s: %t,
  %s: (x) => x * %d + %d,
});

`, name, r.ident(), r.intn(100000), r.ident(), r.sentence(2, 5), r.ident(), r.intn(2) == 0, r.ident(), r.intn(97)+2, r.intn(1000))
		}
	}
	return fit(&r, b.String(), "/* ", " */\n", "export default {};\n", jsSize)
}

func genPNG() []byte {
	r := rng(0x2545F4914F6CDD1D)
	img := image.NewRGBA(image.Rect(0, 0, pngW, pngH))
	for y := 0; y < pngH; y++ {
		for x := 0; x < pngW; x++ {
			v := r.next()
			img.Set(x, y, color.RGBA{uint8(v >> 8), uint8(v >> 16), uint8(v >> 24), 255})
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	if err := enc.Encode(&buf, img); err != nil {
		fail(err)
	}
	return buf.Bytes()
}
