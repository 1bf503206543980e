package hooks

import (
	"encoding/json"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/safetext"
)

// bindLogEscape escapes control characters in everything written to the
// request log (_logs), whoever logs it: PocketBase's activity logger
// builds a line's message from the request's URL unescaped (a path or
// query with %0d%0a became a real line break, a forged line), and keeps
// the Referer and User-Agent as sent; sitedrop's own lines hold request
// paths and hosts too. Each message and each string of a line's data is
// stored through logSafe. It runs as the log writer saves the lines,
// after they have left the request.
func bindLogEscape(app core.App) {
	app.OnModelCreate(core.LogsTableName).BindFunc(func(e *core.ModelEvent) error {
		if l, ok := e.Model.(*core.Log); ok {
			l.Message = logSafe(l.Message)
			for k, v := range l.Data {
				l.Data[k] = logSafeValue(v)
			}
		}
		return e.Next()
	})
}

// logSafe is a string as the request log keeps it: control characters
// (CR and LF among them), format characters (bidi overrides), DEL and
// invalid UTF-8 shown as Go-style escapes (\x0d, \u202e), as the CLI
// shows server text (safetext.Escape); the rest kept as is.
func logSafe(s string) string { return safetext.Escape(s) }

// logSafeValue is v with each string in it through logSafe: nested maps
// and lists are copied, not changed in place (they may be shared with
// the code that logged them); other values are read as their JSON.
func logSafeValue(v any) any {
	switch v := v.(type) {
	case nil, bool, int, int64, uint64, float64:
		return v
	case string:
		return logSafe(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[logSafe(k)] = logSafeValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = logSafeValue(x)
		}
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v // stored as PocketBase would (JSON escapes it in storage)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return v
	}
	return logSafeValue(generic)
}
