package forms_test

import (
	"slices"
	"testing"

	"sitedrop/sites/forms"
)

// TestFormKeyOrder: a url-encoded form's names in the order they came,
// unescaped, a repeated one each time, empty and malformed names skipped.
func TestFormKeyOrder(t *testing.T) {
	got := forms.FormKeyOrder("name=Ann&e%2Dmail=a%40b&tag=x&&=v&tag=y&bad%zz=1&message=hi")
	want := []string{"name", "e-mail", "tag", "tag", "message"}
	if !slices.Equal(got, want) {
		t.Fatalf("FormKeyOrder = %q, want %q", got, want)
	}
}
