package sites

import (
	"sort"
	"unicode/utf8"
)

// The favicon rule: a site's icon (the deployments' and versions' favicon
// field, drawn as an SVG data URL by InjectHead) is empty (no icon) or
// exactly one emoji. Every writer meets it: the API and the settings form
// through intake.CheckMetadata, the admin dashboard through the record
// rule (CheckFavicon, bound where the records are validated).

// MsgFavicon is the refusal of a favicon that is not one emoji.
const MsgFavicon = "favicon must be one emoji, such as 🚀 (or empty for none)"

// CheckFavicon refuses, with a *FieldError naming the favicon field, a
// value that is neither empty nor one emoji (see IsEmoji).
func CheckFavicon(v string) error {
	if v == "" || IsEmoji(v) {
		return nil
	}
	return &FieldError{Field: FieldFavicon, Msg: MsgFavicon}
}

// Code points of emoji sequences (Unicode Technical Standard #51).
const (
	zwj        = 0x200D  // ZERO WIDTH JOINER: joins pictographs into one emoji
	vs16       = 0xFE0F  // VARIATION SELECTOR-16: emoji presentation
	keycapMark = 0x20E3  // COMBINING ENCLOSING KEYCAP
	riFirst    = 0x1F1E6 // REGIONAL INDICATOR SYMBOL LETTER A: two make a flag
	riLast     = 0x1F1FF // ... LETTER Z
	modFirst   = 0x1F3FB // EMOJI MODIFIER FITZPATRICK TYPE-1-2: skin tones
	modLast    = 0x1F3FF // ... TYPE-6
	tagFirst   = 0xE0020 // TAG SPACE: tags spell a subdivision flag's region
	tagLast    = 0xE007E // TAG TILDE
	tagCancel  = 0xE007F // CANCEL TAG: ends a tag sequence
)

// IsEmoji reports whether s is exactly one emoji, one extended grapheme
// cluster made of emoji, as UTS #51 describes them:
//
//   - a flag: two regional indicators (🇫🇷);
//   - a keycap: 0-9, # or *, an optional VS16, and U+20E3 (1️⃣);
//   - or pictographs joined by ZWJ (👩‍💻, 🏳️‍🌈), each an
//     Extended_Pictographic code point with an optional VS16, an optional
//     skin tone modifier (👍🏽) and an optional tag sequence (🏴 and the
//     tags of a subdivision flag, ended by CANCEL TAG).
//
// A text-style pictograph without VS16 (❤) counts: it is an emoji
// character, which a browser draws as one. Anything else (letters, two
// emoji side by side, a lone modifier, ZWJ or selector, VS15's text
// presentation, invalid UTF-8) is not one emoji. It takes time linear in
// len(s).
func IsEmoji(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError:
		return false
	case isRegionalIndicator(r):
		r2, n2 := utf8.DecodeRuneInString(s[n:])
		return isRegionalIndicator(r2) && len(s) == n+n2
	case r >= '0' && r <= '9' || r == '#' || r == '*':
		rest := s[n:]
		if r2, n2 := utf8.DecodeRuneInString(rest); r2 == vs16 {
			rest = rest[n2:]
		}
		r2, n2 := utf8.DecodeRuneInString(rest)
		return r2 == keycapMark && len(rest) == n2
	}
	for {
		n, ok := pictographElement(s)
		if !ok {
			return false
		}
		s = s[n:]
		if s == "" {
			return true
		}
		r, n := utf8.DecodeRuneInString(s)
		if r != zwj {
			return false
		}
		s = s[n:]
	}
}

// pictographElement is the length of the pictograph that starts s (see
// IsEmoji), with its VS16, modifier and tags; ok is false when s does not
// start with one.
func pictographElement(s string) (length int, ok bool) {
	r, n := utf8.DecodeRuneInString(s)
	if !isExtendedPictographic(r) {
		return 0, false
	}
	i := n
	next := func() rune {
		r, n = utf8.DecodeRuneInString(s[i:])
		return r
	}
	if next() == vs16 {
		i += n
	}
	if r := next(); r >= modFirst && r <= modLast {
		i += n
	}
	if r := next(); r >= tagFirst && r <= tagLast {
		for r >= tagFirst && r <= tagLast {
			i += n
			r = next()
		}
		if r != tagCancel {
			return 0, false
		}
		i += n
	}
	return i, true
}

// isRegionalIndicator reports whether r is one of the 26 regional
// indicator letters of flags.
func isRegionalIndicator(r rune) bool { return r >= riFirst && r <= riLast }

// isExtendedPictographic reports whether r has Unicode's
// Extended_Pictographic property (emoji-data.txt): the emoji pictographs,
// and the unassigned code points kept for future ones.
func isExtendedPictographic(r rune) bool {
	i := sort.Search(len(extendedPictographic), func(i int) bool { return extendedPictographic[i][1] >= r })
	return i < len(extendedPictographic) && extendedPictographic[i][0] <= r
}

