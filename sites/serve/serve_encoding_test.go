package serve

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// deployedServer serves files as the site "demo" the way a deploy stores
// them: through sites.DeployedFiles, with their precompressed variants.
func deployedServer(t testing.TB, files []sites.File, opts ...ServerOptions) (*Server, sites.Manifest) {
	t.Helper()
	blobStore, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, blobs, err := sites.DeployedFiles(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	addZstdVariants(t, m, blobs)
	for h, data := range blobs {
		if err := blobStore.Put(context.Background(), h, data); err != nil {
			t.Fatal(err)
		}
	}
	site := sites.Site{Slug: "demo", Status: sites.StatusActive, Files: m}
	srv := NewServer(func(string) (*sites.Site, error) { cp := site; return &cp, nil }, blobStore, opts...)
	return srv, m
}

// addZstdVariants gives every file of m that has variants a zstd one too,
// as deploys stored them before a zstd variant was kept only when smaller
// than brotli's (and still do when it is): the server serves what a
// manifest names.
func addZstdVariants(t testing.TB, m sites.Manifest, blobs map[string][]byte) {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	for p, e := range m {
		if len(e.Encoded) == 0 || e.Encoded["zstd"].Hash != "" {
			continue
		}
		z := enc.EncodeAll(blobs[e.Hash], nil)
		h := store.HashBytes(z)
		blobs[h] = z
		e.Encoded["zstd"] = sites.EncodedEntry{Hash: h, Size: int64(len(z))}
		m[p] = e
	}
}

// decode undoes a Content-Encoding.
func decode(t testing.TB, coding string, b []byte) string {
	t.Helper()
	var r io.Reader
	switch coding {
	case "":
		return string(b)
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "gzip":
		gr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = gr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	default:
		t.Fatalf("unknown coding %q", coding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", coding, err)
	}
	return string(out)
}

var (
	pageHTML = "<!doctype html><title>t</title>" + strings.Repeat("<p>Hello, compressible world.</p>\n", 200)
	appJS    = strings.Repeat("function add(a, b) { return a + b; }\n", 300)
	// logoPNG is incompressible: no variants.
	logoPNG = string([]byte{0x89, 'P', 'N', 'G', 0x13, 0x7f, 0xa2, 0x01}) + pseudoRandom(4000)
)

func pseudoRandom(n int) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return string(b)
}

func TestServeEncodings(t *testing.T) {
	srv, m := deployedServer(t, []sites.File{
		{Path: "index.html", ContentType: htmlType, Data: []byte(pageHTML)},
		{Path: "assets/app.js", ContentType: "text/javascript; charset=utf-8", Data: []byte(appJS)},
		{Path: "logo.png", ContentType: "image/png", Data: []byte(logoPNG)},
		{Path: "tiny.css", ContentType: "text/css; charset=utf-8", Data: []byte("p{margin:0}")},
	})
	if len(m["index.html"].Encoded) != 3 || len(m["assets/app.js"].Encoded) != 3 {
		t.Fatalf("variants: html %v, js %v", m["index.html"].Encoded, m["assets/app.js"].Encoded)
	}
	if m["logo.png"].Encoded != nil || m["tiny.css"].Encoded != nil {
		t.Fatal("variants made for an image or a file under the minimum size")
	}
	for _, c := range []struct {
		name, path, accept, coding string
		vary                       bool
	}{
		{"brotli preferred", "/", "gzip, deflate, br, zstd", "br", true},
		{"zstd over gzip", "/", "gzip, zstd", "zstd", true},
		{"gzip only", "/assets/app.js", "gzip", "gzip", true},
		{"case and spaces", "/", " GZip ;q=0.8 ", "gzip", true},
		{"q=0 refuses", "/", "br;q=0, gzip", "gzip", true},
		{"q=0.000 refuses", "/", "br;q=0.000,zstd;q=0.0,gzip;q=0.001", "gzip", true},
		{"wildcard", "/", "*", "br", true},
		{"wildcard minus br", "/", "*, br;q=0", "zstd", true},
		{"identity only", "/", "identity", "", true},
		{"no header", "/", "", "", true},
		{"unknown coding", "/", "compress, deflate", "", true},
		{"image never encoded", "/logo.png", "gzip, br", "", false},
		{"small file never encoded", "/tiny.css", "gzip, br", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{}
			if c.accept != "" {
				h["Accept-Encoding"] = c.accept
			}
			res := get(srv, http.MethodGet, c.path, h)
			raw, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != c.coding {
				t.Fatalf("%d, Content-Encoding %q, want 200 %q", res.StatusCode, res.Header.Get("Content-Encoding"), c.coding)
			}
			if (res.Header.Get("Vary") == "Accept-Encoding") != c.vary {
				t.Errorf("Vary = %q", res.Header.Get("Vary"))
			}
			want := map[string]string{"/": pageHTML, "/assets/app.js": appJS, "/logo.png": logoPNG, "/tiny.css": "p{margin:0}"}[c.path]
			if got := decode(t, c.coding, raw); got != want {
				t.Fatalf("decoded body differs (%d bytes, want %d)", len(got), len(want))
			}
			if res.Header.Get("Content-Length") != strconv.Itoa(len(raw)) {
				t.Errorf("Content-Length %q for %d bytes", res.Header.Get("Content-Length"), len(raw))
			}
		})
	}
}

