package sites

import (
	"hash/maphash"
	"sync"

	"github.com/pocketbase/pocketbase/core"
)

// deletionCounter is a store that counts the blobs it deleted
// (store.FSStore.Deletions): no blob leaves it but by a counted Delete.
type deletionCounter interface {
	Deletions() uint64
}

// maxVerified bounds the deployments verifiedVersions remembers; past
// it, it forgets them all (the next redeploy of each asks the store
// again, as one after a restart does).
const maxVerified = 4096

// verifiedVersions remembers, for the deployments deployed by this
// process, the version whose every blob the deploy wrote or found in the
// store, and the store's deletion count read before it looked. While
// that version is live and the count has not moved, its blobs are all
// still there: a redeploy counts them present without a stat each (an
// unchanged redeploy of 1000 files made 4,000, a third of its CPU). A
// deletion through the store (the collector's, or any other) moves the
// count, and the next redeploy asks the store about each blob again,
// making again what went (TestRedeployReusesVariants). The version's
// manifest is remembered too (a hash of its bytes): one edited in place
// (from the dashboard) may name blobs never seen, and is not trusted
// (TestRedeployLooksAgainAfterTheLiveManifestIsEdited). A blob removed
// behind the process's back (by hand) is not seen until then.
type verifiedVersions struct {
	mu   sync.Mutex
	m    map[string]verifiedVersion // by deployment id
	seed maphash.Seed
}

// verifiedVersion is a version whose blobs were all present when the
// store's deletion count was deletions, and whose manifest's bytes hash
// to manifest.
type verifiedVersion struct {
	version   string
	manifest  uint64
	deletions uint64
}

// storeDeletions is the store's deletion count; ok is false for a store
// that keeps none (nothing is then remembered).
func (s *Service) storeDeletions() (n uint64, ok bool) {
	dc, ok := s.store.(deletionCounter)
	if !ok {
		return 0, false
	}
	return dc.Deletions(), true
}

// remember records that every blob of ver, a version of the deployment
// depID as saved, was present after the store's deletion count was
// deletions.
func (v *verifiedVersions) remember(depID string, ver *core.Record, deletions uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil || len(v.m) >= maxVerified {
		v.m = make(map[string]verifiedVersion)
		v.seed = maphash.MakeSeed()
	}
	// the bytes stored: what manifestBytes reads back
	sum := maphash.String(v.seed, ver.GetString(FieldVersionManifest))
	v.m[depID] = verifiedVersion{ver.Id, sum, deletions}
}

// sure tells whether every blob of l, the live version of the deployment
// depID (nil: none), is known present: remembered, with the same
// manifest, and no deletion since.
func (s *Service) sure(depID string, l *liveContent) bool {
	now, ok := s.storeDeletions()
	if !ok || l == nil {
		return false
	}
	s.verified.mu.Lock()
	defer s.verified.mu.Unlock()
	got, found := s.verified.m[depID]
	return found && got.version == l.id && got.deletions == now &&
		got.manifest == maphash.Bytes(s.verified.seed, l.raw)
}
