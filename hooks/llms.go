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

// llmsTxt is GET /llms.txt on the web host, from cfg and the anonymous
// rules in force (settings) when asked, and the addresses built at serve
// time.
func llmsTxt(cfg *Config, settings *sites.InstanceSettings, links sites.Links) func(e *core.RequestEvent) error {
	return func(e *core.RequestEvent) error { return writeLLMsTxt(e, cfg, settings.Anon(), links) }
}

func writeLLMsTxt(e *core.RequestEvent, cfg *Config, anon sites.AnonPolicy, links sites.Links) error {
	var b strings.Builder
	err := llmsText.Execute(&b, map[string]any{
		"WebURL":         links.Web(),
		"SiteURL":        links.Site("your-site"),
		"AnonOff":        !anon.Enabled,
		"AnonHeld":       anon.HoldUntilClaimed,
		"AnonTTL":        humanDuration(anon.TTL),
		"AnonPerHour":    anon.DeploysPerHour,
		"MaxBody":        sites.FormatBytes(cfg.MaxBody),
		"MaxFiles":       cfg.MaxFiles,
		"FreeSlots":      cfg.FreeSlots,
		"ProSlots":       cfg.ProSlots,
		"DomainsFree":    cfg.DomainsFree,
		"DomainsPro":     cfg.DomainsPro,
		"KeyedPerMinute": cfg.DeploysPerMinute,
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
