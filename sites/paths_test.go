package sites

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestNormalizePath(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" means an error is expected
		msg  string // substring of the error message
	}{
		{"index.html", "index.html", ""},
		{"css/site.css", "css/site.css", ""},
		{"/etc/passwd", "etc/passwd", ""},
		{"./a", "a", ""},
		{"/a/b/c.js", "a/b/c.js", ""},
		{"café/ü.html", "café/ü.html", ""},
		{"%2e%2e/x", "%2e%2e/x", ""},
		{"...", "...", ""},
		{".well-known/x", ".well-known/x", ""},
		{"a/.hidden", "a/.hidden", ""},
		{"a b/c d.html", "a b/c d.html", ""},
		{"a..b/c", "a..b/c", ""},
		{strings.Repeat("a", 1024), strings.Repeat("a", 1024), ""},
		{"/" + strings.Repeat("a", 1024), strings.Repeat("a", 1024), ""},
		{strings.Repeat("a/", 31) + "a", strings.Repeat("a/", 31) + "a", ""},

		{"", "", "empty"},
		{"/", "", "empty"},
		{"./", "", "empty"},
		{".", "", `"." or ".."`},
		{"..", "", `"." or ".."`},
		{"../x", "", `"." or ".."`},
		{"a/../../b", "", `"." or ".."`},
		{"a/..", "", `"." or ".."`},
		{"a/./b", "", `"." or ".."`},
		{"././a", "", `"." or ".."`},
		{"./../a", "", `"." or ".."`},
		{"/./a", "", `"." or ".."`},
		{"//etc/passwd", "", "absolute"},
		{".//a", "", "absolute"},
		{"/../a", "", `"." or ".."`},
		{"a//b", "", "empty segment"},
		{"a/", "", "empty segment"},
		{"a/b/", "", "empty segment"},
		{`a\b`, "", "backslash"},
		{`..\x`, "", "backslash"},
		{`C:\x`, "", "backslash"},
		{"a\x00b", "", "NUL"},
		{"a\nb", "", "control"},
		{"a\rb", "", "control"},
		{"a\tb", "", "control"},
		{"a\x1fb", "", "control"},
		{"a\x7fb", "", "control"},
		{"a\u0085b", "", "control"},
		{"a\xffb", "", "UTF-8"},
		{"\xc0\xaf", "", "UTF-8"},
		{strings.Repeat("a", 1025), "", "longer than 1024"},
		{strings.Repeat("a/", 32) + "a", "", "more than 32 segments"},
	}
	for _, tt := range tests {
		got, err := NormalizePath(tt.in)
		if tt.want != "" {
			if err != nil || got != tt.want {
				t.Errorf("NormalizePath(%q) = (%q, %v), want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("NormalizePath(%q) = %q, want an error", tt.in, got)
			continue
		}
		var pe *PathError
		if !errors.As(err, &pe) {
			t.Errorf("NormalizePath(%q) error %T is not a *PathError", tt.in, err)
			continue
		}
		if pe.Path != tt.in {
			t.Errorf("NormalizePath(%q) error names path %q", tt.in, pe.Path)
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("NormalizePath(%q) error = %q, want it to mention %q", tt.in, err.Error(), tt.msg)
		}
	}
}

func TestPathErrorMessage(t *testing.T) {
	err := &PathError{Path: "a\"b\n", Msg: "duplicate path"}
	want := `invalid file path "a\"b\n": duplicate path`
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestDecodeFiles(t *testing.T) {
	files, err := DecodeFiles([]FileInput{
		{Path: "/index.html", Content: text("<h1>hi</h1>")},
		{Path: "./css/site.css", Content: text("body{}")},
		{Path: "img/dot.png", Content: text("iVBORw0K\nGgoAAAAN\r\n SUhEUg=="), Encoding: "base64"},
		{Path: "raw.bin", Content: text("AAEC"), Encoding: "base64"},
		{Path: "unpadded.txt", Content: text("aGk"), Encoding: "base64"},
		{Path: "padded.txt", Content: text("aGk="), Encoding: "base64"},
		{Path: "empty.txt", Content: text(""), Encoding: "base64"},
		{Path: "empty.html", Content: text("")},
		{Path: "data", Content: text(`{"a":1}`), ContentType: "Application/JSON"},
		{Path: "page", Content: text("<p>x</p>"), ContentType: "text/html; charset=ISO-8859-1"},
		{Path: "font.woff2", Content: text("d09GMg=="), Encoding: "base64", ContentType: " font/woff2 "},
		{Path: "README", Content: text("plain words")},
		{Path: "Upper.HTML", Content: text("x")},
		{Path: "café/ü.html", Content: text("ü")},
	}, nil)
	if err != nil {
		t.Fatalf("DecodeFiles: %v", err)
	}
	want := []File{
		{"index.html", "text/html; charset=utf-8", []byte("<h1>hi</h1>")},
		{"css/site.css", "text/css; charset=utf-8", []byte("body{}")},
		{"img/dot.png", "image/png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")},
		{"raw.bin", "application/octet-stream", []byte{0, 1, 2}},
		{"unpadded.txt", "text/plain; charset=utf-8", []byte("hi")},
		{"padded.txt", "text/plain; charset=utf-8", []byte("hi")},
		{"empty.txt", "text/plain; charset=utf-8", []byte{}},
		{"empty.html", "text/html; charset=utf-8", []byte{}},
		{"data", "application/json; charset=utf-8", []byte(`{"a":1}`)},
		{"page", "text/html; charset=ISO-8859-1", []byte("<p>x</p>")},
		{"font.woff2", "font/woff2", []byte("wOF2")},
		{"README", "text/plain; charset=utf-8", []byte("plain words")},
		{"Upper.HTML", "text/html; charset=utf-8", []byte("x")},
		{"café/ü.html", "text/html; charset=utf-8", []byte("ü")},
	}
	if len(files) != len(want) {
		t.Fatalf("got %d files, want %d", len(files), len(want))
	}
	for i, w := range want {
		g := files[i]
		if g.Path != w.Path || g.ContentType != w.ContentType || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("file %d = {%q %q %q}, want {%q %q %q}",
				i, g.Path, g.ContentType, g.Data, w.Path, w.ContentType, w.Data)
		}
	}
}

