package sites

import (
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"sitedrop/sites/store"
)

// maxFilePathLen is the longest file path accepted, in bytes, after
// normalising.
const maxFilePathLen = 1024

// maxFilePathSegments is the largest number of "/"-separated segments a file
// path may have.
const maxFilePathSegments = 32

// PathError reports a file entry that cannot be deployed: a bad path, a
// duplicate, an unknown encoding, undecodable base64 or a bad content type.
// Path is the path as the client sent it.
type PathError struct {
	// Path is the offending file path, as sent by the client.
	Path string
	// Msg says what is wrong with the entry.
	Msg string
}

// Error returns `invalid file path "<path>": <msg>`.
func (e *PathError) Error() string {
	return fmt.Sprintf("invalid file path %q: %s", e.Path, e.Msg)
}

// NormalizePath turns a client's file path into the path a file is stored
// under. One leading "/" or "./" is stripped (only one); the separator is
// "/". It returns a *PathError when the path is empty, has an empty segment
// ("a//b", a trailing "/"), is still absolute after stripping, has a "." or
// ".." segment, contains a backslash, NUL or any other control character or
// invalid UTF-8, is longer than 1024 bytes or has more than 32 segments.
// Nothing is decoded: "%2e%2e" is a literal name.
func NormalizePath(p string) (string, error) {
	fail := func(msg string) (string, error) { return "", &PathError{Path: p, Msg: msg} }
	if !utf8.ValidString(p) {
		return fail("path is not valid UTF-8")
	}
	for _, r := range p {
		switch {
		case r == 0:
			return fail("path contains a NUL byte")
		case unicode.IsControl(r):
			return fail("path contains a control character")
		case r == '\\':
			return fail(`path contains a backslash (use "/" as the separator)`)
		}
	}
	q := p
	if strings.HasPrefix(q, "./") {
		q = q[2:]
	} else if strings.HasPrefix(q, "/") {
		q = q[1:]
	}
	if q == "" {
		return fail("path is empty")
	}
	if len(q) > maxFilePathLen {
		return fail(fmt.Sprintf("path is longer than %d bytes", maxFilePathLen))
	}
	if strings.HasPrefix(q, "/") {
		return fail("path is absolute")
	}
	segs := strings.Split(q, "/")
	if len(segs) > maxFilePathSegments {
		return fail(fmt.Sprintf("path has more than %d segments", maxFilePathSegments))
	}
	for _, s := range segs {
		switch s {
		case "":
			return fail("path has an empty segment")
		case ".", "..":
			return fail(`path contains a "." or ".." segment`)
		}
	}
	return q, nil
}

// ContentMissingPhrase ends the refusal of a deploy that names content
// by a sha256 the server does not have; clients (the CLI) look for it to
// upload the content and retry.
const ContentMissingPhrase = "is not on the server"

// FileInput is one element of the "files" array of a deploy request.
type FileInput struct {
	// Path is the file's path inside the site, e.g. "css/site.css".
	Path string `json:"path"`
	// Content is the file's content: text, or base64 when Encoding is
	// "base64". nil (absent or null in JSON) is no content, which an entry
	// may only lack when it has SHA256 (or Data); "" is an empty file.
	Content *string `json:"content"`
	// ContentType is the optional MIME type; guessed from the path when empty.
	ContentType string `json:"contentType"`
	// Encoding is "" for text content or "base64".
	Encoding string `json:"encoding"`
	// SHA256 names content already on the server (uploaded with PUT
	// /blobs/:sha256, or part of an earlier deploy) instead of Content.
	SHA256 string `json:"sha256"`
	// Data, when not nil, is the raw content (archives), used instead of
	// Content without a copy.
	Data []byte `json:"-"`
}

// BlobLoader returns the bytes of a stored blob by hash, or an error
// wrapping store.ErrBlobNotFound.
type BlobLoader func(hash string) ([]byte, error)

// File is a decoded, validated file of a site.
type File struct {
	// Path is the normalised path (see NormalizePath).
	Path string
	// ContentType is the normalised MIME type, with a UTF-8 charset for
	// text types that carry none (see WithUTF8Charset).
	ContentType string
	// Data is the file's content.
	Data []byte
}

