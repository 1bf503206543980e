package sites_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"sitedrop/sites"
)

// cancelAfter is a context that is cancelled once Err has been asked
// after times: a deploy cancelled midway through its work, at a point
// the test picks without timing.
type cancelAfter struct {
	context.Context
	mu    sync.Mutex
	left  int
	done  chan struct{}
	fired bool
}

func newCancelAfter(after int) *cancelAfter {
	return &cancelAfter{Context: context.Background(), left: after, done: make(chan struct{})}
}

func (c *cancelAfter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fired && c.left <= 0 {
		c.fired = true
		close(c.done)
	}
	c.left--
	if c.fired {
		return context.Canceled
	}
	return nil
}

func (c *cancelAfter) Done() <-chan struct{} { return c.done }

// bigSite is a deploy with many compressible files, so its work has many
// steps to stop between.
func bigSite() sites.Upload {
	var kv []string
	for i := range 40 {
		kv = append(kv, "p"+itoa(i)+".html", "<p>"+strings.Repeat("page "+itoa(i)+" ", 400)+"</p>")
	}
	return files(kv...)
}

// TestCancelledDeployStoresNothing: a Create or Replace whose context is
// cancelled, before it starts or midway through its work, returns the
// context's error, writes no blob and changes no record.
func TestCancelledDeployStoresNothing(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	title := "T"
	meta := sites.Metadata{Title: &title}
	first, err := svc.Create(context.Background(), sites.CreateParams{Owner: owner, Slug: "first", Upload: files("index.html", "<p>one</p>")})
	if err != nil {
		t.Fatal(err)
	}
	blobs := blobCount(t, svc)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name string
		ctx  func() context.Context
		// most is how many of the site's 40 files may be compressed:
		// a deploy stops between files.
		most int64
	}{
		{"already cancelled", func() context.Context { return cancelled }, 0},
		{"cancelled after 1 check", func() context.Context { return newCancelAfter(1) }, 0},
		{"cancelled after 10 checks", func() context.Context { return newCancelAfter(10) }, 0},
		{"cancelled after 45 checks", func() context.Context { return newCancelAfter(45) }, 10},
	} {
		start := time.Now()
		before := sites.Compressions()
		_, err := svc.Create(tt.ctx(), sites.CreateParams{Owner: owner, Slug: "second", Meta: meta, Upload: bigSite()})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Create error %v, want context.Canceled", tt.name, err)
		}
		if _, err := svc.Replace(tt.ctx(), first.Record, meta, bigSite()); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Replace error %v, want context.Canceled", tt.name, err)
		}
		if d := time.Since(start); d > time.Minute {
			t.Errorf("%s: took %v", tt.name, d)
		}
		if n := sites.Compressions() - before; n > 2*tt.most {
			t.Errorf("%s: %d files compressed by the two deploys, want at most %d", tt.name, n, 2*tt.most)
		}
		if n := blobCount(t, svc); n != blobs {
			t.Errorf("%s: %d blobs, want %d", tt.name, n, blobs)
		}
		if n, _ := app.CountRecords("deployments"); n != 1 {
			t.Errorf("%s: %d deployments, want 1", tt.name, n)
		}
		if n, _ := app.CountRecords("versions"); n != 1 {
			t.Errorf("%s: %d versions, want 1", tt.name, n)
		}
	}
}
