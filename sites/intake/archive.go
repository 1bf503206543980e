package intake

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"sitedrop/sites"
)

// ArchiveUnpackFactor bounds what a deploy's files may total when they
// are not all in the body: an archive unpacked, or contents named by
// sha256. This many times --max-body.
const ArchiveUnpackFactor = 4

// DeployMemoryFactor times --max-body is the least --deploy-memory: what
// the largest deploy reserves, so that it can ever run. A tar.gz's files
// are read in pieces as they come and joined (twice ArchiveUnpackFactor x
// --max-body at most, for a moment), a zip is read whole and joined
// likewise (twice --max-body); the variants come on top (the
// compressors' state is a fixed cost of the process: see
// sites.compressSlots). What is reserved covers what is allocated (see
// sites.readPieces, sites.boundedOutput), and memory given back counts
// until a collection frees it (Budget).
const DeployMemoryFactor = 2*ArchiveUnpackFactor + 2

// ArchiveFormat is the archive format a deploy's Content-Type names, ""
// for anything else (JSON).
func ArchiveFormat(contentType string) string {
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

// archiveRequest reads an archive deploy's metadata from r's query
// (slug, title, description, favicon, is_spa, draft, alias, message,
// protect; the password from a header, see archiveProtection).
func archiveRequest(r *http.Request) (*Request, error) {
	req := &Request{}
	q := r.URL.Query()
	for name, dst := range map[string]**string{"slug": &req.Slug, "title": &req.Title, "description": &req.Description, "favicon": &req.Favicon,
		"alias": &req.Alias, "message": &req.Message} {
		if q.Has(name) {
			v := q.Get(name)
			*dst = &v
		}
	}
	if q.Has("is_spa") {
		v, err := strconv.ParseBool(strings.TrimSpace(q.Get("is_spa")))
		if err != nil {
			return nil, invalid("is_spa must be true or false")
		}
		req.IsSPA = &v
	}
	if q.Has("draft") {
		v, err := strconv.ParseBool(strings.TrimSpace(q.Get("draft")))
		if err != nil {
			return nil, &sites.FieldError{Field: "draft", Msg: "draft must be true or false"}
		}
		req.Draft = &v
	}
	if err := archiveProtection(r, req); err != nil {
		return nil, err
	}
	return req, nil
}
