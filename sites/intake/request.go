package intake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"unicode"
	"unicode/utf8"

	"sitedrop/sites"
	"sitedrop/sites/wire"
)

// Field limits of deploy requests.
const (
	MaxTitleLen       = 500  // characters
	MaxDescriptionLen = 2000 // characters
	MaxFaviconLen     = 16   // characters: one emoji (sites.IsEmoji), ZWJ sequences included
)

// Request is what a deploy (POST /deploy) or an update (PUT
// /deploy/{id}) sends: the JSON body (wire.DeployRequest), or an
// archive's files with its metadata from the query.
type Request struct {
	wire.DeployRequest
	// archive holds an archive deploy's files, with their bytes; nil for
	// a JSON body.
	archive *[]sites.FileInput
}

// DecodeJSON decodes one JSON value from r, a body bounded to limit bytes,
// into dst; see ReadJSON. A refusal of r (a Body) is returned as it is.
func DecodeJSON(r io.Reader, limit int64, dst any) error {
	dec := json.NewDecoder(r)
	if err := dec.Decode(dst); err != nil {
		return JSONError(err, limit)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		switch {
		case BodyRefusal(err):
			return err
		case errors.As(err, &mbe):
			return &TooLargeError{Limit: limit}
		}
		return invalid("Malformed JSON: unexpected data after the JSON object")
	}
	return nil
}

