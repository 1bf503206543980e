#!/usr/bin/env bash
# Scale-out benchmark: a replica's serving req/s against the primary's, in
# the same run, on the same page, both on S3 (versitygw on loopback).
#
#   bash bench/scaleout.sh
#
# Options (environment): DURATION=10s ROUNDS=3 CONNS=50 BASE_PORT=19080
# SERVER_CPU=0 WRK_CPU=1 (the server measured is pinned to SERVER_CPU, wrk
# to WRK_CPU; versitygw is not pinned, and is idle once the caches are
# warm). Both count visits (--analytics, the default): a replica counts
# them as the primary does and ships them through the store. Needs wrk,
# curl (with --aws-sigv4), taskset and versitygw (go install
# github.com/versity/versitygw/cmd/versitygw@v1.8.0). Only
# 127.0.0.1 is contacted; everything goes to one temporary directory,
# removed at exit, and every process started is stopped.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-50}
BASE_PORT=${BASE_PORT:-19080}
SERVER_CPU=${SERVER_CPU:-0}
WRK_CPU=${WRK_CPU:-1}
export GOTOOLCHAIN=local
S3_PORT=$((BASE_PORT + 1)) PRIMARY_PORT=$((BASE_PORT + 2)) REPLICA_PORT=$((BASE_PORT + 3))
export AWS_ACCESS_KEY_ID=benchkey AWS_SECRET_ACCESS_KEY=benchsecret AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'scaleout: %s\n' "$*" >&2; exit 1; }
curl() { command curl --noproxy '*' "$@"; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sitedrop-scaleout.XXXXXX")
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

VGW=$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")
[[ -x $VGW ]] || die "no versitygw: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"
for t in wrk taskset; do command -v $t >/dev/null || die "no $t (apt-get install wrk util-linux)"; done

wait_http() { # URL [Host]
	for _ in $(seq 400); do
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 ${2:+-H "Host: $2"} "$1" || true)
		[[ $code == 200 ]] && return 0
		sleep 0.05
	done
	die "$1 (${2:-}) never answered 200"
}

cd "$ROOT"
log "building sitedrop"
CGO_ENABLED=0 go build -o "$TMP/sitedrop" .
SD=$TMP/sitedrop

log "starting versitygw on 127.0.0.1:$S3_PORT"
mkdir -p "$TMP/s3"
"$VGW" --access "$AWS_ACCESS_KEY_ID" --secret "$AWS_SECRET_ACCESS_KEY" --port "127.0.0.1:$S3_PORT" --quiet posix "$TMP/s3" >"$TMP/vgw.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$S3_PORT") 2>/dev/null && break; sleep 0.05; done
curl -sf -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
	-H "x-amz-content-sha256: $(printf "" | sha256sum | cut -d " " -f 1)" \
	"http://127.0.0.1:$S3_PORT/bench" >/dev/null || die "could not create the bucket"
STORE="s3://bench/sd?endpoint=http://127.0.0.1:$S3_PORT&region=us-east-1"

log "starting the primary and deploying a 7 KB page"
"$SD" --dir "$TMP/pb" --store "$STORE" user create bench@example.com --plan pro >/dev/null
KEY=$("$SD" --dir "$TMP/pb" --store "$STORE" key create bench@example.com | tail -1)
taskset -c "$SERVER_CPU" "$SD" --dir "$TMP/pb" --store "$STORE" serve --http "127.0.0.1:$PRIMARY_PORT" >"$TMP/primary.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$PRIMARY_PORT/api/health"
PAGE=$(printf '<!doctype html><title>bench</title><p>%07000d</p>' 0)
python3 -c 'import json,sys; print(json.dumps({"html": sys.argv[1], "slug": "bench-site"}))' "$PAGE" >"$TMP/deploy.json"
curl -sf "http://127.0.0.1:$PRIMARY_PORT/deploy" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
	--data-binary @"$TMP/deploy.json" >/dev/null || die "deploy failed"

log "starting a replica"
taskset -c "$SERVER_CPU" "$SD" --store "$STORE" serve --replica --http "127.0.0.1:$REPLICA_PORT" >"$TMP/replica.log" 2>&1 &
PIDS+=($!)
HOST=bench-site.localhost
wait_http "http://127.0.0.1:$PRIMARY_PORT/" "$HOST"
wait_http "http://127.0.0.1:$REPLICA_PORT/" "$HOST"

run() { # PORT → req/s
	taskset -c "$WRK_CPU" wrk -t1 -c"$CONNS" -d"$DURATION" -H "Host: $HOST" -H 'Accept-Encoding: gzip' \
		"http://127.0.0.1:$1/" | awk '/^Requests\/sec/ {printf "%d", $2}'
}
declare -a P R
for i in $(seq "$ROUNDS"); do
	log "round $i/$ROUNDS"
	P+=("$(run "$PRIMARY_PORT")")
	R+=("$(run "$REPLICA_PORT")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
PM=$(median "${P[@]}") RM=$(median "${R[@]}")
echo "| server | req/s (median) | per round |"
echo "|---|---:|---|"
echo "| primary (--store s3) | $PM | ${P[*]} |"
echo "| replica | $RM | ${R[*]} |"
awk -v r="$RM" -v p="$PM" 'BEGIN {printf "\nreplica / primary: %.2fx (one core each, same run, %s rounds of %s, %s connections)\n", r/p, '"$ROUNDS"', "'"$DURATION"'", '"$CONNS"'}'
