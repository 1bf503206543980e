package sites

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sitedrop/sites/store"
)

// testMemory is a Memory that counts what a deploy holds: reserved and
// not given back. refuse makes Reserve fail; short makes TryReserve
// fail; wait, when set, is called by Reserve before it reserves.
type testMemory struct {
	mu       sync.Mutex
	held     int64
	garbage  int64 // given back after being allocated
	refuse   error
	short    bool
	wait     func()
	reserves int
}

func (m *testMemory) Reserve(n int64) error {
	if m.wait != nil {
		m.wait()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reserves++
	if m.refuse != nil {
		return m.refuse
	}
	m.held += n
	return nil
}

func (m *testMemory) TryReserve(n int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.short || m.refuse != nil {
		return false
	}
	m.held += n
	return true
}

func (m *testMemory) Release(n int64, allocated bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held -= n
	if allocated {
		m.garbage += n
	}
}

// compressibleBlobs are n distinct compressible blobs and their hashes.
func compressibleBlobs(n int) ([]string, map[string][]byte) {
	blobs := map[string][]byte{}
	var hashes []string
	for i := range n {
		b := []byte(strings.Repeat("compressible words "+strconv.Itoa(i)+" ", 400))
		h := store.HashBytes(b)
		blobs[h] = b
		hashes = append(hashes, h)
	}
	return hashes, blobs
}

// TestCompressAllStopsAtFirstError: a blob whose compression fails (the
// memory budget refused it) stops the rest: no further blob is started.
func TestCompressAllStopsAtFirstError(t *testing.T) {
	hashes, blobs := compressibleBlobs(40)
	refused := errors.New("refused")
	start := compressions.Load()
	_, err := compressAll(context.Background(), hashes, blobs, &testMemory{refuse: refused})
	if !errors.Is(err, refused) {
		t.Fatalf("err = %v, want the refusal", err)
	}
	if n := compressions.Load() - start; n > int64(cap(compressSlots))+1 {
		t.Fatalf("%d of 40 files compressed after the first error", n)
	}
	// one blob is compressed on the caller's goroutine: the same error
	one, oneBlob := compressibleBlobs(1)
	if _, err := compressAll(context.Background(), one, oneBlob, &testMemory{refuse: refused}); !errors.Is(err, refused) {
		t.Fatalf("one blob: err = %v, want the refusal", err)
	}
}

// TestCompressHoldsWhatItKeeps: after a compression, the memory reserved
// is what the kept variants hold: a dropped variant (not smaller) is
// given back, and so are the pieces an output was joined from.
func TestCompressHoldsWhatItKeeps(t *testing.T) {
	var rnd uint64 = 3
	random := make([]byte, 256<<10)
	mixed := make([]byte, 1<<20)
	for i := range mixed { // half random, half spaces: outputs of several pieces
		rnd ^= rnd << 13
		rnd ^= rnd >> 7
		rnd ^= rnd << 17
		if i < len(random) {
			random[i] = byte(rnd)
		}
		mixed[i] = ' '
		if i%2 == 0 {
			mixed[i] = 'a' + byte(rnd%16)
		}
	}
	for _, tc := range []struct {
		name string
		data []byte
		kept int
	}{
		{"incompressible", random, 0},
		// brotli and gzip: zstd's is not smaller than brotli's (its
		// output, cut at brotli's size, is given back)
		{"several pieces", mixed, 2},
		{"tiny output", []byte(strings.Repeat("a", 10<<10)), 2},
	} {
		m := &testMemory{}
		v, err := compressVariants(context.Background(), tc.data, m)
		if err != nil {
			t.Fatal(err)
		}
		var held int64
		for _, c := range v {
			held += int64(cap(c))
		}
		if len(v) != tc.kept || m.held != held {
			t.Errorf("%s: %d variants holding %d bytes, %d reserved", tc.name, len(v), held, m.held)
		}
	}
}

// takeAllCompressors empties compressSlots until the test ends.
func takeAllCompressors(t *testing.T) {
	var taken []*compressor
	for range cap(compressSlots) {
		taken = append(taken, <-compressSlots)
	}
	t.Cleanup(func() {
		for _, c := range taken {
			compressSlots <- c
		}
	})
}

// TestCompressSlotWaitsWithContext: a deploy waiting for a compressor
// (all busy) stops waiting when its context ends.
func TestCompressSlotWaitsWithContext(t *testing.T) {
	takeAllCompressors(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	hashes, blobs := compressibleBlobs(1)
	go func() {
		_, err := compressAll(ctx, hashes, blobs, nil)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // the worker waits for a compressor
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want the context's", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting for a compressor after the deploy ended")
	}
}

// TestCompressSlotFreeWhileWaitingForMemory: a compression short of
// memory gives its compressor back while it waits for the memory, then
// makes the same variants, and holds only what they keep.
func TestCompressSlotFreeWhileWaitingForMemory(t *testing.T) {
	b := []byte(strings.Repeat("compressible words, again ", 4000))
	want, err := compressVariants(context.Background(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	free := -1
	m := &testMemory{short: true}
	m.wait = func() {
		if free < 0 {
			free = len(compressSlots)
		}
	}
	got, err := compressVariants(context.Background(), b, m)
	if err != nil {
		t.Fatal(err)
	}
	if free != cap(compressSlots) {
		t.Fatalf("%d of %d compressors free while a compression waits for memory", free, cap(compressSlots))
	}
	var held int64
	for coding, c := range got {
		held += int64(cap(c))
		if string(c) != string(want[coding]) {
			t.Errorf("%s variant differs after waiting for memory", coding)
		}
	}
	if len(got) != len(want) || m.held != held {
		t.Fatalf("%d variants holding %d bytes, %d reserved", len(got), held, m.held)
	}
}

// TestHeadTagsReservedWhenAdded: a page is reserved again only when the
// head's tags are added to it, for its size with them; one that has its
// title, description and icon reserves nothing.
func TestHeadTagsReservedWhenAdded(t *testing.T) {
	full := `<html><head><title>p</title><meta name="description" content="d"><link rel="icon" href="/i.png"></head><body>` + strings.Repeat("x", 100) + `</body></html>`
	bare := `<p>` + strings.Repeat("y", 100) + `</p>`
	var files []File
	for i := range 20 {
		files = append(files, File{Path: "f" + strconv.Itoa(i) + ".html", ContentType: "text/html; charset=utf-8", Data: []byte(full + strconv.Itoa(i))})
	}
	files = append(files, File{Path: "bare.html", ContentType: "text/html; charset=utf-8", Data: []byte(bare)})
	m := &testMemory{}
	meta := resolvedMeta{title: "Site", description: "About", favicon: "🙂"}
	man, blobs, err := buildManifest(context.Background(), Upload{Files: files, Memory: m}, meta, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	page := blobs[man["bare.html"].Hash]
	if string(page) == bare {
		t.Fatal("the bare page got no tags")
	}
	if m.held != int64(len(page)) {
		t.Fatalf("%d bytes reserved, want the bare page with its tags: %d", m.held, len(page))
	}
}
