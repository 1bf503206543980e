package audit

import "sync"

// Inflight knows the requests in flight, their client address and (once
// their auth is known) their account: the bridge from a request to the
// record hooks of the writes it causes when those are saved without the
// request's context (sitedrop's services save with PocketBase's plain
// Save). A router middleware Enters each request; a record hook asks Only
// for the owner of what changed. A writer that knows its actor better says
// so: WithActor on the context of the save, or Entry.Actor.
type Inflight struct {
	mu sync.Mutex
	m  map[*request]struct{}
}

// request is one request in flight: its client address, and who returns
// its account's id ("" while not known, or for none). who must be safe to
// call from another goroutine.
type request struct {
	ip  string
	who func() string
}

// Enter notes a request from ip in flight until leave is called; who
// tells its account (see request).
func (f *Inflight) Enter(ip string, who func() string) (leave func()) {
	r := &request{ip: ip, who: who}
	f.mu.Lock()
	if f.m == nil {
		f.m = make(map[*request]struct{})
	}
	f.m[r] = struct{}{}
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.m, r)
		f.mu.Unlock()
	}
}

// Only is account id's actor when its requests in flight all come from
// one address; false when it has none, or several from different
// addresses, which would make any choice a guess.
func (f *Inflight) Only(id string) (Actor, bool) {
	if f == nil || id == "" {
		return Actor{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	found, ip := false, ""
	for r := range f.m {
		if r.who() != id {
			continue
		}
		if found && r.ip != ip {
			return Actor{}, false
		}
		found, ip = true, r.ip
	}
	if !found {
		return Actor{}, false
	}
	return User(id, ip), true
}
