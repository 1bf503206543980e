package store_test

import (
	"testing"

	"sitedrop/sites/store"
	"sitedrop/sites/store/storetest"
)

// TestFSStoreContract runs the BlobStore contract that the S3 store runs
// too (sites/store/s3store).
func TestFSStoreContract(t *testing.T) {
	s, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	storetest.Contract(t, s)
}
