#!/usr/bin/env bash
# Change-feed benchmark: what replicas cost the store when nothing
# changes, and how fast a change reaches them, with 10,000 published
# hosts on a real S3 server (versitygw on loopback, started by the test
# helper sites/store/s3store/s3test).
#
#   bash bench/feed.sh
#
# Options (environment): FEED_HOSTS=10000 FEED_REPLICAS=3 FEED_POLL=2s
# FEED_IDLE=1m FEED_CHANGES=100; FEED_PUSH=1 for the push mode (the
# replicas follow the primary's long poll, serve --replica --primary, and
# read the store every FEED_FALLBACK=15s only). It runs BenchmarkChangeFeed
# (sites/replica/feed_bench_test.go) once and prints its figures:
# idle-req/replica/min (store requests a replica makes per minute when
# nothing changes, counted by a proxy in front of the server) and the
# p50/p99/max propagation, from the publisher being told of a change to
# each replica serving the new page. About 3 minutes with the defaults.
# Only 127.0.0.1 is contacted; the test's temporary files are removed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export GOTOOLCHAIN=local
export FEED_HOSTS=${FEED_HOSTS:-10000} FEED_REPLICAS=${FEED_REPLICAS:-3} FEED_POLL=${FEED_POLL:-2s}
export FEED_IDLE=${FEED_IDLE:-1m} FEED_CHANGES=${FEED_CHANGES:-100}
export FEED_PUSH=${FEED_PUSH:-0} FEED_FALLBACK=${FEED_FALLBACK:-15s}
cd "$ROOT"
if [ "$FEED_PUSH" = 1 ]; then
	mode="following the primary's long poll, polling every $FEED_FALLBACK (every $FEED_POLL without it)"
else
	mode="polling every $FEED_POLL"
fi
printf '==> %s hosts, %s replicas %s; idle %s, %s changes\n' \
	"$FEED_HOSTS" "$FEED_REPLICAS" "$mode" "$FEED_IDLE" "$FEED_CHANGES" >&2
go test -run '^$' -bench '^BenchmarkChangeFeed$' -benchtime 1x -timeout 30m -v ./sites/replica/
