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

// TestCheckPrimary: --primary is a replica's, the primary's http(s) URL.
func TestCheckPrimary(t *testing.T) {
	for _, c := range []struct {
		primary string
		want    string // in the replica's error; "" for none
	}{
		{"", ""},
		{"http://10.0.0.2:8090", ""},
		{"https://deploy.example.com/", ""},
		{"10.0.0.2:8090", "--primary"},
		{"ftp://10.0.0.2", "--primary"},
		{"http://", "--primary"},
		{"http://x/?after=1", "--primary"},
		{"http://user:pw@x", "--primary"},
	} {
		cfg := DefaultConfig()
		cfg.Primary = c.primary
		err := checkReplicaConfig(cfg, ReplicaConfig{Store: "s3://b"})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("replica --primary %q: %v, want %q", c.primary, err, c.want)
		}
		if err := cfg.Check(Settings{}); (c.primary == "") != (err == nil) {
			t.Errorf("primary --primary %q: %v", c.primary, err)
		}
	}
}

// TestCheckMetricsAddr: --metrics must be a listen address of its own,
// on the primary and on a replica.
func TestCheckMetricsAddr(t *testing.T) {
	for _, c := range []struct {
		http, metrics string
		want          string // in the error; "" for none
	}{
		{"127.0.0.1:8090", "", ""},
		{"127.0.0.1:8090", "127.0.0.1:9180", ""},
		{"127.0.0.1:8090", ":9180", ""},
		{"127.0.0.1:8090", "127.0.0.1:8090", "a listener of their own"},
		{"127.0.0.1:8090", "9180", "--metrics"},
		{"127.0.0.1:8090", "host:port", "--metrics"},
	} {
		cfg := DefaultConfig()
		cfg.HTTPAddr, cfg.MetricsAddr = c.http, c.metrics
		for name, err := range map[string]error{
			"primary": cfg.Check(Settings{}),
			"replica": checkReplicaConfig(cfg, ReplicaConfig{Store: "s3://b"}),
		} {
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("%s --http %s --metrics %q: %v, want %q", name, c.http, c.metrics, err, c.want)
			}
		}
	}
}
