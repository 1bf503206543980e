package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

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
