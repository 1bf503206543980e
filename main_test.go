package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"sitedrop/hooks"
	"sitedrop/hooks/cli"
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

// listedFlags are the flags a command's help lists, by name.
func listedFlags(help string) map[string]bool {
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-zA-Z0-9-]+)`).FindAllStringSubmatch(help, -1) {
		names[m[1]] = true
	}
	return names
}

// serverFlags are the server's flags (hooks.BindFlags), by name.
func serverFlags() []string {
	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	cfg := hooks.DefaultConfig()
	hooks.BindFlags(fs, &cfg)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

// TestClientHelpShowsOwnFlags: a client command's help lists its own
// flags and none of the server's, which it refuses; the server's commands
// list them all.
func TestClientHelpShowsOwnFlags(t *testing.T) {
	server := serverFlags()
	if len(server) < 20 {
		t.Fatalf("server flags: %v", server)
	}
	for _, c := range cli.Commands() {
		help, errOut := runMain(t, c.Name()+" --help")
		listed := listedFlags(help)
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !listed[f.Name] {
				t.Errorf("%s --help lacks its flag --%s:\n%s%s", c.Name(), f.Name, help, errOut)
			}
		})
		for _, name := range server {
			if listed[name] {
				t.Errorf("%s --help lists the server flag --%s", c.Name(), name)
			}
		}
	}
	help, _ := runMain(t, "deploy --help")
	for _, want := range []string{"server", "key", "slug", "password", "protect", "parallel"} {
		if !listedFlags(help)[want] {
			t.Errorf("deploy --help lacks --%s:\n%s", want, help)
		}
	}
	if help, _ := runMain(t, "--help"); listedFlags(help)["max-body"] || !strings.Contains(help, "Available Commands") {
		t.Errorf("sitedrop --help lists the server flags, or no commands:\n%s", help)
	}
	for _, refused := range []string{"deploy --max-body 1MiB site", "--trusted-proxies 10.0.0.1 ls", "health --domain example.com"} {
		if _, errOut := runMain(t, refused); !strings.Contains(errOut, "unknown flag: --") {
			t.Errorf("%s: %q, want an unknown flag", refused, errOut)
		}
	}

	for _, cmd := range []string{"serve", "user create", "key create", "key list", "superuser upsert", "migrate"} {
		help, errOut := runMain(t, cmd+" --help")
		listed := listedFlags(help)
		for _, name := range server {
			if !listed[name] {
				t.Errorf("%s --help lacks the server flag --%s:\n%s%s", cmd, name, help, errOut)
			}
		}
	}
	if help, _ := runMain(t, "serve --help"); !listedFlags(help)["http"] || !listedFlags(help)["dir"] {
		t.Errorf("serve --help lacks its own flags or PocketBase's:\n%s", help)
	}
}

// TestDocumentedInvocationsParse: the command lines of the README parse
// as before, server flags before the command's name included (checked
// with --help, which parses them and then starts nothing).
func TestDocumentedInvocationsParse(t *testing.T) {
	store := "s3://my-bucket/sitedrop?endpoint=https://s3.example.net&region=us-east-1"
	every := []string{"serve"}
	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	cfg := hooks.DefaultConfig()
	hooks.BindFlags(fs, &cfg)
	fs.VisitAll(func(f *pflag.Flag) { // each with its default, as the help writes it
		every = append(every, "--"+f.Name+"="+strings.ReplaceAll(strings.Trim(f.DefValue, "[]"), " ", ""))
	})
	for _, c := range []struct{ line, cmd string }{
		{"serve", "serve"},
		{"serve --domain example.com", "serve"},
		{"serve --http 0.0.0.0:8090", "serve"},
		{"serve --https :443 --domain example.com --sites-domain example-sites.com --acme-email you@example.com --dir /var/lib/sitedrop", "serve"},
		{"serve --https :443 --domain example.com --sites-domain example-sites.com --dns-provider cloudflare --dir /var/lib/sitedrop", "serve"},
		{"serve --http 127.0.0.1:8090 --domain example.com --sites-domain example-sites.com --public-url https://example.com --trusted-proxies 127.0.0.1", "serve"},
		{"serve --store " + store + " --http 0.0.0.0:8090 --domain deploy.example.com --sites-domain example-sites.com", "serve"},
		{"serve --replica --store " + store + " --http 0.0.0.0:8080", "serve"},
		{"serve --http 127.0.0.1:8090 --metrics 127.0.0.1:9180", "serve"},
		{"serve --replica --store " + store + " --http 0.0.0.0:8080 --sites-domain example-sites.com --metrics 0.0.0.0:9180", "serve"},
		{"serve --https :443 --domain example.com --sites-domain example-sites.com --metrics 127.0.0.1:9180", "serve"},
		{"serve --analytics=false --signup=false --webhooks-allow-private --max-body 10MB --public-ip 203.0.113.7 --public-ip 2001:db8::7", "serve"},
		{strings.Join(every, " "), "serve"},
		{"--domain example.com serve", "serve"},
		{"--analytics serve --http 127.0.0.1:8090", "serve"},
		{"--dir /tmp/x --signup=false serve", "serve"},
		{"user create you@example.com --plan pro --store " + store, "user create"},
		{"key create you@example.com --name laptop --domain example.com", "key create"},
		{"superuser upsert admin@example.com a-long-password --domain example.com", "superuser upsert"},
		{"migrate --domain example.com", "migrate"},
	} {
		out, errOut := runMain(t, c.line+" --help")
		if errOut != "" || !strings.Contains(out, "Usage:\n  sitedrop "+c.cmd+" ") {
			t.Errorf("%s: stderr %q, help %.300q", c.line, errOut, out)
		}
	}
}

// TestServerFlagsReachBootstrap: the server's flags are read before the
// app bootstraps, where the config is first used, whether they follow
// the command's name or come before it.
func TestServerFlagsReachBootstrap(t *testing.T) {
	for _, line := range []string{
		"user create a@example.com --dir " + t.TempDir() + " --store bogus://x",
		"--store bogus://x user create a@example.com --dir " + t.TempDir(),
	} {
		if _, errOut := runMain(t, line); !strings.Contains(errOut, `--store "bogus://x"`) {
			t.Errorf("%s: %q, want the store refused at bootstrap", line, errOut)
		}
	}
}
