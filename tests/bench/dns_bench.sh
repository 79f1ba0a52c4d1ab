#!/usr/bin/env bash
#
# dns_bench.sh: DNS benchmark of gatekeeperd against dnsmasq configured as
# an allowlisting forwarder in front of the same upstream. Not a test: it
# prints figures and "TARGET MET" / "TARGET MISSED" lines, and exits 0
# either way (1 only when something broke).
#
#   sudo bash tests/bench/dns_bench.sh [path/to/gatekeeperd]   (default build/gatekeeperd)
#
# Environment:
#   GK_BENCH_SECONDS=10      dnsperf run length per (server, query file)
#   GK_BENCH_CLIENTS=4       dnsperf -c (sockets)
#   GK_BENCH_OUTSTANDING=64  dnsperf -q (queries in flight)
#   GK_BENCH_RATE=           dnsperf -Q (queries/s cap; empty: as fast as possible)
#   GK_BENCH_RUNS=1          repetitions; the best qps run of each is kept
#   GK_BENCH_AUDIT=1         gatekeeperd writes its audit log (0: --audit-log off)
#
# Setup, all inside a private network + PID namespace (lib.sh): the upstream
# is dnsmasq on 127.0.0.1:5300 with local records (nothing is forwarded
# anywhere); the servers under test are
#   gatekeeperd  127.0.0.1:53,   a cage for 127.0.0.2 allowing '*.github.com',
#                --cache-size 10000, --ttl-cap 60, --log-level warn
#   dnsmasq      127.0.0.1:5301, --server=/github.com/127.0.0.1#5300 and
#                --address=/#/ (everything else NXDOMAIN), --cache-size=10000
# dnsperf sends from 127.0.0.2 (-a), the cage's source address. Query files
# (this directory): queries-allowed.txt (cache-hot after a warm-up),
# queries-denied.txt, queries-mixed.txt (half and half).
#
# CPU per query = the server's utime+stime (/proc/PID/stat, all threads)
# over the run, divided by the queries dnsperf saw completed.

GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
BENCH_DIR=$(dirname "$GK_SELF")
GK_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"

# shellcheck source=tests/bench/bench_lib.sh
. "$BENCH_DIR/bench_lib.sh"
BENCH_NAME=dns_bench.sh
BENCH_TAIL=20

bench_exe GKD "${1:-}" build/gatekeeperd
gk_need "$BENCH_NAME" dnsperf dig dnsmasq unshare ip "$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKD"
gk_setup

SECS=${GK_BENCH_SECONDS:-10}
CLIENTS=${GK_BENCH_CLIENTS:-4}
OUTSTANDING=${GK_BENCH_OUTSTANDING:-64}
RATE=${GK_BENCH_RATE:-}
RUNS=${GK_BENCH_RUNS:-1}
AUDIT=${GK_BENCH_AUDIT:-1}
HZ=$(getconf CLK_TCK)
T=$GK_TMP
SRC=127.0.0.2
FILES=(allowed denied mixed)

echo "# gatekeeperd $("$GKD" --version 2>&1 | head -1)"
echo "# $(dnsmasq --version | head -1)"
echo "# dnsperf $(dnsperf -h 2>&1 | sed -n "s/^Version //p")"
echo "# $(bench_cpus), kernel $(uname -r)"
echo "# dnsperf -l $SECS -c $CLIENTS -q $OUTSTANDING${RATE:+ -Q $RATE} -a $SRC," \
	"$RUNS run(s) each; gatekeeperd audit log: $(onoff "$AUDIT")"

# ---- servers ---------------------------------------------------------------------
GK_UPSTREAM_QUIET=1 gk_start_upstream 5300 "$T/upstream.log" ||
	die "the upstream dnsmasq did not start"

AUDIT_ARGS=()
[ "$AUDIT" = 1 ] && AUDIT_ARGS=(--audit-log "$T/audit.log")
bench_gk_conf "$T/empty.conf"
gk_start_daemon GKD_PID "$GKD" -f -c "$T/empty.conf" --listen 127.0.0.1 \
	--dns-port 53 --control "$T/control.sock" --upstream 127.0.0.1:5300 \
	--ttl-cap 60 --upstream-timeout 2 --metrics 127.0.0.1:9477 \
	--cache-size 10000 "${AUDIT_ARGS[@]}" --log-level warn
gk_wait_ready "$GKD_PID" "$T/control.sock" 53 ||
	die "gatekeeperd did not become ready"

(
	gk_close_ctl_fds
	exec dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv \
		--no-hosts --port=5301 --listen-address=127.0.0.1 \
		--bind-interfaces --user=root --group=root \
		--pid-file="$T/dnsmasq-fwd.pid" --cache-size=10000 \
		--server=/github.com/127.0.0.1#5300 --address=/#/ \
		>"$T/dnsmasq-fwd.stderr" 2>&1
) &
DM_PID=$!
gk_track_pid "$DM_PID"

