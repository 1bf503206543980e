package replica

import (
	"container/list"

	"sitedrop/sites/publish"
)

// docCache keeps the published documents a replica has read, least
// recently used first out, within a count and a byte budget (the bytes
// of their JSON, a fair measure of their memory).
type docCache struct {
	maxEntries int
	maxBytes   int64
	used       int64
	order      *list.List // of *cached, most recent at the front
	byHost     map[string]*list.Element
}

// cached is a document as read, with the ETag it had.
type cached struct {
	host string
	etag string
	doc  *publish.Document
	size int64
}

func newDocCache(maxEntries int, maxBytes int64) *docCache {
	return &docCache{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), byHost: map[string]*list.Element{}}
}

// get returns host's entry, nil when not cached, and marks it used.
func (c *docCache) get(host string) *cached {
	el, ok := c.byHost[host]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*cached)
}

// put stores e, replacing host's entry and evicting the least recently
// used past the budgets (a document larger than the byte budget is kept
// alone).
func (c *docCache) put(e *cached) {
	c.remove(e.host)
	c.byHost[e.host] = c.order.PushFront(e)
	c.used += e.size
	for c.order.Len() > 1 && (c.order.Len() > c.maxEntries || c.used > c.maxBytes) {
		c.remove(c.order.Back().Value.(*cached).host)
	}
}

// remove forgets host.
func (c *docCache) remove(host string) {
	if el, ok := c.byHost[host]; ok {
		c.used -= el.Value.(*cached).size
		c.order.Remove(el)
		delete(c.byHost, host)
	}
}

// len is how many documents are cached.
func (c *docCache) len() int { return c.order.Len() }
