package hooks

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// TestDeployClientGoneCommitsNothing: a client that goes away while its
// deploy is being stored (Cancel in the drop zone aborts the request)
// ends the deploy's work: the store sees the work's context end, and no
// deployment or version is committed.
func TestDeployClientGoneCommitsNothing(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	st := &blockingStore{BlobStore: sd.svc.Store(), started: make(chan struct{}, 100), stopped: make(chan error, 100)}
	srv := httptest.NewServer(newDeployMux(t, app, sd, sites.NewService(app, st, sites.ServiceConfig{})))
	defer srv.Close()
	deployments, _ := app.CountRecords("deployments")
	versions, _ := app.CountRecords("versions")

	for _, tc := range []struct{ method, path, key string }{
		{http.MethodPost, "/deploy", keyPia},
		{http.MethodPut, "/deploy/" + idAliceSite, keyAlice},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		body := `{"files":[{"path":"index.html","content":"<p>cancelled by ` + tc.method + `</p>"}]}`
		req, err := http.NewRequestWithContext(ctx, tc.method, srv.URL+tc.path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tc.key)
		req.Header.Set("Content-Type", "application/json")
		done := make(chan error, 1)
		go func() {
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				res.Body.Close()
			}
			done <- err
		}()
		select {
		case <-st.started:
		case err := <-done:
			t.Fatalf("%s %s answered before storing anything: %v", tc.method, tc.path, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s %s never stored a blob", tc.method, tc.path)
		}
		cancel() // the client goes away mid-deploy
		select {
		case err := <-st.stopped:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s %s: the store's context ended with %v, want context.Canceled", tc.method, tc.path, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s %s: the deploy's work went on after its client went away", tc.method, tc.path)
		}
		<-done
	}
	srv.Close() // waits for the handlers to end
	if n, _ := app.CountRecords("deployments"); n != deployments {
		t.Fatalf("%d deployments after cancelled deploys, want %d", n, deployments)
	}
	if n, _ := app.CountRecords("versions"); n != versions {
		t.Fatalf("%d versions after cancelled deploys, want %d", n, versions)
	}
}

// blockingStore holds every blob write until the deploy's context ends,
// and says when one starts and how it ended.
type blockingStore struct {
	store.BlobStore
	started chan struct{}
	stopped chan error
}

func (s *blockingStore) Put(ctx context.Context, h string, data []byte) error {
	s.started <- struct{}{}
	<-ctx.Done()
	s.stopped <- ctx.Err()
	return ctx.Err()
}