gk_ctl_open bench "$T/control.sock"
reply=$(gk_ctl_send bench '{"op":"cage.create","source":"127.0.0.2","allow":["*.github.com"],"label":"bench"}')
[ "$(gk_json_get ok "$reply")" = true ] || die "cage.create failed: $reply"

# Sanity and warm-up: each server gives the same verdicts; allowed names
# are in both caches before any measurement.
for srv in 53 5301; do
	GK_DNS_PORT=$srv
	ok=0
	for ((i = 0; i < 30; i++)); do
		gk_dig $SRC github.com A
		[ "$DIG_STATUS" = NOERROR ] && { ok=1; break; }
		sleep 0.1
	done
	[ "$ok" = 1 ] || die "port $srv: github.com gave $DIG_STATUS"
	while read -r name type; do
		gk_dig $SRC "$name" "$type"
		[ "$DIG_STATUS" = NOERROR ] ||
			die "port $srv: allowed $name $type gave $DIG_STATUS"
	done <"$BENCH_DIR/queries-allowed.txt"
	while read -r name type; do
		gk_dig $SRC "$name" "$type"
		[ "$DIG_STATUS" = NXDOMAIN ] ||
			die "port $srv: denied $name $type gave $DIG_STATUS"
	done <"$BENCH_DIR/queries-denied.txt"
done
GK_DNS_PORT=53

# Idle baseline: with the cage's control connection open and no queries,
# a server should use no CPU; if it does, the figures below include it.
IDLE_WARN=
for s in gatekeeperd:"$GKD_PID" dnsmasq:"$DM_PID"; do
	c0=$(gk_cpu_ticks "${s#*:}")
	sleep 2
	idle=$(($(gk_cpu_ticks "${s#*:}") - c0))
	pct=$((idle * 100 / (2 * HZ)))
	echo "# idle CPU, 2 s, no queries: ${s%%:*} ${pct}%"
	if [ "$pct" -ge 5 ]; then
		IDLE_WARN+="WARNING: ${s%%:*} uses ${pct}% CPU while idle (a busy loop?);"
		IDLE_WARN+=" its CPU/query figures below include that."$'\n'
	fi
done
[ -n "$IDLE_WARN" ] && printf '%s' "$IDLE_WARN"

# ---- measurements ------------------------------------------------------------------
declare -A QPS LAT CPU NDONE LOST CODES

# run_one SERVER PID PORT FILE
run_one() {
	local server=$1 pid=$2 port=$3 file=$4 c0 c1 out best=-1 r qps
	local -a rate=()
	[ -n "$RATE" ] && rate=(-Q "$RATE")
	for ((r = 1; r <= RUNS; r++)); do
		out=$T/dnsperf-$server-$file-$r.txt
		c0=$(gk_cpu_ticks "$pid")
		timeout $((SECS + 30)) dnsperf -s 127.0.0.1 -p "$port" -a "$SRC" \
			-d "$BENCH_DIR/queries-$file.txt" -l "$SECS" \
			-c "$CLIENTS" -q "$OUTSTANDING" -t 2 "${rate[@]}" \
			>"$out" 2>&1
		c1=$(gk_cpu_ticks "$pid")
		kill -0 "$pid" 2>/dev/null || die "$server died during the $file run"
		qps=$(awk '/Queries per second:/ {print $4}' "$out")
		[ -n "$qps" ] || die "dnsperf failed: $(tail -n 5 "$out")"
		if awk -v a="$qps" -v b="$best" 'BEGIN {exit !(a > b)}'; then
			best=$qps
			QPS[$server,$file]=$qps
			NDONE[$server,$file]=$(awk '/Queries completed:/ {print $3}' "$out")
			LOST[$server,$file]=$(awk '/Queries lost:/ {print $3}' "$out")
			LAT[$server,$file]=$(awk '/Average Latency \(s\):/ {printf "%.3f", $4 * 1000}' "$out")
			CODES[$server,$file]=$(awk '/Response codes:/ {sub(/.*Response codes: */, ""); print}' "$out")
			CPU[$server,$file]=$(awk -v d="$((c1 - c0))" -v hz="$HZ" \
				-v n="${NDONE[$server,$file]}" \
				'BEGIN {if (n > 0) printf "%.2f", d / hz * 1e6 / n; else print "nan"}')
		fi
	done
	printf '  %-8s %-12s %10.0f qps  %7s ms avg  %7s us CPU/query  (%s)\n' \
		"$file" "$server" "${QPS[$server,$file]}" "${LAT[$server,$file]}" \
		"${CPU[$server,$file]}" "${CODES[$server,$file]}"
}

# The kernel's share: udp_floor echoes each query with QR set, batched like
# gatekeeperd, doing nothing else. No server can spend less per query.
cc -O2 -o "$T/udp_floor" "$BENCH_DIR/udp_floor.c" || die "cannot build udp_floor"
"$T/udp_floor" 127.0.0.1 5302 &
FLOOR_PID=$!

