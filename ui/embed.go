// Package ui holds sitedrop's web pages as templ components and the assets
// they use, embedded in the binary (no external CDN).
package ui

//go:generate go tool templ generate

import (
	"context"
	"embed"
	"strings"

	"github.com/a-h/templ"
)

// Assets are the static files the pages link to, served under /static/.
//
//go:embed assets
var Assets embed.FS

// RenderString renders c to a string, so that a template error can still
// become a clean error response before anything is written.
func RenderString(ctx context.Context, c templ.Component) (string, error) {
	var b strings.Builder
	if err := c.Render(ctx, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}
