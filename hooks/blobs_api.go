package hooks

import (
	"net/http"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
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
	// blocks refuse blocked content, asked about or uploaded.
	blocks *sites.Blocklist
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
// See sites.Service.MissingHashes for how the store is asked.
func (api *blobsAPI) missing(e *core.RequestEvent) error {
	user := userOf(e)
	limit := max(maxMissingHashes, api.cfg.MaxFiles)
	var req wire.MissingRequest
	if err := api.guards.ReadJSON(e.Response, e.Request, int64(limit)*70+1024, &req); err != nil {
		return err
	}
	if req.Hashes == nil {
		return apierr.Fail(http.StatusBadRequest, "hashes is required")
	}
	if len(req.Hashes) > limit {
		return apierr.Fail(http.StatusRequestEntityTooLarge, "Too many hashes: the limit is %d", limit)
	}
	asked := make([]string, 0, len(req.Hashes))
	seen := make(map[string]bool, len(req.Hashes))
	for _, h := range req.Hashes {
		h, ok := store.ParseHash(h)
		if !ok {
			return apierr.Fail(http.StatusBadRequest, "%s", store.InvalidHashMsg(h))
		}
		if !seen[h] {
			seen[h] = true
			asked = append(asked, h)
		}
	}
	if err := api.blocks.CheckHashes(asked); err != nil {
		return err
	}
	var known func(string) bool // the file store: each hash is asked about
	if api.s3 != nil {
		known = api.s3.Known
	}
	missing, err := api.deploys.MissingHashes(e.Request.Context(), user, asked, known)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, wire.Missing{Missing: missing})
}

// put is PUT /blobs/:sha256 with the raw bytes: stored when they hash
// to the name, within --max-body.
func (api *blobsAPI) put(e *core.RequestEvent) error {
	user := userOf(e)
	h, ok := store.ParseHash(e.Request.PathValue("sha256"))
	if !ok {
		return apierr.Fail(http.StatusBadRequest, "%s", store.InvalidHashMsg(e.Request.PathValue("sha256")))
	}
	if err := api.blocks.CheckHashes([]string{h}); err != nil {
		return err // before the body is read: nothing is uploaded
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
	if err := api.deploys.PutUpload(e.Request.Context(), h, data); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]any{"sha256": h, "size": len(data)})
}

// uploadBytesFactor bounds what one account may upload with PUT /blobs in
// an hour: this many times --max-body (1000 MiB with the defaults).
const uploadBytesFactor = 20