// text is a FileInput's Content.
func text(s string) *string { return &s }

func TestDecodeFilesErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []FileInput
		path string // the path the error must name
		msg  string // the exact Msg
	}{
		{
			name: "duplicate after normalising",
			in:   []FileInput{{Path: "/a.html", Content: text("1")}, {Path: "a.html", Content: text("2")}},
			path: "a.html",
			msg:  "duplicate path",
		},
		{
			name: "duplicate with ./",
			in:   []FileInput{{Path: "x/a.css", Content: text("")}, {Path: "./x/a.css", Content: text("")}},
			path: "./x/a.css",
			msg:  "duplicate path",
		},
		{
			name: "unknown encoding",
			in:   []FileInput{{Path: "a.bin", Content: text("AAAA"), Encoding: "hex"}},
			path: "a.bin",
			msg:  `unknown encoding "hex" (use "base64" or omit it)`,
		},
		{
			name: "encoding is case-sensitive",
			in:   []FileInput{{Path: "a.bin", Content: text("AAAA"), Encoding: "BASE64"}},
			path: "a.bin",
			msg:  `unknown encoding "BASE64" (use "base64" or omit it)`,
		},
		{
			name: "invalid base64",
			in:   []FileInput{{Path: "ok.txt", Content: text("")}, {Path: "a.png", Content: text("not base64!"), Encoding: "base64"}},
			path: "a.png",
			msg:  "content is not valid base64",
		},
		{
			name: "url-safe base64 is not standard",
			in:   []FileInput{{Path: "a.png", Content: text("__8="), Encoding: "base64"}},
			path: "a.png",
			msg:  "content is not valid base64",
		},
		{
			name: "wrong padding",
			in:   []FileInput{{Path: "a.png", Content: text("aGk=="), Encoding: "base64"}},
			path: "a.png",
			msg:  "content is not valid base64",
		},
		{
			name: "truncated base64",
			in:   []FileInput{{Path: "a.png", Content: text("a"), Encoding: "base64"}},
			path: "a.png",
			msg:  "content is not valid base64",
		},
		{
			name: "bad contentType",
			in:   []FileInput{{Path: "a.html", Content: text(""), ContentType: "text/html; charset"}},
			path: "a.html",
			msg:  `invalid contentType "text/html; charset"`,
		},
		{
			name: "contentType without subtype",
			in:   []FileInput{{Path: "a.html", Content: text(""), ContentType: "html"}},
			path: "a.html",
			msg:  `invalid contentType "html"`,
		},
		{
			name: "no content",
			in:   []FileInput{{Path: "a.html", Content: text("")}, {Path: "about.html"}},
			path: "about.html",
			msg:  "files[1] has no content: content or sha256 is required",
		},
		{
			name: "encoding without content",
			in:   []FileInput{{Path: "a.png", Encoding: "base64"}},
			path: "a.png",
			msg:  "files[0] has no content: content or sha256 is required",
		},
		{
			name: "empty content and sha256",
			in:   []FileInput{{Path: "a.png", Content: text(""), SHA256: strings.Repeat("a", 64)}},
			path: "a.png",
			msg:  "give content or sha256, not both",
		},
		{
			name: "bad path",
			in:   []FileInput{{Path: "a.html", Content: text("")}, {Path: "../b.html"}},
			path: "../b.html",
			msg:  `path contains a "." or ".." segment`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := DecodeFiles(tt.in, nil)
			if err == nil {
				t.Fatalf("DecodeFiles = %v, want an error", files)
			}
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T (%v) is not a *PathError", err, err)
			}
			if pe.Path != tt.path || pe.Msg != tt.msg {
				t.Errorf("error = {%q %q}, want {%q %q}", pe.Path, pe.Msg, tt.path, tt.msg)
			}
		})
	}
}

