package sites

import "github.com/pocketbase/pocketbase/core"

// InEventTransaction runs fn and then the rest of the record event e's
// chain in one transaction, with e.App the transaction meanwhile: what
// fn checks and what the chain saves commit together.
func InEventTransaction(e *core.RecordEvent, fn func(tx core.App) error) error {
	orig := e.App
	err := e.App.RunInTransaction(func(tx core.App) error {
		e.App = tx
		if err := fn(tx); err != nil {
			return err
		}
		return e.Next()
	})
	e.App = orig
	return err
}
