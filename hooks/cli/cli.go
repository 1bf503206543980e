// Package cli is sitedrop's client program: the commands that talk to a
// sitedrop server over its HTTP API (deploy, login, ls, rm, versions,
// rollback, and mcp, the MCP tools over stdio) and the health probe of a
// local server. None of them opens a data dir or runs server code.
//
//	root := &cobra.Command{Use: "sitedrop"}
//	root.AddCommand(cli.Commands()...)
//	err := root.Execute()
//
// Each command has only its own flags (a client command: --server, --key
// and those of its task), and carries NoBootstrapAnnotation, so that a
// program that also embeds the server runs it without bootstrapping
// PocketBase.
package cli

import "github.com/spf13/cobra"

// NoBootstrapAnnotation marks commands that must run without PocketBase
// bootstrapping a local data dir: the client commands (they talk to a
// server over HTTP) and the health probe. main checks it.
const NoBootstrapAnnotation = "sitedrop:no-bootstrap"

// Commands are the client program's commands: deploy, login, ls, rm,
// versions, rollback, promote, aliases, diff, rename, pause, resume, mcp
// and health. None of them opens a local data dir.
func Commands() []*cobra.Command {
	return []*cobra.Command{
		newDeployCommand(),
		newLoginCommand(),
		newListCommand(),
		newRemoveCommand(),
		newVersionsCommand(),
		newRollbackCommand(),
		newPromoteCommand(),
		newAliasesCommand(),
		newDiffCommand(),
		newRenameCommand(),
		newPauseCommand(true),
		newPauseCommand(false),
		newMCPCommand(),
		newHealthCommand(),
	}
}
