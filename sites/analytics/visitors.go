package analytics

// MaxVisitorHashes bounds the visitor hashes one site-day keeps in memory
// (8 bytes each, plus the map's overhead).
const MaxVisitorHashes = 16384

// visitorSet counts distinct 64-bit hashes in bounded memory by adaptive
// sampling (Wegman; Flajolet 1990): it is exact up to MaxVisitorHashes
// distinct hashes; past that, it keeps only the hashes whose top level
// bits are zero, raising level (and halving what it keeps) each time it
// fills, and estimates len << level. The hashes are uniform (keyed
// maphash), so the sample is too; the error stays around
// 1/sqrt(MaxVisitorHashes/2), under 1.2 %.
type visitorSet struct {
	hashes map[uint64]struct{}
	level  uint8
	// keep: fresh lists the hashes added since the last takeFresh (a
	// subset of hashes, so bounded alike), for a replica to ship.
	keep  bool
	fresh []uint64
}

// sampled reports whether h is in the sample at the set's level.
func (v *visitorSet) sampled(h uint64) bool {
	return v.level == 0 || h>>(64-v.level) == 0
}

// add records h.
func (v *visitorSet) add(h uint64) {
	if !v.sampled(h) {
		return
	}
	if _, ok := v.hashes[h]; ok {
		return
	}
	v.hashes[h] = struct{}{}
	if v.keep {
		v.fresh = append(v.fresh, h)
	}
	for len(v.hashes) > MaxVisitorHashes && v.level < 63 {
		v.raise(v.level + 1)
	}
}

// raise raises the set's level to level (never lowers it), dropping the
// hashes out of the sample. Merging a set sampled at a higher level
// raises this one to it first: the union of two samples is a sample only
// at the higher level of the two.
func (v *visitorSet) raise(level uint8) {
	if level <= v.level || level > 63 {
		return
	}
	v.level = level
	for k := range v.hashes {
		if !v.sampled(k) {
			delete(v.hashes, k)
		}
	}
	kept := v.fresh[:0]
	for _, k := range v.fresh {
		if v.sampled(k) {
			kept = append(kept, k)
		}
	}
	v.fresh = kept
}

// takeFresh returns the hashes added since the last call (nil unless
// keep), and forgets them.
func (v *visitorSet) takeFresh() []uint64 {
	out := v.fresh
	v.fresh = nil
	return out
}

// estimate is the number of distinct hashes added.
func (v *visitorSet) estimate() int64 {
	return int64(len(v.hashes)) << v.level
}
