// Package publish writes every site's live state to the object store, one
// object per host, so that serving replicas (sites/replica) need no
// database: the Publisher runs on the primary after each change commits,
// and a Document is what a replica reads. After the documents it writes,
// the Publisher adds what changed to the change feed (Feed, at FeedKey),
// so that a replica learns of changes from one small object instead of
// listing every document; and it tells Changes where the feed stands,
// whose handler (ChangesPath, on the primary) answers the long polls of
// the replicas that follow the primary, as soon as the feed moves.
package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"sitedrop/sites"
	"sitedrop/sites/store/s3store"
)

// Objects is the object access publishing and replicas need (an
// *s3store.Store).
type Objects interface {
	GetObject(ctx context.Context, key string) ([]byte, string, error)
	PutObject(ctx context.Context, key string, data []byte, cond s3store.Condition) (string, error)
	DeleteObject(ctx context.Context, key string) error
	ListObjects(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error
	// GetObjectIfNoneMatch reads key unless it still has etag
	// (s3store.ErrNotModified then).
	GetObjectIfNoneMatch(ctx context.Context, key, etag string) ([]byte, string, error)
}

// SitesPrefix is where the documents live, under the store's prefix:
// sites/<host>.json.
const SitesPrefix = "sites/"

// Key is the object key of host's document.
func Key(host string) string { return SitesPrefix + host + ".json" }

// HostOfKey is the host a document key names, ok false for any other key
// (FeedKey among them).
func HostOfKey(key string) (host string, ok bool) {
	if !strings.HasPrefix(key, SitesPrefix) || !strings.HasSuffix(key, ".json") {
		return "", false
	}
	if key == FeedKey {
		return "", false
	}
	host = key[len(SitesPrefix) : len(key)-len(".json")]
	return host, host != "" && !strings.Contains(host, "/")
}

// Document is a published host: the whole sites.Site that the primary's
// Service.LoadSite gives (every field, so what other features add to Site
// reaches the replicas), the hosts the site answers on, and a generation
// that grows with every publish of the host (a replica never replaces a
// document with one of a lower generation).
type Document struct {
	Generation int64    `json:"generation"`
	Host       string   `json:"host"`
	Hosts      []string `json:"hosts"`
	// Previews are the site's preview hosts (v<N>--<slug>.<sites-domain>,
	// <alias>--<slug>.<sites-domain>), each with a document of its own
	// whose Site is that version's (Site.Preview set); listed in the
	// site's own host's document only, so that a publish finds the ones
	// to remove.
	Previews []string    `json:"previews,omitempty"`
	Site     *sites.Site `json:"site"`
}

// rawDocument is a Document with its site left as bytes, to compare.
type rawDocument struct {
	Generation int64           `json:"generation"`
	Host       string          `json:"host"`
	Hosts      []string        `json:"hosts"`
	Previews   []string        `json:"previews,omitempty"`
	Site       json.RawMessage `json:"site"`
}

// ParseDocument decodes a published document.
func ParseDocument(data []byte) (*Document, error) {
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("parse site document: %w", err)
	}
	if d.Site == nil {
		return nil, fmt.Errorf("parse site document: no site")
	}
	if d.Site.Files == nil {
		d.Site.Files = sites.Manifest{}
	}
	return &d, nil
}
