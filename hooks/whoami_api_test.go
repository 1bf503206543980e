package hooks

import (
	"net/http"
	"testing"

	"github.com/pocketbase/pocketbase/tests"
)

func TestWhoami(t *testing.T) {
	t.Parallel()
	fixtures := func(t testing.TB) *tests.TestApp {
		app, _ := newFixtureApp(t)
		return app
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:               "a key's user",
			Method:             http.MethodGet,
			URL:                "/auth/whoami",
			Headers:            bearer(keyAlice),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`"user":{`, `"email":"alice@example.com"`, `"plan":"free"`, `"id":"`},
			NotExpectedContent: []string{"api_key", "Set-Cookie"},
			TestAppFactory:     fixtures,
		},
		{
			Name:            "without a key",
			Method:          http.MethodGet,
			URL:             "/auth/whoami",
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  fixtures,
		},
		{
			Name:            "an unknown key",
			Method:          http.MethodGet,
			URL:             "/auth/whoami",
			Headers:         bearer(keyUnknown),
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  fixtures,
		},
		{
			Name:            "another method",
			Method:          http.MethodPost,
			URL:             "/auth/whoami",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  405,
			ExpectedContent: []string{errBody(msgMethodNotAllowed)},
			TestAppFactory:  fixtures,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if got := res.Header.Get("Allow"); got != "GET" {
					t.Fatalf("Allow: %q", got)
				}
			},
		},
	})
}
