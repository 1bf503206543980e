#!/usr/bin/env bash
# Serving benchmark: sitedrop against nginx and Caddy on the same three files.
#
# Run from the repository root (or anywhere inside a clone):
#
#   bash bench/run.sh
#
# Options, all environment variables:
#
#   DURATION=10s      length of each measured wrk run
#   ROUNDS=3          rounds; each round runs every server on every path once
#   CONNS=50          wrk connections (one wrk thread)
#   WARMUP=2s         wrk warm-up per server and path before round 1 (0: none)
#   BASE_PORT=18080   nginx listens on BASE_PORT+1, Caddy on +2, sitedrop on +3
#   SERVER_CPU=0      CPU the servers are pinned to (taskset)
#   WRK_CPU=1         CPU wrk is pinned to
#   SITEDROP_BIN=     use this sitedrop binary instead of building one
#   SITEDROP_FLAGS=   more flags for `sitedrop serve`, e.g. --analytics=false
#   REQUIRE_GZIP=0    1: stop when sitedrop does not gzip HTML and JS (nginx
#                     and Caddy must always gzip, or their set-up is wrong)
#   KEEP_TMP=0        1: keep the temporary directory (configs, logs, files)
#
# Needs root (or the packages already installed): nginx, caddy and wrk are
# installed with apt-get when missing. Only 127.0.0.1 is ever contacted.
# Everything the run writes goes to one temporary directory, removed at exit
# (Go's build cache aside); every process it starts is stopped at exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-50}
WARMUP=${WARMUP:-2s}
BASE_PORT=${BASE_PORT:-18080}
SERVER_CPU=${SERVER_CPU:-0}
WRK_CPU=${WRK_CPU:-1}
SITEDROP_BIN=${SITEDROP_BIN:-}
SITEDROP_FLAGS=${SITEDROP_FLAGS:-}
REQUIRE_GZIP=${REQUIRE_GZIP:-0}
KEEP_TMP=${KEEP_TMP:-0}
export GOTOOLCHAIN=local

NGINX_PORT=$((BASE_PORT + 1))
CADDY_PORT=$((BASE_PORT + 2))
SD_PORT=$((BASE_PORT + 3))
SERVERS=(nginx caddy sitedrop)
PATHS=(/index.html /app.js /logo.png)
START_TIME=$(date +%s)

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sitedrop-bench.XXXXXX")
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		# Wait up to 5 s for each, then force it.
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [[ "$KEEP_TMP" == 1 ]]; then
		log "kept $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- tools
