#!/usr/bin/env bash
# Fuzzing: runs every Fuzz* target of the module for a while and reports
# crashes.
#
# Run from the repository root (or anywhere inside a clone):
#
#   bash bench/fuzz.sh                 # every target, 10 minutes each
#   FUZZTIME=30s bash bench/fuzz.sh    # a quick pass
#   TARGETS='FuzzInjectHead FuzzReadArchive' bash bench/fuzz.sh
#
# Options, all environment variables:
#
#   FUZZTIME=10m   how long each target runs (go test -fuzztime)
#   PARALLEL=1     targets run at once (each uses -parallel=1: one worker)
#   TARGETS=       run only these targets (names, space-separated)
#
# A crash leaves its input in <package>/testdata/fuzz/<Target>/ (go test's
# own place), where `go test ./...` then replays it as a regression seed:
# commit it once the bug is fixed. Logs go to a temporary directory, which
# is removed at exit unless a target failed (its path is printed). Prints a
# Markdown table on stdout and exits non-zero when a target failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FUZZTIME=${FUZZTIME:-10m}
PARALLEL=${PARALLEL:-1}
TARGETS=${TARGETS:-}
export GOTOOLCHAIN=local
cd "$ROOT"

log() { printf '%s\n' "$*" >&2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sitedrop-fuzz.XXXXXX")
keep=0
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ $keep == 0 ]]; then rm -rf "$tmp"; else log "logs kept in $tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Every package and its fuzz targets: "pkg Target" lines, read from the
# test files go list names for this build (not with go test -list, which
# links a test binary per package: 36-80 s of CI time, for a list).
go list -f '{{.ImportPath}} {{.Dir}}{{range .TestGoFiles}} {{.}}{{end}}{{range .XTestGoFiles}} {{.}}{{end}}' ./... |
	while read -r pkg dir files; do
		[[ -n $files ]] || continue
		(cd "$dir" && grep -hoE '^func Fuzz[A-Za-z0-9_]*\([A-Za-z_][A-Za-z0-9_]* \*testing\.F\)' $files || true) |
			sed -E "s|^func (Fuzz[A-Za-z0-9_]*).*|$pkg \1|"
	done >"$tmp/targets"
if [[ -n $TARGETS ]]; then
	grep -wF -f <(tr ' ' '\n' <<<"$TARGETS" | sed '/^$/d') "$tmp/targets" >"$tmp/chosen" || true
	mv "$tmp/chosen" "$tmp/targets"
fi
n=$(wc -l <"$tmp/targets")
[[ $n -gt 0 ]] || { log "no fuzz targets found"; exit 1; }
log "fuzzing $n targets, $FUZZTIME each, $PARALLEL at a time"

# run_one fuzzes one target; its result goes to $tmp/<Target>.result.
run_one() {
	local pkg=$1 target=$2 out="$tmp/$2.log" start=$SECONDS rc=0
	go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -parallel 1 "$pkg" >"$out" 2>&1 || rc=$?
	# a short run may spend its time replaying the cached corpus, and
	# print no execs line at all
	local execs
	execs=$({ grep -o 'execs: [0-9]*' "$out" || true; } | tail -n 1 | awk '{print $2}')
	local crash
	crash=$(grep -o 'testdata/fuzz/[^ ]*' "$out" | head -n 1 || true)
	# Go 1.26's fuzz coordinator can fail a target with a bare "context
	# deadline exceeded" as -fuzztime ends, having found nothing
	# (go.dev/issue/75804, fixed in Go 1.27): no input written, it is
	# not a finding.
	if [[ $rc != 0 && -z $crash ]] && grep -qx '[[:space:]]*context deadline exceeded' "$out" &&
		! grep -q -- '--- FAIL: .*/' "$out"; then
		echo "| \`$target\` | ${pkg#sitedrop/} | ok (the toolchain's fuzztime race, go.dev/issue/75804; nothing found) | ${execs:-?} | $((SECONDS - start)) s |" >"$tmp/$target.result"
	elif [[ $rc == 0 ]]; then
		echo "| \`$target\` | ${pkg#sitedrop/} | ok | ${execs:-?} | $((SECONDS - start)) s |" >"$tmp/$target.result"
	else
		echo "| \`$target\` | ${pkg#sitedrop/} | **FAILED** ${crash:+(input: $crash)} | ${execs:-?} | $((SECONDS - start)) s |" >"$tmp/$target.result"
	fi
}

while read -r pkg target; do
	while [[ $(jobs -rp | wc -l) -ge $PARALLEL ]]; do sleep 1; done
	log "fuzz $target ($pkg)"
	run_one "$pkg" "$target" &
	pids+=($!)
done <"$tmp/targets"
wait

echo "## Fuzzing at $(git rev-parse --short HEAD 2>/dev/null || echo '?') ($FUZZTIME each)"
echo
echo "| target | package | result | execs | time |"
echo "|---|---|---|---:|---:|"
failed=0
while read -r _ target; do
	cat "$tmp/$target.result"
	grep -q FAILED "$tmp/$target.result" && failed=1
done <"$tmp/targets"
if [[ $failed == 1 ]]; then
	keep=1
	for f in "$tmp"/*.log; do
		if ! grep -q '^ok' "$f"; then
			log "--- $(basename "$f" .log)"
			tail -n 30 "$f" >&2
		fi
	done
	exit 1
fi
