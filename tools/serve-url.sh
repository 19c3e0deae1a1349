#!/bin/sh
# serve-url.sh OUT PID - wait for `kcanary serve` (pid PID, stdout in the
# file OUT) to say where it listens and print that URL (http://HOST:PORT);
# for servers started with --listen HOST:0. Exit 1 when it has not said so
# within 10 s or the server exited first. Used by tests and benchmarks.
out=$1 pid=$2
for _ in $(seq 100); do
	url=$(sed -n 's|^kcanary serve: listening on \(http://[^ ]*\)/ .*|\1|p' "$out" 2>/dev/null)
	[ -n "$url" ] && { echo "$url"; exit 0; }
	kill -0 "$pid" 2>/dev/null || exit 1
	sleep 0.1
done
exit 1
