package server

import (
	"strings"
	"testing"
)

func TestRedirectAddrFor(t *testing.T) {
	for in, want := range map[string]string{":443": ":80", "0.0.0.0:443": "0.0.0.0:80", "127.0.0.1:8443": "127.0.0.1:80", "[::1]:443": "[::1]:80"} {
		if got := redirectAddrFor(in); got != want {
			t.Errorf("redirectAddrFor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckReplicaConfig(t *testing.T) {
	cfg := DefaultConfig()
	if err := checkReplicaConfig(cfg, ReplicaConfig{}); err == nil || !strings.Contains(err.Error(), "--store s3://") {
		t.Errorf("a replica on the file store: %v", err)
	}
	cfg.HTTPSAddr = ":443"
	if err := checkReplicaConfig(cfg, ReplicaConfig{Store: "s3://b"}); err == nil || !strings.Contains(err.Error(), "terminates TLS") {
		t.Errorf("a replica with --https: %v", err)
	}
}
