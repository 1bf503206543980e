package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestContentBody: a tool's content becomes the API's deploy body as the
// tools always sent it (an empty password removes it: null; on and off
// are true and false; a file's content is always sent, "" included),
// and a protect value the API has no form for is refused before any call.
func TestContentBody(t *testing.T) {
	html, pw, slug := "<p>hi</p>", "", "s"
	for protect, want := range map[string]string{
		"on":     `{"html":"\u003cp\u003ehi\u003c/p\u003e","password":null,"protect":true,"slug":"s"}`,
		"true":   `{"html":"\u003cp\u003ehi\u003c/p\u003e","password":null,"protect":true,"slug":"s"}`,
		"off":    `{"html":"\u003cp\u003ehi\u003c/p\u003e","password":null,"protect":false,"slug":"s"}`,
		"false":  `{"html":"\u003cp\u003ehi\u003c/p\u003e","password":null,"protect":false,"slug":"s"}`,
		"rotate": `{"html":"\u003cp\u003ehi\u003c/p\u003e","password":null,"protect":"rotate","slug":"s"}`,
	} {
		body, err := Content{HTML: &html, Password: &pw, Protect: &protect}.body(&slug)
		if err != nil {
			t.Fatalf("protect %q: %v", protect, err)
		}
		if got, _ := json.Marshal(body); string(got) != want {
			t.Errorf("protect %q: %s, want %s", protect, got, want)
		}
	}
	body, err := Content{Files: []File{{Path: "a.txt"}, {Path: "b.png", Content: "AA==", Encoding: "base64", ContentType: "image/png"}}}.body(nil)
	want := `{"files":[{"content":"","path":"a.txt"},{"content":"AA==","contentType":"image/png","encoding":"base64","path":"b.png"}]}`
	if got, _ := json.Marshal(body); err != nil || string(got) != want {
		t.Errorf("files: %s %v, want %s", got, err, want)
	}
	yes := "yes"
	if _, err := (Content{HTML: &html, Protect: &yes}).body(nil); err == nil || !strings.Contains(err.Error(), `not "yes"`) {
		t.Errorf("protect yes: %v", err)
	}
}
