package store

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkPutBatch stores batches of new blobs of 1 KB, as a one-page
// deploy (3: the page and two compressed forms) and a larger one does.
// Run it on the disk a server uses (TMPDIR): on tmpfs a flush costs
// nothing. On ext4 without a journal, a file's creation costs up to
// twenty times more for minutes after many files were removed nearby
// (bench/README.md): BENCH_KEEP_DIR=1 keeps the blobs, so that one run
// does not slow the next.
func BenchmarkPutBatch(b *testing.B) {
	for _, n := range []int{3, 30, 300} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchPutBatch(b, n) })
	}
}

// benchPutBatch stores b.N batches of n new blobs.
func benchPutBatch(b *testing.B, n int) {
	ctx := context.Background()
	s, err := NewFSStore(benchDir(b))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.MakeBlobDirs(); err != nil {
		b.Fatal(err)
	}
	batches := make([]map[string][]byte, b.N)
	for i := range batches {
		batches[i] = map[string][]byte{}
		for j := range n {
			data := []byte(fmt.Sprintf("%d-%d-%s", i, j, strings.Repeat("x", 1024)))
			batches[i][HashBytes(data)] = data
		}
	}
	b.ResetTimer()
	for i := range b.N {
		if err := s.PutBatch(ctx, batches[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// benchDir is a new folder under TMPDIR, removed after the benchmark
// unless BENCH_KEEP_DIR=1.
func benchDir(b *testing.B) string {
	if os.Getenv("BENCH_KEEP_DIR") != "1" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp("", "putbatch-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("kept %s", dir)
	return dir
}