// ArchiveSentAsJSON answers a deploy body that is an archive sent
// without an archive Content-Type (curl's default, say) with a hint,
// rather than a JSON syntax error; nil for any other body. It peeks at
// the body's first bytes and leaves them to be read.
func ArchiveSentAsJSON(body *bufio.Reader) error {
	head, err := body.Peek(4) // fewer at the end of a short body
	if err != nil && BodyRefusal(err) {
		return err // too slow, or the memory budget
	}
	kind := archiveKindOf(head)
	if kind == "" {
		return nil
	}
	return invalid("The body is %s, not JSON: send it with Content-Type: %s", kind, archiveContentTypes[kind])
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

// JSONError turns a decoding error into the client's refusal.
func JSONError(err error, limit int64) error {
	var mbe *http.MaxBytesError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case BodyRefusal(err):
		return err // the body reader's: too slow, the memory budget
	case errors.Is(err, wire.ErrPasswordType), errors.Is(err, wire.ErrProtectValue):
		return invalid("%s", err)
	case errors.As(err, &mbe):
		return &TooLargeError{Limit: limit}
	case errors.Is(err, io.EOF):
		return invalid("Request body must be a JSON object")
	case errors.As(err, &syn):
		return invalid("Malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("Malformed JSON: unexpected end of input")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return invalid("Request body must be a JSON object")
		}
		return invalid("Invalid type for field %s: expected %s", typ.Field, kindName(typ.Type))
	}
	return invalid("Malformed JSON: %s", err.Error())
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

// Metadata validates the descriptive fields and returns them for the
// service; see CheckMetadata.
func (r *Request) Metadata() (sites.Metadata, error) {
	return CheckMetadata(&r.DeployRequest)
}

// CheckMetadata validates the descriptive fields of r (title,
// description, favicon, is_spa, and the password's rules) and returns
// them for the service. Every way of setting them (a JSON body on POST
// and PUT, an archive deploy's query, the site page's settings form) goes
// through it.
func CheckMetadata(r *wire.DeployRequest) (sites.Metadata, error) {
	checks := []struct {
		name string
		val  *string
		max  int
	}{
		{"title", r.Title, MaxTitleLen},
		{"description", r.Description, MaxDescriptionLen},
		{"favicon", r.Favicon, MaxFaviconLen},
	}
	for _, c := range checks {
		if c.val == nil {
			continue
		}
		if !utf8.ValidString(*c.val) {
			return sites.Metadata{}, invalid("%s must be valid UTF-8", c.name)
		}
		if n := utf8.RuneCountInString(*c.val); n > c.max {
			return sites.Metadata{}, invalid("%s is too long: at most %d characters", c.name, c.max)
		}
		if err := CheckMetadataRunes(c.name, *c.val); err != nil {
			return sites.Metadata{}, err
		}
	}
	if r.Favicon != nil {
		if err := sites.CheckFavicon(*r.Favicon); err != nil {
			return sites.Metadata{}, invalid("%s", err.Error())
		}
	}
	if err := checkPassword(r.Password); err != nil {
		return sites.Metadata{}, err
	}
	return sites.Metadata{Title: r.Title, Description: r.Description, Favicon: r.Favicon, IsSPA: r.IsSPA}, nil
}

// CheckMetadataRunes refuses, naming the field and the character, what a
// descriptive field must not carry into pages, mails, the dashboard or a
// terminal: control characters (Unicode category Cc: C0 including tab, CR
// and LF, DEL, C1) and the bidirectional embedding, override and isolate
// controls (U+202A..U+202E, U+2066..U+2069), which can make a title read
// differently from what it is. The marks U+200E, U+200F and U+061C stay
// allowed: right-to-left text needs them and they reorder nothing.
func CheckMetadataRunes(field, v string) error {
	for _, r := range v {
		switch {
		case unicode.IsControl(r):
			return invalid("%s contains a control character (U+%04X)", field, r)
		case IsBidiOverride(r):
			return invalid("%s contains a bidirectional override (U+%04X)", field, r)
		}
	}
	return nil
}

// IsBidiOverride tells the bidirectional embedding, override and isolate
// controls (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI).
func IsBidiOverride(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// Release validates how the request publishes its version (draft,
// alias, message) for a deploy by an account or anonymous (anon): an
// anonymous deploy is always live and has no alias. The refusals are
// *sites.FieldError naming the field.
func (r *Request) Release(anon bool) (sites.Release, error) {
	return CheckRelease(&r.DeployRequest, anon)
}

// CheckRelease is Request.Release for any deploy request (the MCP tools
// send one too).
func CheckRelease(r *wire.DeployRequest, anon bool) (sites.Release, error) {
	var rel sites.Release
	if r.Draft != nil {
		rel.Draft = *r.Draft
	}
	if r.Alias != nil {
		if *r.Alias == "" {
			return rel, &sites.FieldError{Field: "alias", Msg: "alias must not be empty: leave it out for none"}
		}
		rel.Alias = *r.Alias
	}
	if r.Message != nil {
		if !utf8.ValidString(*r.Message) {
			return rel, &sites.FieldError{Field: "message", Msg: "message must be valid UTF-8"}
		}
		if err := CheckMetadataRunes("message", *r.Message); err != nil {
			return rel, &sites.FieldError{Field: "message", Msg: err.Error()}
		}
		rel.Message = *r.Message
	}
	if err := rel.Check(anon); err != nil {
		return sites.Release{}, err
	}
	return rel, nil
}

// upload checks that exactly one of html and files is given and turns it
// into validated files.
func (r *Request) upload(maxFiles int, load sites.BlobLoader) (sites.Upload, error) {
	switch {
	case r.HTML != nil && (r.Files != nil || r.archive != nil):
		return sites.Upload{}, ErrBothContent
	case r.HTML != nil:
		if *r.HTML == "" {
			return sites.Upload{}, invalid("html must not be empty")
		}
		return sites.Upload{
			StorageType: sites.StorageHTML,
			Files: []sites.File{{
				Path:        "index.html",
				ContentType: "text/html; charset=utf-8",
				Data:        []byte(*r.HTML),
			}},
		}, nil
	case r.Files != nil || r.archive != nil:
		in := r.fileInputs()
		if len(in) == 0 {
			return sites.Upload{}, invalid("files must not be empty")
		}
		if len(in) > maxFiles {
			return sites.Upload{}, &TooManyFilesError{Limit: maxFiles}
		}
		files, err := sites.DecodeFiles(in, load)
		if err != nil {
			return sites.Upload{}, err
		}
		return sites.Upload{StorageType: sites.StorageFiles, Files: files}, nil
	}
	return sites.Upload{}, ErrHTMLRequired
}

// fileInputs are the request's files for sites.DecodeFiles: an archive's
// as they were unpacked, a JSON body's entries as they were sent.
func (r *Request) fileInputs() []sites.FileInput {
	if r.archive != nil {
		return *r.archive
	}
	in := make([]sites.FileInput, len(*r.Files))
	for i, f := range *r.Files {
		in[i] = sites.FileInput{Path: f.Path, Content: f.Content, ContentType: f.ContentType, Encoding: f.Encoding, SHA256: f.SHA256}
	}
	return in
}

// Content validates the metadata and the files of the request.
// File entries may name stored content by sha256 (load reads it).
func (r *Request) Content(maxFiles int, load sites.BlobLoader) (sites.Metadata, sites.Upload, error) {
	meta, err := r.Metadata()
	if err != nil {
		return sites.Metadata{}, sites.Upload{}, err
	}
	up, err := r.upload(maxFiles, load)
	return meta, up, err
}
