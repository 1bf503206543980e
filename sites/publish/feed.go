package publish

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// FeedKey is the change feed's object key: the recent changes of the
// documents, so that a replica learns what changed from one small object
// read with a conditional GET (a 304 when nothing changed) instead of
// listing every document.
const FeedKey = SitesPrefix + "_feed.json"

// DefaultFeedEntries is the default Config.FeedEntries: about 30 KB of
// feed, more changes than a replica polling every 2 s misses unless it
// was cut off from the store (then it lists once).
const DefaultFeedEntries = 256

// Feed is the change feed (FeedKey). Every publish that writes or removes
// a document adds a Change, numbered by Seq, after the document is written
// (a replica never reads a change whose document is not there yet). The
// feed keeps one change per host, its latest, and at most a bounded number
// of them: compacting drops the oldest and raises Floor to the highest Seq
// dropped. A replica that has applied every change up to seq S catches up
// from the feed when the Epoch is the one it read and S >= Floor;
// otherwise it lists every document once.
type Feed struct {
	// Epoch names this feed's numbering; a new feed (the object lost,
	// first publish) has another one, and replicas list again.
	Epoch string `json:"epoch"`
	// Seq is the number of the latest change (0: none yet).
	Seq int64 `json:"seq"`
	// Floor: the changes numbered up to Floor are no longer all here.
	Floor int64 `json:"floor"`
	// Changes are in ascending Seq, at most one per host.
	Changes []Change `json:"changes"`
}

// Change is one host's document written or removed.
type Change struct {
	Seq  int64  `json:"seq"`
	Host string `json:"host"`
	// ETag is the document's ETag once written, "" when it was removed.
	ETag string `json:"etag,omitempty"`
	// Generation is the written document's generation, or for a removal
	// one past the removed document's: a change of a lower generation
	// than the feed holds for the host (a slower writer) is not added.
	Generation int64 `json:"generation"`
}

// NewFeed is an empty feed with a new epoch.
func NewFeed() *Feed {
	var b [12]byte
	rand.Read(b[:])
	return &Feed{Epoch: hex.EncodeToString(b[:]), Changes: []Change{}}
}

// ParseFeed decodes the change feed.
func ParseFeed(data []byte) (*Feed, error) {
	var f Feed
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse change feed: %w", err)
	}
	if f.Epoch == "" || f.Floor < 0 || f.Floor > f.Seq {
		return nil, fmt.Errorf("parse change feed: epoch %q, floor %d, seq %d", f.Epoch, f.Floor, f.Seq)
	}
	for i, c := range f.Changes {
		if c.Seq <= f.Floor || c.Seq > f.Seq || (i > 0 && c.Seq <= f.Changes[i-1].Seq) {
			return nil, fmt.Errorf("parse change feed: change %d numbered %d out of order", i, c.Seq)
		}
	}
	return &f, nil
}

// Add numbers and appends changes (their Seq is ignored), then compacts
// the feed to at most max changes. A host's earlier change is replaced by
// its new one; a change older (by Generation) than the one the feed holds
// for its host is left out. It reports whether the feed changed.
func (f *Feed) Add(max int, changes ...Change) bool {
	added := false
	for _, c := range changes {
		i := f.find(c.Host)
		if i >= 0 {
			if f.Changes[i].Generation > c.Generation {
				continue // a slower writer's: the feed has newer
			}
			if f.Changes[i].Generation == c.Generation && f.Changes[i].ETag == c.ETag {
				continue // already there
			}
			f.Changes = append(f.Changes[:i], f.Changes[i+1:]...)
		}
		f.Seq++
		c.Seq = f.Seq
		f.Changes = append(f.Changes, c)
		added = true
	}
	if n := len(f.Changes) - max; n > 0 {
		f.Floor = f.Changes[n-1].Seq
		f.Changes = append([]Change(nil), f.Changes[n:]...)
	}
	return added
}

// Reset drops every change and moves the floor past every seq a replica
// can hold, so that every replica lists the documents once: for a
// publisher that cannot know whether a change it wrote before a crash
// reached the feed.
func (f *Feed) Reset() {
	f.Seq++
	f.Floor = f.Seq
	f.Changes = []Change{}
}

// find is the index of host's change, -1 when there is none.
func (f *Feed) find(host string) int {
	for i, c := range f.Changes {
		if c.Host == host {
			return i
		}
	}
	return -1
}

// Since is what a replica that has applied the changes up to seq of the
// feed of epoch must apply: the changes after seq, ok false when it
// cannot catch up from this feed (another epoch, changes compacted away,
// or a seq the feed never had) and must list every document.
func (f *Feed) Since(epoch string, seq int64) (changes []Change, ok bool) {
	if epoch != f.Epoch || seq < f.Floor || seq > f.Seq {
		return nil, false
	}
	for i, c := range f.Changes {
		if c.Seq > seq {
			return f.Changes[i:], true
		}
	}
	return nil, true
}
