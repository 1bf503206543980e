package sites

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Content codings of precompressed variants, in the server's order of
// preference when a client accepts several.
const (
	EncodingBrotli = "br"
	EncodingZstd   = "zstd"
	EncodingGzip   = "gzip"
)

// EncodingPreference lists the codings from best to worst (the order the
// site server prefers them in). Read only.
var EncodingPreference = [...]string{EncodingBrotli, EncodingZstd, EncodingGzip}

// minCompressSize is the smallest file worth a precompressed variant:
// below it the saving does not pay for the extra blobs.
const minCompressSize = 512

// Compression settings: good ratios at a cost a deploy request can pay
// (writers are pooled: making one costs more than compressing a small
// file). Brotli quality 6 is within a few percent of 9 on web text at a
// fraction of the time; zstd's default level likewise.
const (
	brotliQuality = 6
	gzipLevel     = gzip.BestCompression
)

var (
	brotliPool = sync.Pool{New: func() any { return brotli.NewWriterLevel(nil, brotliQuality) }}
	gzipPool   = sync.Pool{New: func() any {
		w, err := gzip.NewWriterLevel(nil, gzipLevel)
		if err != nil {
			panic(fmt.Sprintf("gzip writer: %v", err))
		}
		return w
	}}
)

// zstdEncoder is shared: EncodeAll is safe for concurrent use.
var zstdEncoder = mustZstdEncoder()

func mustZstdEncoder() *zstd.Encoder {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(1),
		zstd.WithZeroFrames(true))
	if err != nil {
		panic(fmt.Sprintf("zstd encoder: %v", err))
	}
	return enc
}

// Compressible reports whether a content type gains from compression:
// text, scripts, JSON, XML, SVG, web manifests, WebAssembly and
// uncompressed fonts. Images, video, archives and woff/woff2 are already
// compressed.
func Compressible(contentType string) bool {
	t, _, _ := strings.Cut(contentType, ";")
	t = strings.ToLower(strings.TrimSpace(t))
	switch {
	case strings.HasPrefix(t, "text/"):
		return true
	case strings.HasSuffix(t, "+json"), strings.HasSuffix(t, "+xml"):
		return true // image/svg+xml, application/manifest+json, ...
	}
	switch t {
	case "application/javascript", "application/json", "application/xml", "application/wasm",
		"application/x-javascript", // ld+json, rss+xml, atom+xml: the suffixes above
		"font/ttf", "font/otf", "application/vnd.ms-fontobject", "image/x-icon", "image/vnd.microsoft.icon",
		"image/bmp":
		return true
	}
	return false
}

// compressions counts compressVariants calls, so tests can tell how much
// work a deploy did.
var compressions atomic.Int64

// compressVariants returns the precompressed variants of data by coding,
// keeping only those at least 5% smaller. Every coding is deterministic,
// so unchanged content yields the same variant blobs on every deploy.
func compressVariants(data []byte) (map[string][]byte, error) {
	compressions.Add(1)
	out := make(map[string][]byte, len(EncodingPreference))
	keep := func(coding string, c []byte) {
		if len(c) < len(data)-len(data)/20 {
			out[coding] = c
		}
	}

	var br bytes.Buffer
	bw := brotliPool.Get().(*brotli.Writer)
	defer brotliPool.Put(bw)
	bw.Reset(&br)
	if _, err := bw.Write(data); err != nil {
		return nil, fmt.Errorf("brotli: %w", err)
	}
	if err := bw.Close(); err != nil {
		return nil, fmt.Errorf("brotli: %w", err)
	}
	keep(EncodingBrotli, br.Bytes())

	keep(EncodingZstd, zstdEncoder.EncodeAll(data, make([]byte, 0, len(data)/2)))

	var gz bytes.Buffer
	gw := gzipPool.Get().(*gzip.Writer)
	defer gzipPool.Put(gw)
	gw.Reset(&gz)
	if _, err := gw.Write(data); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := gw.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	keep(EncodingGzip, gz.Bytes())
	return out, nil
}
