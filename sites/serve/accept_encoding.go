package serve

import (
	"strings"

	"sitedrop/sites"
)

// acceptedCodings reads Accept-Encoding header lines into a bit set over
// a file's representations: bit 0 is the identity, bit 1+i is
// EncodingPreference[i]. A coding is acceptable when listed with a
// q-value above zero, or covered by "*" with one and not listed with q=0;
// the identity is acceptable unless refused by "identity;q=0", or by
// "*;q=0" without being listed. It allocates nothing.
func acceptedCodings(lines []string) uint8 {
	const identity = 1
	var listed, accepted uint8
	wildcard, wildcardSeen := false, false
	for _, line := range lines {
		for line != "" {
			var item string
			item, line, _ = strings.Cut(line, ",")
			name, params, _ := strings.Cut(item, ";")
			name = strings.TrimSpace(name)
			ok := qAboveZero(params)
			if name == "*" {
				wildcard, wildcardSeen = ok, true
				continue
			}
			if strings.EqualFold(name, "identity") {
				listed |= identity
				if ok {
					accepted |= identity
				}
				continue
			}
			for i, coding := range sites.EncodingPreference {
				if strings.EqualFold(name, coding) {
					listed |= 2 << i
					if ok {
						accepted |= 2 << i
					}
				}
			}
		}
	}
	if wildcard || !wildcardSeen {
		accepted |= ^listed & identity // the identity, unless refused
	}
	if wildcard {
		accepted |= ^listed & (2<<len(sites.EncodingPreference) - 2)
	}
	return accepted
}

// qAboveZero reads the parameters of an Accept-Encoding item
// (" q=0.5") and reports whether its weight is above zero; no q means 1.
func qAboveZero(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		v = strings.TrimSpace(v)
		for _, c := range v {
			if c >= '1' && c <= '9' {
				return true // any non-zero digit: q > 0
			}
			if c != '0' && c != '.' {
				return false // malformed: not acceptable
			}
		}
		return false // "0", "0.0", "0.000"
	}
	return true
}

// etagMatches reports whether If-None-Match header lines match the strong
// ETag of hash (weak comparison, as If-None-Match asks: W/ is ignored).
func etagMatches(lines []string, hash string) bool {
	for _, line := range lines {
		for line != "" {
			var tag string
			tag, line, _ = strings.Cut(line, ",")
			tag = strings.TrimSpace(tag)
			if tag == "*" {
				return true
			}
			tag = strings.TrimPrefix(tag, "W/")
			if len(tag) == len(hash)+2 && tag[0] == '"' && tag[len(tag)-1] == '"' && tag[1:len(tag)-1] == hash {
				return true
			}
		}
	}
	return false
}
