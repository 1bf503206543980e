package pages

import "testing"

func TestRoughBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1: "1 byte", 1023: "1023 bytes", 1024: "1.0 KiB", 1536: "1.5 KiB",
		5000: "4.9 KiB", 1 << 20: "1.0 MiB", 3<<30 + 1<<29: "3.5 GiB", 1 << 62: "4.0 EiB",
	} {
		if got := roughBytes(n); got != want {
			t.Errorf("roughBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
