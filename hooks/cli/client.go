package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sitedrop/sites/client"
	"sitedrop/sites/safetext"
)

// defaultServer is the server the client commands talk to when neither
// --server, SITEDROP_SERVER nor a saved login names one.
const defaultServer = "http://localhost:8090"

// credentials are what `sitedrop login` saves.
type credentials struct {
	Server string `json:"server"`
	Key    string `json:"key"`
}

// credentialsPath is where `sitedrop login` saves the key: the user's
// config dir, readable by the user only.
func credentialsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the config dir: %w", err)
	}
	return filepath.Join(dir, "sitedrop", "credentials.json"), nil
}

// loadCredentials reads the saved login; a missing file is no login.
func loadCredentials() (credentials, error) {
	var c credentials
	p, err := credentialsPath()
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read %s: %w", p, err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("read %s: %w", p, err)
	}
	return c, nil
}

// saveCredentials writes the login with mode 0600.
func saveCredentials(c credentials) (string, error) {
	p, err := credentialsPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(p), err)
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	f, err := os.CreateTemp(filepath.Dir(p), ".credentials-*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("save %s: %w", p, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return "", fmt.Errorf("save %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("save %s: %w", p, err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		return "", fmt.Errorf("save %s: %w", p, err)
	}
	return p, nil
}

// newAPIClient resolves the server and key: flags first, then the
// environment (SITEDROP_SERVER, SITEDROP_KEY), then the saved login.
func newAPIClient(server, key string) (*client.Client, error) {
	saved, err := loadCredentials()
	if err != nil {
		return nil, err
	}
	if server == "" {
		server = os.Getenv("SITEDROP_SERVER")
	}
	if server == "" {
		server = saved.Server
	}
	if server == "" {
		server = defaultServer
	}
	if key == "" {
		key = os.Getenv("SITEDROP_KEY")
	}
	if key == "" && strings.TrimSuffix(saved.Server, "/") == strings.TrimSuffix(server, "/") {
		key = saved.Key
	}
	return client.New(server, key), nil
}

// serverError is an error that carries a server's answer (a
// *client.Error, however wrapped), printed with its whole text made safe
// for a terminal.
type serverError struct{ err error }

// Error is the error's text made safe for a terminal.
func (e serverError) Error() string { return safetext.Escape(e.err.Error()) }

// Unwrap is the error it stands for.
func (e serverError) Unwrap() error { return e.err }

// shown is err as a client command returns it: when it carries a server's
// answer (a *client.Error, wrapped or not), its text is made safe for a
// terminal. The commands pass every error through it once, at their end.
func shown(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) {
		return serverError{err}
	}
	return err
}