install_missing() {
	local need=() had_nginx=0
	command -v nginx >/dev/null || need+=(nginx)
	command -v caddy >/dev/null || need+=(caddy)
	command -v wrk >/dev/null || need+=(wrk)
	type -P curl >/dev/null || need+=(curl)
	command -v taskset >/dev/null || need+=(util-linux)
	command -v gzip >/dev/null || need+=(gzip)
	((${#need[@]})) || return 0
	[[ $(id -u) == 0 ]] || die "missing ${need[*]}: run as root or install them"
	[[ -s /run/nginx.pid ]] && had_nginx=1
	log "apt-get install ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
	# Where the package's init script started a system nginx, stop it again:
	# this run started it, and it would sit on port 80 besides.
	if [[ $had_nginx == 0 && -s /run/nginx.pid ]]; then
		kill -QUIT "$(cat /run/nginx.pid)" 2>/dev/null || true
	fi
}

# curl talks to 127.0.0.1 only: never through a proxy from the environment.
curl() { command curl --noproxy '*' "$@"; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_http PID URL: poll until URL answers (any status), for up to 20 s,
# while process PID lives.
wait_http() {
	local pid=$1 url=$2
	for _ in $(seq 400); do
		if curl -s -o /dev/null --max-time 1 "$url"; then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# ---------------------------------------------------------------- set-up
install_missing
for p in "$NGINX_PORT" "$CADDY_PORT" "$SD_PORT"; do
	port_free "$p" || die "port $p on 127.0.0.1 is in use (set BASE_PORT)"
done
[[ $(nproc) -gt $SERVER_CPU && $(nproc) -gt $WRK_CPU ]] || die "SERVER_CPU/WRK_CPU beyond nproc=$(nproc)"

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
LOAD_BEFORE=$(cut -d ' ' -f 1-3 /proc/loadavg)
log "generating files"
WWW=$TMP/www
go run ./bench/genfiles "$WWW"
# Precompressed copies at the highest level, for nginx and Caddy.
gzip -9 -n -k "$WWW/index.html" "$WWW/app.js"
# nginx's worker runs as an unprivileged user: let it reach the files.
chmod 0711 "$TMP"
chmod 0755 "$WWW"

# ---------------------------------------------------------------- nginx
mkdir -p "$TMP/nginx/tmp"
cat >"$TMP/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events {
	worker_connections 4096;
	use epoll;
	multi_accept on;
}
http {
	include /etc/nginx/mime.types;
	default_type application/octet-stream;
	access_log off;
	sendfile on;
	tcp_nopush on;
	tcp_nodelay on;
	keepalive_timeout 65;
	keepalive_requests 1000000;
	open_file_cache max=1000 inactive=60s;
	open_file_cache_valid 60s;
	open_file_cache_min_uses 1;
	open_file_cache_errors on;
	gzip off;
	gzip_static on;
	gzip_vary on;
	client_body_temp_path $TMP/nginx/tmp/body;
	proxy_temp_path $TMP/nginx/tmp/proxy;
	fastcgi_temp_path $TMP/nginx/tmp/fastcgi;
	uwsgi_temp_path $TMP/nginx/tmp/uwsgi;
	scgi_temp_path $TMP/nginx/tmp/scgi;
	server {
		listen 127.0.0.1:$NGINX_PORT backlog=4096;
		server_name _;
		root $WWW;
	}
}
EOF
nginx -t -q -p "$TMP/nginx/" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" ||
	die "nginx config test failed"
log "starting nginx on 127.0.0.1:$NGINX_PORT (CPU $SERVER_CPU)"
taskset -c "$SERVER_CPU" nginx -p "$TMP/nginx/" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" \
	>"$TMP/nginx/stdout.log" 2>&1 &
PIDS+=($!)
NGINX_PID=$!

# ---------------------------------------------------------------- Caddy
mkdir -p "$TMP/caddy/config" "$TMP/caddy/data"
cat >"$TMP/caddy/Caddyfile" <<EOF
{
	admin off
	auto_https off
	log default {
		output stderr
		level ERROR
	}
}
http://:$CADDY_PORT {
	bind 127.0.0.1
	root * $WWW
	file_server {
		precompressed gzip
	}
}
EOF
log "starting caddy on 127.0.0.1:$CADDY_PORT (CPU $SERVER_CPU)"
XDG_CONFIG_HOME=$TMP/caddy/config XDG_DATA_HOME=$TMP/caddy/data HOME=$TMP/caddy \
	taskset -c "$SERVER_CPU" caddy run --config "$TMP/caddy/Caddyfile" --adapter caddyfile \
	>"$TMP/caddy/caddy.log" 2>&1 &
PIDS+=($!)
CADDY_PID=$!

# ---------------------------------------------------------------- sitedrop
SD_DIR=$TMP/sitedrop-data
"$SITEDROP_BIN" --dir "$SD_DIR" user create bench@example.com --plan pro >/dev/null
KEY=$("$SITEDROP_BIN" --dir "$SD_DIR" key create bench@example.com | tail -n 1)
[[ $KEY == sd_* ]] || die "could not create an API key"
log "starting sitedrop on 127.0.0.1:$SD_PORT (CPU $SERVER_CPU)"
taskset -c "$SERVER_CPU" "$SITEDROP_BIN" serve --http "127.0.0.1:$SD_PORT" --dir "$SD_DIR" \
	--anon-deploys-per-hour -1 --deploys-per-minute -1 $SITEDROP_FLAGS >"$TMP/sitedrop.log" 2>&1 &
PIDS+=($!)
SD_PID=$!
SD_HOST=bench.localhost:$SD_PORT

wait_http "$NGINX_PID" "http://127.0.0.1:$NGINX_PORT/" || die "nginx did not start: $(cat "$TMP/nginx/error.log")"
wait_http "$CADDY_PID" "http://127.0.0.1:$CADDY_PORT/" || die "caddy did not start: $(cat "$TMP/caddy/caddy.log")"
wait_http "$SD_PID" "http://127.0.0.1:$SD_PORT/api/health" || die "sitedrop did not start: $(cat "$TMP/sitedrop.log")"

# Deploy the three files as base64 (no JSON escaping needed).
entry() { printf '{"path":"%s","content":"%s","encoding":"base64","contentType":"%s"}' "$1" "$(base64 -w 0 "$WWW/$1")" "$2"; }
printf '{"slug":"bench","files":[%s,%s,%s]}' \
	"$(entry index.html 'text/html; charset=utf-8')" \
	"$(entry app.js 'text/javascript; charset=utf-8')" \
	"$(entry logo.png image/png)" >"$TMP/deploy.json"
code=$(curl -s -o "$TMP/deploy.out" -w '%{http_code}' "http://127.0.0.1:$SD_PORT/deploy" \
	-H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' --data-binary "@$TMP/deploy.json")
[[ $code == 200 ]] || die "deploy answered $code: $(cat "$TMP/deploy.out")"
log "deployed: $(cat "$TMP/deploy.out")"

url_of() {
	case $1 in
	nginx) echo "http://127.0.0.1:$NGINX_PORT$2" ;;
	caddy) echo "http://127.0.0.1:$CADDY_PORT$2" ;;
	# sitedrop redirects /index.html to its canonical URL /: ask for that.
	sitedrop) echo "http://127.0.0.1:$SD_PORT${2/#\/index.html//}" ;;
	esac
}
host_of() { [[ $1 == sitedrop ]] && echo "$SD_HOST" || true; }

# ---------------------------------------------------------------- verify
# Each server must answer 200 with the same bytes (after gunzip); HTML and
# JS must come gzip-encoded. GZIP[server path] records what was seen.
declare -A GZIP
verify() {
	local s p url host ce code f=$TMP/verify
	for s in "${SERVERS[@]}"; do
		for p in "${PATHS[@]}"; do
			url=$(url_of "$s" "$p")
			host=$(host_of "$s")
			code=$(curl -s -o "$f.body" -D "$f.hdr" -w '%{http_code}' -H 'Accept-Encoding: gzip' \
				${host:+-H "Host: $host"} "$url")
			[[ $code == 200 ]] || die "$s $p answered $code"
			ce=$(tr -d '\r' <"$f.hdr" | sed -n 's/^[Cc]ontent-[Ee]ncoding: *//p')
			if [[ $ce == gzip ]]; then
				gzip -dc <"$f.body" >"$f.plain" || die "$s $p: bad gzip body"
				GZIP[$s $p]=yes
			else
				[[ -z $ce ]] || die "$s $p: unexpected Content-Encoding: $ce"
				cp "$f.body" "$f.plain"
				GZIP[$s $p]=no
			fi
			cmp -s "$f.plain" "$WWW$p" || die "$s $p: the bytes differ from the source file"
			if [[ $p != /logo.png && ${GZIP[$s $p]} == no ]]; then
				if [[ $s != sitedrop || $REQUIRE_GZIP == 1 ]]; then
					die "$s $p: no Content-Encoding: gzip"
				fi
				log "WARNING: sitedrop does not gzip $p (Accept-Encoding: gzip sent); measured as is"
			fi
		done
	done
	log "verified: every server answers 200 with identical bytes"
}
verify

# ---------------------------------------------------------------- wrk
# The Lua script only has done(), so wrk still sends a static request (no
# per-request Lua); it prints one machine-readable line.
cat >"$TMP/report.lua" <<'EOF'
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("BENCH rps=%.2f p50_us=%d p99_us=%d requests=%d bytes=%d errors=%d\n",
		summary.requests / (summary.duration / 1e6), latency:percentile(50), latency:percentile(99),
		summary.requests, summary.bytes, e.connect + e.read + e.write + e.status + e.timeout))
