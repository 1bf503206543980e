package hooks

import (
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/safetext"
)

// bindLogEscape escapes control characters in everything written to the
// request log (_logs), whoever logs it: PocketBase's activity logger
// builds a line's message from the request's URL unescaped (a path or
// query with %0d%0a became a real line break, a forged line), and keeps
// the Referer and User-Agent as sent; sitedrop's own lines hold request
// paths and hosts too. Each message and each string of a line's data is
// stored through safetext.Escape (EscapeValue), as the CLI shows server
// text. It runs as the log writer saves the lines, after they have left
// the request.
func bindLogEscape(app core.App) {
	app.OnModelCreate(core.LogsTableName).BindFunc(func(e *core.ModelEvent) error {
		if l, ok := e.Model.(*core.Log); ok {
			l.Message = safetext.Escape(l.Message)
			for k, v := range l.Data {
				l.Data[k] = safetext.EscapeValue(v)
			}
		}
		return e.Next()
	})
}
