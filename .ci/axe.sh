#!/usr/bin/env bash
# Installs axe-core (pinned, from the npm registry) into a cache directory
# for the browser tests' accessibility checks (hooks/axe_browser_test.go)
# and prints the path of its axe.min.js. .ci/run passes that path to the
# tests in SITEDROP_AXE_JS. Run from anywhere: bash .ci/axe.sh
set -euo pipefail

AXE_VERSION=4.10.3
AXE_DIR=${AXE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sitedrop-axe}
js="$AXE_DIR/node_modules/axe-core/axe.min.js"
pkg="$AXE_DIR/node_modules/axe-core/package.json"

installed() {
	[[ -f "$js" && -f "$pkg" ]] &&
		[[ "$(node -p 'require(process.argv[1]).version' "$pkg" 2>/dev/null)" == "$AXE_VERSION" ]]
}
if ! installed; then
	command -v npm >/dev/null || { echo "npm is needed to install axe-core" >&2; exit 1; }
	mkdir -p "$AXE_DIR"
	[[ -f "$AXE_DIR/package.json" ]] || echo '{"private":true}' >"$AXE_DIR/package.json"
	npm install --prefix "$AXE_DIR" --no-audit --no-fund --loglevel=error "axe-core@$AXE_VERSION" >&2
	installed || { echo "axe-core $AXE_VERSION did not install into $AXE_DIR" >&2; exit 1; }
fi
echo "$js"
