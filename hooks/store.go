package hooks

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/store"
	"sitedrop/sites/store/s3store"
)

// storeFile is the --store value of the local blob store.
const storeFile = "file"

// openStore opens the blob store --store names: the file store under
// --dir (or BlobDir), or an S3 bucket, which is also where the live
// manifests are published (see newPublisher): then the S3 store is also
// returned as such (nil with the file store).
func openStore(app core.App, cfg *Config) (store.BlobStore, *s3store.Store, error) {
	spec := cfg.Store
	if spec == "" || spec == storeFile {
		dir := cfg.BlobDir
		if dir == "" {
			dir = filepath.Join(app.DataDir(), "site_blobs")
		}
		blobs, err := store.NewFSStore(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("open blob store: %w", err)
		}
		return blobs, nil, nil
	}
	s3, err := openS3Store(spec)
	if err != nil {
		return nil, nil, err
	}
	return s3, s3, nil
}

// openS3Store opens an s3:// --store. It sends no request to the bucket
// (the 30 s bound the credentials' lookup): a store unreachable at start
// is logged by the caller's first use, not fatal (it may be back in a
// moment).
func openS3Store(spec string) (*s3store.Store, error) {
	if !strings.HasPrefix(spec, "s3://") {
		return nil, fmt.Errorf("--store %q: want %s or s3://bucket/prefix?endpoint=URL&region=REGION", spec, storeFile)
	}
	loc, err := s3store.ParseURL(spec)
	if err != nil {
		return nil, fmt.Errorf("--store: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := s3store.Open(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("--store: %w", err)
	}
	return s, nil
}
