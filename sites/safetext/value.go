package safetext

import "encoding/json"

// EscapeValue is v with each string in it, map keys included, through
// Escape, as a log line's data is stored: nested maps and lists are
// copied, not changed in place (they may be shared with the code that
// logged them); other values are read as their JSON, and kept as they are
// when they have none.
func EscapeValue(v any) any {
	switch v := v.(type) {
	case nil, bool, int, int64, uint64, float64:
		return v
	case string:
		return Escape(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[Escape(k)] = EscapeValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = EscapeValue(x)
		}
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v // stored as the caller would (JSON escapes it in storage)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return v
	}
	return EscapeValue(generic)
}
