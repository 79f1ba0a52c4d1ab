#!/usr/bin/env bash
#
# dns_bench.sh: DNS benchmark of gatekeeperd against dnsmasq configured as
# an allowlisting forwarder in front of the same upstream, with the
# kernel's share of an answer (udp_floor) measured in the same rounds. Not
# a test: it prints figures and "TARGET MET" / "TARGET MISSED" lines, and
# exits 0 either way (1 only when something broke).
#
#   sudo bash tests/bench/dns_bench.sh [path/to/gatekeeperd]   (default build/gatekeeperd)
#
# Environment:
#   GK_BENCH_SECONDS=5       dnsperf run length per (server, query file, round)
#   GK_BENCH_DNS_ROUNDS=7    rounds on the allowed file, each running
#                            udp_floor, gatekeeperd and dnsmasq in turn;
#                            medians are reported (about 3 minutes in all
#                            with the defaults)
#   GK_BENCH_CLIENTS=4       dnsperf -c (sockets)
#   GK_BENCH_OUTSTANDING=64  dnsperf -q (queries in flight)
#   GK_BENCH_RATE=           dnsperf -Q (queries/s cap; empty: as fast as possible)
#   GK_BENCH_RUNS=1          repetitions of the denied and mixed runs; the
#                            best qps run of each is kept
#   GK_BENCH_AUDIT=1         gatekeeperd writes its audit log (0: --audit-log off)
#
# Setup, all inside a private network + PID namespace (lib.sh): the upstream
# is dnsmasq on 127.0.0.1:5300 with local records (nothing is forwarded
# anywhere); the servers under test are
#   gatekeeperd  127.0.0.1:53,   a cage for 127.0.0.2 allowing '*.github.com',
#                --cache-size 10000, --ttl-cap 60, --log-level warn
#   dnsmasq      127.0.0.1:5301, --server=/github.com/127.0.0.1#5300 and
#                --address=/#/ (everything else NXDOMAIN), --cache-size=10000
#   udp_floor    127.0.0.1:5302, the kernel floor (udp_floor.c): echoes each
#                query with QR set, recvmmsg/sendmmsg in batches of 32 like
#                gatekeeperd, no other work; no server can spend less
# dnsperf sends from 127.0.0.2 (-a), the cage's source address. Query files
# (this directory): queries-allowed.txt (cache-hot after a warm-up),
# queries-denied.txt, queries-mixed.txt (half and half).
#
# CPU per query = the server's utime+stime (/proc/PID/stat, all threads)
# over the run, divided by the queries dnsperf saw completed. Above the
# floor = a server's CPU per query minus udp_floor's in the same round:
# what the server itself spends per answer. The floor is most of
# gatekeeperd's figure and varies from run to run by about as much as
# gatekeeperd's margin over it, so the allowed file is measured in
# GK_BENCH_DNS_ROUNDS interleaved rounds (a slow spell of the machine hits
# all three alike) and the summary gives the medians with their min..max;
# the denied and mixed files run once per server after the rounds.
#
# Targets (allowed, cache-hot): gatekeeperd's CPU per query above the floor
# <= 0.25x dnsmasq's above the floor (medians; the rounds that meet it are
# counted); the earlier total CPU per query <= 0.5x dnsmasq's (the kernel's
# share included); denied CPU per query <= allowed.

# shellcheck disable=SC2317  # functions called through gk_wait_for
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

SECS=${GK_BENCH_SECONDS:-5}
ROUNDS=${GK_BENCH_DNS_ROUNDS:-7}
CLIENTS=${GK_BENCH_CLIENTS:-4}
OUTSTANDING=${GK_BENCH_OUTSTANDING:-64}
QRATE=${GK_BENCH_RATE:-}
RUNS=${GK_BENCH_RUNS:-1}
AUDIT=${GK_BENCH_AUDIT:-1}
HZ=$(getconf CLK_TCK)
T=$GK_TMP
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "GK_BENCH_DNS_ROUNDS: '$ROUNDS' is not a positive number"
SRC=127.0.0.2
FILES=(allowed denied mixed)

