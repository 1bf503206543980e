package hooks

import (
	"context"
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"
	"golang.org/x/sync/errgroup"

	"sitedrop/sites"
	"sitedrop/sites/intake"
	"sitedrop/sites/ratelimit"
	"sitedrop/sites/store"
	"sitedrop/sites/store/s3store"
	"sitedrop/sites/wire"
)

// maxMissingHashes bounds one POST /blobs/missing, or --max-files when
// that is more: a client asks about every file of a deploy at once.
const maxMissingHashes = 20000

// uploadKeep is how long an uploaded blob is spared by the collector
// before a deploy references it.
const uploadKeep = time.Hour

// blobKeeper is a store that can spare a blob from the collector for a
// while (FSStore).
type blobKeeper interface {
	KeepUntil(ctx context.Context, hash string, t time.Time) error
}

// blobsAPI serves the digest protocol with exactly the services it uses.
type blobsAPI struct {
	// cfg is read for --max-body and --max-files.
	cfg *Config
	// deploys hold the blob store and tell the caller's live contents.
	deploys *sites.Service
	// s3 is the blob store when --store is an S3 URL (nil: the file store).
	s3 *s3store.Store
	// uploads bounds the bytes each account uploads (uploadBytesFactor).
	uploads *ratelimit.Limiter
	// guards read the bodies within the memory budget and at a minimum rate.
	guards *intake.Guards
	// gate holds the processing slots an upload shares with the deploys.
	gate *intake.Gate
}

// bindBlobsAPI binds the digest protocol: POST /blobs/missing tells which
// contents the server lacks, PUT /blobs/:sha256 uploads one, and a deploy
// then names contents by "sha256" instead of sending them. Keyed.
func bindBlobsAPI(r *router.Router[*core.RequestEvent], api *blobsAPI, auth *apiAuth) {
	r.POST("/blobs/missing", api.missing).Bind(auth.requireUser())
	r.PUT("/blobs/{sha256}", api.put).Bind(auth.requireUser()).Unbind(apis.DefaultBodyLimitMiddlewareId)
	r.Any("/blobs/{sha256}", func(e *core.RequestEvent) error {
		if e.Request.PathValue("sha256") == "missing" {
			return methodNotAllowed("POST")(e)
		}
		return methodNotAllowed("PUT")(e)
	})
}

// missing is POST /blobs/missing {"hashes": [...]}: the hashes the
// server does not have, in the order given, each once. Asking does not
// refresh anything: content nothing references may still be collected
// before the deploy, which then answers 400 and the client uploads it.
// See missingHashes for how the store is asked.
func (api *blobsAPI) missing(e *core.RequestEvent) error {
	user := userOf(e)
	limit := max(maxMissingHashes, api.cfg.MaxFiles)
	var req wire.MissingRequest
	if err := api.guards.ReadJSON(e.Response, e.Request, int64(limit)*70+1024, &req); err != nil {
		return err
	}
	if req.Hashes == nil {
		return fail(http.StatusBadRequest, "hashes is required")
	}
	if len(req.Hashes) > limit {
		return fail(http.StatusRequestEntityTooLarge, "Too many hashes: the limit is %d", limit)
	}
	asked := make([]string, 0, len(req.Hashes))
	seen := make(map[string]bool, len(req.Hashes))
	for _, h := range req.Hashes {
		h, ok := store.ParseHash(h)
		if !ok {
			return fail(http.StatusBadRequest, "%s", store.InvalidHashMsg(h))
		}
		if !seen[h] {
			seen[h] = true
			asked = append(asked, h)
		}
	}
	missing, err := api.missingHashes(e.Request.Context(), user, asked)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, wire.Missing{Missing: missing})
}

// On an S3 store, where every question about a blob is a request, one
// POST /blobs/missing asks about at most maxStoreLookups blobs,
// lookupParallel at a time.
const (
	maxStoreLookups = 256
	lookupParallel  = 8
)