end
EOF

# run_wrk SERVER PATH DURATION: prints the BENCH line (wrk's full output
# goes to the log).
run_wrk() {
	local s=$1 p=$2 d=$3 host out
	host=$(host_of "$s")
	out=$(taskset -c "$WRK_CPU" wrk -t 1 -c "$CONNS" -d "$d" --latency -s "$TMP/report.lua" \
		-H 'Accept-Encoding: gzip' ${host:+-H "Host: $host"} "$(url_of "$s" "$p")")
	printf '## %s %s %s\n%s\n' "$s" "$p" "$d" "$out" >>"$TMP/wrk.log"
	grep '^BENCH ' <<<"$out" || die "no result from wrk for $s $p: $out"
}

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

if [[ $WARMUP != 0 && $WARMUP != 0s ]]; then
	log "warm-up: $WARMUP per server and path"
	for s in "${SERVERS[@]}"; do
		for p in "${PATHS[@]}"; do
			run_wrk "$s" "$p" "$WARMUP" >/dev/null
		done
	done
fi

RESULTS=$TMP/results.tsv
: >"$RESULTS"
for r in $(seq "$ROUNDS"); do
	log "round $r/$ROUNDS ($DURATION per run)"
	for p in "${PATHS[@]}"; do
		for s in "${SERVERS[@]}"; do
			line=$(run_wrk "$s" "$p" "$DURATION")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$s" "$p" \
				"$(field rps <<<"$line")" "$(field p99_us <<<"$line")" \
				"$(field errors <<<"$line")" \
				"$(awk -v b="$(field bytes <<<"$line")" -v n="$(field requests <<<"$line")" 'BEGIN { printf "%.0f", (n ? b / n : 0) }')" \
				>>"$RESULTS"
		done
	done
