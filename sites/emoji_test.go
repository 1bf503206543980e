package sites

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// emojiCases are strings IsEmoji must accept (one emoji each) and refuse.
var emojiCases = []struct {
	s    string
	want bool
}{
	{"🚀", true},
	{"💧", true},
	{"🫠", true},          // Unicode 14
	{"❤", true},          // a text-style pictograph, drawn as an emoji all the same
	{"❤️", true},         // with VS16
	{"©️", true},         // ©, an emoji character with VS16
	{"👍🏽", true},         // skin tone
	{"👩‍💻", true},        // ZWJ sequence
	{"👨‍👩‍👧‍👦", true},    // family
	{"🧑🏻‍🤝‍🧑🏼", true},    // tones inside a ZWJ sequence
	{"👩🏻‍❤️‍💋‍👨🏼", true}, // the longest kind
	{"🏳️‍🌈", true},       // VS16 then ZWJ
	{"🏴‍☠️", true},
	{"🇫🇷", true}, // flag
	{"🇺🇳", true},
	{"1️⃣", true}, // keycap with VS16
	{"#⃣", true},  // keycap without
	{"*️⃣", true},
	{"🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", true}, // Scotland: a tag sequence

	{"", false},
	{"not-an-emoji", false},
	{"a", false},
	{"é", false},
	{"中", false},
	{"1", false}, // a digit is an emoji only as a keycap
	{"#", false},
	{"1\u20e3\u20e3", false},
	{"🚀🚀", false}, // two emoji
	{"🚀a", false},
	{"a🚀", false},
	{" 🚀", false},
	{"🚀 ", false},
	{"<🚀>", false},
	{"🇫", false}, // half a flag
	{"🇫🇷🇫", false},
	{"🇫🇷🇩🇪", false}, // two flags
	{"🏽", false},    // a lone skin tone
	{"🏽🚀", false},
	{"\u200d", false},  // a lone joiner
	{"🚀\u200d", false}, // a dangling joiner
	{"\u200d🚀", false},
	{"🚀\u200d\u200d🚀", false},
	{"🇫🇷\u200d🚀", false},  // a joiner after a flag makes two clusters
	{"1️⃣\u200d🔥", false}, // after a keycap too
	{"\ufe0f", false},     // a lone selector
	{"🚀\ufe0f\ufe0f", false},
	{"🚀\ufe0e", false},               // VS15 asks for text, not an emoji
	{"🏴\U000E0067\U000E0062", false}, // tags without CANCEL TAG
	{"\U000E007F", false},
	{"🚀\U000E007F", false},
	{"\xff", false}, // invalid UTF-8
	{"🚀\xff", false},
	{"\xf0\x9f\x9a", false}, // a cut rocket
	{"\u202e🚀", false},
	{"🚀\x00", false},
}

func TestIsEmoji(t *testing.T) {
	for _, c := range emojiCases {
		if got := IsEmoji(c.s); got != c.want {
			t.Errorf("IsEmoji(%+q) = %v, want %v", c.s, got, c.want)
		}
		err := CheckFavicon(c.s)
		if ok := c.s == "" || c.want; (err == nil) != ok {
			t.Errorf("CheckFavicon(%+q) = %v", c.s, err)
		}
	}
}

// TestExtendedPictographicTable: the ranges are in order, apart, and
// leave out what only makes sense inside a sequence.
func TestExtendedPictographicTable(t *testing.T) {
	for i, r := range extendedPictographic {
		if r[0] > r[1] || i > 0 && r[0] <= extendedPictographic[i-1][1]+1 {
			t.Fatalf("range %d (%X-%X) out of order or touching the one before", i, r[0], r[1])
		}
	}
	for _, r := range []rune{'#', '*', '0', '9', 'a', zwj, vs16, 0xFE0E, keycapMark, riFirst, riLast, modFirst, modLast, tagFirst, tagCancel} {
		if isExtendedPictographic(r) {
			t.Errorf("%U is in the table", r)
		}
	}
	for _, r := range []rune{0xA9, 0x2764, 0x1F004, 0x1F300, 0x1F680, 0x1FAF8, 0x1FFFD} {
		if !isExtendedPictographic(r) {
			t.Errorf("%U is not in the table", r)
		}
	}
}

// FuzzIsEmoji: IsEmoji never panics, and what it accepts is valid UTF-8
// of emoji code points only (no letters, spaces, markup or controls: safe
// in an SVG and an attribute), fits the favicon field's length, and is one
// emoji: twice in a row is two.
func FuzzIsEmoji(f *testing.F) {
	for _, c := range emojiCases {
		f.Add(c.s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !IsEmoji(s) {
			return
		}
		if !utf8.ValidString(s) {
			t.Fatalf("accepted invalid UTF-8 %+q", s)
		}
		for i, r := range s {
			keycapBase := i == 0 && strings.ContainsRune("0123456789#*", r)
			if r < 0x80 && !keycapBase || r >= 0x80 && r < 0xA9 || r == 0xFE0E || r >= 0x202A && r <= 0x202E {
				t.Fatalf("accepted %+q with %U", s, r)
			}
		}
		if IsEmoji(s + s) {
			t.Fatalf("accepted %+q twice in a row as one emoji", s)
		}
		if CheckFavicon(s) != nil {
			t.Fatalf("CheckFavicon refuses %+q", s)
		}
	})
}