// DecodeFiles validates and decodes the files of a deploy request, in input
// order. Each path is normalised with NormalizePath; two entries with the
// same normalised path, an Encoding other than "" or "base64", content that
// is not base64 when Encoding is "base64", or a ContentType that
// mime.ParseMediaType rejects (or that has no "/") give a *PathError naming the entry's path.
//
// Base64 content is standard encoding, with or without padding; ASCII white
// space (e.g. line breaks) in it is ignored. A given ContentType is
// normalised with mime.FormatMediaType; an empty one is guessed with
// ContentTypeFor. Text types then get a UTF-8 charset (WithUTF8Charset).
//
// An entry with SHA256 takes its bytes from load (nil: such entries are
// refused); a hash the server does not have is a PathError that names it.
// An entry with neither Content, SHA256 nor Data is a PathError naming its
// index ("files[3]"): an empty file is sent as an empty Content.
func DecodeFiles(in []FileInput, load BlobLoader) ([]File, error) {
	out := make([]File, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, f := range in {
		p, err := NormalizePath(f.Path)
		if err != nil {
			return nil, err
		}
		if seen[p] {
			return nil, &PathError{Path: f.Path, Msg: "duplicate path"}
		}
		seen[p] = true

		var data []byte
		switch {
		case f.SHA256 != "":
			if f.Content != nil || f.Encoding != "" {
				return nil, &PathError{Path: f.Path, Msg: "give content or sha256, not both"}
			}
			h, ok := store.ParseHash(f.SHA256)
			if !ok {
				return nil, &PathError{Path: f.Path, Msg: store.InvalidHashMsg(f.SHA256)}
			}
			if load == nil {
				return nil, &PathError{Path: f.Path, Msg: "sha256 entries need an API key: anonymous deploys send their bytes (content)"}
			}
			data, err = load(h)
			if errors.Is(err, store.ErrBlobNotFound) {
				return nil, &PathError{Path: f.Path, Msg: fmt.Sprintf("content with sha256 %s %s (upload it with PUT /blobs/%s)", h, ContentMissingPhrase, h)}
			}
			if err != nil {
				return nil, err
			}
		case f.Data != nil:
			data = f.Data
		case f.Content == nil:
			return nil, &PathError{Path: f.Path, Msg: fmt.Sprintf("files[%d] has no content: content or sha256 is required", i)}
		case f.Encoding == "":
			data = []byte(*f.Content)
		case f.Encoding == "base64":
			data, err = decodeBase64Content(*f.Content)
			if err != nil {
				return nil, &PathError{Path: f.Path, Msg: "content is not valid base64"}
			}
		default:
			return nil, &PathError{Path: f.Path, Msg: fmt.Sprintf(`unknown encoding %q (use "base64" or omit it)`, f.Encoding)}
		}

		var ct string
		if given := strings.TrimSpace(f.ContentType); given != "" {
			mt, params, err := mime.ParseMediaType(given)
			if err == nil && strings.Contains(mt, "/") {
				ct = mime.FormatMediaType(mt, params)
			}
			if ct == "" {
				return nil, &PathError{Path: f.Path, Msg: fmt.Sprintf("invalid contentType %q", f.ContentType)}
			}
		} else {
			ct = ContentTypeFor(p, data)
		}
		out = append(out, File{Path: p, ContentType: WithUTF8Charset(ct), Data: data})
	}
	return out, nil
}

// decodeBase64Content decodes standard base64, padded or not, ignoring
// ASCII white space anywhere in s.
func decodeBase64Content(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			return -1
		}
		return r
	}, s)
	if len(s)%4 == 0 {
		return base64.StdEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// builtinContentTypes maps lowercase file extensions to the content types
// sitedrop serves them with, whatever the host's MIME tables say.
var builtinContentTypes = map[string]string{
	".html":        "text/html",
	".htm":         "text/html",
	".css":         "text/css",
	".js":          "text/javascript",
	".mjs":         "text/javascript",
	".json":        "application/json",
	".map":         "application/json",
	".txt":         "text/plain",
	".md":          "text/markdown",
	".xml":         "application/xml",
	".svg":         "image/svg+xml",
	".png":         "image/png",
	".jpg":         "image/jpeg",
	".jpeg":        "image/jpeg",
	".gif":         "image/gif",
	".webp":        "image/webp",
	".avif":        "image/avif",
	".ico":         "image/x-icon",
	".woff":        "font/woff",
	".woff2":       "font/woff2",
	".ttf":         "font/ttf",
	".otf":         "font/otf",
	".wasm":        "application/wasm",
	".pdf":         "application/pdf",
	".mp4":         "video/mp4",
	".webm":        "video/webm",
	".mp3":         "audio/mpeg",
	".ogg":         "audio/ogg",
	".wav":         "audio/wav",
	".csv":         "text/csv",
	".webmanifest": "application/manifest+json",
}

// ContentTypeFor guesses the content type of a file: from its extension
// (case-insensitive) using a built-in table for common web types, then
// mime.TypeByExtension, and finally by sniffing data with
// http.DetectContentType. The result may lack a charset; see
// WithUTF8Charset.
func ContentTypeFor(filePath string, data []byte) string {
	if ext := strings.ToLower(path.Ext(filePath)); ext != "" {
		if ct, ok := builtinContentTypes[ext]; ok {
			return ct
		}
		if ct := mime.TypeByExtension(ext); ct != "" {
			return ct
		}
	}
	return http.DetectContentType(data)
}

// utf8CharsetTypes are the text media types WithUTF8Charset labels as UTF-8.
var utf8CharsetTypes = map[string]bool{
	"text/html":                 true,
	"text/css":                  true,
	"text/plain":                true,
	"text/javascript":           true,
	"application/javascript":    true,
	"application/json":          true,
	"text/markdown":             true,
	"text/csv":                  true,
	"image/svg+xml":             true,
	"text/xml":                  true,
	"application/xml":           true,
	"application/manifest+json": true,
}

// WithUTF8Charset adds "; charset=utf-8" to a text content type (HTML, CSS,
// plain text, JavaScript, JSON, Markdown, CSV, SVG, XML, web manifest) that
// has no charset parameter. Other types, types that already name a charset
// and unparsable values are returned unchanged.
func WithUTF8Charset(ct string) string {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !utf8CharsetTypes[mt] {
		return ct
	}
	if _, ok := params["charset"]; ok {
		return ct
	}
	params["charset"] = "utf-8"
	if out := mime.FormatMediaType(mt, params); out != "" {
		return out
	}
	return ct
}

// IsHTML reports whether ct's media type is text/html, ignoring parameters
// and case.
func IsHTML(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt == "text/html"
}
