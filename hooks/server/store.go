package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sitedrop/sites/store"
	"sitedrop/sites/store/s3store"
)

// StoreFile is the --store value of the local blob store.
const StoreFile = "file"

// OpenStore opens the blob store --store (spec) names: the file store in
// dir for "" or StoreFile, or an S3 bucket, which is also where the live
// manifests are published for replicas: then the S3 store is also
// returned as such (nil with the file store).
func OpenStore(spec, dir string) (store.BlobStore, *s3store.Store, error) {
	if spec == "" || spec == StoreFile {
		blobs, err := store.NewFSStore(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("open blob store: %w", err)
		}
		return blobs, nil, nil
	}
	s3, err := OpenS3Store(spec)
	if err != nil {
		return nil, nil, err
	}
	return s3, s3, nil
}

// OpenS3Store opens an s3:// --store. It sends no request to the bucket
// (the 30 s bound the credentials' lookup): a store unreachable at start
// is logged by the caller's first use, not fatal (it may be back in a
// moment).
func OpenS3Store(spec string) (*s3store.Store, error) {
	if !strings.HasPrefix(spec, "s3://") {
		return nil, fmt.Errorf("--store %q: want %s or s3://bucket/prefix?endpoint=URL&region=REGION", spec, StoreFile)
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