// extendedPictographic are the ranges (first, last) of
// Extended_Pictographic code points, in order, from Unicode 17.0's
// emoji-data.txt.
var extendedPictographic = [...][2]rune{
	{0xA9, 0xA9}, {0xAE, 0xAE}, {0x203C, 0x203C}, {0x2049, 0x2049}, {0x2122, 0x2122},
	{0x2139, 0x2139}, {0x2194, 0x2199}, {0x21A9, 0x21AA}, {0x231A, 0x231B}, {0x2328, 0x2328},
	{0x23CF, 0x23CF}, {0x23E9, 0x23F3}, {0x23F8, 0x23FA}, {0x24C2, 0x24C2}, {0x25AA, 0x25AB},
	{0x25B6, 0x25B6}, {0x25C0, 0x25C0}, {0x25FB, 0x25FE}, {0x2600, 0x2604}, {0x260E, 0x260E},
	{0x2611, 0x2611}, {0x2614, 0x2615}, {0x2618, 0x2618}, {0x261D, 0x261D}, {0x2620, 0x2620},
	{0x2622, 0x2623}, {0x2626, 0x2626}, {0x262A, 0x262A}, {0x262E, 0x262F}, {0x2638, 0x263A},
	{0x2640, 0x2640}, {0x2642, 0x2642}, {0x2648, 0x2653}, {0x265F, 0x2660}, {0x2663, 0x2663},
	{0x2665, 0x2666}, {0x2668, 0x2668}, {0x267B, 0x267B}, {0x267E, 0x267F}, {0x2692, 0x2697},
	{0x2699, 0x2699}, {0x269B, 0x269C}, {0x26A0, 0x26A1}, {0x26A7, 0x26A7}, {0x26AA, 0x26AB},
	{0x26B0, 0x26B1}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5}, {0x26C8, 0x26C8}, {0x26CE, 0x26CF},
	{0x26D1, 0x26D1}, {0x26D3, 0x26D4}, {0x26E9, 0x26EA}, {0x26F0, 0x26F5}, {0x26F7, 0x26FA},
	{0x26FD, 0x26FD}, {0x2702, 0x2702}, {0x2705, 0x2705}, {0x2708, 0x270D}, {0x270F, 0x270F},
	{0x2712, 0x2712}, {0x2714, 0x2714}, {0x2716, 0x2716}, {0x271D, 0x271D}, {0x2721, 0x2721},
	{0x2728, 0x2728}, {0x2733, 0x2734}, {0x2744, 0x2744}, {0x2747, 0x2747}, {0x274C, 0x274C},
	{0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2763, 0x2764}, {0x2795, 0x2797},
	{0x27A1, 0x27A1}, {0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2934, 0x2935}, {0x2B05, 0x2B07},
	{0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55}, {0x3030, 0x3030}, {0x303D, 0x303D},
	{0x3297, 0x3297}, {0x3299, 0x3299}, {0x1F004, 0x1F004}, {0x1F02C, 0x1F02F}, {0x1F094, 0x1F09F},
	{0x1F0AF, 0x1F0B0}, {0x1F0C0, 0x1F0C0}, {0x1F0CF, 0x1F0D0}, {0x1F0F6, 0x1F0FF},
	{0x1F170, 0x1F171}, {0x1F17E, 0x1F17F}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
	{0x1F1AE, 0x1F1E5}, {0x1F201, 0x1F20F}, {0x1F21A, 0x1F21A}, {0x1F22F, 0x1F22F},
	{0x1F232, 0x1F23A}, {0x1F23C, 0x1F23F}, {0x1F249, 0x1F25F}, {0x1F266, 0x1F321},
	{0x1F324, 0x1F393}, {0x1F396, 0x1F397}, {0x1F399, 0x1F39B}, {0x1F39E, 0x1F3F0},
	{0x1F3F3, 0x1F3F5}, {0x1F3F7, 0x1F3FA}, {0x1F400, 0x1F4FD}, {0x1F4FF, 0x1F53D},
	{0x1F549, 0x1F54E}, {0x1F550, 0x1F567}, {0x1F56F, 0x1F570}, {0x1F573, 0x1F57A},
	{0x1F587, 0x1F587}, {0x1F58A, 0x1F58D}, {0x1F590, 0x1F590}, {0x1F595, 0x1F596},
	{0x1F5A4, 0x1F5A5}, {0x1F5A8, 0x1F5A8}, {0x1F5B1, 0x1F5B2}, {0x1F5BC, 0x1F5BC},
	{0x1F5C2, 0x1F5C4}, {0x1F5D1, 0x1F5D3}, {0x1F5DC, 0x1F5DE}, {0x1F5E1, 0x1F5E1},
	{0x1F5E3, 0x1F5E3}, {0x1F5E8, 0x1F5E8}, {0x1F5EF, 0x1F5EF}, {0x1F5F3, 0x1F5F3},
	{0x1F5FA, 0x1F64F}, {0x1F680, 0x1F6C5}, {0x1F6CB, 0x1F6D2}, {0x1F6D5, 0x1F6E5},
	{0x1F6E9, 0x1F6E9}, {0x1F6EB, 0x1F6F0}, {0x1F6F3, 0x1F6FF}, {0x1F7DA, 0x1F7FF},
	{0x1F80C, 0x1F80F}, {0x1F848, 0x1F84F}, {0x1F85A, 0x1F85F}, {0x1F888, 0x1F88F},
	{0x1F8AE, 0x1F8AF}, {0x1F8BC, 0x1F8BF}, {0x1F8C2, 0x1F8CF}, {0x1F8D9, 0x1F8FF},
	{0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF}, {0x1FA58, 0x1FA5F},
	{0x1FA6E, 0x1FAFF}, {0x1FC00, 0x1FFFD},
}
