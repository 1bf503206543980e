package hooks

import (
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/server"
	"sitedrop/sites"
)

// archiveUnpackFactor bounds what a deploy's files may total when they
// are not all in the body: an archive unpacked, or contents named by
// sha256. This many times --max-body.
const archiveUnpackFactor = 4

// archiveFormat is the archive format a deploy's Content-Type names, ""
// for anything else (JSON).
func archiveFormat(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	switch mt {
	case "application/zip", "application/x-zip-compressed":
		return sites.ArchiveZip
	case "application/gzip", "application/x-gzip", "application/x-tar+gzip", "application/x-compressed-tar":
		return sites.ArchiveTarGz
	}
	return ""
}

// archiveMetadata reads an archive deploy's metadata (query parameters:
// slug, title, description, favicon, is_spa), validates it and runs
// precheck on it. A refused archive is not read; see discardBody.
func (api *deployAPI) archiveMetadata(e *core.RequestEvent, precheck func(*deployRequest) error) (*deployRequest, error) {
	req, err := archiveDeployMetadata(e)
	if err == nil {
		_, err = req.metadata()
	}
	if err == nil {
		err = precheck(req)
	}
	if err != nil {
		api.guards.discardBody(e, api.cfg.MaxBody)
		return nil, err
	}
	return req, nil
}

// readArchiveDeploy reads the body of an archive deploy into req (its
// metadata). Nothing is stored until the whole archive has been checked.
// A tar.gz is unpacked as it arrives; a zip, read from its end, is read
// whole first. What the archive holds in memory (the zip, the unpacked
// files) is reserved from lease before it is allocated; a tar.gz's
// compressed bytes pass through and are not held.
//
// The sizes the archive declares (a zip's central directory, each tar
// header) are checked against the limit before anything is inflated: 4 x
// --max-body, and for an anonymous deploy (anon) no more than its
// --anon-storage-per-ip, which it could never store, so that an archive
// too large for it costs nothing to refuse.
func (api *deployAPI) readArchiveDeploy(e *core.RequestEvent, format string, req *deployRequest, lease *memLease, anon bool) error {
	limit := api.cfg.MaxBody
	body, err := api.guards.guardBody(e, limit, nil)
	if err != nil {
		return err
	}
	lim := sites.ArchiveLimits{
		MaxFiles: api.cfg.MaxFiles,
		MaxBytes: archiveUnpackFactor * limit,
		Reserve:  lease.reserve,
		Release:  func(n int64) { lease.Release(n, true) },
	}
	if anonCap := int64(api.guards.anonStorage.Max()); anon && anonCap < lim.MaxBytes {
		lim.MaxBytes = anonCap
		lim.TooLarge = anonTooLarge(anonCap)
	}
	entries, err := sites.ReadArchiveFrom(body, format, lim)
	if err != nil {
		return err // an *ArchiveError says what the client sent wrong
	}
	// what follows the archive (a gzip trailer) is read too: the whole
	// body is within the limits, and its end lifts the read deadline
	if _, err := io.Copy(io.Discard, body); err != nil {
		return err
	}
	req.Files = &entries
	return nil
}

// discardBody deals with an HTTP/1 request body of at most limit bytes
// that is refused before it was read. Left unread, net/http would read up to
// 256 KiB of it and close the connection under a client still sending
// the rest, which then sees a reset instead of the answer: so it is read
// and dropped. A client that asked to wait (Expect: 100-continue) has sent
// nothing yet: the error answer closes the connection (see
// jsonErrorsMiddleware), and it sends nothing. It is read at the minimum
// rate of bodies, and holds no memory.
func (g *bodyGuards) discardBody(e *core.RequestEvent, limit int64) {
	if server.WaitsToSendBody(e.Request) || e.Request.ProtoMajor != 1 {
		return // HTTP/2 resets the stream alone
	}
	if body, err := g.guardBody(e, limit, nil); err == nil { // nil: over the limit, not read
		_, _ = io.Copy(io.Discard, body)
	}
}

// archiveDeployMetadata reads an archive deploy's metadata from the query
// (the password from a header, see archiveProtection).
func archiveDeployMetadata(e *core.RequestEvent) (*deployRequest, error) {
	req := &deployRequest{}
	q := e.Request.URL.Query()
	for name, dst := range map[string]**string{"slug": &req.Slug, "title": &req.Title, "description": &req.Description, "favicon": &req.Favicon} {
		if q.Has(name) {
			v := q.Get(name)
			*dst = &v
		}
	}
	if q.Has("is_spa") {
		v, err := strconv.ParseBool(strings.TrimSpace(q.Get("is_spa")))
		if err != nil {
			return nil, fail(http.StatusBadRequest, "is_spa must be true or false")
		}
		req.IsSPA = &v
	}
	if err := archiveProtection(e.Request, req); err != nil {
		return nil, err
	}
	return req, nil
}
