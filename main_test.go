package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain runs main itself when a test re-executes this binary.
func TestMain(m *testing.M) {
	if args := os.Getenv("SITEDROP_TEST_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"sitedrop"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runMain runs the program with args and returns its stdout and stderr.
func runMain(t *testing.T, args string) (string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SITEDROP_TEST_MAIN_ARGS="+args, "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "SITEDROP_KEY=", "SITEDROP_SERVER=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	_ = cmd.Run() // a failing command exits 1
	return out.String(), errOut.String()
}

// TestErrorsGoToStderr: a failing client command prints its error on
// stderr and nothing on stdout, so scripts that capture stdout get only
// results.
func TestErrorsGoToStderr(t *testing.T) {
	out, errOut := runMain(t, "ls --server http://127.0.0.1:1 --key sd_not_a_key")
	if out != "" {
		t.Errorf("stdout: %q", out)
	}
	if !strings.Contains(errOut, "Error:") || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Errorf("stderr: %q", errOut)
	}
}
