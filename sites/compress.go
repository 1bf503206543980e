package sites

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
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

// madeCodings are the codings a deploy makes variants in. Not zstd: the
// server sends the smallest stored form a request accepts, every browser
// that accepts zstd accepts brotli, and on 2,992 web files (JavaScript,
// CSS, HTML, SVG, JSON of Go modules) brotli's was the smaller for all
// but one (by 1%). A zstd variant was kept only when smaller than
// brotli's from dfb25e8 on, but compressing every file a third time to
// find that one cost a tenth of a 1000-file deploy's CPU (and a 4 MiB
// encoder a compressor). A client that accepts zstd and not brotli gets
// gzip, or the file as it is; zstd variants stored by earlier deploys
// are still served.
var madeCodings = [...]string{EncodingBrotli, EncodingGzip}

// minCompressSize is the smallest file worth a precompressed variant:
// below it the saving does not pay for the extra blobs.
const minCompressSize = 512

// Compression settings: good ratios at a cost a deploy request can pay
// (writers are pooled: making one costs more than compressing a small
// file). Measured on 2 KB text files (bench/deploy.sh's) and on 343 web
// files of 1–64 KB (CSS, HTML and JavaScript of Go modules): brotli
// quality 5 makes output of the same size as 6 on the first and 0.4% more on the
// second, in 6–21% less time; gzip level 6 makes 1–3% more than 9 (the
// best) in a fifth to a half of the time. gzip is what a client that
// accepts neither brotli nor zstd gets, so its last percent is worth
// little; a 1000-file deploy compresses 2,000 variants.
//
// Files of gzipBestFrom bytes and more (a site's scripts and styles,
// few in a deploy) get gzip's best level instead: there the percents are
// hundreds of bytes on every answer, and a gzipped answer that fits one
// TLS record (16 KiB) instead of spilling into a second costs the server
// a record's sealing and a write less. bench/run.sh's 100 KB script:
// 16,511 bytes at level 6, 15,814 at 9 (what `gzip -9`, nginx's
// precompressed copy, makes: 15,896), ~5 ms more, once, at its deploy.
const (
	brotliQuality = 5
	gzipLevel     = 6
	gzipBestLevel = 9
	gzipBestFrom  = 16 << 10
)

// The compressors' memory does not grow with the file: a window of
// 1 << compressWindowLog bytes (1 MiB: a web file larger than that loses
// little of its ratio), and the data written compressPiece bytes at a
// time (a large write makes brotli buffer it whole). One compression
// holds about 11 MiB of state, the two codings together (measured for
// fresh writers: 9 MiB brotli, 1.4 MiB gzip), so that the
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
	gz *gzip.Writer
	// gzBest compresses files of gzipBestFrom bytes and more at
	// gzipBestLevel; made on the first such file.
	gzBest *gzip.Writer
}

