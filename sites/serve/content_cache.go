package serve

import (
	"context"
	"fmt"
	"io"
	"sync"

	"sitedrop/sites/store"
)

// contentCache keeps the bytes of small blobs in memory, keyed by content
// hash, within a byte budget. Content never changes under a hash, so
// entries need no invalidation; unreferenced ones are evicted as others
// come in.
type contentCache struct {
	mu     sync.RWMutex
	budget int64
	used   int64
	items  map[string][]byte
	// counter counts hits and misses; nil: not counted.
	counter CacheCounter
}

func newContentCache(budget int64, counter CacheCounter) *contentCache {
	return &contentCache{budget: budget, items: map[string][]byte{}, counter: counter}
}

// load returns the bytes of blob hash, from memory or else from store
// (and keeps them, evicting arbitrary entries to make room).
func (c *contentCache) load(ctx context.Context, blobStore store.BlobStore, hash string) ([]byte, error) {
	c.mu.RLock()
	data, ok := c.items[hash]
	c.mu.RUnlock()
	if c.counter != nil {
		c.counter.ContentCache(ok)
	}
	if ok {
		return data, nil
	}
	blob, err := blobStore.Open(ctx, hash)
	if err != nil {
		return nil, err
	}
	defer blob.Close()
	data = make([]byte, blob.Size())
	if _, err := io.ReadFull(blob, data); err != nil {
		return nil, fmt.Errorf("read blob %s: %w", hash, err)
	}
	c.put(hash, data)
	return data, nil
}

func (c *contentCache) put(hash string, data []byte) {
	size := int64(len(data))
	if size > c.budget {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[hash]; ok {
		return
	}
	for k, v := range c.items {
		if c.used+size <= c.budget {
			break
		}
		c.used -= int64(len(v))
		delete(c.items, k)
	}
	c.items[hash] = data
	c.used += size
}
