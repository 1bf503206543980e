package intake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"sitedrop/sites/wire"
)

// deployBodies are deploy bodies of the usual form and of others, for
// the fast decoder's tests and fuzzing.
var deployBodies = []string{
	`{"files":[{"content":"<p>hi</p>","path":"index.html"}]}`,
	`{"files":[{"content":"a","contentType":"text/css","encoding":"","path":"a.css"},{"path":"b.js","sha256":"00"}],"slug":"my-site","title":"T","is_spa":true,"draft":false}`,
	` { "html" : "<!doctype html>" , "message":"m", "alias":"beta", "description":"d", "favicon":"x" } ` + "\n",
	`{"files":[]}`,
	`{}`,
	`{"files":[{}]}`,
	`{"html":"line\nbreak \u003cp\u003e \"q\" \\ \/ \ud83d\ude00"}`,
	`{"html":"caf` + "\u00e9" + ` \u00e9"}`,
	"{\"html\":\"bad \xff utf8\"}",
	"{\"html\":\"ctl \x01\"}",
	`{"html":"\ud800 lone"}`,
	`{"Files":[{"content":"x","path":"a"}]}`,
	`{"files":[{"Content":"x","PATH":"a"}]}`,
	`{"title":"a","title":"b"}`,
	`{"files":[{"path":"a","path":"b"}]}`,
	`{"title":null}`,
	`{"files":null}`,
	`{"files":[{"content":null,"path":"a"}]}`,
	`{"password":"secret","protect":"rotate","html":"x"}`,
	`{"is_spa":"yes"}`,
	`{"is_spa":truex}`,
	`{"title":1}`,
	`{"unknown":1,"html":"x"}`,
	`{"html":"x"} {"html":"y"}`,
	`{"html":"x"}garbage`,
	`{"html":"x",}`,
	`{"files":[{"path":"a"},]}`,
	`{"html":"x"`,
	`[1,2]`,
	`"str"`,
	``,
	"\ufeff{}",
}

// TestDecodeDeployFastAgreesWithEncodingJSON: what the fast decoder takes
// it decodes as json.Unmarshal does; the forms it leaves (errors, null,
// odd keys, duplicates, password and protect) go to encoding/json.
func TestDecodeDeployFastAgreesWithEncodingJSON(t *testing.T) {
	took := 0
	for _, b := range deployBodies {
		if checkDeployFast(t, []byte(b)) {
			took++
		}
	}
	if took < 8 {
		t.Errorf("the fast decoder took %d of the bodies, want the 8 usual ones at least", took)
	}
}

// TestDecodeDeployJSONAnswersAsDecodeJSON: a body the fast decoder does
// not take, or whose read fails, gets DecodeJSON's answer, the same
// error included.
func TestDecodeDeployJSONAnswersAsDecodeJSON(t *testing.T) {
	readErr := errors.New("connection reset")
	for _, b := range deployBodies {
		for _, fail := range []bool{false, true} {
			src := func() *strings.Reader { return strings.NewReader(b) }
			var want, got wire.DeployRequest
			var wantErr, gotErr error
			if fail {
				wantErr = DecodeJSON(errAfter(src(), readErr), 1<<20, &want)
				gotErr = DecodeDeployJSON(errAfter(src(), readErr), 1<<20, &got)
			} else {
				wantErr = DecodeJSON(src(), 1<<20, &want)
				gotErr = DecodeDeployJSON(src(), 1<<20, &got)
			}
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Errorf("%q (read fails %v): error %v, DecodeJSON's %v", b, fail, gotErr, wantErr)
				continue
			}
			if wantErr == nil && !reflect.DeepEqual(want, got) {
				t.Errorf("%q: decoded %+v, DecodeJSON %+v", b, got, want)
			}
		}
	}
}

// errAfter reads r, then fails with err.
func errAfter(r *strings.Reader, err error) *multiErr { return &multiErr{r, err} }

type multiErr struct {
	r   *strings.Reader
	err error
}

func (m *multiErr) Read(p []byte) (int, error) {
	if m.r.Len() == 0 {
		return 0, m.err
	}
	return m.r.Read(p)
}

// FuzzDecodeDeployFast: on any body the fast decoder takes, json.Unmarshal
// succeeds with the same value.
func FuzzDecodeDeployFast(f *testing.F) {
	for _, b := range deployBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDeployFast(t, b)
	})
}

// checkDeployFast decodes b with the fast decoder and, when it takes b,
// with json.Unmarshal, which must agree; it reports whether b was taken.
func checkDeployFast(t *testing.T, b []byte) bool {
	t.Helper()
	var fast wire.DeployRequest
	if !decodeDeployFast(b, &fast) {
		if !reflect.DeepEqual(fast, wire.DeployRequest{}) {
			t.Errorf("%q: not taken, yet the destination changed", b)
		}
		return false
	}
	var want wire.DeployRequest
	if err := json.Unmarshal(b, &want); err != nil {
		t.Errorf("%q: taken by the fast decoder, refused by encoding/json: %v", b, err)
		return true
	}
	if !reflect.DeepEqual(fast, want) {
		t.Errorf("%q: fast %s, encoding/json %s", b, show(fast), show(want))
	}
	return true
}

func show(r wire.DeployRequest) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// deployBody1000 is a deploy of 1000 files of 2 KB, as bench/deploy.sh
// sends it.
func deployBody1000() []byte {
	var files []wire.FileEntry
	for i := range 1000 {
		c := fmt.Sprintf("file %d ", i) + strings.Repeat("static page layout theme ", 82)
		files = append(files, wire.FileEntry{Path: fmt.Sprintf("dir%d/file%04d.html", i%10, i), Content: &c})
	}
	b, _ := json.Marshal(wire.DeployRequest{Files: &files})
	return b
}

func BenchmarkDecodeDeploy1000(b *testing.B) {
	body := deployBody1000()
	for _, tt := range []struct {
		name   string
		decode func(r io.Reader, dst *wire.DeployRequest) error
	}{
		{"encoding-json", func(r io.Reader, dst *wire.DeployRequest) error { return DecodeJSON(r, 1<<30, dst) }},
		{"fast", func(r io.Reader, dst *wire.DeployRequest) error { return DecodeDeployJSON(r, 1<<30, dst) }},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for range b.N {
				var req wire.DeployRequest
				if err := tt.decode(bytes.NewReader(body), &req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
