package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitedrop/sites/wire"
)

// healthCommandName is the name of the health probe command. It carries
// NoBootstrapAnnotation: a probe must not open (or create) the data dir of
// the server it checks.
const healthCommandName = "health"

// defaultHealthURLs are probed in order: the default plain listener, then
// the plain HTTP listener of a TLS server, which answers /api/health too.
var defaultHealthURLs = []string{
	"http://127.0.0.1:8090" + wire.HealthPath,
	"http://127.0.0.1:80" + wire.HealthPath,
}

// newHealthCommand is `sitedrop health [--url URL]...`: it exits 0 when a
// sitedrop answers its health endpoint with 200, and 1 otherwise. It is
// the container image's HEALTHCHECK, since the image has no curl.
func newHealthCommand() *cobra.Command {
	urls := append([]string(nil), defaultHealthURLs...)
	var timeout time.Duration
	c := &cobra.Command{
		Use:          healthCommandName,
		Short:        "Checks that a local sitedrop answers (exit 0) or not (exit 1)",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		Annotations:  map[string]string{NoBootstrapAnnotation: "true"},
		RunE: func(c *cobra.Command, _ []string) error {
			client := &http.Client{Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			}}
			var failures []string
			for _, u := range urls {
				err := probeHealth(c.Context(), client, u)
				if err == nil {
					fmt.Fprintf(c.OutOrStdout(), "healthy: %s\n", u)
					return nil
				}
				failures = append(failures, err.Error())
			}
			return fmt.Errorf("not healthy: %s", strings.Join(failures, "; "))
		},
	}
	c.Flags().StringSliceVar(&urls, "url", urls, "health URLs to probe; the first that answers 200 makes the check pass")
	c.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long each probe may take")
	return c
}

// probeHealth GETs url and wants a 200.
func probeHealth(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // drain for reuse; the status decides
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", url, res.StatusCode)
	}
	return nil
}
