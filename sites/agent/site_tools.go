package agent

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SubmissionsInput is the input of get_submissions.
type SubmissionsInput struct {
	ID    string `json:"id" jsonschema:"the deployment's id"`
	Page  int    `json:"page,omitempty" jsonschema:"the page, from 1 (default 1)"`
	Limit int    `json:"limit,omitempty" jsonschema:"submissions per page (the server's default and cap apply)"`
}

// SubmissionInput is the input of delete_submission.
type SubmissionInput struct {
	ID           string `json:"id" jsonschema:"the deployment's id"`
	SubmissionID string `json:"submission_id" jsonschema:"the submission's id, as get_submissions gives it"`
}

// RollbackInput is the input of rollback.
type RollbackInput struct {
	ID      string `json:"id" jsonschema:"the deployment's id"`
	Version int    `json:"version" jsonschema:"the kept version to make live again, as list_versions gives it"`
}

// PromoteInput is the input of promote.
type PromoteInput struct {
	ID      string `json:"id" jsonschema:"the deployment's id"`
	Version int    `json:"version" jsonschema:"the version to make live (a draft), as deploy, update and list_versions give it"`
}

// addSiteTools adds the tools of a site's forms and versions:
// get_submissions, delete_submission, list_versions, rollback, promote.
func (t *tools) addSiteTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "get_submissions",
		Title:       "Read a site's form posts",
		Description: "The form submissions of one of your sites, newest first, paged. A site's form posts to {{SUBMIT_URL}} (replaced by the server). Needs an API key.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, t.getSubmissions)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "delete_submission",
		Title:       "Delete a form post",
		Description: "Delete one form submission of one of your sites for good. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.deleteSubmission)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "list_versions",
		Title:       "List a site's versions",
		Description: "The kept versions of one of your sites, newest first: which one is live, each one's preview URL (it serves that version), aliases and message. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, t.listVersions)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "rollback",
		Title:       "Make a version live again",
		Description: "Make a kept version of one of your sites live again (same URL). Needs an API key.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.rollback)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "promote",
		Title:       "Make a draft live",
		Description: "Make a kept version of one of your sites live (a draft saved with draft: true, or an earlier version), in one step: visitors see the old site or the new one, never a mix. Aliases stay where they are. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.promote)
}

// getSubmissions is GET /submissions/{id}?page=&limit=.
func (t *tools) getSubmissions(ctx context.Context, _ *mcp.CallToolRequest, in SubmissionsInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("get_submissions"); err != nil {
		return nil, nil, err
	}
	path, err := idPath("/submissions/", in.ID)
	if err != nil {
		return nil, nil, err
	}
	q := url.Values{}
	if in.Page != 0 {
		q.Set("page", strconv.Itoa(in.Page))
	}
	if in.Limit != 0 {
		q.Set("limit", strconv.Itoa(in.Limit))
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	ans, err := t.call(ctx, "GET", path, nil)
	if err != nil {
		return nil, nil, err
	}
	subs, _ := ans["submissions"].([]any)
	return text(fmt.Sprintf("%d submission(s) on page %v, %v in all.", len(subs), ans["page"], ans["total"])), ans, nil
}

// deleteSubmission is DELETE /submissions/{id}/{submissionId}.
func (t *tools) deleteSubmission(ctx context.Context, _ *mcp.CallToolRequest, in SubmissionInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("delete_submission"); err != nil {
		return nil, nil, err
	}
	path, err := idPath("/submissions/", in.ID)
	if err != nil {
		return nil, nil, err
	}
	sub := strings.TrimSpace(in.SubmissionID)
	if sub == "" {
		return nil, nil, errors.New("submission_id is required: the submission's id, as get_submissions gives it")
	}
	ans, err := t.call(ctx, "DELETE", path+"/"+url.PathEscape(sub), nil)
	if err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprintf("%s (id %s).", str(ans, "message"), str(ans, "id"))), ans, nil
}

// listVersions is GET /deploy/{id}/versions.
func (t *tools) listVersions(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("list_versions"); err != nil {
		return nil, nil, err
	}
	path, err := idPath("/deploy/", in.ID)
	if err != nil {
		return nil, nil, err
	}
	ans, err := t.call(ctx, "GET", path+"/versions", nil)
	if err != nil {
		return nil, nil, err
	}
	vs, _ := ans["versions"].([]any)
	lines := []string{fmt.Sprintf("%d version(s), newest first.", len(vs))}
	for _, v := range vs {
		if m, ok := v.(map[string]any); ok {
			live := ""
			if m["live"] == true {
				live = " (live)"
			}
			line := fmt.Sprintf("version %v of %s: %v file(s)%s", m["version"], str(m, "created_at"), m["file_count"], live)
			if p := str(m, "preview_url"); p != "" {
				line += ", preview " + p
			}
			if as, _ := m["aliases"].([]any); len(as) > 0 {
				names := make([]string, 0, len(as))
				for _, a := range as {
					names = append(names, fmt.Sprint(a))
				}
				line += ", aliases " + strings.Join(names, ", ")
			}
			if msg := str(m, "message"); msg != "" {
				line += ": " + msg
			}
			lines = append(lines, line)
		}
	}
	return text(lines...), ans, nil
}

// rollback is POST /deploy/{id}/rollback.
func (t *tools) rollback(ctx context.Context, _ *mcp.CallToolRequest, in RollbackInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("rollback"); err != nil {
		return nil, nil, err
	}
	path, err := idPath("/deploy/", in.ID)
	if err != nil {
		return nil, nil, err
	}
	ans, err := t.call(ctx, "POST", path+"/rollback", map[string]int{"version": in.Version})
	if err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprintf("Version %v is live again at %s (id %s).", ans["version"], str(ans, "url"), str(ans, "id"))), ans, nil
}

// promote is POST /deploy/{id}/versions/{version}/promote.
func (t *tools) promote(ctx context.Context, _ *mcp.CallToolRequest, in PromoteInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("promote"); err != nil {
		return nil, nil, err
	}
	path, err := idPath("/deploy/", in.ID)
	if err != nil {
		return nil, nil, err
	}
	if in.Version < 1 {
		return nil, nil, errors.New("version is required: a positive version number, as deploy, update and list_versions give it")
	}
	ans, err := t.call(ctx, "POST", path+"/versions/"+strconv.Itoa(in.Version)+"/promote", nil)
	if err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprintf("Version %v is live at %s (id %s).", ans["version"], str(ans, "url"), str(ans, "id"))), ans, nil
}
