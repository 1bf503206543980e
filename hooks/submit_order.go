package hooks

import (
	"bytes"
	"encoding/json"
	"net/url"
	"sort"
	"strings"

	"sitedrop/ui"
)

// Submissions keep the order of their form's fields: the data is stored
// as a JSON object whose keys come in the order they were sent. The API's
// "data" stays an object (key order means nothing there); the site page
// reads the stored order back. Submissions stored before sorted their
// keys, which is also the fallback.

// orderedJSON encodes data as a JSON object with the keys of order first
// (each once, those in data only), then any others sorted.
func orderedJSON(data map[string]any, order []string) ([]byte, error) {
	keys := make([]string, 0, len(data))
	seen := make(map[string]bool, len(data))
	for _, k := range order {
		if _, ok := data[k]; ok && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	var rest []string
	for k := range data {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	keys = append(keys, rest...)

	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(data[k])
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// jsonKeyOrder returns the keys of the JSON object at the start of raw in
// the order they appear; nil when raw does not start with an object.
func jsonKeyOrder(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		k, ok := tok.(string)
		if !ok {
			return keys
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
		keys = append(keys, k)
	}
	return keys
}

// queryKeyOrder returns the names of a url-encoded form in the order they
// come (a repeated one each time, as a multipart form's: orderedJSON
// takes each key once).
func queryKeyOrder(raw string) []string {
	var keys []string
	for part := range strings.SplitSeq(raw, "&") {
		name, _, _ := strings.Cut(part, "=")
		if k, err := url.QueryUnescape(name); err == nil && k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// orderedFields lists a stored submission's fields in their stored order
// (the form's, or sorted for old submissions).
func orderedFields(raw []byte, data map[string]any) []ui.SubmissionField {
	out := make([]ui.SubmissionField, 0, len(data))
	for _, k := range jsonKeyOrder(raw) {
		if v, ok := data[k]; ok {
			out = append(out, ui.SubmissionField{Name: k, Value: displayValue(v)})
		}
	}
	if len(out) != len(data) { // duplicate keys, or not an object
		return submissionFields(data)
	}
	return out
}
