package forms_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sitedrop/sites/forms"
	"sitedrop/sites/intake"
)

// TestParseSubmission: each kind of body gives its fields in the order
// they came, the control fields apart; malformed bodies are intake's
// refusals with the contract's messages.
func TestParseSubmission(t *testing.T) {
	const mp = "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"_hp\"\r\n\r\n bot \r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n2\r\n--b--\r\n"
	tests := []struct {
		name, ctype, body string
		data              map[string]any
		order             []string
		redirect, hp      string
		refusal           string // the *intake.InvalidError's message
	}{
		{name: "form", ctype: "application/x-www-form-urlencoded", body: "b=1&a=2&a=3&_redirect=+/x+",
			data: map[string]any{"b": "1", "a": []any{"2", "3"}}, order: []string{"b", "a", "a", "_redirect"}, redirect: "/x"},
		{name: "multipart", ctype: "multipart/form-data; boundary=b", body: mp,
			data: map[string]any{"a": []any{"1", "2"}}, order: []string{"a", "_hp", "a"}, hp: "bot"},
		{name: "json", ctype: "text/plain", body: `{"z":1,"y":"x"}`,
			data: map[string]any{"z": "1", "y": "x"}, order: []string{"z", "y"}},
		{name: "bad form", ctype: "application/x-www-form-urlencoded", body: "a=%zz", refusal: "Malformed form body"},
		{name: "file", ctype: "multipart/form-data; boundary=b",
			body:    "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\n1\r\n--b--\r\n",
			refusal: "File uploads are not accepted: send form fields only"},
		{name: "null", ctype: "application/json", body: "null", refusal: "Request body must be a JSON object"},
		{name: "trailing", ctype: "application/json", body: "{} {}", refusal: "Malformed JSON: unexpected data after the JSON object"},
		{name: "too many", ctype: "application/json", body: "{" + manyFields(101) + "}", refusal: "Too many fields: at most 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := forms.ParseSubmission(strings.NewReader(tt.body), tt.ctype)
			if tt.refusal != "" {
				var iv *intake.InvalidError
				if !errors.As(err, &iv) || iv.Msg != tt.refusal {
					t.Fatalf("err = %v, want the refusal %q", err, tt.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Data) != len(tt.data) {
				t.Fatalf("data = %v, want %v", p.Data, tt.data)
			}
			for k, v := range tt.data {
				if got := forms.DisplayValue(p.Data[k]); got != forms.DisplayValue(v) {
					t.Fatalf("data[%q] = %s, want %s", k, got, forms.DisplayValue(v))
				}
			}
			if !slices.Equal(p.Order, tt.order) || p.Redirect != tt.redirect || p.Honeypot != tt.hp {
				t.Fatalf("order %q redirect %q honeypot %q, want %q %q %q", p.Order, p.Redirect, p.Honeypot, tt.order, tt.redirect, tt.hp)
			}
		})
	}
}

// manyFields is n JSON members "f0":0, "f1":1, ...
func manyFields(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"f` + strconv.Itoa(i) + `":0`)
	}
	return b.String()
}

// TestSameSiteRedirect: a redirect goes to a page of the site only,
// relative ones resolved against it, without credentials.
func TestSameSiteRedirect(t *testing.T) {
	const site = "https://blog.sites.test"
	for _, tt := range []struct {
		redirect, want string
		ok             bool
	}{
		{"/thanks", site + "/thanks", true},
		{"thanks.html", site + "/thanks.html", true},
		{"https://u:p@BLOG.sites.test/ok", "https://BLOG.sites.test/ok", true},
		{"//evil.test/x", "", false},
		{"https://evil.test/", "", false},
		{"javascript:alert(1)", "", false},
		{"", "", false},
	} {
		got, ok := forms.SameSiteRedirect(site, tt.redirect)
		if got != tt.want || ok != tt.ok {
			t.Errorf("SameSiteRedirect(%q) = %q, %v; want %q, %v", tt.redirect, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzParseSubmission: ParseSubmission never panics on any body and
// media type; a refusal is intake's; a post it accepts has at most
// PostMaxFields fields and no control field left in its data.
func FuzzParseSubmission(f *testing.F) {
	for _, s := range [][2]string{
		{"application/x-www-form-urlencoded", "a=1&b=2&a=3&_hp=&_redirect=/x"},
		{"application/x-www-form-urlencoded", "a=%zz&&=&%"},
		{"multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--\r\n"},
		{"multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\n1\r\n--b--\r\n"},
		{"multipart/form-data", "--\r\n"},
		{"application/json", `{"a":[1,{"b":null}],"_redirect":"https://x.test"}`},
		{"application/json", "null"}, {"", "{} {}"}, {"text/plain; charset=\"", `{"a":`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, ctype, body string) {
		p, err := forms.ParseSubmission(strings.NewReader(body), ctype)
		if err != nil {
			if !intake.Refusal(err) {
				t.Fatalf("ParseSubmission(%q, %q): %T %v is not a refusal of intake", ctype, body, err, err)
			}
			return
		}
		if len(p.Data) > forms.PostMaxFields {
			t.Fatalf("%d fields accepted", len(p.Data))
		}
		for k := range p.Data {
			if strings.HasPrefix(k, "_") {
				t.Fatalf("control field %q left in the data", k)
			}
		}
	})
}
