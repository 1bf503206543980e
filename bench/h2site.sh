#!/usr/bin/env bash
# HTTP/2 for site hosts: the server CPU per request of sites/serve's
# H2Server against Go's own HTTP/2 server (both answering through the site
# server, over TLS on the main listener's Conn, one ECDSA P-256
# certificate) and nginx, on bench/genfiles' three files, with
# h2load -c 50 -m 10 -H 'Accept-Encoding: gzip'. The servers run on CPU
# SERVER_CPU, h2load on CLIENT_CPU, in interleaved rounds; CPU time comes
# from /proc/PID/stat, so the figures hold on a busy machine. See
# bench/README.md, "HTTP/2 for site hosts".
#
#   DURATION=3   seconds of each h2load run
#   ROUNDS=2     interleaved rounds
#   NGINX=1      0: H2Server and Go's only
#   SERVER_CPU=0 CLIENT_CPU=1
#   BASE_PORT=18443  H2Server on it, Go's on +1, nginx on +2
set -euo pipefail
DURATION=${DURATION:-3} ROUNDS=${ROUNDS:-2} NGINX=${NGINX:-1}
SERVER_CPU=${SERVER_CPU:-0} CLIENT_CPU=${CLIENT_CPU:-1} BASE_PORT=${BASE_PORT:-18443}
OURS=$BASE_PORT GO=$((BASE_PORT + 1)) NG=$((BASE_PORT + 2))
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/h2site.XXXXXX")
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
cd "$ROOT"
go run ./bench/genfiles "$TMP/www" >/dev/null
go test -c -o "$TMP/serve.test" ./sites/serve
SITEDROP_H2_LOAD=$TMP/www SITEDROP_H2_OURS=127.0.0.1:$OURS SITEDROP_H2_GO=127.0.0.1:$GO \
	taskset -c "$SERVER_CPU" "$TMP/serve.test" -test.run '^TestH2LoadServer$' >"$TMP/server.log" 2>&1 &
SD=$!
PIDS+=("$SD")
if [[ $NGINX == 1 ]]; then
	mkdir -p "$TMP/nginx/tmp" "$TMP/tls"
	gzip -9 -n -k "$TMP/www/index.html" "$TMP/www/app.js"
	chmod 0711 "$TMP"
	chmod 0755 "$TMP/www"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 \
		-keyout "$TMP/tls/key.pem" -out "$TMP/tls/cert.pem" -subj "/CN=sites.test" \
		-addext "subjectAltName=DNS:sites.test,DNS:*.sites.test" 2>/dev/null
	cat >"$TMP/nginx/nginx.conf" <<NG
worker_processes 1; daemon off; pid $TMP/nginx/nginx.pid; error_log $TMP/nginx/error.log warn;
events { worker_connections 4096; use epoll; multi_accept on; }
http {
	include /etc/nginx/mime.types; default_type application/octet-stream; access_log off;
	sendfile on; tcp_nopush on; tcp_nodelay on; keepalive_requests 1000000;
	open_file_cache max=1000 inactive=60s; gzip off; gzip_static on; gzip_vary on;
	client_body_temp_path $TMP/nginx/tmp/body; proxy_temp_path $TMP/nginx/tmp/proxy;
	fastcgi_temp_path $TMP/nginx/tmp/fastcgi; uwsgi_temp_path $TMP/nginx/tmp/uwsgi; scgi_temp_path $TMP/nginx/tmp/scgi;
	server {
		listen 127.0.0.1:$NG ssl http2 backlog=4096; server_name _; root $TMP/www;
		ssl_certificate $TMP/tls/cert.pem; ssl_certificate_key $TMP/tls/key.pem; ssl_protocols TLSv1.2 TLSv1.3;
	}
}
NG
	taskset -c "$SERVER_CPU" nginx -p "$TMP/nginx/" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" >/dev/null 2>&1 &
	PIDS+=($!)
	NGINX_MASTER=$!
fi
sleep 2
kill -0 "$SD" || { cat "$TMP/server.log"; exit 1; }
[[ $NGINX == 1 ]] && NGINX_WORKER=$(pgrep -P "$NGINX_MASTER" | head -n 1)
TICK=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# run NAME PID PORT PATH: one h2load run, its req/s and the server's CPU µs per request
run() {
	local t0 t1 out done rps
	t0=$(ticks "$2")
	out=$(taskset -c "$CLIENT_CPU" h2load -c 50 -m 10 -D "$DURATION" -H 'Accept-Encoding: gzip' \
		--connect-to "127.0.0.1:$3" "https://bench.sites.test:$3$4" 2>&1)
	t1=$(ticks "$2")
	done=$(awk -F', ' '/^requests:/ { print $3 + 0 }' <<<"$out")
	rps=$(awk -F', ' '/^finished in/ { print $2 + 0 }' <<<"$out")
	grep -q ' 0 failed, 0 errored' <<<"$out" || { echo "h2load $1 $4: $out" >&2; exit 1; }
	awk -v n="$1" -v p="$4" -v r="$rps" -v t=$((t1 - t0)) -v tck="$TICK" -v d="$done" \
		'BEGIN { printf "| %s | %s | %.0f | %.1f |\n", n, p, r, t / tck * 1e6 / d }'
}
echo "load average before: $(cut -d ' ' -f 1-3 /proc/loadavg)"
echo
echo "| server | path | req/s | server CPU µs per request |"
echo "|---|---|---|---|"
for p in /index.html /app.js /logo.png; do
	sp=$p
	[[ $p == /index.html ]] && sp=/ # the site server's one URL for the page
	for _ in $(seq "$ROUNDS"); do
		run H2Server "$SD" "$OURS" "$sp"
		run "Go's HTTP/2" "$SD" "$GO" "$sp"
		[[ $NGINX == 1 ]] && run nginx "$NGINX_WORKER" "$NG" "$p"
	done
done
echo
echo "load average after: $(cut -d ' ' -f 1-3 /proc/loadavg)"
