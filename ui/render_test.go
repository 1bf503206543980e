package ui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var (
	signedOut = LayoutProps{}
	signedIn  = LayoutProps{SignedIn: true, Email: "ada@example.com"}
	expiresAt = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
)

// page is one component rendered with fixed props.
type page struct {
	name    string // golden file: testdata/<name>.html
	c       templ.Component
	testIDs []string // data-testid values that must appear
	absent  []string // data-testid values that must not appear
}

func pages() []page {
	claim := ClaimProps{
		Slug:      "bright-otter-42",
		Title:     "My portfolio",
		SiteURL:   "https://bright-otter-42.sites.example.com",
		Token:     "tok_abc123",
		LoginURL:  "/auth/login?next=%2Fclaim%2Fbright-otter-42%3Ftoken%3Dtok_abc123",
		ExpiresAt: expiresAt,
		TimeLeft:  "23 hours",
	}
	awaiting := claim
	awaiting.AwaitingClaim = true
	claimErr := claim
	claimErr.Title = ""
	// a refused claim is a flash on the claim link's page (POST → 303 → GET)
	signedInRefused := signedIn
	signedInRefused.Flashes = []Flash{{Kind: FlashError, Text: "Your free plan is full (3 of 3 sites). Delete a site first."}}
	return []page{
		{
			name: "home",
			c: Home(signedOut, HomeProps{
				WebURL:         "https://sitedrop.example.com",
				SiteURLExample: "https://your-site.sites.example.com",
				Drop:           DropProps{Heading: "Drop a folder to publish it", MaxFiles: 20000, MaxBody: 50 << 20, MaxBodyText: "50 MiB"},
				AnonTTL:        "24 hours",
			}),
			testIDs: []string{"curl-example", "nav-signin", "drop-deploy", "drop-target", "drop-folder", "drop-zip", "drop-status", "drop-error", "drop-result"},
			absent:  []string{"nav-account", "anon-off"},
		},
		{
			// an administrator turned anonymous deploys off: no drop zone
			// that would be refused, an invitation to sign in
			name: "home_anon_off",
			c: Home(signedOut, HomeProps{
				WebURL:         "https://sitedrop.example.com",
				SiteURLExample: "https://your-site.sites.example.com",
				Drop:           DropProps{Heading: "Drop a folder to publish it", MaxFiles: 20000, MaxBody: 50 << 20, MaxBodyText: "50 MiB"},
				AnonTTL:        "24 hours",
				AnonOff:        true,
			}),
			testIDs: []string{"curl-example", "nav-signin", "anon-off"},
			absent:  []string{"drop-deploy", "nav-account"},
		},
		{
			name: "home_signed_in",
			c: Home(signedIn, HomeProps{WebURL: "https://sitedrop.example.com", SiteURLExample: "https://your-site.sites.example.com", AnonTTL: "24 hours",
				Drop: DropProps{Heading: "Drop a folder to publish it", Owner: true, MaxFiles: 20000, MaxBody: 50 << 20, MaxBodyText: "50 MiB"}}),
			testIDs: []string{"curl-example", "nav-account", "drop-deploy"},
			absent:  []string{"nav-signin"},
		},
		{
			name:    "drop_redeploy",
			c:       DropDeploy(DropProps{Heading: "Deploy again", DeployID: "d1", Owner: true, MaxFiles: 10, MaxBody: 1 << 20, MaxBodyText: "1 MiB"}),
			testIDs: []string{"drop-deploy", "drop-folder", "drop-zip", "drop-open"},
		},
		{
			name:    "login",
			c:       Login(signedOut, LoginProps{Next: "/claim/bright-otter-42?token=tok_abc123", SignupOpen: true}),
			testIDs: []string{"nav-signin", "email-form", "email-input", "send-code", "code-form", "code-input", "verify-code", "login-status"},
		},
		{
			name:    "login_code",
			c:       Login(signedOut, LoginProps{Next: "/account", SignupOpen: true, OTPID: "abcdefghij01234", Error: "Invalid or expired code"}),
			testIDs: []string{"email-form", "code-form", "login-error", "change-email"},
		},
		{
			name:    "login_closed",
			c:       Login(signedOut, LoginProps{Next: "/account", SignupOpen: false}),
			testIDs: []string{"email-form", "code-form", "login-status"},
		},
		{
			name:    "claim_signed_in",
			c:       Claim(signedIn, claim),
			testIDs: []string{"nav-account", "site-link", "claim-button"},
			absent:  []string{"claim-signin", "flash-error"},
		},
		{
			name:    "claim_signed_out",
			c:       Claim(signedOut, claim),
			testIDs: []string{"nav-signin", "site-link", "claim-signin"},
			absent:  []string{"claim-button", "flash-error", "claim-awaiting"},
		},
		{
			// a site this server shows only once claimed says so
			name:    "claim_awaiting",
			c:       Claim(signedOut, awaiting),
			testIDs: []string{"nav-signin", "site-link", "claim-signin", "claim-awaiting"},
			absent:  []string{"claim-button", "flash-error"},
		},
		{
			name:    "claim_error",
			c:       Claim(signedInRefused, claimErr),
			testIDs: []string{"site-link", "claim-button", "flash-error"},
		},
		{
			name: "claim_done",
			c: ClaimDone(signedIn, ClaimDoneProps{
				Slug: "bright-otter-42", Title: "My portfolio", SiteURL: "https://bright-otter-42.sites.example.com",
				SitePage: "/account/sites/abcdefghij01234",
			}),
			testIDs: []string{"claim-done", "claimed-site-page", "nav-account"},
		},
		{
			name: "account",
			c: Account(signedIn, AccountProps{
				Email: "ada@example.com", Plan: "free", SlotsUsed: 2, SlotLimit: 3,
				Deployments: []AccountDeployment{
					{ID: "d1", Slug: "bright-otter-42", Title: "My portfolio", URL: "https://bright-otter-42.sites.example.com",
						State: SiteLive, StateText: "Live", Protected: true, DeployedAt: "2026-11-22T09:00:00Z", DeployedAgo: "3 hours ago"},
					{ID: "d2", Slug: "quiet-heron-7", Title: "", URL: "https://quiet-heron-7.sites.example.com",
						State: SiteDisabled, StateText: "Disabled by an admin", DeployedAt: "2026-11-20T08:30:15Z", DeployedAgo: "2 days ago"},
				},
				Find: SiteFind{Show: true, Search: "o", MaxSearch: 100, Total: 12, Sorts: []SortOption{
					{Value: "deployed", Label: "Last deploy"}, {Value: "name", Label: "Name", Selected: true},
				}},
				Keys: []AccountKey{
					{ID: "k1", Prefix: "sd_3fA9", Name: "laptop", CreatedAt: "2026-11-01T09:00:00Z", CreatedAgo: "21 days ago", LastUsed: "2026-11-22T11:58:00Z", LastUsedAgo: "2 minutes ago"},
					{ID: "k2", Prefix: "sd_Q7b2", Name: "CI", CreatedAt: "2026-11-22T12:00:00Z", CreatedAgo: "just now", LastUsed: ""},
				},
				Sessions: []AccountSession{
					{ID: "s1", Current: true, Client: "Firefox on macOS", CreatedAt: "2026-11-22T09:00:00Z", CreatedAgo: "3 hours ago", ExpiresAt: "2026-12-22T09:00:00Z", ExpiresIn: "in 29 days", ByCode: true},
					{ID: "s2", Client: "Chrome on Android", CreatedAt: "2026-11-20T09:00:00Z", CreatedAgo: "2 days ago", ExpiresAt: "2026-12-20T09:00:00Z", ExpiresIn: "in 27 days", KeyPrefix: "sd_3fA9"},
				},
				Usage: &AccountUsage{Sites: "2 of 3", Storage: "1.5 MB", VersionsPerSite: 10, PageViews: "1234", BytesServed: "12.0 MB", Days: 30, Since: "2026-10-24"},
			}),
			testIDs: []string{"nav-account", "slots", "usage", "usage-sites", "usage-storage", "usage-views", "usage-served", "deployment-row", "site-state", "protected-badge", "site-deployed", "site-find", "site-search", "site-sort", "site-count", "revoke-key", "create-key", "sign-out", "session-row", "this-browser", "revoke-session", "revoke-others", "account-delete"},
			absent:  []string{"new-key"},
		},
		{
			name: "account_new_key",
			c: Account(LayoutProps{SignedIn: true, Email: "ada@example.com", Flashes: []Flash{
				{Kind: FlashSuccess, Text: "New key CI created. Copy it now: it is shown once.", Secret: "sd_Q7b2xYz0123456789abcdefghijklmnopqrstuv"},
			}}, AccountProps{Email: "ada@example.com", Plan: "free", SlotLimit: 3}),
			testIDs: []string{"flash-success", "flash-secret", "create-key"},
		},
		{
			name:    "key_revoke",
			c:       KeyRevoke(signedIn, KeyRevokeProps{Key: AccountKey{ID: "k1", Prefix: "sd_3fA9", Name: "laptop"}, Session: true}),
			testIDs: []string{"key-revoke", "confirm-revoke-key", "cancel-revoke-key"},
		},
		{
			name: "account_activity",
			c: AccountActivity(signedIn, AccountActivityProps{Page: 2, Newer: "/account/activity?page=1", Older: "/account/activity?page=3",
				Entries: []ActivityEntry{
					{At: "2026-11-22T12:00:00Z", Ago: "3 hours ago", What: "Renamed alice-site to alice-new", Who: "You", IP: "192.0.2.1"},
					{At: "2026-11-22T11:00:00Z", Ago: "4 hours ago", What: "Took down alice-site", Who: "An administrator"},
				}}),
			testIDs: []string{"activity", "activity-row", "activity-what", "activity-newer", "activity-older"},
			absent:  []string{"activity-empty"},
		},
		{
			name:    "account_delete",
			c:       AccountDelete(signedIn, AccountDeleteProps{Email: "ada@example.com", Sites: 2, Domains: 1, Keys: 3, Sessions: 1}),
			testIDs: []string{"account-delete-list", "account-delete-email", "account-delete-confirm"},
		},
		{
			name:    "account_empty",
			c:       Account(signedIn, AccountProps{Email: "ada@example.com", Plan: "free", SlotsUsed: 0, SlotLimit: 3}),
			testIDs: []string{"slots", "create-key", "sign-out"},
			absent:  []string{"deployment-row", "new-key", "revoke-key", "session-row", "revoke-others", "site-find", "no-match"},
		},
		{
			name: "error",
			c: ErrorPage(signedOut, ErrorProps{
				Status: 404, Title: "This claim link does not work",
				Message:  "The site was already claimed, or it expired and was deleted.",
				LinkURL:  "/auth/login",
				LinkText: "Sign in",
			}),
			testIDs: []string{"error-page", "nav-signin"},
		},
		{
			name:    "error_default",
			c:       ErrorPage(signedIn, ErrorProps{Status: 500}),
			testIDs: []string{"error-page", "nav-account"},
		},
		{
			name: "mail",
			c:    LoginCodeMail(LoginCodeMailProps{Code: "482913", Minutes: 10, WebURL: "https://sitedrop.example.com"}),
		},
		{
			// a refused report shows the form again, holding its values
			name: "report_refused",
			c: Report(signedOut, ReportProps{
				URL: "https://nobody.sites.example.com/", Reason: "phishing", Details: "asks for <b>passwords</b>",
				Reasons: []ReportReason{{"phishing", "Phishing"}, {"spam", "Spam"}},
				Error:   "This URL is not a site hosted here", MaxURL: 2048, MaxDetails: 2000,
			}),
			testIDs: []string{"report-form", "report-url", "report-reason", "report-details", "report-email", "report-error", "report-abuse"},
			absent:  []string{"report-sent"},
		},
		{
			name:    "report_sent",
			c:       Report(signedOut, ReportProps{Sent: true}),
			testIDs: []string{"report-sent"},
			absent:  []string{"report-form", "report-error"},
		},
		{
			name: "reports_mail",
			c: ReportsMail(ReportsMailProps{Total: 3, Open: 5, QueueURL: "https://sitedrop.example.com/_/#/collections?collection=reports",
				Items: []ReportItem{{CreatedAt: "2026-11-22T12:00:00Z", Reason: "phishing", URL: "https://bright-otter-42.sites.example.com/login",
					Slug: "bright-otter-42", Details: "line one\nline <two>", Email: "finder@example.org",
					AdminURL: "https://sitedrop.example.com/_/#/collections?collection=reports&record=abc"}}}),
		},
		{
			// one mail of every site a ban took down
			name: "ban_mail",
			c: BanMail(BanMailProps{Reason: "fraud <kit>", AccountURL: "https://sitedrop.example.com/account", WebURL: "https://sitedrop.example.com",
				Sites: []BanMailSite{{"kit-site", "https://kit-site.sites.example.com/"}, {"kit-two", "https://kit-two.sites.example.com/"}}}),
		},
	}
}

