#!/usr/bin/env bash
# Deploy, memory, cold-start and many-sites benchmark of sitedrop: a wrapper
# around the Go program bench/deploybench that installs wrk when missing,
# builds sitedrop and the program, and runs it pinned.
#
# Run from the repository root (or anywhere inside a clone):
#
#   bash bench/deploy.sh
#
# Options, all environment variables:
#
#   REPS=20          timed deploys per size (1, 100, 1000 files), and
#                    timed unchanged redeploys of the 1000 files
#   CLI_FILES=4000   files of the site deployed first with the CLI, then
#                    as one zip by curl, timed (0: skip the comparison)
#   CLI_REPS=3       timed deploys of that comparison (a new site each)
#   ONLY=            cli: run only the CLI / curl zip comparison
#   SITES=10000      deployments created for the memory, cold-start and
#                    serving figures
#   PARALLEL=8       parallel clients while creating them, and for the
#                    one-page deploys/s figure
#   BURST=400        one-page deploys of new sites sent by PARALLEL
#                    keep-alive clients at once, for deploys/s (0: skip)
#   DURATION=10s     length of each measured wrk run
#   ROUNDS=3         interleaved wrk rounds
#   CONNS=50         wrk connections (one wrk thread)
#   WARMUP=2s        wrk warm-up per case before round 1 (0: none)
#   COLD_RUNS=3      cold starts timed per server
#   SERVER_CPU=0     CPU the servers are pinned to
#   CLIENT_CPU=1     CPU the benchmark client and wrk are pinned to
#   SITEDROP_BIN=    use this sitedrop binary instead of building one
#   KEEP_TMP=0       1: keep the temporary directory (data dirs, logs)
#   SETTLE=360       seconds to leave between a previous run's clean-up and
#                    this run's deploys (0: no wait); see below
#
# Only 127.0.0.1 is ever contacted. Everything the run writes goes to one
# temporary directory, removed at exit (Go's build cache aside, and the
# time of that removal, kept in $TMPDIR/.sitedrop-deploybench-cleaned);
# every process it starts is stopped at exit.
#
# The removal deletes ~100,000 files. ext4 without a journal (this
# project's benchmark machines) skips inodes freed in the last minute, six
# while their inode table block is still dirty, one by one when it
# creates a file: a run started soon after another measured 7.3 ms for a
# one-page deploy instead of 2.5. So a run waits until SETTLE seconds
# after the previous run's removal (bench/README.md).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KEEP_TMP=${KEEP_TMP:-0}
SITEDROP_BIN=${SITEDROP_BIN:-}
export GOTOOLCHAIN=local

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

SETTLE=${SETTLE:-360}
STAMP="${TMPDIR:-/tmp}/.sitedrop-deploybench-cleaned"
if [[ "$SETTLE" -gt 0 && -f "$STAMP" ]]; then
	cleaned=$(cat "$STAMP" 2>/dev/null || true)
	[[ "$cleaned" =~ ^[0-9]+$ ]] || cleaned=0
	wait_s=$((cleaned + SETTLE - $(date +%s)))
	if ((wait_s > 0)); then
		log "waiting ${wait_s}s: a previous run removed its files here less than ${SETTLE}s ago (SETTLE=0: do not wait)"
		sleep "$wait_s"
	fi
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sitedrop-deploybench.XXXXXX")
cleanup() {
	if [[ "$KEEP_TMP" == 1 ]]; then
		log "kept $TMP"
	else
		rm -rf "$TMP"
		# only a run that made its sites removed enough to wait for
		[[ -z "${RAN:-}" ]] || date +%s >"$STAMP" 2>/dev/null || true
	fi
}
trap cleanup EXIT

need=()
[[ "${ONLY:-}" == cli ]] || command -v wrk >/dev/null || need+=(wrk)
command -v curl >/dev/null || need+=(curl)
command -v taskset >/dev/null || need+=(util-linux)
if ((${#need[@]})); then
	[[ $(id -u) == 0 ]] || die "missing ${need[*]}: run as root or install them"
	log "apt-get install ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

cd "$ROOT"
COMMIT=unknown
if command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1; then
	COMMIT=$(git rev-parse --short=12 HEAD)
	[[ -z $(git status --porcelain --untracked-files=no 2>/dev/null) ]] || COMMIT="$COMMIT+uncommitted changes"
fi
if [[ -z "$SITEDROP_BIN" ]]; then
	log "building sitedrop ($COMMIT)"
	CGO_ENABLED=0 go build -o "$TMP/sitedrop" .
	SITEDROP_BIN=$TMP/sitedrop
else
	COMMIT="given binary $SITEDROP_BIN (work tree at $COMMIT)"
fi
go build -o "$TMP/deploybench" ./bench/deploybench
# A binary fresh from the linker sits in the page cache in large blocks,
# each mapped whole on a page fault: its idle RSS reads up to 6 MB higher
# than the same binary read back from disk (see bench/README.md, "Idle
# memory"). Drop it from the cache, as bench/idlerss.sh does.
dd if="$SITEDROP_BIN" iflag=nocache count=0 status=none 2>/dev/null || true

# The program pins itself to CLIENT_CPU (it re-executes under taskset) and
# the servers to SERVER_CPU. TMPDIR puts its data dirs inside $TMP. exec
# is not used, so the EXIT trap still removes $TMP; the program stops its
# own processes on SIGINT/SIGTERM.
RAN=1 # its data dirs: the clean-up's removal is one to wait out (SETTLE)
TMPDIR=$TMP "$TMP/deploybench" \
	-bin "$SITEDROP_BIN" \
	-commit "$COMMIT" \
	-reps "${REPS:-20}" \
	-sites "${SITES:-10000}" \
	-parallel "${PARALLEL:-8}" \
	-burst "${BURST:-400}" \
	-duration "${DURATION:-10s}" \
	-rounds "${ROUNDS:-3}" \
	-conns "${CONNS:-50}" \
	-warmup "${WARMUP:-2s}" \
	-cold-runs "${COLD_RUNS:-3}" \
	-server-cpu "${SERVER_CPU:-0}" \
	-client-cpu "${CLIENT_CPU:-1}" \
	-cli-files "${CLI_FILES:-4000}" \
	-cli-reps "${CLI_REPS:-3}" \
	-only "${ONLY:-}" \
	$([[ $KEEP_TMP == 1 ]] && echo -keep)
