#!/usr/bin/env bash
# Replica counting benchmark: page views sent to two replicas and the
# primary must add up exactly in GET /deploy/{id}/analytics, visitors seen
# on several nodes counted once, within three minutes (issue 28). The
# replicas are the real `serve --replica` and the store is a real S3
# server (versitygw on loopback, started by the test helper
# sites/store/s3store/s3test).
#
#   bash bench/replicas.sh
#
# Options (environment): REPLICAS_VIEWS=3362 REPLICAS_VISITORS=500
# REPLICAS_CLIENTS=8 REPLICAS_SHIP=1m (how often each replica ships its
# counts; the primary merges them every minute, its cron job, whatever
# this says) REPLICAS_WAIT=3m (past it, the run fails) REPLICAS_ALIGN=1
# (the replicas start and the load is sent one second after the primary's
# job, so that their first ship just misses a merge: the slowest case; 0:
# at once, wherever in the minute that falls). It runs
# BenchmarkReplicasCountVisits (hooks/replica_analytics_bench_test.go)
# once: the views (with 404s, bot views, assets and referrers, from
# REPLICAS_VISITORS distinct IP address and user agent pairs) are sent by
# REPLICAS_CLIENTS concurrent clients through a load balancer
# (X-Forwarded-For), then the API is read until every count is exact.
# Progress goes to stderr, a Markdown report to stdout; the exit status
# is non-zero when a count differs. About 3.5 minutes with the defaults
# (up to a minute of it waiting for the primary's job), 2.5 with
# REPLICAS_SHIP=5s. Only 127.0.0.1 is contacted; the test's
# temporary files are removed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export GOTOOLCHAIN=local
export REPLICAS_VIEWS=${REPLICAS_VIEWS:-3362} REPLICAS_VISITORS=${REPLICAS_VISITORS:-500}
export REPLICAS_CLIENTS=${REPLICAS_CLIENTS:-8} REPLICAS_SHIP=${REPLICAS_SHIP:-1m} REPLICAS_WAIT=${REPLICAS_WAIT:-3m}
export REPLICAS_ALIGN=${REPLICAS_ALIGN:-1}
cd "$ROOT"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sitedrop-replicas.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export REPLICAS_REPORT=$TMP/report.md

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD -- 2>/dev/null; then commit="$commit +uncommitted changes"; fi
printf '==> %s page views by %s visitors from %s clients; replicas ship every %s; bound %s\n' \
	"$REPLICAS_VIEWS" "$REPLICAS_VISITORS" "$REPLICAS_CLIENTS" "$REPLICAS_SHIP" "$REPLICAS_WAIT" >&2
status=0
go test -run '^$' -bench '^BenchmarkReplicasCountVisits$' -benchtime 1x -timeout 30m -v ./hooks/ >&2 || status=$?

printf '## Replicas count visits\n\n'
printf 'Commit %s, %s, %s cores, %s.\n\n' "$commit" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" "$(go version | cut -d' ' -f3)"
if [[ -s $REPLICAS_REPORT ]]; then
	cat "$REPLICAS_REPORT"
else
	printf '**No figures:** the benchmark stopped before its load (see stderr).\n'
fi
exit "$status"
