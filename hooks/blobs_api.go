package hooks

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// maxMissingHashes bounds one POST /blobs/missing.
const maxMissingHashes = 20000

// uploadKeep is how long an uploaded blob is spared by the collector
// before a deploy references it.
const uploadKeep = time.Hour

// blobKeeper is a store that can spare a blob from the collector for a
// while (FSStore).
type blobKeeper interface {
	KeepUntil(ctx context.Context, hash string, t time.Time) error
}

// bindBlobsAPI binds the digest protocol: POST /blobs/missing tells which
// contents the server lacks, PUT /blobs/:sha256 uploads one, and a deploy
// then names contents by "sha256" instead of sending them. Keyed.
func bindBlobsAPI(sd *sitedrop, se *core.ServeEvent) {
	r := se.Router
	r.POST("/blobs/missing", sd.blobsMissing)
	r.PUT("/blobs/{sha256}", sd.blobPut).Unbind(apis.DefaultBodyLimitMiddlewareId)
	r.Any("/blobs/{sha256}", func(e *core.RequestEvent) error {
		if e.Request.PathValue("sha256") == "missing" {
			return methodNotAllowed("POST")(e)
		}
		return methodNotAllowed("PUT")(e)
	})
}

// missingRequest is the body of POST /blobs/missing.
type missingRequest struct {
	Hashes []string `json:"hashes"`
}

// blobsMissing is POST /blobs/missing {"hashes": [...]}: the hashes the
// server does not have, in the order given, each once. Asking also keeps
// the ones it has from the collector for a while (see --gc-grace).
func (sd *sitedrop) blobsMissing(e *core.RequestEvent) error {
	if _, err := sd.requireUser(e); err != nil {
		return err
	}
	var req missingRequest
	if err := readJSON(e, maxMissingHashes*70+1024, &req); err != nil {
		return err
	}
	if req.Hashes == nil {
		return fail(http.StatusBadRequest, "hashes is required")
	}
	if len(req.Hashes) > maxMissingHashes {
		return fail(http.StatusRequestEntityTooLarge, "Too many hashes: the limit is %d", maxMissingHashes)
	}
	missing := make([]string, 0)
	seen := make(map[string]bool, len(req.Hashes))
	store := sd.svc.Store()
	for _, h := range req.Hashes {
		h = strings.ToLower(h)
		if !sites.ValidHash(h) {
			return fail(http.StatusBadRequest, "invalid sha256 %q (64 hex digits)", h)
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		ok, err := store.Has(e.Request.Context(), h)
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, h)
		}
	}
	return e.JSON(http.StatusOK, map[string]any{"missing": missing})
}

// blobPut is PUT /blobs/:sha256 with the raw bytes: stored when they hash
// to the name, within --max-body.
func (sd *sitedrop) blobPut(e *core.RequestEvent) error {
	if _, err := sd.requireUser(e); err != nil {
		return err
	}
	h := strings.ToLower(e.Request.PathValue("sha256"))
	if !sites.ValidHash(h) {
		return fail(http.StatusBadRequest, "invalid sha256 %q (64 hex digits)", e.Request.PathValue("sha256"))
	}
	release, err := sd.acquireDeploySlot(e)
	if err != nil {
		return err
	}
	defer release()
	limit := sd.cfg.MaxBody
	if e.Request.ContentLength > limit {
		return tooLarge(limit)
	}
	data, err := io.ReadAll(http.MaxBytesReader(e.Response, unwrapBody(e.Request.Body), limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(limit)
		}
		return fail(http.StatusBadRequest, "reading the body: %s", err.Error())
	}
	if got := sites.HashBytes(data); got != h {
		return fail(http.StatusBadRequest, "content does not match its name: its sha256 is %s", got)
	}
	store := sd.svc.Store()
	if ok, err := store.Has(e.Request.Context(), h); err != nil {
		return err
	} else if !ok {
		if err := store.Put(e.Request.Context(), h, data); err != nil {
			return err
		}
	}
	// Kept for the deploy that will name it, however long the rest of
	// the upload takes.
	if k, ok := store.(blobKeeper); ok {
		if err := k.KeepUntil(e.Request.Context(), h, time.Now().Add(uploadKeep)); err != nil {
			return err
		}
	}
	return e.JSON(http.StatusOK, map[string]any{"sha256": h, "size": len(data)})
}

// storedContent loads the contents a deploy names by sha256, within the
// deploy's --max-body in total.
func (sd *sitedrop) storedContent(e *core.RequestEvent) sites.BlobLoader {
	budget := sd.cfg.MaxBody
	store := sd.svc.Store()
	return func(hash string) ([]byte, error) {
		b, err := store.Open(e.Request.Context(), hash)
		if err != nil {
			return nil, err
		}
		defer b.Close()
		if b.Size() > budget {
			return nil, tooLarge(sd.cfg.MaxBody)
		}
		budget -= b.Size()
		data := make([]byte, b.Size())
		if _, err := io.ReadFull(b, data); err != nil {
			return nil, err
		}
		return data, nil
	}
}