echo "# gatekeeperd $("$GKD" --version 2>&1 | head -1)"
echo "# $(dnsmasq --version | head -1)"
echo "# dnsperf $(dnsperf -h 2>&1 | sed -n "s/^Version //p")"
echo "# $(bench_cpus), kernel $(uname -r)"
echo "# dnsperf -l $SECS -c $CLIENTS -q $OUTSTANDING${QRATE:+ -Q $QRATE} -a $SRC;" \
	"allowed file: $ROUNDS round(s) of udp_floor, gatekeeperd, dnsmasq (medians);" \
	"denied, mixed: $RUNS run(s) each; gatekeeperd audit log: $(onoff "$AUDIT")"

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

# dnsperf_run SERVER PID PORT FILE TAG: one dnsperf run against PORT
# (output in $T/dnsperf-SERVER-FILE-TAG.txt), the server's CPU ticks
# around it; sets M_QPS, M_DONE, M_LOST, M_LAT (ms), M_CODES and M_CPU
# (us per completed query).
dnsperf_run() {
	local server=$1 pid=$2 port=$3 file=$4 out c0 c1
	local -a rate=()
	[ -n "$QRATE" ] && rate=(-Q "$QRATE")
	out=$T/dnsperf-$server-$file-$5.txt
	c0=$(gk_cpu_ticks "$pid")
	timeout $((SECS + 30)) dnsperf -s 127.0.0.1 -p "$port" -a "$SRC" \
		-d "$BENCH_DIR/queries-$file.txt" -l "$SECS" \
		-c "$CLIENTS" -q "$OUTSTANDING" -t 2 "${rate[@]}" \
		>"$out" 2>&1
	c1=$(gk_cpu_ticks "$pid")
	kill -0 "$pid" 2>/dev/null || die "$server died during the $file run"
	M_QPS=$(awk '/Queries per second:/ {print $4}' "$out")
	[ -n "$M_QPS" ] || die "dnsperf failed: $(tail -n 5 "$out")"
	M_DONE=$(awk '/Queries completed:/ {print $3}' "$out")
	M_LOST=$(awk '/Queries lost:/ {print $3}' "$out")
	M_LAT=$(awk '/Average Latency \(s\):/ {printf "%.3f", $4 * 1000}' "$out")
	M_CODES=$(awk '/Response codes:/ {sub(/.*Response codes: */, ""); print}' "$out")
	M_CPU=$(awk -v d="$((c1 - c0))" -v hz="$HZ" -v n="$M_DONE" \
		'BEGIN {if (n > 0) printf "%.3f", d / hz * 1e6 / n; else print "nan"}')
	# Every answer must be the expected verdict: a REFUSED means the
	# queries did not come from the cage's address, and the figures would
	# be meaningless.
	case $M_CODES in
	*REFUSED* | *SERVFAIL*)
		die "$server, $file: unexpected response codes: $M_CODES" ;;
	esac
}

# run_one SERVER PID PORT FILE: RUNS runs, the best qps one kept.
run_one() {
	local server=$1 pid=$2 port=$3 file=$4 best=-1 r
	for ((r = 1; r <= RUNS; r++)); do
		dnsperf_run "$server" "$pid" "$port" "$file" "$r"
		if awk -v a="$M_QPS" -v b="$best" 'BEGIN {exit !(a > b)}'; then
			best=$M_QPS
			QPS[$server,$file]=$M_QPS
			NDONE[$server,$file]=$M_DONE
			LOST[$server,$file]=$M_LOST
			LAT[$server,$file]=$M_LAT
			CODES[$server,$file]=$M_CODES
			CPU[$server,$file]=$M_CPU
		fi
	done
	printf '  %-8s %-12s %10.0f qps  %7s ms avg  %7s us CPU/query  (%s)\n' \
		"$file" "$server" "${QPS[$server,$file]}" "${LAT[$server,$file]}" \
		"${CPU[$server,$file]}" "${CODES[$server,$file]}"
}

