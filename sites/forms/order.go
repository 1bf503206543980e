package forms

import (
	"bytes"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
)

// Submissions keep the order of their form's fields: the data is stored
// as a JSON object whose keys come in the order they were sent. The API's
// "data" stays an object (key order means nothing there); the site page
// and the notification mail read the stored order back. Submissions
// stored before sorted their keys, which is also the fallback.

// Field is one field of a submission, its value as DisplayValue shows it.
type Field struct {
	Name, Value string
}

// OrderedJSON encodes data as a JSON object with the keys of order first
// (each once, those in data only), then any others sorted.
func OrderedJSON(data map[string]any, order []string) ([]byte, error) {
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

// FormKeyOrder returns the names of a url-encoded form in the order they
// come (a repeated one each time, as a multipart form's: OrderedJSON takes
// each key once).
func FormKeyOrder(raw string) []string {
	var keys []string
	for part := range strings.SplitSeq(raw, "&") {
		name, _, _ := strings.Cut(part, "=")
		if k, err := url.QueryUnescape(name); err == nil && k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// JSONKeyOrder returns the keys of the JSON object at the start of raw in
// the order they appear; nil when raw does not start with an object.
func JSONKeyOrder(raw []byte) []string {
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

// OrderedFields lists a stored submission's fields, raw being its stored
// data and data that decoded, in their stored order (the form's, or
// sorted for old submissions).
func OrderedFields(raw []byte, data map[string]any) []Field {
	out := make([]Field, 0, len(data))
	for _, k := range JSONKeyOrder(raw) {
		if v, ok := data[k]; ok {
			out = append(out, Field{Name: k, Value: DisplayValue(v)})
		}
	}
	if len(out) != len(data) { // duplicate keys, or not an object
		return SortedFields(data)
	}
	return out
}

// SortedFields lists a submission's fields sorted by name.
func SortedFields(data map[string]any) []Field {
	out := make([]Field, 0, len(data))
	for k, v := range data {
		out = append(out, Field{Name: k, Value: DisplayValue(v)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// DisplayValue shows a submitted value: strings as they are, other values
// as JSON.
func DisplayValue(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}
