package sites

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// TestGzipLevelBySize: a file of gzipBestFrom bytes and more gets gzip's
// best level, a smaller one the faster level; both are what a fresh
// writer of that level makes (deterministic: a redeploy stores the same
// variant blob).
func TestGzipLevelBySize(t *testing.T) {
	text := func(n int) []byte {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "function f%d(a, b) { return a * %d + b; }\n", i, i%97)
		}
		return []byte(b.String()[:n])
	}
	gz := func(data []byte, level int) []byte {
		var b bytes.Buffer
		w, err := gzip.NewWriterLevel(&b, level)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
		return b.Bytes()
	}
	for _, tc := range []struct {
		size, level int
	}{
		{gzipBestFrom - 1, gzipLevel},
		{gzipBestFrom, gzipBestLevel},
		{100 << 10, gzipBestLevel},
	} {
		data := text(tc.size)
		for range 2 { // a compressor used before makes the same output
			v, err := compressVariants(context.Background(), data, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := gz(data, tc.level); !bytes.Equal(v[EncodingGzip], want) {
				t.Errorf("%d bytes: gzip variant of %d bytes, want level %d's %d", tc.size, len(v[EncodingGzip]), tc.level, len(want))
			}
		}
	}
}

// TestNoZstdVariantMade: a deploy makes brotli and gzip variants, each
// as that coding alone makes it under the 5% rule, and no zstd variant
// (madeCodings: browsers that accept zstd accept brotli, nearly always
// the smaller).
func TestNoZstdVariantMade(t *testing.T) {
	ctx := context.Background()
	page := []byte(strings.Repeat("<p class=\"lead\">Hello, visitor of this page; here is some text.</p>\n", 40))
	var css strings.Builder
	for i := range 300 {
		fmt.Fprintf(&css, ".c%d{margin:%dpx;color:#%06x}\n", i, i%17, i*7919%0xffffff)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{{"html", page}, {"css", []byte(css.String())}} {
		limit := len(tc.data) - len(tc.data)/20
		v, err := compressVariants(ctx, tc.data, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, coding := range []string{EncodingBrotli, EncodingGzip} {
			b, err := compressCoding(ctx, coding, tc.data, limit, nil)
			if err != nil || b == nil {
				t.Fatalf("%s: %s alone: %d bytes, %v", tc.name, coding, len(b), err)
			}
			if len(v[coding]) != len(b) {
				t.Errorf("%s: %s variant of %d bytes, want %d", tc.name, coding, len(v[coding]), len(b))
			}
		}
		if len(v) != 2 || v[EncodingZstd] != nil {
			t.Errorf("%s: variants %d, a zstd one %v; want brotli and gzip alone", tc.name, len(v), v[EncodingZstd] != nil)
		}
	}
}