# median X...: the median of the numbers (nan when none).
median() {
	printf '%s\n' "$@" | grep -v '^$' | sort -g | awk '{v[NR] = $1}
	END {
		if (NR == 0) print "nan"
		else if (NR % 2) print v[(NR + 1) / 2]
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
	}'
}

# spread X...: "min..max" of the numbers (- when none).
spread() {
	printf '%s\n' "$@" | grep -v '^$' | sort -g |
		awk 'NR == 1 {lo = $1} {hi = $1} END {if (NR) print lo ".." hi; else print "-"}'
}

# The kernel's share: udp_floor echoes each query with QR set, batched like
# gatekeeperd, doing nothing else. No server can spend less per query.
cc -O2 -o "$T/udp_floor" "$BENCH_DIR/udp_floor.c" || die "cannot build udp_floor"
( gk_close_ctl_fds; exec "$T/udp_floor" 127.0.0.1 5302 >"$T/udp_floor.stderr" 2>&1 ) &
FLOOR_PID=$!
gk_track_pid "$FLOOR_PID"
floor_up() {
	dig @127.0.0.1 -p 5302 -b "$SRC" github.com A +time=1 +tries=1 >/dev/null 2>&1
}
gk_wait_for 50 floor_up || die "udp_floor does not answer on 127.0.0.1:5302"

# Rounds on the allowed (cache-hot) file: udp_floor, gatekeeperd and
# dnsmasq in turn, each round; a server's CPU/query above the floor is
# taken against the same round's floor. Per server: the rounds' figures,
# space-separated.
ROUND_SERVERS=(udp_floor gatekeeperd dnsmasq)
declare -A PID_OF=([udp_floor]=$FLOOR_PID [gatekeeperd]=$GKD_PID [dnsmasq]=$DM_PID)
declare -A PORT_OF=([udp_floor]=5302 [gatekeeperd]=53 [dnsmasq]=5301)
declare -A R_CPU R_ABOVE R_QPS R_LAT R_DONE R_LOST ABOVE
R_RATIO=
R_MET=0
echo
echo "Rounds (allowed file, cache-hot; ${SECS}s per run; udp_floor, gatekeeperd, dnsmasq in turn;" \
	"CPU per answered query):"
for ((r = 1; r <= ROUNDS; r++)); do
	line=
	for s in "${ROUND_SERVERS[@]}"; do
		dnsperf_run "$s" "${PID_OF[$s]}" "${PORT_OF[$s]}" allowed "round$r"
		R_CPU[$s]+=" $M_CPU"
		R_QPS[$s]+=" $M_QPS"
		R_LAT[$s]+=" $M_LAT"
		R_DONE[$s]=$((${R_DONE[$s]:-0} + M_DONE))
		R_LOST[$s]=$((${R_LOST[$s]:-0} + M_LOST))
		CODES[$s,allowed]=$M_CODES
		if [ "$s" = udp_floor ]; then
			floor=$M_CPU
			line+=$(printf ' %s %.3f us' "$s" "$M_CPU")
		else
			above=$(awk -v a="$M_CPU" -v f="$floor" 'BEGIN {printf "%.3f", a - f}')
			R_ABOVE[$s]+=" $above"
			ABOVE[$s]=$above
			line+=$(printf '; %s %.3f us (floor %+.3f)' "$s" "$M_CPU" "$above")
		fi
	done
	rr=$(ratio "${ABOVE[gatekeeperd]}" "${ABOVE[dnsmasq]}")
	R_RATIO+=" $rr"
	awk -v r="$rr" 'BEGIN {exit !(r != "nan" && r <= 0.25)}' && R_MET=$((R_MET + 1))
	printf '  round %d:%s; above the floor gatekeeperd/dnsmasq %sx\n' "$r" "$line" "$rr"
