package intake

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"

	"sitedrop/sites/wire"
)

// DecodeDeployJSON decodes a deploy body (one JSON object, bounded to
// limit bytes) from r into dst, as DecodeJSON does, in one pass over the
// bytes where it can: encoding/json's Decoder scans a value whole to
// find its end, then scans it again to decode it, and a 1000-file deploy
// is 2 MB of JSON (a third of an unchanged redeploy's time).
//
// The body is read to its end first. A body of the usual form (the keys
// of a DeployRequest spelled exactly, each once; strings, booleans and
// the files array; no null, no password or protect) is decoded by
// decodeDeployFast. Any other, and any body whose read failed, is given
// to DecodeJSON as it came (the bytes read, then the read's error), so
// its answer, an error or an odd form, is encoding/json's, unchanged.
func DecodeDeployJSON(r io.Reader, limit int64, dst *wire.DeployRequest) error {
	var buf bytes.Buffer
	_, rerr := buf.ReadFrom(r)
	if rerr == nil && decodeDeployFast(buf.Bytes(), dst) {
		return nil
	}
	*dst = wire.DeployRequest{}
	var src io.Reader = &buf
	if rerr != nil {
		src = io.MultiReader(&buf, errReader{rerr})
	}
	return DecodeJSON(src, limit, dst)
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// fastDecoder reads JSON from b at i; a method returns false where the
// input is not of the form it takes (then nothing it decoded counts).
type fastDecoder struct {
	b []byte
	i int
}

// decodeDeployFast decodes b, a whole body, into dst when it is of the
// usual form (see DecodeDeployJSON) and reports whether it was; dst is
// left as it was otherwise. What it decodes is what json.Unmarshal would
// (FuzzDecodeDeployFast checks it).
func decodeDeployFast(b []byte, dst *wire.DeployRequest) bool {
	d := fastDecoder{b: b}
	var req wire.DeployRequest
	seen := map[string]bool{}
	ok := d.object(func(key []byte) bool {
		k := string(key)
		if seen[k] {
			return false // the last one counts: encoding/json's business
		}
		seen[k] = true
		switch k {
		case "files":
			files, ok := d.files()
			req.Files = &files
			return ok
		case "html":
			return d.stringPtr(&req.HTML)
		case "slug":
			return d.stringPtr(&req.Slug)
		case "title":
			return d.stringPtr(&req.Title)
		case "description":
			return d.stringPtr(&req.Description)
		case "favicon":
			return d.stringPtr(&req.Favicon)
		case "alias":
			return d.stringPtr(&req.Alias)
		case "message":
			return d.stringPtr(&req.Message)
		case "is_spa":
			return d.boolPtr(&req.IsSPA)
		case "draft":
			return d.boolPtr(&req.Draft)
		}
		return false // password, protect, a key in another case, an unknown key
	})
	if !ok {
		return false
	}
	d.space()
	if d.i != len(d.b) {
		return false
	}
	*dst = req
	return true
}

// files reads the files array.
func (d *fastDecoder) files() ([]wire.FileEntry, bool) {
	d.space()
	if !d.take('[') {
		return nil, false
	}
	// a first guess from the body's size (~2 KB a file) spares most
	// regrowths; the slice is the decoded form's, reserved as such
	out := make([]wire.FileEntry, 0, min(1+(len(d.b)-d.i)/2048, 4096))
	d.space()
	if d.take(']') {
		return out, true
	}
	for {
		var f wire.FileEntry
		var seen [5]bool
		ok := d.object(func(key []byte) bool {
			var at int
			var dst *string
			switch string(key) {
			case "content":
				at = 0
			case "contentType":
				at, dst = 1, &f.ContentType
			case "encoding":
				at, dst = 2, &f.Encoding
			case "path":
				at, dst = 3, &f.Path
			case "sha256":
				at, dst = 4, &f.SHA256
			default:
				return false
			}
			if seen[at] {
				return false
			}
			seen[at] = true
			if dst == nil {
				return d.stringPtr(&f.Content)
			}
			s, ok := d.str()
			*dst = s
			return ok
		})
		if !ok {
			return nil, false
		}
		out = append(out, f)
		d.space()
		switch {
		case d.take(','):
		case d.take(']'):
			return out, true
		default:
			return nil, false
		}
	}
}

// object reads an object, calling field with each key, the decoder at
// its value (which field reads).
func (d *fastDecoder) object(field func(key []byte) bool) bool {
	d.space()
	if !d.take('{') {
		return false
	}
	d.space()
	if d.take('}') {
		return true
	}
	for {
		d.space()
		key, ok := d.plainString()
		if !ok {
			return false
		}
		d.space()
		if !d.take(':') {
			return false
		}
		d.space()
		if !field(key) {
			return false
		}
		d.space()
		switch {
		case d.take(','):
		case d.take('}'):
			return true
		default:
			return false
		}
	}
}

// stringPtr reads a string into a new *string (null is not taken).
func (d *fastDecoder) stringPtr(dst **string) bool {
	s, ok := d.str()
	if ok {
		*dst = &s
	}
	return ok
}

// boolPtr reads true or false into a new *bool.
func (d *fastDecoder) boolPtr(dst **bool) bool {
	var v bool
	switch {
	case bytes.HasPrefix(d.b[d.i:], []byte("true")):
		v = true
		d.i += 4
	case bytes.HasPrefix(d.b[d.i:], []byte("false")):
		d.i += 5
	default:
		return false
	}
	if d.i < len(d.b) && !isDelim(d.b[d.i]) {
		return false // truex
	}
	*dst = &v
	return true
}

// isDelim tells a byte that may follow a literal.
func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

// plainString reads a string with no escape and only ASCII in it, and
// returns its bytes (within the body).
func (d *fastDecoder) plainString() ([]byte, bool) {
	if !d.take('"') {
		return nil, false
	}
	start := d.i
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string. One with no escape, no control character and valid
// UTF-8 is copied as it is; any other is decoded by encoding/json, which
// decides what it is (its escapes, invalid UTF-8 replaced by U+FFFD) or
// refuses it.
func (d *fastDecoder) str() (string, bool) {
	if !d.take('"') {
		return "", false
	}
	start := d.i
	ascii := true
	for ; d.i < len(d.b); d.i++ {
		c := d.b[d.i]
		if c == '"' {
			s := d.b[start:d.i]
			d.i++
			if !ascii && !utf8.Valid(s) {
				return d.slowString(start - 1)
			}
			return string(s), true
		}
		if c == '\\' || c < 0x20 {
			return d.slowString(start - 1)
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return "", false
}

// slowString decodes the string that starts (its quote) at start with
// encoding/json, after finding its end.
func (d *fastDecoder) slowString(start int) (string, bool) {
	i := start + 1
	for i < len(d.b) {
		switch d.b[i] {
		case '\\':
			i += 2
			continue
		case '"':
			var s string
			if err := json.Unmarshal(d.b[start:i+1], &s); err != nil {
				return "", false
			}
			d.i = i + 1
			return s, true
		}
		i++
	}
	return "", false
}

// take reads c if it is next.
func (d *fastDecoder) take(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// space skips JSON whitespace.
func (d *fastDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}
