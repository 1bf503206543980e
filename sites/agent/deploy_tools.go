package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sitedrop/sites/wire"
)

// File is one file of a deploy or an update.
type File struct {
	Path        string `json:"path" jsonschema:"the file's path in the site, e.g. index.html or assets/app.js"`
	Content     string `json:"content" jsonschema:"the file's content: text, or base64 when encoding is base64"`
	Encoding    string `json:"encoding,omitempty" jsonschema:"base64 for binary content (images, fonts); leave out for text"`
	ContentType string `json:"contentType,omitempty" jsonschema:"the Content-Type to serve; guessed from the path's extension when left out"`
}

// Content is the site content and settings of a deploy or an update.
type Content struct {
	HTML        *string `json:"html,omitempty" jsonschema:"a one-page site: the HTML of index.html (give html or files, not both)"`
	Files       []File  `json:"files,omitempty" jsonschema:"a whole site: its files (give html or files, not both); index.html is the home page"`
	Title       *string `json:"title,omitempty" jsonschema:"the site's title, added to pages without a <title>"`
	Description *string `json:"description,omitempty" jsonschema:"the site's description, added as a meta description"`
	Favicon     *string `json:"favicon,omitempty" jsonschema:"one emoji shown as the site's icon"`
	IsSPA       *bool   `json:"is_spa,omitempty" jsonschema:"true for a single-page app: every missing path serves index.html"`
	Password    *string `json:"password,omitempty" jsonschema:"protect the site with this password (8 to 128 characters), which visitors must type; an empty string removes the password; left out keeps it"`
	Protect     *string `json:"protect,omitempty" jsonschema:"on: the site is private and the answer's share_url lets its holder in; off: removes the share link; rotate: a new share link (the old one and every visitor's access stop working); left out keeps it"`
	Draft       *bool   `json:"draft,omitempty" jsonschema:"true: save the new version without making it live; check it at the answer's preview_url, then make it live with promote (needs an API key; cannot change password or protect)"`
	Alias       *string `json:"alias,omitempty" jsonschema:"point this alias (e.g. staging: 1 to 32 of a-z, 0-9 and inner hyphens) at the new version: it is served at the answer's alias_url (needs an API key)"`
	Message     *string `json:"message,omitempty" jsonschema:"what this version changes (at most 200 characters), shown in the versions list"`
}

// DeployInput is the input of deploy.
type DeployInput struct {
	Content
	Slug *string `json:"slug,omitempty" jsonschema:"the site's name in its URL (lowercase letters, digits, hyphens); random when left out"`
}

// UpdateInput is the input of update.
type UpdateInput struct {
	ID string `json:"id" jsonschema:"the deployment's id"`
	Content
}

// IDInput is the input of the tools that take a deployment's id.
type IDInput struct {
	ID string `json:"id" jsonschema:"the deployment's id, as deploy and list_deploys give it"`
}

// TeardownInput is the input of teardown.
type TeardownInput struct {
	ID      string `json:"id" jsonschema:"the deployment's id"`
	Confirm bool   `json:"confirm,omitempty" jsonschema:"must be true: the site, its versions and its form submissions are deleted for good"`
}

// ClaimInput is the input of claim.
type ClaimInput struct {
	Slug       string `json:"slug" jsonschema:"the anonymous site's slug"`
	ClaimToken string `json:"claim_token" jsonschema:"the claim_token its deploy answered"`
}

// NoInput is the input of the tools that take none.
type NoInput struct{}

// body is the API body of c (and slug, on a deploy).
func (c Content) body(slug *string) (*wire.DeployRequest, error) {
	b := &wire.DeployRequest{
		Slug: slug, HTML: c.HTML, Title: c.Title, Description: c.Description,
		Favicon: c.Favicon, IsSPA: c.IsSPA,
		Draft: c.Draft, Alias: c.Alias, Message: c.Message,
	}
	if c.Files != nil {
		files := make([]wire.FileEntry, len(c.Files))
		for i, f := range c.Files {
			files[i] = wire.FileEntry{Path: f.Path, Content: &f.Content, Encoding: f.Encoding, ContentType: f.ContentType}
		}
		b.Files = &files
	}
	if c.Password != nil {
		// an empty string removes it (null)
		b.Password = wire.Password{Set: true, Remove: *c.Password == "", Value: *c.Password}
	}
	if c.Protect != nil {
		switch *c.Protect {
		case "on", "true":
			b.Protect = wire.Protect{Set: true, On: true}
		case "off", "false":
			b.Protect = wire.Protect{Set: true}
		case "rotate":
			b.Protect = wire.Protect{Set: true, On: true, Rotate: true}
		default:
			return nil, fmt.Errorf("protect must be on, off or rotate, not %q", *c.Protect)
		}
	}
	return b, nil
}

