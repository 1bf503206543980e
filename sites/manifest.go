package sites

import (
	"encoding/json"
	"fmt"
)

// ManifestEntry is one file of a deployment version: where its bytes are in
// the store.BlobStore, how long it is and how it is served.
type ManifestEntry struct {
	Hash string `json:"hash"`
	Size int64  `json:"size"`
	Type string `json:"type"`
	// Encoded are the precompressed variants by content coding ("br",
	// "zstd", "gzip"), made at deploy time for compressible files. Versions
	// deployed before variants existed have none and are served as is.
	Encoded map[string]EncodedEntry `json:"encoded,omitempty"`
	// Source is the hash of the bytes the client sent, when the server
	// changed them (HTML with head tags or the submit URL added). It is
	// kept too, so a redeploy by digest finds it and uploads nothing.
	Source string `json:"source,omitempty"`
}

// EncodedEntry is a precompressed variant of a file: a blob of its own.
type EncodedEntry struct {
	Hash string `json:"hash"`
	Size int64  `json:"size"`
}

// Hashes calls fn with every blob hash the entry references: the file's,
// its variants' and its source's.
func (e ManifestEntry) Hashes(fn func(hash string)) {
	fn(e.Hash)
	if e.Source != "" {
		fn(e.Source)
	}
	for _, v := range e.Encoded {
		fn(v.Hash)
	}
}

// Manifest maps a site path (normalised, no leading slash) to its file.
type Manifest map[string]ManifestEntry

// TotalBytes is the sum of the manifest's file sizes.
func (m Manifest) TotalBytes() int64 {
	var n int64
	for _, e := range m {
		n += e.Size
	}
	return n
}

// ParseManifest decodes a manifest stored in a versions record.
func ParseManifest(raw []byte) (Manifest, error) {
	m := Manifest{}
	if len(raw) == 0 || string(raw) == "null" {
		return m, nil
	}
	if fast, ok := parseManifestFast(raw); ok {
		return fast, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	return m, nil
}