echo
echo "Running (${SECS}s per run):"
for f in "${FILES[@]}"; do
	run_one gatekeeperd "$GKD_PID" 53 "$f"
	run_one dnsmasq "$DM_PID" 5301 "$f"
done
run_one udp_floor "$FLOOR_PID" 5302 allowed
kill "$FLOOR_PID" 2>/dev/null || true

# Every answer must be the expected verdict: a REFUSED means the queries did
# not come from the cage's address, and the figures would be meaningless.
for f in "${FILES[@]}"; do
	for s in gatekeeperd dnsmasq; do
		case "${CODES[$s,$f]}" in
		*REFUSED* | *SERVFAIL*)
			die "$s, $f: unexpected response codes: ${CODES[$s,$f]}" ;;
		esac
	done
done

# ---- summary ---------------------------------------------------------------------
echo
printf '%-8s | %-12s | %10s | %12s | %14s | %10s | %6s\n' \
	file server qps "avg lat ms" "CPU/query us" completed lost
printf '%s\n' "---------+--------------+------------+--------------+----------------+------------+-------"
for f in "${FILES[@]}"; do
	for s in gatekeeperd dnsmasq; do
		printf '%-8s | %-12s | %10.0f | %12s | %14s | %10s | %6s\n' "$f" "$s" \
			"${QPS[$s,$f]}" "${LAT[$s,$f]}" "${CPU[$s,$f]}" \
			"${NDONE[$s,$f]}" "${LOST[$s,$f]}"
	done
done
echo
echo "gatekeeperd / dnsmasq:"
for f in "${FILES[@]}"; do
	printf '  %-8s CPU/query %sx   qps %sx\n' "$f" \
		"$(ratio "${CPU[gatekeeperd,$f]}" "${CPU[dnsmasq,$f]}")" \
		"$(ratio "${QPS[gatekeeperd,$f]}" "${QPS[dnsmasq,$f]}")"
done

echo "kernel floor (udp_floor echo, allowed file): ${CPU[udp_floor,allowed]} us CPU/query;" \
	"above the floor: gatekeeperd $(awk -v a="${CPU[gatekeeperd,allowed]}" \
	-v f="${CPU[udp_floor,allowed]}" 'BEGIN {printf "%.2f", a - f}') us," \
	"dnsmasq $(awk -v a="${CPU[dnsmasq,allowed]}" -v f="${CPU[udp_floor,allowed]}" \
	'BEGIN {printf "%.2f", a - f}') us"

if gk_metrics_fetch 127.0.0.1:9477 "$T/metrics.txt"; then
	echo
	echo "gatekeeperd /metrics after the runs:"
	grep -E '^gatekeeper_(dns_queries_total|dns_cache_(hits|misses)_total|dns_upstream_errors_total)' \
		"$T/metrics.txt" | sed 's/^/  /'
	grep -E '^process_(resident_memory_bytes|cpu_seconds_total)' "$T/metrics.txt" | sed 's/^/  /'
fi
[ "$AUDIT" = 1 ] && [ -f "$T/audit.log" ] &&
	echo "  audit log: $(wc -l <"$T/audit.log") lines, $(du -h "$T/audit.log" | cut -f1)"

echo
r=$(ratio "${CPU[gatekeeperd,allowed]}" "${CPU[dnsmasq,allowed]}")
if awk -v r="$r" 'BEGIN {exit !(r != "nan" && r <= 0.5)}'; then
	verdict="TARGET MET"
else
	verdict="TARGET MISSED"
fi
echo "$verdict: allowed cache-hot CPU/query gatekeeperd ${CPU[gatekeeperd,allowed]} us" \
	"vs dnsmasq ${CPU[dnsmasq,allowed]} us = ${r}x (target <= 0.5x)"
awk -v d="${CPU[dnsmasq,allowed]}" -v f="${CPU[udp_floor,allowed]}" 'BEGIN {
	if (d / 2 < f)
		printf "  note: half of dnsmasq (%.2f us) is below the kernel floor " \
		    "(%.2f us) on this machine: no UDP server can meet it here\n",
		    d / 2, f }'
if awk -v a="${CPU[gatekeeperd,denied]}" -v b="${CPU[gatekeeperd,allowed]}" \
    'BEGIN {exit !(a <= b)}'; then
	verdict="TARGET MET"
else
	verdict="TARGET MISSED"
fi
echo "$verdict: gatekeeperd denied CPU/query ${CPU[gatekeeperd,denied]} us" \
	"<= allowed ${CPU[gatekeeperd,allowed]} us"

[ -n "$IDLE_WARN" ] && printf '%s' "$IDLE_WARN"
if command -v unbound >/dev/null 2>&1; then
	echo "(unbound is installed, but this script does not benchmark it yet)"
else
	echo "(unbound not installed: not compared)"
fi
exit 0
