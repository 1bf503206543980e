package serve

import (
	"strings"
	"testing"
)

// TestFingerprinted holds both sides of the rule: the names current
// generators emit, and plain or camera-style names that must stay
// revalidated (a false positive pins stale content for a year).
func TestFingerprinted(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
		why  string
	}{
		// Names generators emit.
		{"assets/app.DZopBupu.js", true, "VitePress: 8 base64url letters after a dot"},
		{"assets/chunks/theme.BXXJpR9J.js", true, "VitePress chunk"},
		{"_astro/post.CP3Lnalr.css", true, "Astro"},
		{"assets/index-BT0GIVA5.css", true, "Vite: upper case and digits"},
		{"assets/vendor-B7x_k2Qa.css", true, "Rollup: base64url with an underscore"},
		{"assets/index-Bq-4xZ9a.js", true, "Rollup: base64url with a dash"},
		{"_app/immutable/chunks/index.BZhg4b_K.js", true, "SvelteKit"},
		{"_nuxt/entry.BkLmYwM5.js", true, "Nuxt"},
		{"build/entry.client-HZQ3PL4M.js", true, "Remix (esbuild): upper-case base32"},
		{"static/js/main.3f2a1b4c.chunk.js", true, "Create React App: hex before .chunk"},
		{"static/js/787.a1b2c3d4.chunk.js", true, "webpack numbered chunk"},
		{"main.4f5e2a1b3c9d8e7f.js", true, "Angular: 16 hex"},
		{"chunk-4f5e2a1b3c9d8e7f.css", true, "hex after a dash"},
		{"css/main.min." + strings.Repeat("a1b2c3d4", 8) + ".css", true, "Hugo: 64 hex"},
		{"_next/static/chunks/main-0a1b2c3d4e5f6a7b.js", true, "Next.js: 16 hex"},
		{"app-a1b2c3d4e5f6a7b8c9d0.js", true, "Gatsby: 20 hex"},
		{"img/logo_3f2a1b4c.png", true, "hex after an underscore"},
		{"fonts/inter.5d2a9f1c.woff2", true, "hashed font"},
		{"ASSETS/INDEX-BT0GIVA5.CSS", true, "upper-case extension"},

		// Plain words and common names.
		{"app-settings.js", false, "a lower-case word"},
		{"data-Overview.css", false, "a capitalised word"},
		{"icon-LinkedIn.svg", false, "a CamelCase word after a dash"},
		{"assets/index-DiwrgTda.js", false, "letters only after a dash: indistinguishable from a CamelCase word"},
		{"jquery.DataTables.js", false, "a CamelCase word after a dot"},
		{"jquery-3.6.0.min.js", false, "a version"},
		{"lib-v2alpha1.js", false, "a version without capitals"},
		{"IMG_20240101.jpg", false, "all digits"},
		{"photo_DSC01234.jpg", false, "letters then digits: a camera name"},
		{"photo-iPhone12.jpg", false, "a word then a number"},
		{"photo-MyPhoto1.jpg", false, "CamelCase words then a digit"},
		{"video-4KVideoHD.mp4", false, "a number then words"},
		{"sprite-ABCDEF12.png", false, "capitals then digits"},
		{"video-1920x1080.mp4", false, "a resolution"},
		{"report-2024-01-01.pdf", false, "a date"},
		{"font-awesome.css", false, "short words"},
		{"fonts/inter-var-latin-abcdefgh.woff", false, "letters only"},
		{"fonts/noto-sans-jp-v52-latin-regular.woff2", false, "a webfont helper name"},
		{"favicon.ico", false, "no hash"},
		{"index.html", false, "a page"},
		{"robots.txt", false, "no hash"},
		{"12345678.js", false, "no separator"},
		{"a1b2c3d4e5f6a7b8.css", false, "a bare hash: not set off"},
		{"deadbeef-cafebabe.js", false, "hex letters only"},
		{"2024abcd-x.js", false, "not before the extension"},
		{"build-20240101abcd.js", false, "digits then letters: a date and a tag"},
		{"assets/index-DiwrgTd.js", false, "7 characters"},
		{"assets/index-BT0GIVA5", false, "no extension"},
		{".a1b2c3d4", false, "a dot file"},
		{"-a1b2c3d4.js", false, "nothing before the separator"},
		{"", false, "empty"},

		// Never for HTML pages, whatever their name.
		{"about.3f2a1b4c.html", false, "a page with a hash"},
		{"post-BT0GIVA5.html", false, "a page with a base64 hash"},
		{"docs/page.a1b2c3d4.htm", false, ".htm page"},
		{"INDEX.DZopBupu.HTML", false, "upper-case .HTML page"},
	} {
		if got := Fingerprinted(c.name); got != c.want {
			t.Errorf("Fingerprinted(%q) = %v, want %v (%s)", c.name, got, c.want, c.why)
		}
	}
}

// FuzzFingerprinted: any name is judged without panic; pages never are
// fingerprinted; only the base name counts; a fingerprinted name has an
// extension.
func FuzzFingerprinted(f *testing.F) {
	for _, s := range []string{"assets/app.DZopBupu.js", "index-BT0GIVA5.css", "main.3f2a1b4c.chunk.js",
		"vendor-B7x_k2Qa.css", "IMG_20240101.jpg", "a.b-c_d.e", "about.3f2a1b4c.html", "", ".", "-", "x.-_.y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := Fingerprinted(name)
		if got != Fingerprinted("dir/"+name) {
			t.Fatalf("%q: a directory changed the answer", name)
		}
		if got && isPageName(name) {
			t.Fatalf("%q: a page is fingerprinted", name)
		}
		base := name[strings.LastIndexByte(name, '/')+1:]
		if got && strings.LastIndexByte(base, '.') <= 0 {
			t.Fatalf("%q: fingerprinted without an extension", name)
		}
	})
}
