package sites

import "testing"

func TestParseBytes(t *testing.T) {
	for _, s := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"50MiB", 50 << 20, true},
		{"50mb", 50_000_000, true},
		{"512KiB", 512 << 10, true},
		{"1g", 1 << 30, true},
		{"1024", 1024, true},
		{"0", 0, false},
		{"-1MiB", 0, false},
		{"lots", 0, false},
	} {
		got, err := ParseBytes(s.in)
		if (err == nil) != s.ok || got != s.want {
			t.Errorf("ParseBytes(%q) = %d, %v", s.in, got, err)
		}
	}
}
