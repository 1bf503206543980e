package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RenameInput is the input of rename.
type RenameInput struct {
	ID   string `json:"id" jsonschema:"the deployment's id"`
	Slug string `json:"slug" jsonschema:"the new slug: lowercase letters, words joined by hyphens (3 to 63 characters)"`
}

// addControlTools adds the owner's controls of a site: rename, pause,
// resume (each the API's route, so its checks and limits).
func (t *tools) addControlTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "rename",
		Title:       "Change a site's address",
		Description: "Give one of your sites a new slug (its address). The old address redirects to the new one (same path) for 30 days, and no one else can take it meanwhile; then it is freed. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.rename)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "pause",
		Title:       "Pause a site",
		Description: "Take one of your sites offline for visitors: every address of it shows a \"paused\" page (HTTP 503) and its forms refuse posts, until resume. Its address, versions and settings are kept. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.pause(true))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "resume",
		Title:       "Resume a paused site",
		Description: "Serve one of your paused sites again. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.pause(false))
}

// rename is POST /deploy/{id}/rename.
func (t *tools) rename(ctx context.Context, _ *mcp.CallToolRequest, in RenameInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("rename"); err != nil {
		return nil, nil, err
	}
	path, err := idPath("/deploy/", in.ID)
	if err != nil {
		return nil, nil, err
	}
	slug := strings.TrimSpace(in.Slug)
	if slug == "" {
		return nil, nil, errors.New("slug is required: the new slug, lowercase letters and hyphens")
	}
	ans, err := t.call(ctx, "POST", path+"/rename", map[string]string{"slug": slug})
	if err != nil {
		return nil, nil, err
	}
	if prev := str(ans, "previous_url"); prev != "" {
		return text(fmt.Sprintf("Renamed: the site is at %s (id %s); %s redirects there until %s.",
			str(ans, "url"), str(ans, "id"), prev, str(ans, "redirect_until"))), ans, nil
	}
	return text(fmt.Sprintf("The site already has that slug: %s (id %s).", str(ans, "url"), str(ans, "id"))), ans, nil
}

// pause is POST /deploy/{id}/pause (on) or /resume.
func (t *tools) pause(on bool) func(context.Context, *mcp.CallToolRequest, IDInput) (*mcp.CallToolResult, Answer, error) {
	tool, route := "pause", "/pause"
	if !on {
		tool, route = "resume", "/resume"
	}
	return func(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, Answer, error) {
		if err := t.keyed(tool); err != nil {
			return nil, nil, err
		}
		path, err := idPath("/deploy/", in.ID)
		if err != nil {
			return nil, nil, err
		}
		ans, err := t.call(ctx, "POST", path+route, nil)
		if err != nil {
			return nil, nil, err
		}
		if ans["paused"] == true {
			return text(fmt.Sprintf("Paused: %s shows visitors a \"paused\" page until resume (id %s).", str(ans, "url"), str(ans, "id"))), ans, nil
		}
		return text(fmt.Sprintf("Running: %s is served (id %s).", str(ans, "url"), str(ans, "id"))), ans, nil
	}
}
