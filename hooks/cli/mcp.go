package cli

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"sitedrop/sites/agent"
	"sitedrop/sites/client"
)

// stdioKeyHelp is how a local agent gives `sitedrop mcp` a key.
const stdioKeyHelp = "run `sitedrop login` on this machine, or set SITEDROP_KEY (or --key) in the MCP client's configuration of `sitedrop mcp`"

// newMCPCommand is `sitedrop mcp`: the MCP tools of /mcp over stdio, for
// a local agent, calling the server of --server (or the saved login) with
// its key. Stdout carries only the protocol; it ends when stdin closes.
func newMCPCommand() *cobra.Command {
	return clientCommand("mcp", "Serve the MCP tools (deploy, update, list_deploys...) over stdio for a local AI agent, with the saved login's key", cobra.NoArgs,
		func(c *cobra.Command, api *client.Client, _ []string) error {
			ctx := c.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			s := agent.NewServer(api, &agent.Options{KeyHelp: stdioKeyHelp})
			err := s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(c.InOrStdin()), Writer: nopWriteCloser{c.OutOrStdout()}})
			if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
				return nil // the agent closed stdin, or was interrupted
			}
			return err
		})
}

// nopWriteCloser is a Writer whose Close does nothing: closing the
// session must not close the process's stdout.
type nopWriteCloser struct{ io.Writer }

// Close does nothing.
func (nopWriteCloser) Close() error { return nil }
