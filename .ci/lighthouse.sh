#!/usr/bin/env bash
# Lighthouse audit of every sitedrop page: accessibility and best practices
# must score 100 and the cumulative layout shift stay under 0.05 (mobile
# emulation, Lighthouse's default, so 390-px layouts are checked too). Run from anywhere inside a clone: bash .ci/lighthouse.sh
#
# It builds sitedrop, serves it on a loopback port from an empty data
# directory, makes what the pages show (an account, a key, a claimed and an
# anonymous site, a paused site, a submission, a webhook, a version to roll
# back to), and audits each page, signed in where the page needs it. Lighthouse comes from
# the npm registry (pinned below) into a cache directory, Chromium from the
# system (CHROME_PATH, default /usr/bin/chromium).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

LIGHTHOUSE_VERSION=12.8.2
LH_DIR=${LH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sitedrop-lighthouse}
PORT=${LH_PORT:-18790}
WEB="http://localhost:$PORT"

command -v node >/dev/null || { echo "node is needed for Lighthouse" >&2; exit 1; }
if [[ ! -x "$LH_DIR/node_modules/.bin/lighthouse" ]] ||
	[[ "$("$LH_DIR/node_modules/.bin/lighthouse" --version)" != "$LIGHTHOUSE_VERSION" ]]; then
	mkdir -p "$LH_DIR"
	(cd "$LH_DIR" && [[ -f package.json ]] || echo '{"private":true}' >"$LH_DIR/package.json")
	npm install --prefix "$LH_DIR" --no-audit --no-fund --loglevel=error "lighthouse@$LIGHTHOUSE_VERSION" >/dev/null
fi
cp .ci/lighthouse.mjs "$LH_DIR/lighthouse.mjs"

