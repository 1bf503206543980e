#!/usr/bin/env bash
# idlerss.sh BIN...: the idle RSS of each sitedrop binary as deploy.sh
# reads it (serve on a data dir with one user and its key, pinned to CPU
# 0 with deploy.sh's flags, wait SETTLE seconds, read the process's
# memory), REPS times each, medians: VmRSS, its
# anonymous part (heap, stacks, the SQLite driver's memory) and its
# file-backed part (the binary's own pages, mapped by page faults).
#
# Each binary is first dropped from the page cache, so that exec reads it
# back the way a server reads its binary: a binary just written by the Go
# linker is held in the page cache in a way that maps more of it per page
# fault (up to +6 MB of file-backed RSS for the same binary; see
# bench/README.md, "Idle memory").
#
#   bench/idlerss.sh /tmp/sitedrop-old /tmp/sitedrop-new
#   SETTLE=130 REPS=3 bench/idlerss.sh /tmp/sitedrop
set -euo pipefail
settle=${SETTLE:-2}
reps=${REPS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }

for bin in "$@"; do
	dd if="$bin" iflag=nocache count=0 status=none
	rss=() anon=() file=()
	for i in $(seq "$reps"); do
		dir=$(mktemp -d "$tmp/data.XXXX")
		"$bin" --dir "$dir" user create bench@example.com --plan pro >/dev/null 2>&1
		"$bin" --dir "$dir" key create bench@example.com >/dev/null 2>&1
		port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		# pinned to one CPU as deploy.sh pins it: Go then runs with
		# GOMAXPROCS=1, which holds less memory than with every core
		taskset -c 0 "$bin" serve --http "127.0.0.1:$port" --dir "$dir" \
			--pro-slots 10 --anon-deploys-per-hour -1 --deploys-per-minute -1 --max-files 20000 \
			>"$tmp/log-$i" 2>&1 &
		pid=$!
		sleep "$settle"
		r=$(awk '/^Rss:/ {print $2}' "/proc/$pid/smaps_rollup")
		a=$(awk '/^Anonymous:/ {print $2}' "/proc/$pid/smaps_rollup")
		rss+=("$r") anon+=("$a") file+=("$((r - a))")
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		rm -rf "$dir"
	done
	r=$(median "${rss[@]}")
	printf '%s: RSS %s kB (%.1f MB), anon %s kB, file %s kB; RSS of each: %s\n' \
		"$bin" "$r" "$(echo "$r * 1024 / 1000000" | bc -l)" "$(median "${anon[@]}")" "$(median "${file[@]}")" "${rss[*]}"
done