func render(t *testing.T, c templ.Component) string {
	t.Helper()
	s, err := RenderString(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGolden(t *testing.T) {
	for _, p := range pages() {
		t.Run(p.name, func(t *testing.T) {
			got := render(t, p.c)
			file := filepath.Join("testdata", p.name+".html")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./ui -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the rendered output (run go test ./ui -update and review the diff)\ngot:\n%s", file, got)
			}
		})
	}
}

func TestTestIDs(t *testing.T) {
	for _, p := range pages() {
		t.Run(p.name, func(t *testing.T) {
			got := render(t, p.c)
			for _, id := range p.testIDs {
				if !strings.Contains(got, `data-testid="`+id+`"`) {
					t.Errorf("missing data-testid=%q", id)
				}
			}
			for _, id := range p.absent {
				if strings.Contains(got, `data-testid="`+id+`"`) {
					t.Errorf("unexpected data-testid=%q", id)
				}
			}
		})
	}
}

func TestAccountRows(t *testing.T) {
	for _, p := range pages() {
		if p.name != "account" {
			continue
		}
		got := render(t, p.c)
		if n := strings.Count(got, `data-testid="deployment-row"`); n != 2 {
			t.Errorf("deployment rows: got %d, want 2", n)
		}
		if n := strings.Count(got, `data-testid="revoke-key"`); n != 2 {
			t.Errorf("revoke buttons: got %d, want 2", n)
		}
		// one sign-out control per browser, this one's first
		if n := strings.Count(got, `action="/auth/logout"`) + strings.Count(got, `data-testid="revoke-session"`); n != 2 {
			t.Errorf("sign-out controls: got %d, want 2 (one a browser)", n)
		}
		if strings.Contains(got, `href="/account/sessions/s1/revoke"`) {
			t.Error("this browser has a second sign-out control")
		}
		for _, want := range []string{
			`2 of 3 sites used on the free plan`,
			`href="/account/keys/k1/revoke"`, // a page asks first
			`href="/account/keys/k2/revoke"`,
			`action="/account/keys"`,
			`action="/auth/logout"`,
			`Deployed <time datetime="2026-11-20T08:30:15Z" title="20 Nov 2026, 08:30 UTC">2 days ago</time>`,
			`<span class="badge live" data-testid="site-state">Live</span>`,
			`<span class="badge disabled" data-testid="site-state">Disabled by an admin</span>`,
			`<option value="name" selected>Name</option>`,
			`value="o" maxlength="100"`,
			`<time datetime="2026-11-01T09:00:00Z" title="1 Nov 2026, 09:00 UTC">21 days ago</time>`,
			`>never<`,
			`<strong data-testid="session-client">Firefox on macOS</strong>`,
			`aria-label="Sign out Chrome on Android, signed in 2 days ago"`,
			`action="/account/sessions/s2/revoke"`, // another: one button
			`action="/account/sessions/revoke-others"`,
			`signed in with the API key <code>sd_3fA9…</code>`,
			`>in 29 days</time>`,
			`>quiet-heron-7<`, // untitled site shows its slug
		} {
			if !strings.Contains(got, want) {
				t.Errorf("account page lacks %q", want)
			}
		}
	}
}

func TestClaimForm(t *testing.T) {
	got := render(t, Claim(signedIn, ClaimProps{
		Slug: "bright-otter-42", SiteURL: "https://x.example", Token: "tok_abc", ExpiresAt: expiresAt, TimeLeft: "5 hours",
	}))
	for _, want := range []string{
		`<form method="post" action="/claim/bright-otter-42"`,
		`<input type="hidden" name="token" value="tok_abc">`,
		`<time datetime="2026-11-22T12:00:00Z"`,
		`>5 hours</time>`,
		`It will be added to your account (ada@example.com) and no longer expire.`,
		`<h1>bright-otter-42</h1>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("claim page lacks %q", want)
		}
	}
}

func TestEscaping(t *testing.T) {
	const evil = `<script>alert(1)</script>`
	cases := map[string]templ.Component{
		"claim": Claim(LayoutProps{SignedIn: true, Email: evil}, ClaimProps{
			Slug: "s", Title: evil, SiteURL: "javascript:alert(1)", Token: `"><script>alert(1)</script>`,
			LoginURL: "javascript:alert(1)", ExpiresAt: expiresAt, TimeLeft: evil,
		}),
		"claim_out": Claim(signedOut, ClaimProps{Slug: "s", Title: evil, LoginURL: "javascript:alert(1)", ExpiresAt: expiresAt}),
		"done":      ClaimDone(signedIn, ClaimDoneProps{Slug: "s", Title: evil, SiteURL: "JavaScript:alert(1)", SitePage: "javascript:alert(1)"}),
		"login":     Login(signedOut, LoginProps{Next: `"><script>alert(1)</script>`}),
		"account": Account(signedIn, AccountProps{
			Email: evil, Plan: evil,
			Deployments: []AccountDeployment{{Slug: evil, Title: evil, URL: "javascript:alert(1)", StateText: evil, State: SiteState(evil), DeployedAt: evil, DeployedAgo: evil}},
			Find:        SiteFind{Show: true, Search: evil, Total: 1, Sorts: []SortOption{{Value: evil, Label: evil}}},
			Keys:        []AccountKey{{ID: `../x"`, Prefix: evil, Name: evil, CreatedAt: evil, LastUsed: evil}},
			Sessions:    []AccountSession{{ID: `../s"`, Client: evil, CreatedAt: evil, CreatedAgo: evil, ExpiresAt: evil, KeyPrefix: evil}},
		}),
		"flash": ErrorPage(LayoutProps{SignedIn: true, Flashes: []Flash{{Text: evil, Secret: evil}}}, ErrorProps{Title: evil}),
		"error": ErrorPage(signedOut, ErrorProps{Status: 400, Title: evil, Message: evil, LinkURL: "javascript:alert(1)", LinkText: evil}),
		"mail":  LoginCodeMail(LoginCodeMailProps{Code: evil, WebURL: "javascript:alert(1)"}),
	}
	for name, c := range cases {
		got := render(t, c)
		if strings.Contains(got, "<script>alert") {
			t.Errorf("%s: unescaped script in output:\n%s", name, got)
		}
		if !strings.Contains(got, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: escaped title not found", name)
		}
		if strings.Contains(got, `"javascript:`) || strings.Contains(got, `"JavaScript:`) {
			t.Errorf("%s: javascript: URL not sanitised", name)
		}
	}
	got := render(t, cases["account"])
	if !strings.Contains(got, `href="/account/keys/..%2Fx%22/revoke"`) {
		t.Errorf("key id not path-escaped in the revoke link")
	}
	got = render(t, KeyRevoke(signedIn, KeyRevokeProps{Key: AccountKey{ID: `../x"`, Prefix: evil, Name: evil}}))
	if !strings.Contains(got, `action="/account/keys/..%2Fx%22/revoke"`) || strings.Contains(got, "<script>alert") {
		t.Errorf("key revoke page: id not path-escaped in the action, or the name not escaped")
	}
}

