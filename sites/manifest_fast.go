package sites

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// parseManifestFast decodes a manifest of the form json.Marshal gives a
// Manifest (each key once, spelled exactly; strings and non-negative
// integers; no null), in one pass, and reports whether raw had that form
// (nil otherwise, for encoding/json to decode whatever else a stored
// manifest may be). Every redeploy reads its live version's manifest (a
// 1000-file site's is ~400 KB), and a site is served from it;
// encoding/json scans it twice, with reflection, five times slower
// (BenchmarkParseManifest1000). FuzzParseManifestFast checks that it
// decodes what json.Unmarshal does.
func parseManifestFast(raw []byte) (Manifest, bool) {
	d := manifestDecoder{b: raw}
	m := make(Manifest, len(raw)/300) // ~300 bytes a file with variants
	ok := d.object(func(path string) bool {
		if _, dup := m[path]; dup {
			return false
		}
		e, ok := d.entry()
		m[path] = e
		return ok
	})
	if !ok {
		return nil, false
	}
	d.space()
	if d.i != len(d.b) {
		return nil, false
	}
	return m, true
}

// manifestDecoder reads JSON from b at i; its methods return false where
// the input is not of the form taken.
type manifestDecoder struct {
	b []byte
	i int
}

// entry reads a ManifestEntry.
func (d *manifestDecoder) entry() (ManifestEntry, bool) {
	var e ManifestEntry
	var seen [5]bool
	ok := d.object(func(key string) bool {
		at := -1
		switch key {
		case "hash":
			at = 0
		case "size":
			at = 1
		case "type":
			at = 2
		case "encoded":
			at = 3
		case "source":
			at = 4
		}
		if at < 0 || seen[at] {
			return false
		}
		seen[at] = true
		var ok bool
		switch at {
		case 0:
			e.Hash, ok = d.str()
		case 1:
			e.Size, ok = d.int()
		case 2:
			e.Type, ok = d.str()
		case 3:
			e.Encoded = make(map[string]EncodedEntry, 3)
			ok = d.object(func(coding string) bool {
				if _, dup := e.Encoded[coding]; dup {
					return false
				}
				v, ok := d.encoded()
				e.Encoded[coding] = v
				return ok
			})
		case 4:
			e.Source, ok = d.str()
		}
		return ok
	})
	return e, ok
}

// encoded reads an EncodedEntry.
func (d *manifestDecoder) encoded() (EncodedEntry, bool) {
	var v EncodedEntry
	var seenHash, seenSize bool
	ok := d.object(func(key string) bool {
		var ok bool
		switch {
		case key == "hash" && !seenHash:
			seenHash = true
			v.Hash, ok = d.str()
		case key == "size" && !seenSize:
			seenSize = true
			v.Size, ok = d.int()
		}
		return ok
	})
	return v, ok
}

// object reads an object, calling field with each key, the decoder at
// its value (which field reads). Keys are matched exactly (encoding/json
// matches them case-insensitively too: its business).
func (d *manifestDecoder) object(field func(key string) bool) bool {
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
		key, ok := d.str()
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

// str reads a string: one with no escape, no control character and
// valid UTF-8 as it is, any other by encoding/json (its escapes; invalid
// UTF-8 replaced), or not at all.
func (d *manifestDecoder) str() (string, bool) {
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

// slowString decodes the string whose quote is at start with
// encoding/json, after finding its end.
func (d *manifestDecoder) slowString(start int) (string, bool) {
	for i := start + 1; i < len(d.b); i++ {
		switch d.b[i] {
		case '\\':
			i++
		case '"':
			var s string
			if err := json.Unmarshal(d.b[start:i+1], &s); err != nil {
				return "", false
			}
			d.i = i + 1
			return s, true
		}
	}
	return "", false
}

// int reads a non-negative integer of at most 18 digits, written as
// json.Marshal writes it (no sign, no leading zero, no fraction).
func (d *manifestDecoder) int() (int64, bool) {
	start := d.i
	var n int64
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		n = n*10 + int64(d.b[d.i]-'0')
		d.i++
	}
	digits := d.i - start
	if digits == 0 || digits > 18 || (digits > 1 && d.b[start] == '0') {
		return 0, false
	}
	if d.i < len(d.b) && bytes.IndexByte([]byte(" \t\n\r,}]"), d.b[d.i]) < 0 {
		return 0, false // 1.5, 1e3
	}
	return n, true
}

// take reads c if it is next.
func (d *manifestDecoder) take(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// space skips JSON whitespace.
func (d *manifestDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}
