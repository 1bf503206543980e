package cli

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

// TestTrackErrors: the first failure of any command under the root, of
// its argument check or its run, is remembered; success leaves none.
func TestTrackErrors(t *testing.T) {
	boom := errors.New("boom")
	root := &cobra.Command{Use: "root"}
	root.AddCommand(
		&cobra.Command{Use: "ok", RunE: func(*cobra.Command, []string) error { return nil }},
		&cobra.Command{Use: "fail", RunE: func(*cobra.Command, []string) error { return boom }},
		&cobra.Command{Use: "args", Args: cobra.ExactArgs(1), RunE: func(*cobra.Command, []string) error { return nil }},
	)
	root.SilenceErrors, root.SilenceUsage = true, true
	failed := TrackErrors(root)
	root.SetArgs([]string{"ok"})
	_ = root.Execute()
	if failed() != nil {
		t.Fatalf("after a success: %v", failed())
	}
	root.SetArgs([]string{"args"})
	_ = root.Execute()
	if failed() == nil {
		t.Fatal("a refused argument list was not remembered")
	}
	root.SetArgs([]string{"fail"})
	_ = root.Execute()
	if errors.Is(failed(), boom) {
		t.Error("a later failure replaced the first")
	}
}
