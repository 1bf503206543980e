// Package clitest runs a client command in a test, as the sitedrop
// binary would: shared by the client's own tests (hooks/cli) and those
// that run it against a real server (hooks).
package clitest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Run executes cmd with args, an empty stdin, and returns what it wrote
// to stdout and stderr, and its error.
func Run(t *testing.T, cmd *cobra.Command, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetArgs(args)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// CleanEnv gives the client a machine of its own for the rest of the
// test: an empty configuration directory (no saved login of the
// machine's), which it returns, an empty home, and no SITEDROP_KEY or
// SITEDROP_SERVER.
func CleanEnv(t *testing.T) (configDir string) {
	t.Helper()
	configDir = t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", configDir)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("SITEDROP_KEY", "")
	t.Setenv("SITEDROP_SERVER", "")
	return configDir
}
