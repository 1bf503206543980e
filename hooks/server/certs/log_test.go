package certs

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// TestZapLoggerWithFields: the fields of With (deferred by lazyCore) still
// reach both outputs once an entry is logged, at any depth of With, and a
// Debug entry reaches neither.
func TestZapLoggerWithFields(t *testing.T) {
	var app, stderr bytes.Buffer
	l := newZapLogger(slog.New(slog.NewTextHandler(&app, nil)), &stderr)
	h := l.Named("handshake").With(zap.String("remote_ip", "192.0.2.1"))
	h.Debug("matched certificate in cache")
	if app.Len() != 0 || stderr.Len() != 0 {
		t.Fatalf("a Debug entry was written: %q %q", app.String(), stderr.String())
	}
	h.With(zap.String("server_name", "a.sites.test")).Warn("renewing certificate on-demand failed")
	for name, out := range map[string]string{"app": app.String(), "stderr": stderr.String()} {
		for _, want := range []string{"renewing certificate on-demand failed", "192.0.2.1", "a.sites.test", "handshake"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s log %q lacks %q", name, out, want)
			}
		}
	}
}
