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