work=$(mktemp -d)
server=""
cleanup() {
	[[ -n "$server" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/sitedrop" .
sd() { "$work/sitedrop" "$@" --dir "$work/data"; }
email="a.rather.long.address.for.testing.overflow@example-company.com"
sd user create "$email" >/dev/null
key=$(sd key create "$email" --name laptop | tail -n 1)
sd key create "$email" --name "CI" >/dev/null
sd superuser upsert admin@example.com 'a-long-password' >/dev/null
"$work/sitedrop" serve --http "127.0.0.1:$PORT" --dir "$work/data" --webhooks-allow-private >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 50); do curl -fs "$WEB/api/health" >/dev/null && break; sleep 0.1; done

json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
auth=(-H "Authorization: Bearer $key")
site=$(curl -fs "$WEB/deploy" "${auth[@]}" -d '{"html":"<h1>One</h1><form method=post action=\"{{SUBMIT_URL}}\"><input name=email></form>","title":"A site with a fairly long title to see how it wraps on a phone"}')
id=$(json "['id']" <<<"$site")
# protected, so the site page shows its Protection panel with a share link
curl -fs -X PUT "$WEB/deploy/$id" "${auth[@]}" -d '{"html":"<h1>Two</h1>","password":"lighthouse password","protect":true}' >/dev/null
curl -fs "$WEB/submit/$id" -d 'email=someone@example.com&message=Hello%0Asecond+line' >/dev/null
curl -fs "$WEB/webhooks/$id" "${auth[@]}" -d '{"url":"http://127.0.0.1:9/hook"}' >/dev/null
# a pending custom domain: the site page lists it with its records
curl -fs "$WEB/deploy/$id/domains" "${auth[@]}" -d '{"domain":"shop.example.com"}' >/dev/null
# a paused site: its Settings tab shows the Resume form and the head badge
paused=$(curl -fs "$WEB/deploy" "${auth[@]}" -d '{"html":"<h1>Paused</h1>","title":"Paused for now"}')
paused_id=$(json "['id']" <<<"$paused")
curl -fs -X POST "$WEB/deploy/$paused_id/pause" "${auth[@]}" >/dev/null
anon=$(curl -fs "$WEB/deploy" -d '{"html":"<h1>Anon</h1>","title":"Anonymous"}')
claim=$(json "['claim_url']" <<<"$anon")
cookie=$(curl -fs -D - -o /dev/null -X POST "$WEB/auth/session" "${auth[@]}" |
	sed -n 's/^[Ss]et-[Cc]ookie: \([^;]*\).*/\1/p' | head -n 1)
[[ -n "$cookie" ]] || { echo "no session cookie from POST /auth/session" >&2; exit 1; }

# The moderation page: a report in its queue, a superuser's session.
curl -fs "$WEB/report" -H 'Content-Type: application/json' -d "{\"url\":\"$(json "['url']" <<<"$site")\",\"reason\":\"phishing\",\"details\":\"asks for a card number\"}" >/dev/null
admin_cookie=$(curl -fs -D - -o /dev/null -X POST "$WEB/admin/login" -H 'Sec-Fetch-Site: same-origin' \
	--data-urlencode 'email=admin@example.com' --data-urlencode 'password=a-long-password' |
	sed -n 's/^[Ss]et-[Cc]ookie: \([^;]*\).*/\1/p' | head -n 1)
[[ -n "$admin_cookie" ]] || { echo "no moderation cookie from POST /admin/login" >&2; exit 1; }

# The submission's and the webhook's delete confirmations, linked from the
# site page's Forms tab.
forms_tab=$(curl -fs "$WEB/account/sites/$id/forms" -H "Cookie: $cookie")
sub_delete=$(grep -o "/account/sites/$id/submissions/[a-z0-9]*/delete" <<<"$forms_tab" | head -n 1)
hook_delete=$(grep -o "/account/sites/$id/webhooks/[a-z0-9]*/delete" <<<"$forms_tab" | head -n 1)
[[ -n "$sub_delete" && -n "$hook_delete" ]] || { echo "no delete links on the site page's Forms tab" >&2; exit 1; }
# A key's revoke confirmation, linked from the account page.
key_revoke=$(curl -fs "$WEB/account" -H "Cookie: $cookie" | grep -o '/account/keys/[a-z0-9]*/revoke' | head -n 1)
[[ -n "$key_revoke" ]] || { echo "no revoke link on the account page" >&2; exit 1; }

# The pages: name, URL, signed in or not. Add new pages here.
LH_PAGES=$(python3 - "$WEB" "$cookie" "$id" "$claim" "$sub_delete" "$hook_delete" "$key_revoke" "$paused_id" "$admin_cookie" <<'PY'
import json, sys
web, cookie, site, claim, sub_delete, hook_delete, key_revoke, paused, admin_cookie = sys.argv[1:]
pages = [
    ("home", web + "/", False),
    ("home, signed in", web + "/", True),
    ("sign-in", web + "/auth/login", False),
    ("report abuse", web + "/report", False),
    ("claim (signed out)", claim, False),
    ("claim (signed in)", claim, True),
    ("account", web + "/account", True),
    ("site overview", web + "/account/sites/" + site, True),
    ("site deploys", web + "/account/sites/" + site + "/deploys", True),
    ("site deploys, changes", web + "/account/sites/" + site + "/deploys?changes=2", True),
    ("site analytics", web + "/account/sites/" + site + "/analytics", True),
    ("site forms", web + "/account/sites/" + site + "/forms", True),
    ("site domains", web + "/account/sites/" + site + "/domains", True),
    ("site settings", web + "/account/sites/" + site + "/settings", True),
    ("submission delete", web + sub_delete, True),
    ("webhook delete", web + hook_delete, True),
    ("site delete", web + "/account/sites/" + site + "/delete", True),
    ("paused site settings", web + "/account/sites/" + paused + "/settings", True),
    ("key revoke", web + key_revoke, True),
    ("account delete", web + "/account/delete", True),
    ("moderation sign-in", web + "/admin/login", False),
    ("moderation", web + "/admin", admin_cookie),
]
# Error pages (404 and the like) share the layout; Lighthouse audits only
# pages that answer 200, so they are covered by ui/render_test.go.
# c: True is the user's session, a string another cookie (the moderation's)
print(json.dumps([{"name": n, "url": u, **({"cookie": c if isinstance(c, str) else cookie} if c else {})} for n, u, c in pages]))
PY
)
export LH_PAGES
node "$LH_DIR/lighthouse.mjs"
