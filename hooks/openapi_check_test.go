package hooks

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/hooks/server"
	"sitedrop/sites/wire"
)

// openAPI is the description, loaded and checked once for all tests.
var openAPI struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// loadOpenAPI loads sites/wire/openapi.json with kin-openapi, validates it as an
// OpenAPI 3.1 document and builds a router over its paths. Its servers are
// dropped: tests send requests to any web host.
func loadOpenAPI(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	openAPI.once.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(wire.OpenAPI())
		if err != nil {
			openAPI.err = err
			return
		}
		if err = doc.Validate(loader.Context); err != nil {
			openAPI.err = err
			return
		}
		doc.Servers = nil
		// a form post's refusal is the page again (POST /report): its
		// body is text, as text/plain's is
		openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
		openAPI.doc = doc
		openAPI.router, openAPI.err = legacy.NewRouter(doc)
	})
	if openAPI.err != nil {
		t.Fatalf("openapi.json: %v", openAPI.err)
	}
	return openAPI.doc, openAPI.router
}

// checkAnswer validates an answer (status, content type, headers, body)
// against the description when req names a described operation on the web
// host; answers of pages, site hosts, redirects of www. and methods a path
// lacks (405) are not described and pass. A mismatch fails t with the
// validator's message. The body is given back in res.Body.
func checkAnswer(t testing.TB, req *http.Request, res *http.Response, body []byte) {
	t.Helper()
	res.Body = io.NopCloser(bytes.NewReader(body))
	_, router := loadOpenAPI(t)
	host := req.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.HasSuffix(host, ".sites.test") || strings.HasPrefix(host, "www.") || !server.ValidRequestHost(req.Host) {
		return // a site host, the www. redirect or a malformed Host: not the API
	}
	route, params, err := router.FindRoute(req)
	if err != nil || expandPath(route.Path, params) != req.URL.Path {
		return // not a described route (pages, PocketBase, a 405)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
		},
		Status:  res.StatusCode,
		Header:  res.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s: %d answer does not match openapi.json: %v\nbody: %.300s",
			req.Method, req.URL.RequestURI(), res.StatusCode, err, body)
	}
}

// validatedScenario makes s validate its answer against the description
// before its own AfterTestFunc runs.
func validatedScenario(s tests.ApiScenario) tests.ApiScenario {
	after := s.AfterTestFunc
	method, url, headers := s.Method, s.URL, s.Headers
	s.AfterTestFunc = func(t testing.TB, app *tests.TestApp, res *http.Response) {
		t.Helper()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		req := newRequest(method, url, "", headers)
		checkAnswer(t, req, res, body)
		if after != nil {
			after(t, app, res)
		}
	}
	return s
}

// expandPath fills a described path's {parameters} with their values; it
// differs from the request's path when kin-openapi's router matched a
// parameter to an empty segment (it takes /deploy for /deploy/{id}).
func expandPath(path string, params map[string]string) string {
	for k, v := range params {
		if v == "" {
			return ""
		}
		path = strings.Replace(path, "{"+k+"}", v, 1)
	}
	return path
}
