package hooks

import (
	_ "embed"
	"fmt"
	"net/http"
	"strings"
	"text/template"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// llmsTemplate is /llms.txt (llmstxt.org): how an agent publishes here,
// in Markdown, filled with this server's URLs and limits.
//
//go:embed llms.txt
var llmsTemplate string

var llmsText = template.Must(template.New("llms.txt").Parse(llmsTemplate))

// llmsTxt is GET /llms.txt on the web host.
func (sd *sitedrop) llmsTxt(e *core.RequestEvent) error {
	var b strings.Builder
	err := llmsText.Execute(&b, map[string]any{
		"WebURL":         sd.cfg.links().Web(),
		"SiteURL":        sd.cfg.links().Site("your-site"),
		"AnonTTL":        humanDuration(sd.cfg.AnonTTL),
		"AnonPerHour":    sd.cfg.AnonDeploysPerHour,
		"MaxBody":        sites.FormatBytes(sd.cfg.MaxBody),
		"MaxFiles":       sd.cfg.MaxFiles,
		"FreeSlots":      sd.cfg.FreeSlots,
		"ProSlots":       sd.cfg.ProSlots,
		"DomainsFree":    sd.cfg.DomainsFree,
		"DomainsPro":     sd.cfg.DomainsPro,
		"KeyedPerMinute": sd.cfg.DeploysPerMinute,
	})
	if err != nil {
		return fmt.Errorf("render llms.txt: %w", err)
	}
	e.Response.Header().Set("Cache-Control", "no-cache")
	return e.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(b.String()))
}

// humanDuration writes whole hours as "24 hours" and anything else as
// Go writes durations.
func humanDuration(d time.Duration) string {
	switch {
	case d == time.Hour:
		return "1 hour"
	case d > 0 && d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return d.String()
}
