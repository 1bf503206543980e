package sites

import (
	"fmt"
	"strconv"
	"strings"
)

// FormatBytes writes a byte count the way people read limits: 50 MiB,
// 64 KiB, 1000 bytes.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ParseBytes reads a size with an optional unit (B, KB, KiB, MB, MiB,
// GB, GiB, and K, M, G for the binary ones; case-insensitive), as the
// server's size flags take it: 50MiB, 10MB, 512KiB or plain bytes. It
// refuses a size that is not positive.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	units := []struct {
		suffix string
		mult   int64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
		{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1},
	}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q (use e.g. 50MiB)", s)
	}
	return n * mult, nil
}

// ByteSize is a byte count that a command-line flag reads with ParseBytes
// (50MiB, 10MB, 512KiB or plain bytes) and shows with FormatBytes: a
// flag.Value, and pflag's (Type).
type ByteSize int64

// String is the size as FormatBytes writes it.
func (b *ByteSize) String() string { return FormatBytes(int64(*b)) }

// Type names the flag's kind in the help.
func (b *ByteSize) Type() string { return "size" }

// Set reads s with ParseBytes.
func (b *ByteSize) Set(s string) error {
	n, err := ParseBytes(s)
	if err != nil {
		return err
	}
	*b = ByteSize(n)
	return nil
}
