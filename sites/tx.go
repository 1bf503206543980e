package sites

import "github.com/pocketbase/pocketbase/core"

// InEventTransaction runs fn and then the rest of the record event e's
// chain in one transaction, with e.App the transaction meanwhile: what
// fn checks and what the chain saves commit together.
func InEventTransaction(e *core.RecordEvent, fn func(tx core.App) error) error {
	return AroundEventTransaction(e, fn, nil)
}

// AroundEventTransaction runs before, the rest of the record event e's
// chain, then after (each may be nil) in one transaction, with e.App the
// transaction meanwhile: all of it commits, or none.
func AroundEventTransaction(e *core.RecordEvent, before, after func(tx core.App) error) error {
	orig := e.App
	err := e.App.RunInTransaction(func(tx core.App) error {
		e.App = tx
		if before != nil {
			if err := before(tx); err != nil {
				return err
			}
		}
		if err := e.Next(); err != nil {
			return err
		}
		if after != nil {
			return after(tx)
		}
		return nil
	})
	e.App = orig
	return err
}
