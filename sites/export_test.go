package sites

// SetManifestBatch changes how many versions the collector reads per query,
// so tests can cross page boundaries with few deployments; it returns the
// restore function.
func SetManifestBatch(n int) func() {
	old := manifestBatch
	manifestBatch = n
	return func() { manifestBatch = old }
}

// SetStorageBatch changes how many versions StorageBytes reads per
// query; it returns the restore function.
func SetStorageBatch(n int) func() {
	old := storageBatch
	storageBatch = n
	return func() { storageBatch = old }
}

// Compressions returns how many files have been compressed so far.
func Compressions() int64 { return compressions.Load() }
