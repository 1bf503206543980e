package agent

import (
	"context"
	"fmt"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AnalyticsInput is the input of analytics.
type AnalyticsInput struct {
	ID   string `json:"id" jsonschema:"the deployment's id"`
	From string `json:"from,omitempty" jsonschema:"first UTC day, YYYY-MM-DD (default: 29 days before to)"`
	To   string `json:"to,omitempty" jsonschema:"last UTC day, YYYY-MM-DD (default: today); at most 400 days in all"`
}

// addAnalyticsTool adds analytics: a site's visits.
func (t *tools) addAnalyticsTool(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "analytics",
		Title:       "Read a site's visits",
		Description: "Page views, unique visitors, 404s, bytes served and bot views of one of your sites per UTC day, and the period's top pages, referrer hosts and 404 paths (default: the last 30 days). Counted without cookies or stored IPs. Needs an API key.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, t.analytics)
}

// analytics is GET /deploy/{id}/analytics?from=&to=.
func (t *tools) analytics(ctx context.Context, _ *mcp.CallToolRequest, in AnalyticsInput) (*mcp.CallToolResult, Answer, error) {
	if err := t.keyed("analytics"); err != nil {
		return nil, nil, err
	}
	path, err := idPath("/deploy/", in.ID)
	if err != nil {
		return nil, nil, err
	}
	q := url.Values{}
	if in.From != "" {
		q.Set("from", in.From)
	}
	if in.To != "" {
		q.Set("to", in.To)
	}
	path += "/analytics"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	ans, err := t.call(ctx, "GET", path, nil)
	if err != nil {
		return nil, nil, err
	}
	days, _ := ans["days"].([]any)
	var views, visitors, notFound float64
	first, last := "", ""
	for _, d := range days {
		if m, ok := d.(map[string]any); ok {
			v, _ := m["page_views"].(float64)
			u, _ := m["visitors"].(float64)
			n, _ := m["not_found"].(float64)
			views, visitors, notFound = views+v, visitors+u, notFound+n
			if first == "" {
				first = str(m, "date")
			}
			last = str(m, "date")
		}
	}
	lines := []string{fmt.Sprintf("%s to %s: %.0f page view(s), %.0f visitor(s) (summed per day), %.0f 404(s).", first, last, views, visitors, notFound)}
	for _, list := range []struct{ key, title string }{{"top_pages", "Top pages"}, {"referrers", "Referrers"}, {"not_found_paths", "404 paths"}} {
		items, _ := ans[list.key].([]any)
		if len(items) == 0 {
			continue
		}
		line := list.title + ":"
		for i, it := range items {
			if i == 5 {
				break
			}
			if m, ok := it.(map[string]any); ok {
				line += fmt.Sprintf(" %s (%v)", str(m, "key"), m["count"])
			}
		}
		lines = append(lines, line)
	}
	return text(lines...), ans, nil
}
