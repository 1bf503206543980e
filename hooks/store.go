package hooks

import (
	"path/filepath"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/server"
	"sitedrop/sites/store"
	"sitedrop/sites/store/s3store"
)

// openStore opens the blob store --store names (server.OpenStore): the
// file store under --dir (or BlobDir), or an S3 bucket.
func openStore(app core.App, cfg *Config) (store.BlobStore, *s3store.Store, error) {
	dir := cfg.BlobDir
	if dir == "" {
		dir = filepath.Join(app.DataDir(), "site_blobs")
	}
	return server.OpenStore(cfg.Store, dir)
}
