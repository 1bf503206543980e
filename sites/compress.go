package sites

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
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

// The compressors' memory does not grow with the file: a window of
// 1 << compressWindowLog bytes (1 MiB: a web file larger than that loses
// little of its ratio), and the data written compressPiece bytes at a
// time (a large write makes brotli buffer it whole). One compression
// holds about 15 MiB of state, the three codings together (measured for
// fresh writers: 9 MiB brotli, 4 MiB zstd, 1.4 MiB gzip), so that the
// process runs at most GOMAXPROCS compressions at once, whatever the
// number of deploys (compressSlots), each with writers made once: a fixed cost, like the runtime's,
// not one that grows with the deploys.
const (
	compressWindowLog = 20
	compressPiece     = 64 << 10
)

// compressSlots holds the process's compressors: GOMAXPROCS of them, each
// made on first use (nil until then) and kept, so their state is
// allocated once (a pool emptied by every collection would make new
// ones, and garbage). Taking one bounds the compressions at once.
var compressSlots = func() chan *compressor {
	c := make(chan *compressor, runtime.GOMAXPROCS(0))
	for range cap(c) {
		c <- nil
	}
	return c
}()

// writePieces writes data to w compressPiece bytes at a time.
func writePieces(w io.Writer, data []byte) error {
	for len(data) > 0 {
		n := min(len(data), compressPiece)
		if _, err := w.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// compressor is the writers of one compression, kept for the next.
type compressor struct {
	br *brotli.Writer
	zs *zstd.Encoder
	gz *gzip.Writer
}

func newCompressor() *compressor {
	gz, err := gzip.NewWriterLevel(nil, gzipLevel)
	if err != nil {
		panic(fmt.Sprintf("gzip writer: %v", err))
	}
	return &compressor{
		br: brotli.NewWriterOptions(nil, brotli.WriterOptions{Quality: brotliQuality, LGWin: compressWindowLog}),
		zs: mustZstdEncoder(),
		gz: gz,
	}
}

func mustZstdEncoder() *zstd.Encoder {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithWindowSize(1<<compressWindowLog),
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
//
// Each coding writes into a boundedOutput: its memory is reserved
// (reserve, nil for none) before it is allocated, and a coding stops as
// soon as its output reaches the size it would be dropped at, so that
// incompressible data costs neither the memory nor the rest of the time.
func compressVariants(data []byte, reserve func(int64) error) (map[string][]byte, error) {
	compressions.Add(1)
	c := <-compressSlots
	if c == nil {
		c = newCompressor()
	}
	defer func() { compressSlots <- c }()
	out := make(map[string][]byte, len(EncodingPreference))
	limit := len(data) - len(data)/20 // kept only when smaller
	run := func(coding string, compress func(w io.Writer) error) error {
		o := &boundedOutput{limit: limit, reserve: reserve}
		err := compress(o)
		switch {
		case errors.Is(err, errNotSmaller):
			return nil
		case o.err != nil:
			return o.err // the memory budget's
		case err != nil:
			return fmt.Errorf("%s: %w", coding, err)
		}
		b, err := o.bytes()
		if err != nil {
			return err
		}
		out[coding] = b
		return nil
	}

	err := run(EncodingBrotli, func(w io.Writer) error {
		bw := c.br
		bw.Reset(w)
		if err := writePieces(bw, data); err != nil {
			return err
		}
		return bw.Close()
	})
	if err == nil {
		err = run(EncodingZstd, func(w io.Writer) error {
			zw := c.zs
			zw.Reset(w)
			if err := writePieces(zw, data); err != nil {
				zw.Reset(nil)
				return err
			}
			err := zw.Close()
			zw.Reset(nil) // hold no output
			return err
		})
	}
	if err == nil {
		err = run(EncodingGzip, func(w io.Writer) error {
			gw := c.gz
			gw.Reset(w)
			if err := writePieces(gw, data); err != nil {
				return err
			}
			return gw.Close()
		})
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errNotSmaller stops a coding whose output is not smaller enough to keep.
var errNotSmaller = errors.New("compressed output not smaller")

// A compressed output is written into pieces of firstOutputPiece bytes
// first, growing to outputPiece (the last one may be smaller).
const (
	firstOutputPiece = 1 << 10
	outputPiece      = 64 << 10
)

// boundedOutput collects a compressed output of fewer than limit bytes
// in pieces, each reserved before it is allocated, so nothing is copied
// to grow; bytes joins them (reserving the joined copy). Writing limit
// bytes or more fails with errNotSmaller; a refused reservation fails
// the write and stays in err.
type boundedOutput struct {
	limit   int
	reserve func(int64) error
	pieces  [][]byte
	n       int
	err     error
}

func (o *boundedOutput) Write(p []byte) (int, error) {
	if o.n+len(p) >= o.limit {
		return 0, errNotSmaller
	}
	for w := 0; w < len(p); {
		last := len(o.pieces) - 1
		if last < 0 || len(o.pieces[last]) == cap(o.pieces[last]) {
			// pieces grow with the output (no copy): a small output
			// holds little, a large one few pieces
			size := min(outputPiece, max(firstOutputPiece, o.n), o.limit-o.n)
			if err := o.take(int64(size)); err != nil {
				return w, err
			}
			o.pieces = append(o.pieces, make([]byte, 0, size))
			last++
		}
		c := copy(o.pieces[last][len(o.pieces[last]):cap(o.pieces[last])], p[w:])
		o.pieces[last] = o.pieces[last][:len(o.pieces[last])+c]
		w += c
		o.n += c
	}
	return len(p), nil
}

func (o *boundedOutput) take(n int64) error {
	if o.reserve == nil {
		return nil
	}
	if err := o.reserve(n); err != nil {
		o.err = err
		return err
	}
	return nil
}

// bytes is the output in one slice.
func (o *boundedOutput) bytes() ([]byte, error) {
	switch len(o.pieces) {
	case 0:
		return []byte{}, nil
	case 1:
		return o.pieces[0], nil
	}
	if err := o.take(int64(o.n)); err != nil {
		return nil, err
	}
	b := make([]byte, 0, o.n)
	for _, p := range o.pieces {
		b = append(b, p...)
	}
	return b, nil
}
