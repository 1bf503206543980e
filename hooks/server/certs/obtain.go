package certs

import (
	"context"
	"errors"
)

// obtainJob is one background order started by Obtain.
type obtainJob struct {
	cancel context.CancelFunc
}

// Obtain orders the certificate of name in the background, for a name
// the server has just begun to allow (a custom domain that is now
// verified), so that its first visitor does not wait for the order. It
// returns at once. The order is the on-demand one a handshake would make:
// the on-demand decision is asked first, so name must still be allowed
// and takes its class's share of the hour's budget (a name over the
// budget is logged and left to its first handshake, which asks again);
// then certmagic obtains the certificate, retrying a failed order with its
// own backoff, and it is put in the cache. Forget(name) or Stop gives the
// order up. A name already in memory, or being ordered, is left alone;
// in wildcard mode, which orders no certificate on demand, Obtain does
// nothing.
func (m *Manager) Obtain(name string) {
	name = normalName(name)
	if m.decide == nil || name == "" || name == m.webHost || m.Cached(name) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped || m.obtaining[name] != nil {
		return
	}
	ctx, cancel := context.WithCancel(m.bg)
	job := &obtainJob{cancel: cancel}
	m.obtaining[name] = job
	m.obtains.Add(1)
	go func() {
		defer m.obtains.Done()
		defer cancel()
		m.obtain(ctx, name)
		m.mu.Lock()
		if m.obtaining[name] == job {
			delete(m.obtaining, name)
		}
		m.mu.Unlock()
	}()
}

// obtain is the background order of Obtain for name, until ctx ends.
func (m *Manager) obtain(ctx context.Context, name string) {
	if err := m.decide(ctx, name); err != nil {
		m.logger.Info("no certificate ordered ahead of the first visit", "component", "tls", "name", name, "error", err)
		return
	}
	// ObtainCertAsync retries with certmagic's backoff until it succeeds,
	// ctx ends or some 30 days have passed; it logs each failure. It is a
	// no-op when storage already holds the certificate.
	if err := m.sites.ObtainCertAsync(ctx, name); err != nil {
		if !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			m.logger.Error("certificate not obtained", "component", "tls", "name", name, "error", err)
		}
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if ctx.Err() != nil {
		return // released (Forget) or stopped meanwhile: not cached
	}
	if _, err := m.sites.CacheManagedCertificate(ctx, name); err != nil {
		m.logger.Error("load the certificate obtained", "component", "tls", "name", name, "error", err)
	}
}