done

# ---------------------------------------------------------------- report
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
col() { awk -F '\t' -v s="$1" -v p="$2" -v c="$3" '$2 == s && $3 == p { print $c }' "$RESULTS"; }
ok() { if awk "BEGIN { exit !($1) }"; then echo "✅"; else echo "❌"; fi; }
fmt_lat() { awk -v us="$1" 'BEGIN { if (us >= 1000) printf "%.2f ms", us / 1000; else printf "%d µs", us }'; }

cpu_model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
elapsed=$(($(date +%s) - START_TIME))
TARGETS=()
NOISY=0
echo
echo "## sitedrop serving benchmark"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "- sitedrop commit: $COMMIT ($(go version | awk '{ print $3 }'))"
echo "- machine: nproc $(nproc), ${cpu_model:-unknown CPU}; servers pinned to CPU $SERVER_CPU, wrk to CPU $WRK_CPU"
echo "- versions: nginx $(nginx -v 2>&1 | sed 's|.*nginx/||'), caddy $(caddy version | awk '{ print $1 }'), $(wrk -v 2>&1 | head -n 1 | awk '{ print $1, $2 }'), $(go version | awk '{ print $3 }')"
echo "- load average (1, 5, 15 min) before: $LOAD_BEFORE; after: $(cut -d ' ' -f 1-3 /proc/loadavg) (other work on the machine skews the figures)"
echo "- wrk: -t 1 -c $CONNS -d $DURATION --latency -H 'Accept-Encoding: gzip'; $ROUNDS interleaved rounds after a $WARMUP warm-up; medians over rounds"
echo "- file sizes: $(for p in "${PATHS[@]}"; do printf '%s %s B' "${p#/}" "$(wc -c <"$WWW$p")"; [[ -f $WWW$p.gz ]] && printf ' (%s B gzip -9)' "$(wc -c <"$WWW$p.gz")"; printf '; '; done | sed 's/; $//')"
echo
echo "| path | server | req/s (median) | req/s per round | p99 (median) | errors | gzip | bytes/resp | vs nginx |"
echo "|---|---|---:|---|---:|---:|:-:|---:|---:|"
for p in "${PATHS[@]}"; do
	base=$(col nginx "$p" 4 | median)
	for s in "${SERVERS[@]}"; do
		rps=$(col "$s" "$p" 4 | median)
		p99=$(col "$s" "$p" 5 | median)
		errs=$(col "$s" "$p" 6 | awk '{ t += $1 } END { print t + 0 }')
		bpr=$(col "$s" "$p" 7 | median)
		rounds=$(col "$s" "$p" 4 | awk '{ printf "%s%.0f", (NR > 1 ? " / " : ""), $1 }')
		# Rounds more than 15% apart (of the median): mark them noisy.
		if col "$s" "$p" 4 | awk -v m="$rps" 'NR == 1 { lo = hi = $1 } { lo = $1 < lo ? $1 : lo; hi = $1 > hi ? $1 : hi } END { exit !(m > 0 && (hi - lo) / m > 0.15) }'; then
			rounds="$rounds ⚠"
			NOISY=1
		fi
		ratio=$(awk -v a="$rps" -v b="$base" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
		printf '| %s | %s | %.0f | %s | %s | %s | %s | %.0f | %s× |\n' "$p" "$s" "$rps" "$rounds" \
			"$(fmt_lat "$p99")" "$errs" "${GZIP[$s $p]}" "$bpr" "$ratio"
		if [[ $s == sitedrop ]]; then
			TARGETS+=("| $p | ${ratio}× $(ok "$ratio >= 0.5") | $errs $(ok "$errs == 0") | $(fmt_lat "$p99") $(ok "$p99 < 5000") | ${GZIP[$s $p]} $([[ $p == /logo.png ]] && echo "(not expected)" || ok "\"${GZIP[$s $p]}\" == \"yes\"") |")
		fi
	done
done
if [[ $NOISY == 1 ]]; then
	echo
	echo "⚠ rounds more than 15% apart: something else used the CPUs (see the load averages); rerun with more ROUNDS or a longer DURATION."
fi
echo
echo "Targets for sitedrop (≥ 0.5× nginx per core, zero errors, p99 < 5 ms at $CONNS connections, gzip for HTML and JS):"
echo
echo "| path | vs nginx | errors | p99 | gzip |"
echo "|---|---|---|---|---|"
printf '%s\n' "${TARGETS[@]}"
echo
echo "Total run time: $((elapsed / 60))m$((elapsed % 60))s."
