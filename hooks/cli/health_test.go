package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHealthCommand(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/health" {
			http.NotFound(w, r)
		}
	}))
	defer ok.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	for _, c := range []struct {
		name string
		urls []string
		pass bool
	}{
		{"healthy", []string{ok.URL + "/api/health"}, true},
		{"second URL healthy", []string{down.URL + "/api/health", ok.URL + "/api/health"}, true},
		{"unhealthy", []string{down.URL + "/api/health"}, false},
		{"nothing listens", []string{"http://127.0.0.1:1/api/health"}, false},
		{"not found", []string{ok.URL + "/nope"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := newHealthCommand()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs([]string{"--url", strings.Join(c.urls, ","), "--timeout", (2 * time.Second).String()})
			err := cmd.Execute()
			if (err == nil) != c.pass {
				t.Errorf("health %v: err %v, want pass %v (%s)", c.urls, err, c.pass, out.String())
			}
		})
	}
}