done
# shellcheck disable=SC2086  # the lists split on purpose
for s in "${ROUND_SERVERS[@]}"; do
	CPU[$s,allowed]=$(median ${R_CPU[$s]})
	QPS[$s,allowed]=$(median ${R_QPS[$s]})
	LAT[$s,allowed]=$(median ${R_LAT[$s]})
	NDONE[$s,allowed]=${R_DONE[$s]}
	LOST[$s,allowed]=${R_LOST[$s]}
done

echo
echo "Other files (${SECS}s per run, $RUNS run(s) each, the best qps kept):"
for f in "${FILES[@]}"; do
	[ "$f" = allowed ] && continue
	run_one gatekeeperd "$GKD_PID" 53 "$f"
	run_one dnsmasq "$DM_PID" 5301 "$f"
done
kill "$FLOOR_PID" 2>/dev/null && gk_wait_exit "$FLOOR_PID" 20

# ---- summary ---------------------------------------------------------------------
echo
echo "allowed: medians of $ROUNDS round(s) (completed, lost: all rounds);" \
	"denied, mixed: the best qps run of $RUNS"
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

# shellcheck disable=SC2086  # the lists split on purpose
{
	A_GK=$(median ${R_ABOVE[gatekeeperd]})
	A_DM=$(median ${R_ABOVE[dnsmasq]})
	echo
	echo "CPU per answered query, allowed file, over $ROUNDS round(s) (median, min..max);" \
		"above the floor: the server's minus udp_floor's in the same round:"
	printf '  %-12s | %24s | %24s | %10s\n' server "CPU/query us" "above the floor us" qps
	printf '  %s\n' "-------------+--------------------------+--------------------------+-----------"
	for s in "${ROUND_SERVERS[@]}"; do
		if [ "$s" = udp_floor ]; then
			ab=-
		else
			ab="$(median ${R_ABOVE[$s]}) ($(spread ${R_ABOVE[$s]}))"
		fi
		printf '  %-12s | %24s | %24s | %10.0f\n' "$s" \
			"${CPU[$s,allowed]} ($(spread ${R_CPU[$s]}))" "$ab" "${QPS[$s,allowed]}"
	done
	echo "  gatekeeperd / dnsmasq above the floor, per round: median" \
		"$(median $R_RATIO)x ($(spread $R_RATIO))"
}

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
r=$(ratio "$A_GK" "$A_DM")
echo "$(verdict le "$r" 0.25): allowed cache-hot CPU/query above the kernel floor gatekeeperd $A_GK us" \
	"vs dnsmasq $A_DM us = ${r}x (target <= 0.25x; medians of $ROUNDS rounds," \
	"met in $R_MET of them)"
r=$(ratio "${CPU[gatekeeperd,allowed]}" "${CPU[dnsmasq,allowed]}")
echo "$(verdict le "$r" 0.5): allowed cache-hot total CPU/query (the kernel's share included)" \
	"gatekeeperd ${CPU[gatekeeperd,allowed]} us vs dnsmasq ${CPU[dnsmasq,allowed]} us" \
	"= ${r}x (earlier target <= 0.5x; medians of $ROUNDS rounds)"
awk -v d="${CPU[dnsmasq,allowed]}" -v f="${CPU[udp_floor,allowed]}" 'BEGIN {
	if (d / 2 < f)
		printf "  note: half of dnsmasq (%.2f us) is below the kernel floor " \
		    "(%.2f us) on this machine: no UDP server can meet the 0.5x here\n",
		    d / 2, f }'
echo "$(verdict le "${CPU[gatekeeperd,denied]}" "${CPU[gatekeeperd,allowed]}"): gatekeeperd denied CPU/query ${CPU[gatekeeperd,denied]} us" \
	"<= allowed ${CPU[gatekeeperd,allowed]} us (denied: one best-qps run;" \
	"allowed: the rounds' median)"

[ -n "$IDLE_WARN" ] && printf '%s' "$IDLE_WARN"
if command -v unbound >/dev/null 2>&1; then
	echo "(unbound is installed, but this script does not benchmark it yet)"
else
	echo "(unbound not installed: not compared)"
fi
exit 0