func TestLoginCodeText(t *testing.T) {
	got := LoginCodeText(LoginCodeMailProps{Code: "482913", Minutes: 10, WebURL: "https://sitedrop.example.com"})
	want := "Your sitedrop sign-in code\n\n    482913\n\n" +
		"It expires in 10 minutes. If you did not ask for it, ignore this e-mail.\n\n" +
		"Sent by the sitedrop server at https://sitedrop.example.com\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAssets(t *testing.T) {
	for _, name := range []string{"assets/sitedrop.css", "assets/login.js"} {
		b, err := Assets.ReadFile(name)
		if err != nil || len(b) == 0 {
			t.Errorf("%s not embedded: %v", name, err)
		}
	}
	got := render(t, Login(signedOut, LoginProps{}))
	if !strings.Contains(got, `<script src="/static/login.js" defer></script>`) {
		t.Errorf("login page does not load /static/login.js with defer")
	}
}

// TestPublicPagesDescribed: the public pages (home, sign-in) have a meta
// description in their head, for search engines; a person's own pages
// have none.
func TestPublicPagesDescribed(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		c    templ.Component
		want string
	}{
		{"home", Home(signedOut, HomeProps{}), HomeDescription},
		{"home, signed in", Home(signedIn, HomeProps{}), HomeDescription},
		{"sign-in", Login(signedOut, LoginProps{Next: "/account", SignupOpen: true}), LoginDescription},
		{"account", Account(signedIn, AccountProps{}), ""},
	} {
		html, err := RenderString(ctx, c.c)
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(html, "</head>")
		n := strings.Count(head, `<meta name="description"`)
		switch {
		case c.want == "" && n != 0:
			t.Errorf("%s: a meta description on a private page", c.name)
		case c.want != "" && (n != 1 || !strings.Contains(head, `<meta name="description" content="`+c.want+`">`)):
			t.Errorf("%s: want one <meta name=\"description\" content=%q> in the head:\n%s", c.name, c.want, head)
		}
		if c.want != "" && (len(c.want) < 70 || len(c.want) > 160) {
			t.Errorf("%s: description of %d characters, search engines show 70 to 160", c.name, len(c.want))
		}
	}
}

// TestAdminVersionFiles: the moderation page's version line says "1 file"
// of a one-file version, "N files" else.
func TestAdminVersionFiles(t *testing.T) {
	site := AdminSite{ID: "s1", Slug: "kit-site", URL: "http://kit-site.example/", Anonymous: true, Age: "just now", Back: AdminPanelLookup,
		Versions: []AdminVersion{{Number: 2, Age: "just now", Files: 1, Live: true}, {Number: 1, Age: "2 days ago", Files: 3}}}
	got := render(t, Admin(LayoutProps{}, AdminProps{Superuser: "admin@example.com", Lookup: "kit-site", Site: &site}))
	for _, want := range []string{"v2, just now, 1 file", "v1, 2 days ago, 3 files"} {
		if !strings.Contains(got, want) {
			t.Errorf("the version lines lack %q", want)
		}
	}
	if strings.Contains(got, "1 files") {
		t.Error(`"1 files" on the moderation page`)
	}
}

// TestPlural: one unit is singular, any other count plural.
func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 files", 1: "1 file", 2: "2 files", 10000: "10000 files"} {
		if got := Plural(n, "file"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}
