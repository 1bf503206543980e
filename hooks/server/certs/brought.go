package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
)

// broughtFiles are the files of the operator's certificate and key, and
// how often they are checked for a change (0: a minute).
type broughtFiles struct {
	cert, key string
	every     time.Duration
}

// stamp is what tells a changed file: its size and modification time.
func (f broughtFiles) stamp() string {
	var b strings.Builder
	for _, p := range []string{f.cert, f.key} {
		if fi, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%d/%d;", fi.Size(), fi.ModTime().UnixNano())
		} else {
			b.WriteString("missing;")
		}
	}
	return b.String()
}

// watchBrought serves a renewed certificate without a restart: DNS-01
// tooling (certbot, lego, acme.sh) renews the operator's certificate
// every two months or so, in place. Every broughtFiles.every until ctx
// ends, once the files have changed (size or modification time) and
// stopped changing, the pair is read again and, when it can be served
// (LoadKeyPair), replaces the old one in the cache; a pair that cannot
// (a half-written file, a key that is not the certificate's) is logged,
// once per change, and the old certificate stays.
func (m *Manager) watchBrought(ctx context.Context) {
	f := m.broughtFiles
	every := f.every
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	// Nothing is known of the files served: the first stable stamp reads
	// them again (the same pair changes nothing), so a change made before
	// this goroutine ran is not missed.
	served, seen := "", ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := f.stamp()
		if now == served || now != seen { // unchanged, or still being written
			seen = now
			continue
		}
		served = now
		pair, err := LoadKeyPair(f.cert, f.key, time.Now())
		if err == nil {
			err = m.cacheBrought(&pair)
		}
		if err != nil {
			m.sites.Logger.Error("the changed --tls-cert/--tls-key pair is not served; the previous certificate stays",
				zap.Error(err))
		}
	}
}

// LoadKeyPair reads the certificate an operator brings (--tls-cert: PEM,
// the leaf first, then its chain) and its private key (--tls-key: PEM),
// and refuses a pair that cannot be served: a file that cannot be read or
// holds no PEM, a key that is not the certificate's, or a certificate
// that is not valid at now (expired, or not yet valid). The certificate's
// Leaf is set.
func LoadKeyPair(certFile, keyFile string, now time.Time) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("read --tls-cert: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("read --tls-key: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("--tls-cert %s with --tls-key %s: %w", certFile, keyFile, err)
	}
	leaf := pair.Leaf
	if leaf == nil { // X509KeyPair sets it (Go 1.23+); parse it otherwise
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return tls.Certificate{}, fmt.Errorf("--tls-cert %s: %w", certFile, err)
		}
		pair.Leaf = leaf
	}
	switch {
	case now.After(leaf.NotAfter):
		return tls.Certificate{}, fmt.Errorf("--tls-cert %s expired on %s", certFile, leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return tls.Certificate{}, fmt.Errorf("--tls-cert %s is not valid before %s", certFile, leaf.NotBefore.UTC().Format(time.RFC3339))
	case len(leaf.DNSNames) == 0:
		return tls.Certificate{}, errors.New("--tls-cert " + certFile + " names no DNS name (subjectAltName): browsers would refuse it")
	}
	return pair, nil
}

// covers reports whether the brought certificate serves name (a DNS name
// or a wildcard "*.<domain>" spelled as such): certmagic's cache matches
// a handshake's name to the certificate's names exactly or through one
// wildcard label, as browsers do (RFC 6125).
func covers(leaf *x509.Certificate, name string) bool {
	if leaf == nil || name == "" {
		return false
	}
	name = normalName(name)
	if strings.HasPrefix(name, "*.") {
		return slices.ContainsFunc(leaf.DNSNames, func(n string) bool { return normalName(n) == name })
	}
	return leaf.VerifyHostname(name) == nil
}
