package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites"
)

// Field limits of deploy requests.
const (
	maxTitleLen       = 500  // characters
	maxDescriptionLen = 2000 // characters
	maxFaviconLen     = 16   // characters: one emoji, ZWJ sequences included
)

// deployRequest is the body of POST /deploy and PUT /deploy/:id. Pointers
// tell an omitted (or null) field from an empty one.
type deployRequest struct {
	HTML        *string            `json:"html"`
	Files       *[]sites.FileInput `json:"files"`
	Slug        *string            `json:"slug"`
	Title       *string            `json:"title"`
	Description *string            `json:"description"`
	Favicon     *string            `json:"favicon"`
	IsSPA       *bool              `json:"is_spa"`
	// Password and Protect change the site's protection (see
	// deploy_protect.go); absent, they keep it.
	Password passwordField `json:"password"`
	Protect  protectField  `json:"protect"`
}

// readJSON decodes the request body, at most limit bytes, into dst. The
// body is read as deploy bodies are (guardBody: the minimum rate after the
// grace, each byte held of a memory budget as it comes, until it is
// decoded: the small bodies' pool for a limit of smallBodyMax or less,
// see bodyLease). Every failure is a client error naming what is wrong: 413
// past the limit, 408 too slow, 503 (Retry-After) with the budget spent,
// 400 for malformed JSON, a wrong field type or trailing data.
func (g *bodyGuards) readJSON(e *core.RequestEvent, limit int64, dst any) error {
	lease := g.bodyLease(e, limit)
	defer lease.release()
	body, err := g.guardBody(e, limit, lease)
	if err != nil {
		return err
	}
	return decodeJSON(body, limit, dst)
}

// decodeJSON decodes one JSON value from r, a body bounded to limit bytes,
// into dst; see readJSON. An *apiError of r is returned as it is.
func decodeJSON(r io.Reader, limit int64, dst any) error {
	dec := json.NewDecoder(r)
	if err := dec.Decode(dst); err != nil {
		return jsonError(err, limit)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		var ae *apiError
		switch {
		case errors.As(err, &ae):
			return ae
		case errors.As(err, &mbe):
			return tooLarge(limit)
		}
		return fail(http.StatusBadRequest, "Malformed JSON: unexpected data after the JSON object")
	}
	return nil
}

// archiveSentAsJSON answers a deploy body that is an archive sent
// without an archive Content-Type (curl's default, say) with a hint,
// rather than a JSON syntax error; nil for any other body. It peeks at
// the body's first bytes and leaves them to be read.
func archiveSentAsJSON(body *bufio.Reader) error {
	head, err := body.Peek(4) // fewer at the end of a short body
	var ae *apiError
	if errors.As(err, &ae) {
		return ae // too slow, or the memory budget
	}
	kind := archiveKindOf(head)
	if kind == "" {
		return nil
	}
	return fail(http.StatusBadRequest, "The body is %s, not JSON: send it with Content-Type: %s", kind, archiveContentTypes[kind])
}

// archiveContentTypes are the Content-Types that deploy an archive, by
// the name archiveKindOf gives it.
var archiveContentTypes = map[string]string{
	"a zip archive":          "application/zip",
	"a gzip file (.tar.gz?)": "application/gzip",
}

// archiveKindOf names the archive that bytes start, "" for none.
func archiveKindOf(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return "a zip archive"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "a gzip file (.tar.gz?)"
	}
	return ""
}

// unwrapBody returns the request's original body stream: the router keeps
// a copy of every body for re-reads, which bodies read once do not need.
func unwrapBody(body io.ReadCloser) io.ReadCloser {
	if rr, ok := body.(*router.RereadableReadCloser); ok {
		return rr.ReadCloser
	}
	return body
}

func tooLarge(limit int64) error {
	return fail(http.StatusRequestEntityTooLarge, "Request body too large: the limit is %s", sites.FormatBytes(limit))
}

// jsonError turns a decoding error into the client's 4xx.
func jsonError(err error, limit int64) error {
	var mbe *http.MaxBytesError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae // the body reader's: too slow, the memory budget
	case errors.As(err, &mbe):
		return tooLarge(limit)
	case errors.Is(err, io.EOF):
		return fail(http.StatusBadRequest, "Request body must be a JSON object")
	case errors.As(err, &syn):
		return fail(http.StatusBadRequest, "Malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fail(http.StatusBadRequest, "Malformed JSON: unexpected end of input")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fail(http.StatusBadRequest, "Request body must be a JSON object")
		}
		return fail(http.StatusBadRequest, "Invalid type for field %s: expected %s", typ.Field, kindName(typ.Type))
	}
	return fail(http.StatusBadRequest, "Malformed JSON: %s", err.Error())
}