// missingHashes returns the hashes of asked (distinct) that the store
// lacks, in order. A file store is asked about each (a stat). An S3 store
// is asked about few: the hashes that the caller's live versions name, or
// that the store knows it holds, are present with no request; of the
// others, the first maxStoreLookups are asked about, and the rest are
// answered missing without asking. An answer "missing" for content the
// store has costs only its upload, which stores nothing again (blobPut
// asks first); an answer "present" is always true.
func (api *blobsAPI) missingHashes(ctx context.Context, user *core.Record, asked []string) ([]string, error) {
	blobs := api.deploys.Store()
	missing := make([]string, 0)
	if api.s3 == nil {
		for _, h := range asked {
			ok, err := exists(ctx, blobs, h)
			if err != nil {
				return nil, err
			}
			if !ok {
				missing = append(missing, h)
			}
		}
		return missing, nil
	}

	unknown := make(map[string]bool, len(asked))
	for _, h := range asked {
		if !api.s3.Known(h) {
			unknown[h] = true
		}
	}
	if len(unknown) > 0 {
		err := api.deploys.LiveHashes(user, func(h string) bool {
			delete(unknown, h)
			return len(unknown) > 0
		})
		if err != nil {
			return nil, err
		}
	}
	var lookup []string
	for _, h := range asked {
		if unknown[h] && len(lookup) < maxStoreLookups {
			lookup = append(lookup, h)
		}
	}
	found := make([]bool, len(lookup))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(lookupParallel)
	for i, h := range lookup {
		g.Go(func() error {
			ok, err := exists(gctx, blobs, h)
			found[i] = ok
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, h := range lookup {
		if found[i] {
			delete(unknown, h)
		}
	}
	for _, h := range asked {
		if unknown[h] {
			missing = append(missing, h)
		}
	}
	return missing, nil
}

// put is PUT /blobs/:sha256 with the raw bytes: stored when they hash
// to the name, within --max-body.
func (api *blobsAPI) put(e *core.RequestEvent) error {
	user := userOf(e)
	h, ok := store.ParseHash(e.Request.PathValue("sha256"))
	if !ok {
		return fail(http.StatusBadRequest, "%s", store.InvalidHashMsg(e.Request.PathValue("sha256")))
	}
	size := e.Request.ContentLength
	if size < 0 || size > api.cfg.MaxBody {
		size = api.cfg.MaxBody // unknown length: charge the most it may be
	}
	if err := api.uploads.CheckN(user.Id, int(size),
		"Upload limit reached: at most "+sites.FormatBytes(int64(api.uploads.Max()))+" an hour per account"); err != nil {
		return err
	}
	// the body before the slot: a slow client holds no slot, only the
	// memory it has sent (reserved from --deploy-memory)
	lease := api.guards.MemoryLease(e.Request.Context())
	defer lease.End()
	body, err := api.guards.Body(e.Response, e.Request, api.cfg.MaxBody, lease)
	if err != nil {
		return err
	}
	data, err := body.ReadAll()
	if err != nil {
		return err
	}
	release, err := api.gate.Acquire(e.Request.Context())
	if err != nil {
		return err
	}
	defer release()
	if got := store.HashBytes(data); got != h {
		return fail(http.StatusBadRequest, "content does not match its name: its sha256 is %s", got)
	}
	blobs := api.deploys.Store()
	if ok, err := blobs.Has(e.Request.Context(), h); err != nil {
		return err
	} else if !ok {
		if err := blobs.Put(e.Request.Context(), h, data); err != nil {
			return err
		}
	}
	// Kept for the deploy that will name it, however long the rest of
	// the upload takes.
	if k, ok := blobs.(blobKeeper); ok {
		if err := k.KeepUntil(e.Request.Context(), h, time.Now().Add(uploadKeep)); err != nil {
			return err
		}
	}
	return e.JSON(http.StatusOK, map[string]any{"sha256": h, "size": len(data)})
}

// exists asks the store without refreshing the blob's age where it can.
func exists(ctx context.Context, blobs store.BlobStore, h string) (bool, error) {
	if x, ok := blobs.(interface {
		Exists(context.Context, string) (bool, error)
	}); ok {
		return x.Exists(ctx, h)
	}
	return blobs.Has(ctx, h)
}

// uploadBytesFactor bounds what one account may upload with PUT /blobs in
// an hour: this many times --max-body (1000 MiB with the defaults).
const uploadBytesFactor = 20