func TestContentTypeFor(t *testing.T) {
	tests := []struct {
		path string
		data string
		want string
	}{
		{"index.html", "", "text/html"},
		{"a.HTM", "", "text/html"},
		{"s.css", "", "text/css"},
		{"app.js", "", "text/javascript"},
		{"mod.mjs", "", "text/javascript"},
		{"d.json", "", "application/json"},
		{"app.js.map", "", "application/json"},
		{"notes.txt", "", "text/plain"},
		{"README.md", "", "text/markdown"},
		{"feed.xml", "", "application/xml"},
		{"logo.svg", "", "image/svg+xml"},
		{"a.png", "", "image/png"},
		{"a.jpg", "", "image/jpeg"},
		{"a.jpeg", "", "image/jpeg"},
		{"a.gif", "", "image/gif"},
		{"a.webp", "", "image/webp"},
		{"a.avif", "", "image/avif"},
		{"favicon.ico", "", "image/x-icon"},
		{"f.woff", "", "font/woff"},
		{"f.woff2", "", "font/woff2"},
		{"f.ttf", "", "font/ttf"},
		{"f.otf", "", "font/otf"},
		{"m.wasm", "", "application/wasm"},
		{"doc.pdf", "", "application/pdf"},
		{"v.mp4", "", "video/mp4"},
		{"v.webm", "", "video/webm"},
		{"a.mp3", "", "audio/mpeg"},
		{"a.ogg", "", "audio/ogg"},
		{"a.wav", "", "audio/wav"},
		{"t.csv", "", "text/csv"},
		{"site.webmanifest", "", "application/manifest+json"},
		{"dir.html/file", "<html><body>x", "text/html; charset=utf-8"},
		{"LICENSE", "plain text", "text/plain; charset=utf-8"},
		{"blob", "\x89PNG\r\n\x1a\n", "image/png"},
		{"blob", "\x00\x01\x02", "application/octet-stream"},
	}
	for _, tt := range tests {
		if got := ContentTypeFor(tt.path, []byte(tt.data)); got != tt.want {
			t.Errorf("ContentTypeFor(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestWithUTF8Charset(t *testing.T) {
	tests := []struct{ in, want string }{
		{"text/html", "text/html; charset=utf-8"},
		{"TEXT/HTML", "text/html; charset=utf-8"},
		{"text/css", "text/css; charset=utf-8"},
		{"text/plain", "text/plain; charset=utf-8"},
		{"text/javascript", "text/javascript; charset=utf-8"},
		{"application/javascript", "application/javascript; charset=utf-8"},
		{"application/json", "application/json; charset=utf-8"},
		{"text/markdown", "text/markdown; charset=utf-8"},
		{"text/csv", "text/csv; charset=utf-8"},
		{"image/svg+xml", "image/svg+xml; charset=utf-8"},
		{"text/xml", "text/xml; charset=utf-8"},
		{"application/xml", "application/xml; charset=utf-8"},
		{"application/manifest+json", "application/manifest+json; charset=utf-8"},
		{"text/markdown; variant=GFM", "text/markdown; charset=utf-8; variant=GFM"},
		{"text/html; charset=utf-8", "text/html; charset=utf-8"},
		{"text/html; charset=ISO-8859-1", "text/html; charset=ISO-8859-1"},
		{"text/html;charset=UTF-8", "text/html;charset=UTF-8"},
		{"image/png", "image/png"},
		{"application/octet-stream", "application/octet-stream"},
		{"text/x-unknown", "text/x-unknown"},
		{"", ""},
		{"not a type;;", "not a type;;"},
	}
	for _, tt := range tests {
		if got := WithUTF8Charset(tt.in); got != tt.want {
			t.Errorf("WithUTF8Charset(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestIsHTML(t *testing.T) {
	tests := []struct {
		ct   string
		want bool
	}{
		{"text/html", true},
		{"text/html; charset=utf-8", true},
		{"TEXT/HTML; Charset=UTF-8", true},
		{" text/html ", true},
		{"text/html; charset", true},
		{"text/htmlx", false},
		{"application/xhtml+xml", false},
		{"text/plain", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsHTML(tt.ct); got != tt.want {
			t.Errorf("IsHTML(%q) = %v, want %v", tt.ct, got, tt.want)
		}
	}
}
