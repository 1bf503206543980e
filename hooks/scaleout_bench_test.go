package hooks

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"sitedrop/hooks/server"
	"sitedrop/sites"
	"sitedrop/sites/publish"
	"sitedrop/sites/replica"
	"sitedrop/sites/serve"
	"sitedrop/sites/store"
	"sitedrop/sites/store/s3store/s3test"
)

// Benchmarks of scaling out (README "Scale out"). They need versitygw
// (see sites/store/s3store/s3test):
//
//	go test -run '^$' -bench 'ScaleOut' -benchtime 3s ./hooks/

// benchListen serves h on a loopback listener as sitedrop's servers do
// (coalesced writes), and returns its address.
func benchListen(b *testing.B, h http.Handler) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h, ConnContext: serve.ConnContext}
	go srv.Serve(serve.NewListener(ln, nil, nil))
	b.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// benchGet measures GET / of host at addr from parallel keep-alive
// clients, and reports requests per second.
func benchGet(b *testing.B, addr, host string) {
	b.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	get := func() error {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		req.Host = host
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	if err := get(); err != nil { // warm the caches
		b.Fatal(err)
	}
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := get(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkScaleOutServe serves the same 7 KB page from the primary (the
// site split in front of the PocketBase mux, as in production; analytics
// off, as on a replica) and from a replica, in the same run.
func BenchmarkScaleOutServe(b *testing.B) {
	srv := s3test.Start(b)
	url := srv.URL(srv.NewBucket(b), "bench")
	app, sd := newBareApp(b, func(c *Config) { c.Store = url })
	defer app.Cleanup()
	alice := mustUser(b, app, "alice@example.com", sites.PlanPro, fixtureKey("alice"))
	page := "<!doctype html><title>bench</title><p>" + fmt.Sprintf("%07000d", 0) + "</p>"
	mustDeploy(b, sd, alice, "benchsite000001", "bench-site", page, "Bench")
	if err := sd.publisher.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	const host = "bench-site.sites.test"

	b.Run("primary", func(b *testing.B) {
		addr := benchListen(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if slug, ok := sd.hosts.Site(r.Host); ok {
				sd.serveSite(w, r, slug)
				return
			}
			http.NotFound(w, r)
		}))
		benchGet(b, addr, host)
	})
	b.Run("replica", func(b *testing.B) {
		s3, err := server.OpenS3Store(url)
		if err != nil {
			b.Fatal(err)
		}
		rep := newBenchReplica(b, s3)
		benchGet(b, benchListen(b, rep), host)
	})
}

// BenchmarkScaleOutDeploy redeploys a site of 20 new files of 2 KB to
// the file store and to S3 (versitygw on loopback), in the same run.
func BenchmarkScaleOutDeploy(b *testing.B) {
	for _, kind := range []string{"file", "s3"} {
		b.Run(kind, func(b *testing.B) {
			store := ""
			if kind == "s3" {
				srv := s3test.Start(b)
				store = srv.URL(srv.NewBucket(b), "bench")
			}
			app, sd := newBareApp(b, func(c *Config) { c.Store = store })
			defer app.Cleanup()
			alice := mustUser(b, app, "alice@example.com", sites.PlanPro, fixtureKey("alice"))
			rec := mustDeploy(b, sd, alice, "benchdeploy0001", "bench-deploy", "<h1>0</h1>", "Bench")
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				files := make([]sites.File, 20)
				for j := range files {
					files[j] = sites.File{Path: fmt.Sprintf("f%d.html", j), ContentType: "text/html; charset=utf-8",
						Data: fmt.Appendf(nil, "<p>%d %d</p>%02000d", i, j, 0)}
				}
				var err error
				if rec, err = sd.svc.Replace(ctx, rec, sites.Metadata{}, sites.Upload{StorageType: sites.StorageFiles, Files: files}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// newBenchReplica is a replica of s3 that has polled once.
func newBenchReplica(b *testing.B, s3 replicaStore) http.Handler {
	b.Helper()
	rep := replica.New(replica.Config{Objects: s3, Blobs: s3})
	if err := rep.Poll(context.Background()); err != nil {
		b.Fatal(err)
	}
	return rep
}

// replicaStore is what a replica reads (an *s3store.Store).
type replicaStore interface {
	publish.Objects
	store.BlobStore
}
