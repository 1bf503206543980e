package ui

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The stylesheet's colours, checked where the browser tests' axe-core
// cannot look: hover and disabled states, and every text colour on every
// background it can sit on, in light and dark mode. WCAG 2 AA asks 4.5:1
// for text.

const minContrast = 4.5

// minGraphicContrast is WCAG 2.1's 3:1 for parts of controls that are no
// text (a progress bar's value on its track).
const minGraphicContrast = 3.0

// graphicRules are the rules whose colour paints no text.
var graphicRules = map[string]bool{".meter": true, ".meter.full": true}

var (
	cssComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	cssVar     = regexp.MustCompile(`--([\w-]+)\s*:\s*([^;}]+)`)
	cssRule    = regexp.MustCompile(`([^{}]+)\{([^{}]*)\}`)
	cssVarRef  = regexp.MustCompile(`^var\(--([\w-]+)\)$`)
	hexColour  = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
)

// stylesheet is sitedrop.css split into its colour variables (light, and
// dark with the light ones it does not override) and its rules.
type stylesheet struct {
	light, dark map[string]string
	rules       [][2]string // selector, declarations
}

func readStylesheet(t *testing.T) stylesheet {
	t.Helper()
	b, err := Assets.ReadFile("assets/sitedrop.css")
	if err != nil {
		t.Fatal(err)
	}
	css := cssComment.ReplaceAllString(string(b), "")
	const darkMedia = "@media (prefers-color-scheme: dark)"
	i := strings.Index(css, darkMedia)
	if i < 0 {
		t.Fatal("sitedrop.css has no dark mode (" + darkMedia + ")")
	}
	vars := func(s string) map[string]string {
		m := map[string]string{}
		for _, v := range cssVar.FindAllStringSubmatch(s, -1) {
			m[v[1]] = strings.TrimSpace(v[2])
		}
		return m
	}
	s := stylesheet{light: vars(css[:i]), dark: map[string]string{}}
	darkBlock := css[i:]
	darkBlock = darkBlock[:strings.Index(darkBlock, "}")+1]
	for k, v := range s.light {
		s.dark[k] = v
	}
	for k, v := range vars(darkBlock) {
		s.dark[k] = v
	}
	rest := strings.Replace(css, darkBlock, "", 1)
	for _, r := range cssRule.FindAllStringSubmatch(rest, -1) {
		sel := strings.TrimSpace(r[1])
		if j := strings.LastIndex(sel, "{"); j >= 0 { // inside an @media block
			sel = strings.TrimSpace(sel[j+1:])
		}
		if j := strings.LastIndex(sel, ")"); strings.HasPrefix(sel, "@media") && j >= 0 {
			sel = strings.TrimSpace(sel[j+1:])
		}
		s.rules = append(s.rules, [2]string{sel, r[2]})
	}
	if len(s.light) < 10 || len(s.rules) < 50 {
		t.Fatalf("parsed %d variables and %d rules from sitedrop.css: the parser no longer fits it", len(s.light), len(s.rules))
	}
	return s
}

// resolve is value as a #rrggbb colour in vars, or "" when it is not one
// (transparent, inherit, a gradient).
func resolve(vars map[string]string, value string) string {
	value = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "!important"))
	for range 5 {
		m := cssVarRef.FindStringSubmatch(value)
		if m == nil {
			break
		}
		value = vars[m[1]]
	}
	if hexColour.MatchString(value) {
		return strings.ToLower(value)
	}
	return ""
}

// luminance is the relative luminance of a #rrggbb colour (WCAG 2).
func luminance(hex string) float64 {
	var l float64
	for i, w := range []float64{0.2126, 0.7152, 0.0722} {
		n, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		c := float64(n) / 255
		if c <= 0.03928 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		l += w * c
	}
	return l
}

// contrast is the WCAG 2 contrast ratio of two #rrggbb colours.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