// TestServeRepresentationValidators: each representation has its own
// strong ETag; 304, HEAD and Range work on the representation sent.
func TestServeRepresentationValidators(t *testing.T) {
	srv, m := deployedServer(t, []sites.File{{Path: "index.html", ContentType: htmlType, Data: []byte(pageHTML)}})
	e := m["index.html"]
	gz := get(srv, http.MethodGet, "/", map[string]string{"Accept-Encoding": "gzip"})
	plain := get(srv, http.MethodGet, "/", nil)
	if gz.Header.Get("ETag") != `"`+e.Encoded["gzip"].Hash+`"` || plain.Header.Get("ETag") != `"`+e.Hash+`"` {
		t.Fatalf("ETags: gzip %q, identity %q", gz.Header.Get("ETag"), plain.Header.Get("ETag"))
	}
	for _, c := range []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"gzip revalidated", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": gz.Header.Get("ETag")}, 304},
		{"weak form matches", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": "W/" + gz.Header.Get("ETag")}, 304},
		{"in a list", map[string]string{"If-None-Match": `"x", ` + plain.Header.Get("ETag")}, 304},
		{"star", map[string]string{"If-None-Match": "*"}, 304},
		{"gzip ETag for brotli", map[string]string{"Accept-Encoding": "br", "If-None-Match": gz.Header.Get("ETag")}, 200},
		{"other", map[string]string{"If-None-Match": `"other"`}, 200},
	} {
		res := get(srv, http.MethodGet, "/", c.headers)
		if res.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", c.name, res.StatusCode, c.status)
		}
		if c.status == 304 && (body(res) != "" || res.Header.Get("ETag") == "" || res.Header.Get("Cache-Control") != "no-cache") {
			t.Errorf("%s: 304 without its validators or with a body", c.name)
		}
	}
	head := get(srv, http.MethodHead, "/", map[string]string{"Accept-Encoding": "br"})
	if head.StatusCode != 200 || body(head) != "" || head.Header.Get("Content-Length") != strconv.Itoa(int(e.Encoded["br"].Size)) {
		t.Errorf("HEAD br: %d, Content-Length %q", head.StatusCode, head.Header.Get("Content-Length"))
	}
	rng := get(srv, http.MethodGet, "/", map[string]string{"Accept-Encoding": "gzip", "Range": "bytes=0-9"})
	if rng.StatusCode != http.StatusPartialContent || rng.Header.Get("Content-Encoding") != "gzip" || len(body(rng)) != 10 {
		t.Errorf("Range on gzip: %d %q", rng.StatusCode, rng.Header.Get("Content-Encoding"))
	}
}

func TestServeCacheControl(t *testing.T) {
	files := []sites.File{
		{Path: "index.html", ContentType: htmlType, Data: []byte("<p>home</p>")},
		{Path: "assets/index-BT0GIVA5.js", ContentType: "text/javascript; charset=utf-8", Data: []byte("1")},
		{Path: "assets/app.DZopBupu.js", ContentType: "text/javascript; charset=utf-8", Data: []byte("1b")},
		{Path: "about.3f2a1b4c.html", ContentType: htmlType, Data: []byte("<p>a page</p>")},
		{Path: "frame.3f2a1b4c.php", ContentType: htmlType, Data: []byte("<p>a page by its type</p>")},
		{Path: "static/js/main.3f2a1b4c.js", ContentType: "text/javascript; charset=utf-8", Data: []byte("2")},
		{Path: "app-settings.js", ContentType: "text/javascript; charset=utf-8", Data: []byte("3")},
		{Path: "logo.png", ContentType: "image/png", Data: []byte("4")},
	}
	srv, _ := deployedServer(t, files)
	for path, want := range map[string]string{
		"/":                           "no-cache",
		"/assets/index-BT0GIVA5.js":   "public, max-age=31536000, immutable",
		"/assets/app.DZopBupu.js":     "public, max-age=31536000, immutable",
		"/about.3f2a1b4c":             "no-cache",
		"/frame.3f2a1b4c.php":         "no-cache",
		"/static/js/main.3f2a1b4c.js": "public, max-age=31536000, immutable",
		"/app-settings.js":            "no-cache",
		"/logo.png":                   "no-cache",
	} {
		if got := get(srv, http.MethodGet, path, nil).Header.Get("Cache-Control"); got != want {
			t.Errorf("%s: Cache-Control %q, want %q", path, got, want)
		}
	}
}

