package server

import (
	"net/http"
	"net/url"
	"testing"
)

func TestWithoutTrailingSlash(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         string
		ok           bool
	}{
		{"GET", "/account/", "/account", true},
		{"HEAD", "/a/b//", "/a/b", true},
		{"GET", "/", "", false},
		{"GET", "/account", "", false},
		{"POST", "/account/", "", false},
		{"GET", "//evil.example/", "", false},
		{"GET", "/\\evil.example/", "/%5Cevil.example", true}, // escaped: a path
	} {
		r := &http.Request{Method: c.method, URL: &url.URL{Path: c.path}}
		got, ok := WithoutTrailingSlash(r)
		if got != c.want || ok != c.ok {
			t.Errorf("%s %s: %q %v, want %q %v", c.method, c.path, got, ok, c.want, c.ok)
		}
	}
}
