package intake

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sitedrop/sites/wire"
)

// TestReadJSON: a JSON body is decoded within its limit, and each way it
// can be wrong is a refusal naming what is wrong; the small body's
// memory is given back when it is decoded.
func TestReadJSON(t *testing.T) {
	g := NewGuards(1<<20, 1<<20, 0)
	read := func(body string, contentLength int64) (*Request, error) {
		r := httptest.NewRequest(http.MethodPost, "/deploy", strings.NewReader(body))
		r.ContentLength = contentLength
		var req Request
		return &req, g.ReadJSON(httptest.NewRecorder(), r, 64, &req.DeployRequest)
	}
	req, err := read(`{"html":"x","title":"t"}`, -1)
	if err != nil || *req.HTML != "x" || *req.Title != "t" || req.Slug != nil {
		t.Fatalf("a good body: %+v, %v", req, err)
	}
	for _, c := range []struct {
		body string
		want string
	}{
		{`{"html":`, "Malformed JSON: unexpected end of input"},
		{`{"html":"x"} {}`, "Malformed JSON: unexpected data after the JSON object"},
		{`{"title":1}`, "Invalid type for field title: expected a string"},
		{`[]`, "Request body must be a JSON object"},
		{``, "Request body must be a JSON object"},
		{`{"password":1}`, wire.ErrPasswordType.Error()},
		{`{"protect":"yes"}`, wire.ErrProtectValue.Error()},
	} {
		_, err := read(c.body, -1)
		var iv *InvalidError
		if !errors.As(err, &iv) || iv.Msg != c.want {
			t.Errorf("%q: %v, want %q", c.body, err, c.want)
		}
	}
	var tl *TooLargeError
	if _, err := read(`{"html":"`+strings.Repeat("x", 100)+`"}`, -1); !errors.As(err, &tl) || tl.Limit != 64 {
		t.Errorf("a body over the limit: %v", err)
	}
	if _, err := read(`{}`, 65); !errors.As(err, &tl) {
		t.Errorf("a Content-Length over the limit: %v", err)
	}
	if n := g.SmallMemory.InUse(); n != 0 {
		t.Errorf("%d bytes still held of the small bodies' pool", n)
	}
}

// TestArchiveRequest: an archive deploy's metadata comes from the query,
// its password from a header (sent empty, it removes the password).
func TestArchiveRequest(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/deploy?slug=blog&title=Hi&is_spa=true&protect=rotate", nil)
	r.Header.Set(PasswordHeader, "correct horse")
	req, err := archiveRequest(r)
	if err != nil || *req.Slug != "blog" || *req.Title != "Hi" || !*req.IsSPA || req.Description != nil {
		t.Fatalf("archive metadata: %+v, %v", req, err)
	}
	if !req.Protect.Set || !req.Protect.On || !req.Protect.Rotate || !req.Password.Set || req.Password.Remove || req.Password.Value != "correct horse" {
		t.Fatalf("protection: %+v %+v", req.Protect, req.Password)
	}
	r = httptest.NewRequest(http.MethodPost, "/deploy", nil)
	r.Header[PasswordHeader] = []string{""}
	if req, err := archiveRequest(r); err != nil || !req.Password.Remove {
		t.Fatalf("an empty password header: %+v, %v", req, err)
	}
	for _, q := range []string{"is_spa=maybe", "protect=yes"} {
		var iv *InvalidError
		if _, err := archiveRequest(httptest.NewRequest(http.MethodPost, "/deploy?"+q, nil)); !errors.As(err, &iv) {
			t.Errorf("%s: %v, want a refusal", q, err)
		}
	}
}
