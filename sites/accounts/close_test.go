package accounts

import (
	"net/http/httptest"
	"testing"

	"github.com/pocketbase/pocketbase/core"
)

// TestConfirmsDeletion: only the account's own address, typed in any
// case with spaces around, confirms its deletion.
func TestConfirmsDeletion(t *testing.T) {
	for _, c := range []struct {
		typed string
		want  bool
	}{
		{"ada@example.com", true},
		{"  Ada@Example.COM ", true},
		{"", false},
		{"   ", false},
		{"ada@example.co", false},
		{"bob@example.com", false},
		{"delete", false},
	} {
		if got := ConfirmsDeletion(c.typed, "ada@example.com"); got != c.want {
			t.Errorf("ConfirmsDeletion(%q) = %v, want %v", c.typed, got, c.want)
		}
	}
}

// TestDropFlashes: an ended session's pending messages go, another
// session's stay.
func TestDropFlashes(t *testing.T) {
	s := NewSessions(nil, func() bool { return false })
	for _, tok := range []string{"token-a", "token-b"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Cookie", s.CookieName()+"="+tok)
		s.Flash(r, Flash{Kind: "success", Text: "for " + tok})
	}
	col := core.NewBaseCollection(SessionsCollection)
	col.Fields.Add(&core.TextField{Name: FieldTokenHash})
	rec := core.NewRecord(col)
	rec.Set(FieldTokenHash, HashSecret("token-a"))
	s.DropFlashes(rec)
	if got := s.TakeFlashes("token-a"); len(got) != 0 {
		t.Errorf("the ended session's messages stay: %v", got)
	}
	if got := s.TakeFlashes("token-b"); len(got) != 1 {
		t.Errorf("another session's messages: %v, want its one", got)
	}
}
