//go:build unix

package sites_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// benchWords is the vocabulary of bench/deploybench's files.
var benchWords = strings.Fields(`the a site page deploy server request response file
content cache header status build static index layout theme style script
module export import render component state value option config account
user plan slot version manifest upload domain host path route link image
quick simple fast secure reliable modern light small clear every each with`)

// benchFiles returns n files of size bytes each, unique to tag: HTML, CSS
// and JavaScript in turn under ten folders, words as bench/deploybench
// writes them (its "1000 new files of 2 KB" row).
func benchFiles(tag string, n, size int) sites.Upload {
	r := uint64(0xD1B54A32D192ED03)
	for _, c := range tag {
		r = r*31 + uint64(c) + 1
	}
	next := func() uint64 {
		r ^= r >> 12
		r ^= r << 25
		r ^= r >> 27
		return r * 2685821657736338717
	}
	exts := []string{"html", "css", "js"}
	up := sites.Upload{StorageType: sites.StorageFiles}
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "%s-%d", tag, i)
		for b.Len() < size {
			b.WriteByte(' ')
			b.WriteString(benchWords[next()%uint64(len(benchWords))])
		}
		p := fmt.Sprintf("dir%d/file%04d.%s", i%10, i, exts[i%3])
		data := []byte(b.String()[:size])
		up.Files = append(up.Files, sites.File{Path: p, ContentType: sites.WithUTF8Charset(sites.ContentTypeFor(p, data)), Data: data})
	}
	return up
}

// benchStore is the blob store of the deploy benchmarks, made once per
// process in TMPDIR (the file system measured) and removed when the
// tests end (TestMain): on ext4 without a journal, files removed within
// about 30 s make the creation of new inodes scan past them, so blobs
// removed after a benchmark's first round (b.N = 1) would slow the next.
var benchStore struct {
	once sync.Once
	dir  string
	s    *store.FSStore
	err  error
}

// TestMain removes the benchmarks' blob store once every test and
// benchmark is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchStore.dir != "" {
		os.RemoveAll(benchStore.dir)
	}
	os.Exit(code)
}

// newBenchService is a service on a fresh app and the process's bench
// blob store.
func newBenchService(b *testing.B) (*tests.TestApp, *sites.Service) {
	b.Helper()
	app, err := tests.NewTestApp(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(app.Cleanup)
	benchStore.once.Do(func() {
		if benchStore.dir, benchStore.err = os.MkdirTemp("", "blobs-"); benchStore.err == nil {
			benchStore.s, benchStore.err = store.NewFSStore(benchStore.dir)
		}
	})
	if benchStore.err != nil {
		b.Fatal(benchStore.err)
	}
	return app, sites.NewService(app, benchStore.s, sites.ServiceConfig{FreeSlots: 1 << 20})
}

// benchDeploys numbers the benchmark's deploys, so each has new content.
var benchDeploys atomic.Int64

// BenchmarkDeployNewFiles1000 is a first deploy of 1000 new files of 2 KB
// (every blob new: the file and its three variants).
func BenchmarkDeployNewFiles1000(b *testing.B) {
	app, svc := newBenchService(b)
	owner := mustOwner(b, app)
	ctx := context.Background()
	ups := make([]sites.Upload, b.N)
	for i := range ups {
		ups[i] = benchFiles(fmt.Sprintf("new-%d", benchDeploys.Add(1)), 1000, 2048)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for i := range b.N {
		if _, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Upload: ups[i]}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per deploy since cpu0, which other
// processes' load skews far less than the time taken ("cpu-ms/op").
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkRedeployUnchanged1000 replaces a deployment of 1000 files of
// 2 KB with the same files.
func BenchmarkRedeployUnchanged1000(b *testing.B) {
	app, svc := newBenchService(b)
	owner := mustOwner(b, app)
	ctx := context.Background()
	up := benchFiles(fmt.Sprintf("same-%d", benchDeploys.Add(1)), 1000, 2048)
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Upload: up})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for range b.N {
		if _, err := svc.Replace(ctx, c.Record, sites.Metadata{}, up); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}
