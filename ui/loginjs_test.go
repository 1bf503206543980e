package ui

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLoginJS checks that the sign-in script talks to the right endpoints
// and, when node is installed, that it only follows same-origin paths.
func TestLoginJS(t *testing.T) {
	b, err := Assets.ReadFile("assets/login.js")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, want := range []string{`"/auth/otp"`, `"/auth/verify"`, `otp_id: otpId`, `window.location.assign(safeNext(`, `"data-next"`, `credentials: "same-origin"`} {
		if !strings.Contains(src, want) {
			t.Errorf("login.js lacks %s", want)
		}
	}

	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed: safeNext not exercised")
	}
	start := strings.Index(src, "function safeNext")
	end := strings.Index(src[start:], "\n  }\n")
	if start < 0 || end < 0 {
		t.Fatal("safeNext not found in login.js")
	}
	script := `global.window = {location: {href: "https://web.example/auth/login", origin: "https://web.example"}};
` + src[start:start+end+4] + `
const cases = {
  "/claim/x?token=1": "/claim/x?token=1",
  "/account": "/account",
  "/a//b": "/a//b",
  "//evil.example/x": "/account",
  "/\\evil.example": "/account",
  "/\t/evil.example": "/account",
  "https://evil.example/": "/account",
  "javascript:alert(1)": "/account",
  "": "/account",
};
let bad = 0;
for (const [in_, want] of Object.entries(cases)) {
  const got = safeNext(in_);
  if (got !== want) { console.log(JSON.stringify(in_), "->", got, "want", want); bad++; }
}
if (safeNext(null) !== "/account") { console.log("null not refused"); bad++; }
process.exit(bad ? 1 : 0);
`
	out, err := exec.Command(node, "-e", script).CombinedOutput()
	if err != nil {
		t.Errorf("safeNext: %v\n%s", err, out)
	}
}
