package cli

import "github.com/spf13/cobra"

// TrackErrors wraps the argument checks and RunE of every command under
// root so that a failure is remembered, and returns a function reporting
// the first one. PocketBase's Execute drops the error of the command it
// ran; main uses this to exit non-zero when a command failed.
func TrackErrors(root *cobra.Command) func() error {
	var first error
	record := func(err error) error {
		if err != nil && first == nil {
			first = err
		}
		return err
	}
	var wrap func(c *cobra.Command)
	wrap = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(c *cobra.Command, a []string) error { return record(args(c, a)) }
		}
		if run := c.RunE; run != nil {
			c.RunE = func(c *cobra.Command, a []string) error { return record(run(c, a)) }
		}
		for _, sub := range c.Commands() {
			wrap(sub)
		}
	}
	wrap(root)
	return func() error { return first }
}