// deployLines are the lines of a deploy's or an update's answer after
// the first: the version and its preview URL (a draft's, with how to
// make it live), the alias's URL, the share link, when the site has one
// on, the warnings and the report.
func deployLines(d *wire.DeployAnswer) []string {
	var lines []string
	switch {
	case d.Draft:
		lines = append(lines, fmt.Sprintf("Version %d is a draft, not live: check it at %s, then make it live with promote (id %s, version %d).", d.Version, cmp.Or(d.PreviewURL, d.AliasURL, "its alias"), d.ID, d.Version))
	case d.PreviewURL != "":
		lines = append(lines, fmt.Sprintf("Version %d, also at %s.", d.Version, d.PreviewURL))
	}
	if d.AliasURL != "" {
		lines = append(lines, "Alias: "+d.AliasURL)
	}
	if d.ShareURL != "" {
		lines = append(lines, "Private: anyone with this share link can open it: "+d.ShareURL)
	}
	if len(d.Warnings) > 0 {
		lines = append(lines, fmt.Sprintf("%d line(s) of _redirects or _headers not applied: see warnings.", len(d.Warnings)))
	}
	return append(lines, reportLines(d.Report)...)
}

// addDeployTools adds the tools of a deployment's life: deploy, update,
// get_status, list_deploys, teardown, claim, whoami.
func (t *tools) addDeployTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:  "deploy",
		Title: "Publish a site",
		Description: "Publish a new static site and get its live URL. Give html (one page) or files. " +
			"With draft: true (and an API key) nothing goes live: check the answer's preview_url, then promote. " +
			"With an API key the site is yours; without one it is anonymous, expires, and the answer's claim_url lets a person keep it. " +
			"The answer's report lists broken internal links, forms that post nowhere, rule lines not applied, pages without a title and images over 1 MiB: fix them and update.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
	}, t.deploy)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "update",
		Title:       "Replace a site's files",
		Description: "Replace the whole file set of one of your sites (same URL); settings left out keep their values. The previous version is kept (see list_versions, rollback). With draft: true the site is unchanged: check the answer's preview_url, then promote. alias moves a named preview (staging) to the new version. The answer carries the site's report, as deploy's does. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(true)},
	}, t.update)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "get_status",
		Title:       "Describe a site",
		Description: "A site's URL, status, settings and dates. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, t.getStatus)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "list_deploys",
		Title:       "List your sites",
		Description: "Your sites, most recently updated first: id, slug, url, title. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, t.listDeploys)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "teardown",
		Title:       "Delete a site",
		Description: "Delete one of your sites for good: its URL stops answering, its versions and form submissions are deleted. Needs confirm: true and an API key.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.teardown)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "claim",
		Title:       "Keep an anonymous site",
		Description: "Make an anonymous site yours, so that it no longer expires. Needs the slug and claim_token of its deploy, and an API key.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.claim)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "whoami",
		Title:       "Who is the key's user",
		Description: "The account of the API key in use: id, email, plan. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, t.whoami)
}

// deploy is POST /deploy.
func (t *tools) deploy(ctx context.Context, _ *mcp.CallToolRequest, in DeployInput) (*mcp.CallToolResult, Answer, error) {
	body, err := in.body(in.Slug)
	if err != nil {
		return nil, nil, err
	}
	var d wire.DeployAnswer
	ans, err := t.callAs(ctx, "POST", "/deploy", body, &d)
	if err != nil {
		return nil, nil, err
	}
	lines := []string{fmt.Sprintf("Published %s (id %s).", d.URL, d.ID)}
	if d.Draft {
		lines[0] = fmt.Sprintf("Saved a draft of %s (id %s).", d.URL, d.ID)
	}
	if d.Claim != nil && d.ClaimURL != "" {
		lines = append(lines, fmt.Sprintf("Anonymous: it expires at %s unless claimed at %s", d.ExpiresAt, d.ClaimURL))
		if d.AwaitingClaim {
			lines = append(lines, "Not shown yet: this server shows anonymous sites once a person claims them with the claim URL; until then visitors see an \"awaiting claim\" page.")
		}
	}
	return text(append(lines, deployLines(&d)...)...), ans, nil
}