// TestServeLargeFileFromDisk: a file over the in-memory limit is streamed
// from its blob, and still answers HEAD and Range.
func TestServeLargeFileFromDisk(t *testing.T) {
	big := pseudoRandom(maxCachedFile + 4096)
	srv, _ := deployedServer(t, []sites.File{{Path: "video.bin", ContentType: "application/octet-stream", Data: []byte(big)}})
	res := get(srv, http.MethodGet, "/video.bin", nil)
	if got := body(res); res.StatusCode != 200 || got != big {
		t.Fatalf("large file: %d, %d bytes", res.StatusCode, len(got))
	}
	if len(srv.content.items) != 0 {
		t.Error("a file over the limit was cached in memory")
	}
	res = get(srv, http.MethodGet, "/video.bin", map[string]string{"Range": "bytes=-5"})
	if res.StatusCode != 206 || body(res) != big[len(big)-5:] {
		t.Errorf("Range on a large file: %d", res.StatusCode)
	}
	res = get(srv, http.MethodHead, "/video.bin", nil)
	if res.Header.Get("Content-Length") != strconv.Itoa(len(big)) || body(res) != "" {
		t.Errorf("HEAD on a large file: %q", res.Header.Get("Content-Length"))
	}
}

// TestContentCacheBudget: cached bytes stay within the budget.
func TestContentCacheBudget(t *testing.T) {
	var files []sites.File
	for i := range 10 {
		files = append(files, sites.File{Path: "f" + strconv.Itoa(i) + ".bin", ContentType: "application/octet-stream", Data: []byte(pseudoRandom(1000 + i))})
	}
	srv, _ := deployedServer(t, files, ServerOptions{ContentCacheBytes: 3500})
	for i := range 10 {
		if res := get(srv, http.MethodGet, "/f"+strconv.Itoa(i)+".bin", nil); res.StatusCode != 200 || len(body(res)) != 1000+i {
			t.Fatalf("f%d: %d", i, res.StatusCode)
		}
	}
	if srv.content.used > 3500 || len(srv.content.items) == 0 || len(srv.content.items) > 3 {
		t.Fatalf("cache holds %d items, %d bytes; budget 3500", len(srv.content.items), srv.content.used)
	}
}

func TestAcceptedCodings(t *testing.T) {
	const id, br, zs, gz = 1, 2, 4, 8
	for header, want := range map[string]uint8{
		"":                           id,
		"gzip":                       id | gz,
		"br, gzip":                   id | br | gz,
		"gzip;q=0":                   id,
		"gzip; q=0.5, br;q=1.0":      id | br | gz,
		"*":                          id | br | zs | gz,
		"*;q=0":                      0,
		"*, gzip;q=0":                id | br | zs,
		"identity, *;q=0":            id,
		"identity;q=0":               0,
		"identity;q=0, *":            br | zs | gz,
		"gzip, *;q=0":                gz,
		"IDENTITY;q=0.5":             id,
		"ZSTD":                       id | zs,
		"gzip;q=garbage":             id,
		"deflate, compress, x-gzip":  id,
		"br;level=5":                 id | br,
		",,gzip,,":                   id | gz,
		"gzip;q=0., zstd ; q = 0.2 ": id | zs,
	} {
		if got := acceptedCodings([]string{header}); got != want {
			t.Errorf("acceptedCodings(%q) = %04b, want %04b", header, got, want)
		}
	}
	if got := acceptedCodings([]string{"gzip", "br"}); got != id|br|gz {
		t.Errorf("two header lines: %04b", got)
	}
}

func TestCleanRequestPath(t *testing.T) {
	for in, want := range map[string]string{
		"/":              "",
		"/index.html":    "index.html",
		"/docs/":         "docs",
		"/a/b.css":       "a/b.css",
		"//a":            "a",
		"/a/./b":         "a/b",
		"/a/../../etc":   "etc",
		"/.":             "",
		"/..":            "",
		"/a//b/":         "a/b",
		"/.well-known/x": ".well-known/x",
		"/a/..b":         "a/..b",
	} {
		if got := cleanRequestPath(in); got != want {
			t.Errorf("cleanRequestPath(%q) = %q, want %q", in, got, want)
		}
	}
}