func TestContrastFormula(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want float64
	}{{"#000000", "#ffffff", 21}, {"#ffffff", "#ffffff", 1}, {"#777777", "#ffffff", 4.48}, {"#14532d", "#2563eb", 1.76}} {
		if got := contrast(c.a, c.b); math.Abs(got-c.want) > 0.01 {
			t.Errorf("contrast(%s, %s) = %.2f, want %.2f", c.a, c.b, got, c.want)
		}
	}
}

// TestStylesheetRulesContrast: every rule that sets both a text colour and
// a background (buttons and their :hover and :disabled states, badges,
// notices, alerts) reads at 4.5:1 or more in light and dark mode, and no
// control is faded with opacity (which lowers its text's contrast by an
// amount no colour pair shows).
func TestStylesheetRulesContrast(t *testing.T) {
	css := readStylesheet(t)
	checked := 0
	for _, r := range css.rules {
		sel, decls := r[0], map[string]string{}
		for _, d := range strings.Split(r[1], ";") {
			if k, v, ok := strings.Cut(d, ":"); ok {
				decls[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		if op, ok := decls["opacity"]; ok && (strings.Contains(sel, "button") || strings.Contains(sel, ":disabled") || strings.Contains(sel, "input")) {
			if f, err := strconv.ParseFloat(op, 64); err != nil || f < 1 {
				t.Errorf("%s { opacity: %s }: a faded control's text falls below %.1f:1; give the state its own colours", sel, op, minContrast)
			}
		}
		bg := decls["background-color"]
		if bg == "" {
			bg = decls["background"]
		}
		if decls["color"] == "" || bg == "" {
			continue
		}
		for mode, vars := range map[string]map[string]string{"light": css.light, "dark": css.dark} {
			fg, back := resolve(vars, decls["color"]), resolve(vars, bg)
			if fg == "" || back == "" {
				continue
			}
			checked++
			want := minContrast
			if graphicRules[sel] {
				want = minGraphicContrast
			}
			if c := contrast(fg, back); c < want {
				t.Errorf("%s (%s mode): %s on %s is %.2f:1, want %.1f:1 or more", sel, mode, fg, back, c, want)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d colour pairs checked: the parser no longer fits sitedrop.css", checked)
	}
}

// TestStylesheetTextOnBackgrounds: every text colour (body, muted, links
// and their hover, danger, ok) reads on every background it can sit on
// (page, panel, note, code and drop target), and each box's own colours
// with the links and secondary buttons inside it (alerts, success
// notices), in light and dark mode.
func TestStylesheetTextOnBackgrounds(t *testing.T) {
	css := readStylesheet(t)
	var pairs [][2]string
	for _, fg := range []string{"fg", "muted", "accent", "accent-hover", "danger", "ok"} {
		for _, bg := range []string{"bg", "surface", "note-bg", "code-bg"} {
			pairs = append(pairs, [2]string{fg, bg})
		}
	}
	pairs = append(pairs,
		[2]string{"danger", "danger-bg"}, [2]string{"accent", "danger-bg"}, [2]string{"accent-hover", "danger-bg"},
		[2]string{"ok", "ok-bg"}, [2]string{"fg", "ok-bg"}, [2]string{"accent", "ok-bg"}, [2]string{"accent-hover", "ok-bg"},
		[2]string{"accent-fg", "accent"}, [2]string{"accent-fg", "accent-hover"},
	)
	for mode, vars := range map[string]map[string]string{"light": css.light, "dark": css.dark} {
		for _, p := range pairs {
			fg, bg := resolve(vars, "var(--"+p[0]+")"), resolve(vars, "var(--"+p[1]+")")
			if fg == "" || bg == "" {
				t.Errorf("%s mode: --%s or --%s is not a #rrggbb colour", mode, p[0], p[1])
				continue
			}
			if c := contrast(fg, bg); c < minContrast {
				t.Errorf("%s mode: --%s (%s) on --%s (%s) is %.2f:1, want %.1f:1 or more", mode, p[0], fg, p[1], bg, c, minContrast)
			}
		}
	}
}