func newCompressor() *compressor {
	gz, err := gzip.NewWriterLevel(nil, gzipLevel)
	if err != nil {
		panic(fmt.Sprintf("gzip writer: %v", err))
	}
	return &compressor{
		br: brotli.NewWriterOptions(nil, brotli.WriterOptions{Quality: brotliQuality, LGWin: compressWindowLog}),
		gz: gz,
	}
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

// takeCompressor waits for one of compressSlots, or for ctx's end.
func takeCompressor(ctx context.Context) (*compressor, error) {
	select {
	case c := <-compressSlots:
		if c == nil {
			c = newCompressor()
		}
		return c, nil
	case <-ctx.Done():
		return nil, cancelled(ctx)
	}
}

// compressVariants returns the precompressed variants of data by coding
// (madeCodings), keeping only those at least 5% smaller. Every coding is
// deterministic, so unchanged content yields the same variant blobs on
// every deploy.
//
// Each coding writes into a boundedOutput: its memory is reserved from
// mem (nil for none) before it is allocated, a coding stops as soon as
// its output reaches the size it would be dropped at (so that
// incompressible data costs neither the memory nor the rest of the
// time), and what a coding drops is given back at once. A compressor is
// held only while it compresses: waiting for one ends with ctx, and a
// coding that finds the memory short gives its compressor back, waits for
// the memory, and starts again (see compressCoding).
func compressVariants(ctx context.Context, data []byte, mem Memory) (map[string][]byte, error) {
	compressions.Add(1)
	out := make(map[string][]byte, len(madeCodings))
	limit := len(data) - len(data)/20 // kept only when smaller
	for _, coding := range madeCodings {
		b, err := compressCoding(ctx, coding, data, limit, mem)
		if err != nil {
			return nil, err
		}
		if b != nil {
			out[coding] = b
		}
	}
	return out, nil
}

// compressCoding compresses data with one coding into fewer than limit
// bytes, nil when it does not get that small. While it holds a compressor
// it only takes memory that is free now (TryReserve); short of it, it
// drops the output, gives the compressor back, waits for (reserves) twice
// what the output had come to (limit at most, which is always enough),
// and compresses again with that credit. What is not used of the credit
// is given back. Short of memory, a coding is thus done again a few times
// at most (the credit doubles each time).
func compressCoding(ctx context.Context, coding string, data []byte, limit int, mem Memory) ([]byte, error) {
	var credit int64
	for {
		c, err := takeCompressor(ctx)
		if err != nil {
			releaseMem(mem, credit, false)
			return nil, err
		}
		o := &boundedOutput{limit: limit, mem: mem, credit: credit}
		err = c.compress(coding, o, data)
		compressSlots <- c
		switch {
		case errors.Is(err, errNotSmaller):
			o.drop()
			return nil, nil
		case o.short && credit < int64(limit):
			credit = min(int64(limit), 2*(o.reserved+o.wanted))
			o.drop()
			if err := reserveMem(mem, credit); err != nil {
				return nil, err
			}
			continue
		case err != nil:
			o.drop()
			return nil, fmt.Errorf("%s: %w", coding, err)
		}
		return o.bytes()
	}
}

// compress writes data compressed with coding to w.
func (c *compressor) compress(coding string, w io.Writer, data []byte) error {
	switch coding {
	case EncodingBrotli:
		bw := c.br
		bw.Reset(w)
		if err := writePieces(bw, data); err != nil {
			return err
		}
		return bw.Close()
	case EncodingGzip:
		gw := c.gz
		if len(data) >= gzipBestFrom {
			if c.gzBest == nil {
				var err error
				if c.gzBest, err = gzip.NewWriterLevel(nil, gzipBestLevel); err != nil {
					return fmt.Errorf("gzip writer: %w", err)
				}
			}
			gw = c.gzBest
		}
		gw.Reset(w)
		if err := writePieces(gw, data); err != nil {
			return err
		}
		return gw.Close()
	}
	return fmt.Errorf("unknown coding %q", coding)
}

// errNotSmaller stops a coding whose output is not smaller enough to keep.
var errNotSmaller = errors.New("compressed output not smaller")

// errMemoryShort stops a coding that would wait for memory while it holds
// a compressor (see compressCoding).
var errMemoryShort = errors.New("compression memory short")

// A compressed output is written into pieces of firstOutputPiece bytes
// first, growing to outputPiece (the last one may be smaller).
const (
	firstOutputPiece = 256
	outputPiece      = 64 << 10
)

// boundedOutput collects a compressed output of fewer than limit bytes
// in pieces, each reserved before it is allocated (from credit, reserved
// beforehand, then from what mem has free now), so nothing is copied to
// grow; bytes joins them. Writing limit bytes or more fails with
// errNotSmaller; memory that is not free fails the write with
// errMemoryShort (short, for a piece of wanted bytes). reserved is what
// its pieces took.
type boundedOutput struct {
	limit    int
	mem      Memory
	credit   int64
	reserved int64
	short    bool
	wanted   int64
	pieces   [][]byte
	n        int
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

// take reserves n bytes for a piece: from the credit, else if mem has
// them free now.
func (o *boundedOutput) take(n int64) error {
	switch {
	case o.credit >= n:
		o.credit -= n
	case tryReserveMem(o.mem, n):
	default:
		o.short, o.wanted = true, n
		return errMemoryShort
	}
	o.reserved += n
	return nil
}

// drop gives back the output's memory: its pieces, and the credit it did
// not use.
func (o *boundedOutput) drop() {
	o.pieces = nil
	releaseMem(o.mem, o.reserved, true)
	releaseMem(o.mem, o.credit, false)
	o.reserved, o.credit = 0, 0
}

// bytes is the output in one slice. The credit not used is given back;
// several pieces are joined into a copy (reserved, waiting as need be:
// no compressor is held) and given back.
func (o *boundedOutput) bytes() ([]byte, error) {
	releaseMem(o.mem, o.credit, false)
	o.credit = 0
	switch len(o.pieces) {
	case 0:
		releaseMem(o.mem, o.reserved, true)
		return []byte{}, nil
	case 1:
		return o.pieces[0], nil // reserved: held by the variant
	}
	if err := reserveMem(o.mem, int64(o.n)); err != nil {
		o.drop()
		return nil, err
	}
	b := make([]byte, 0, o.n)
	for _, p := range o.pieces {
		b = append(b, p...)
	}
	o.drop() // the pieces
	return b, nil
}