// update is PUT /deploy/{id}.
func (t *tools) update(ctx context.Context, _ *mcp.CallToolRequest, in UpdateInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("update"); err != nil {
		return nil, nil, err
	}
	path, err := idPath("/deploy/", in.ID)
	if err != nil {
		return nil, nil, err
	}
	body, err := in.body(nil)
	if err != nil {
		return nil, nil, err
	}
	var d wire.DeployAnswer
	ans, err := t.callAs(ctx, "PUT", path, body, &d)
	if err != nil {
		return nil, nil, err
	}
	first := fmt.Sprintf("Updated %s (id %s).", d.URL, d.ID)
	if d.Draft {
		first = fmt.Sprintf("Saved a draft of %s (id %s); the site is unchanged.", d.URL, d.ID)
	}
	return text(append([]string{first}, deployLines(&d)...)...), ans, nil
}

// reportLines sum up a deploy's report, whose findings the structured
// result carries: how many of each kind, when there are any.
func reportLines(r wire.Report) []string {
	var found []string
	for _, k := range []struct {
		n    int
		what string
	}{
		{len(r.BrokenLinks), "broken internal link(s)"},
		{len(r.Forms), "form(s) that post nowhere"},
		{len(r.UntitledPages), "page(s) without a title"},
		{len(r.LargeImages), "image(s) over 1 MiB"},
	} {
		if k.n > 0 {
			found = append(found, fmt.Sprintf("%d %s", k.n, k.what))
		}
	}
	if len(found) == 0 {
		return nil
	}
	return []string{"Report: " + strings.Join(found, ", ") + ": see report."}
}

// getStatus is GET /deploy/{id}.
func (t *tools) getStatus(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("get_status"); err != nil {
		return nil, nil, err
	}
	path, err := idPath("/deploy/", in.ID)
	if err != nil {
		return nil, nil, err
	}
	var d wire.DeployStatus
	ans, err := t.callAs(ctx, "GET", path, nil, &d)
	if err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprintf("%s is %s at %s (id %s), updated %s.", d.Slug, d.Status, d.URL, d.ID, d.UpdatedAt)), ans, nil
}

// listDeploys is GET /deploys.
func (t *tools) listDeploys(ctx context.Context, _ *mcp.CallToolRequest, _ NoInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("list_deploys"); err != nil {
		return nil, nil, err
	}
	var list wire.DeploymentList
	ans, err := t.callAs(ctx, "GET", "/deploys", nil, &list)
	if err != nil {
		return nil, nil, err
	}
	lines := []string{fmt.Sprintf("%d site(s).", len(list.Deployments))}
	for _, d := range list.Deployments {
		lines = append(lines, fmt.Sprintf("%s %s (id %s)", d.Slug, d.URL, d.ID))
	}
	return text(lines...), ans, nil
}

// teardown is DELETE /deploy/{id}, once confirmed.
func (t *tools) teardown(ctx context.Context, _ *mcp.CallToolRequest, in TeardownInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("teardown"); err != nil {
		return nil, nil, err
	}
	path, err := idPath("/deploy/", in.ID)
	if err != nil {
		return nil, nil, err
	}
	if !in.Confirm {
		return nil, nil, errors.New("teardown deletes the site for good: call it again with confirm: true to go ahead; nothing was deleted")
	}
	var d wire.IDMessage
	ans, err := t.callAs(ctx, "DELETE", path, nil, &d)
	if err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprintf("%s (id %s).", d.Message, d.ID)), ans, nil
}

// claim is POST /deploy/claim.
func (t *tools) claim(ctx context.Context, _ *mcp.CallToolRequest, in ClaimInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("claim"); err != nil {
		return nil, nil, err
	}
	var d wire.DeployRef
	ans, err := t.callAs(ctx, "POST", "/deploy/claim", wire.ClaimRequest{Slug: &in.Slug, ClaimToken: &in.ClaimToken}, &d)
	if err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprintf("Claimed %s (id %s): it is yours and no longer expires.", d.URL, d.ID)), ans, nil
}

// whoami is GET /auth/whoami.
func (t *tools) whoami(ctx context.Context, _ *mcp.CallToolRequest, _ NoInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("whoami"); err != nil {
		return nil, nil, err
	}
	ans, err := t.call(ctx, "GET", "/auth/whoami", nil)
	if err != nil {
		return nil, nil, err
	}
	u, _ := ans["user"].(map[string]any)
	return text(fmt.Sprintf("%s, plan %s (user id %s).", str(u, "email"), str(u, "plan"), str(u, "id"))), ans, nil
}
