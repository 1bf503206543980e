package replica

import (
	"fmt"
	"testing"

	"sitedrop/sites/publish"
)

// TestDocCacheBounds: the cache keeps within its count and byte budgets,
// evicting the least recently used.
func TestDocCacheBounds(t *testing.T) {
	c := newDocCache(3, 100)
	put := func(host string, size int64) {
		c.put(&cached{host: host, size: size, doc: &publish.Document{}})
	}
	for i := range 4 {
		put(fmt.Sprint("h", i), 10)
	}
	if c.len() != 3 || c.get("h0") != nil {
		t.Fatalf("count bound: %d entries, h0 kept: %v", c.len(), c.get("h0") != nil)
	}
	c.get("h1") // used: h2 is now the oldest
	put("big", 75)
	if c.get("h2") != nil || c.get("h1") == nil || c.used > 100 {
		t.Fatalf("byte bound: used %d, h2 kept %v", c.used, c.get("h2") != nil)
	}
	put("huge", 500) // larger than the budget: kept alone
	if c.len() != 1 || c.get("huge") == nil || c.used != 500 {
		t.Fatalf("oversized document: %d entries, used %d", c.len(), c.used)
	}
	c.remove("huge")
	if c.len() != 0 || c.used != 0 {
		t.Fatalf("after remove: %d entries, used %d", c.len(), c.used)
	}
}
