package sites

import (
	"context"
	"strings"
	"testing"
)

func BenchmarkZZCompressPage(b *testing.B) {
	page := []byte("<!doctype html><html><head><title>hello</title></head><body>" + strings.Repeat("<p>Hello from a deploy, line of text.</p>\n", 22) + "</body></html>")
	b.Logf("%d bytes", len(page))
	for b.Loop() {
		v, err := compressVariants(context.Background(), page, nil)
		if err != nil || len(v) != 3 {
			b.Fatal(err, len(v))
		}
	}
}