func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.Kind().String()
}

// metadata validates the descriptive fields and returns them for the
// service. Every way of setting them (a JSON body on POST and PUT, an
// archive deploy's query) goes through it.
func (r *deployRequest) metadata() (sites.Metadata, error) {
	checks := []struct {
		name string
		val  *string
		max  int
	}{
		{"title", r.Title, maxTitleLen},
		{"description", r.Description, maxDescriptionLen},
		{"favicon", r.Favicon, maxFaviconLen},
	}
	for _, c := range checks {
		if c.val == nil {
			continue
		}
		if !utf8.ValidString(*c.val) {
			return sites.Metadata{}, fail(http.StatusBadRequest, "%s must be valid UTF-8", c.name)
		}
		if n := utf8.RuneCountInString(*c.val); n > c.max {
			return sites.Metadata{}, fail(http.StatusBadRequest, "%s is too long: at most %d characters", c.name, c.max)
		}
		if err := checkMetadataRunes(c.name, *c.val); err != nil {
			return sites.Metadata{}, err
		}
	}
	if r.Favicon != nil && strings.ContainsAny(*r.Favicon, "<>&\"' \t\r\n") {
		return sites.Metadata{}, fail(http.StatusBadRequest, "favicon must be an emoji")
	}
	if err := r.checkProtection(); err != nil {
		return sites.Metadata{}, err
	}
	return sites.Metadata{Title: r.Title, Description: r.Description, Favicon: r.Favicon, IsSPA: r.IsSPA}, nil
}

// checkMetadataRunes refuses, naming the field and the character, what a
// descriptive field must not carry into pages, mails, the dashboard or a
// terminal: control characters (Unicode category Cc: C0 including tab, CR
// and LF, DEL, C1) and the bidirectional embedding, override and isolate
// controls (U+202A..U+202E, U+2066..U+2069), which can make a title read
// differently from what it is. The marks U+200E, U+200F and U+061C stay
// allowed: right-to-left text needs them and they reorder nothing.
func checkMetadataRunes(field, v string) error {
	for _, r := range v {
		switch {
		case unicode.IsControl(r):
			return fail(http.StatusBadRequest, "%s contains a control character (U+%04X)", field, r)
		case isBidiOverride(r):
			return fail(http.StatusBadRequest, "%s contains a bidirectional override (U+%04X)", field, r)
		}
	}
	return nil
}

// isBidiOverride tells the bidirectional embedding, override and isolate
// controls (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI).
func isBidiOverride(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// upload checks that exactly one of html and files is given and turns it
// into validated files.
func (r *deployRequest) upload(maxFiles int, load sites.BlobLoader) (sites.Upload, error) {
	switch {
	case r.HTML != nil && r.Files != nil:
		return sites.Upload{}, fail(http.StatusBadRequest, msgBothContent)
	case r.HTML != nil:
		if *r.HTML == "" {
			return sites.Upload{}, fail(http.StatusBadRequest, "html must not be empty")
		}
		return sites.Upload{
			StorageType: sites.StorageHTML,
			Files: []sites.File{{
				Path:        "index.html",
				ContentType: "text/html; charset=utf-8",
				Data:        []byte(*r.HTML),
			}},
		}, nil
	case r.Files != nil:
		in := *r.Files
		if len(in) == 0 {
			return sites.Upload{}, fail(http.StatusBadRequest, "files must not be empty")
		}
		if len(in) > maxFiles {
			return sites.Upload{}, fail(http.StatusRequestEntityTooLarge, "Too many files: the limit is %d", maxFiles)
		}
		files, err := sites.DecodeFiles(in, load)
		if err != nil {
			return sites.Upload{}, err
		}
		return sites.Upload{StorageType: sites.StorageFiles, Files: files}, nil
	}
	return sites.Upload{}, fail(http.StatusBadRequest, msgHTMLRequired)
}

// content validates the metadata and the files of the request.
// File entries may name stored content by sha256 (load reads it).
func (r *deployRequest) content(maxFiles int, load sites.BlobLoader) (sites.Metadata, sites.Upload, error) {
	meta, err := r.metadata()
	if err != nil {
		return sites.Metadata{}, sites.Upload{}, err
	}
	up, err := r.upload(maxFiles, load)
	return meta, up, err
}
