#!/usr/bin/env bash
#
# limits_bench.sh: what the per-cage limits cost on the normal path. The
# same workloads against two gatekeeperd builds, interleaved, in one run:
# NEW (with its limits doing their bookkeeping but set out of the
# workload's reach, so nothing is refused) and BASE (a build to compare
# with, such as one of the commit before the limits). Prints each figure
# and the ratio NEW / BASE of the medians over the rounds; "TARGET MET"
# when no ratio is more than 5 % on the costly side (the limits cost
# nothing measurable). Not a test: exits 0 either way (1 only when
# something broke).
#
#   sudo bash tests/bench/limits_bench.sh NEW-gatekeeperd BASE-gatekeeperd
#
# Environment: GK_BENCH_SECONDS=5 (per run), GK_BENCH_ROUNDS=5 (rounds of
# both builds, one after the other; the median of each is compared: on a
# shared 2-vCPU machine single runs vary by 20 %), GK_BENCH_INFLIGHT=32.
#
# Workloads, from one cage (127.0.0.2) inside a private network + PID
# namespace (lib.sh), the upstream dnsmasq on 127.0.0.1:5300 and nginx on
# 127.0.0.1:80 (bench_lib.sh's):
#   dns     dnsperf, cached allowed names (queries-allowed.txt): qps and
#           the daemon's CPU per query
#   setup   socks_load setup through SOCKS5: tunnel + GET /small + close,
#           GK_BENCH_INFLIGHT in flight: set-ups a second, p50
#   latency the same, one in flight: p50 (the added cost of a connection)

GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
BENCH_DIR=$(dirname "$GK_SELF")
GK_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"

# shellcheck source=tests/bench/bench_lib.sh
. "$BENCH_DIR/bench_lib.sh"
BENCH_NAME=limits_bench.sh

if [ $# -ne 2 ]; then
	echo "usage: sudo bash tests/bench/limits_bench.sh NEW-gatekeeperd BASE-gatekeeperd" >&2
	exit 2
fi
bench_exe NEW "$1" build/gatekeeperd
bench_exe BASE "$2" build/gatekeeperd
export PATH=$PATH:/usr/sbin:/sbin
gk_need "$BENCH_NAME" dnsperf dnsmasq nginx cc dig unshare ip sysctl "$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$NEW" "$BASE"
gk_setup

SECS=${GK_BENCH_SECONDS:-5}
ROUNDS=${GK_BENCH_ROUNDS:-5}
INFLIGHT=${GK_BENCH_INFLIGHT:-32}
BULK_MB=1
HZ=$(getconf CLK_TCK)
T=$GK_TMP
SRC=127.0.0.2
LOAD=$T/socks_load

echo "# NEW  $NEW ($("$NEW" --version 2>&1 | head -1))"
echo "# BASE $BASE ($("$BASE" --version 2>&1 | head -1))"
echo "# $(bench_cpus), kernel $(uname -r)"
echo "# $ROUNDS rounds of both, ${SECS} s per run, medians compared; set-ups $INFLIGHT in flight"

bench_nofile 65536
bench_build_load
bench_nginx_conf 127.0.0.1:80
( gk_close_ctl_fds; exec nginx -p "$T/" -c "$T/nginx.conf" -e "$T/nginx-error.log" \
	>"$T/nginx.stderr" 2>&1 ) &
gk_track_pid $!
GK_UPSTREAM_QUIET=1 gk_start_upstream 5300 "$T/upstream.log" ||
	die "the upstream dnsmasq did not start"

# NEW's limits: every one on, none within the workloads' reach.
cat >"$T/new.conf" <<EOF
cage-dns-rate = 10000000
cage-dns-upstream = 100000
cage-dns-upstream-rate = 10000000
cage-dns-tcp = 1000000
cage-handshakes = 1000000
cage-tunnels = 1000000
cage-audit-rate = 1000000
EOF
: >"$T/base.conf"

# start WHO: the daemon (GKD_PID) with a cage for SRC, warmed up.
start() {
	local bin=$NEW conf=$T/new.conf reply
	[ "$1" = BASE ] && { bin=$BASE; conf=$T/base.conf; }
	rm -f "$T/control.sock"
	gk_start_daemon GKD_PID "$bin" -f -c "$conf" --listen 127.0.0.1 \
		--dns-port 53 --socks-port 1080 --http-port 3128 \
		--control "$T/control.sock" --upstream 127.0.0.1:5300 \
		--metrics off --log-level warn
	gk_wait_ready "$GKD_PID" "$T/control.sock" 53 ||
		die "$1 did not become ready"
	gk_ctl_open bench "$T/control.sock"
	reply=$(gk_ctl_send bench '{"op":"cage.create","source":"'$SRC'","allow":["*.github.com","127.0.0.1/32"],"label":"bench"}')
	[ "$(gk_json_get ok "$reply")" = true ] || die "$1: cage.create: $reply"
	while read -r name type; do
		gk_dig $SRC "$name" "$type"
		[ "$DIG_STATUS" = NOERROR ] || die "$1: $name $type gave $DIG_STATUS"
	done <"$BENCH_DIR/queries-allowed.txt"
}

stop() {
	gk_ctl_close bench
	gk_stop_daemon "$GKD_PID" TERM
	gk_untrack_pid "$GKD_PID"
}

declare -A QPS CPUQ RATE SP50 LP50

# note KEY WHO VALUE: one round's figure (the medians are compared).
note() {
	local -n arr=$1
	arr[$2]+="$3 "
}

# median LIST: of space-separated numbers.
median() {
	tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "nan";
		    else if (NR % 2) print v[(NR + 1) / 2];
		    else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

run_dns() {
	local who=$1 c0 c1 out=$T/dnsperf-$1.txt qps n
	c0=$(gk_cpu_ticks "$GKD_PID")
	timeout $((SECS + 30)) dnsperf -s 127.0.0.1 -p 53 -a $SRC \
		-d "$BENCH_DIR/queries-allowed.txt" -l "$SECS" -c 4 -q 64 -t 2 \
		>"$out" 2>&1
	c1=$(gk_cpu_ticks "$GKD_PID")
	qps=$(awk '/Queries per second:/ {print $4}' "$out")
	n=$(awk '/Queries completed:/ {print $3}' "$out")
	[ -n "$qps" ] || die "dnsperf failed: $(tail -n 5 "$out")"
	grep -q 'REFUSED\|SERVFAIL' "$out" && die "$who: refusals: $(grep 'Response codes' "$out")"
	note QPS "$who" "$qps"
	note CPUQ "$who" "$(awk -v d=$((c1 - c0)) -v hz="$HZ" -v n="$n" \
		'BEGIN {printf "%.3f", d / hz * 1e6 / n}')"
	printf '  %-5s dns      %9.0f qps  %6.3f us CPU/query\n' "$who" "$qps" \
		"$(awk -v d=$((c1 - c0)) -v hz="$HZ" -v n="$n" 'BEGIN {printf "%.3f", d / hz * 1e6 / n}')"
}

run_setup() {
	local who=$1 c=$2 out
	out=$(timeout 200 "$LOAD" setup -m socks5 -p 127.0.0.1:1080 \
		-t 127.0.0.1:80 -b $SRC -c "$c" -d "$SECS" -w 1 -u /small \
		2>>"$T/load.err" </dev/null)
	[ -n "$(kv rate "$out")" ] || die "$who: socks_load: $out"
	[ "$(kv errors "$out")" = 0 ] || die "$who: errors: $out"
	if [ "$c" = 1 ]; then
		note LP50 "$who" "$(kv p50_us "$out")"
		printf '  %-5s latency  p50 %6s us (1 in flight)\n' "$who" "$(kv p50_us "$out")"
	else
		note RATE "$who" "$(kv rate "$out")"
		note SP50 "$who" "$(kv p50_us "$out")"
		printf '  %-5s setup    %9.1f conn/s  p50 %6s us (%s in flight)\n' \
			"$who" "$(kv rate "$out")" "$(kv p50_us "$out")" "$c"
	fi
}

echo
for ((r = 1; r <= ROUNDS; r++)); do
	echo "Round $r:"
	for who in NEW BASE; do
		start "$who"
		run_dns "$who"
		run_setup "$who" "$INFLIGHT"
		run_setup "$who" 1
		stop
	done
done

# line WHAT LIST-NEW LIST-BASE HIGHER: the medians and their ratio, no
# more than 5 % on the costly side (HIGHER 1: higher is better).
MET=1
line() {
	local what=$1 new base higher=$4 r
	new=$(median "$2")
	base=$(median "$3")
	r=$(ratio "$new" "$base")
	printf '  %-34s NEW %10.2f  BASE %10.2f  NEW/BASE %s\n' "$what" "$new" "$base" "$r"
	if [ "$higher" = 1 ]; then ge "$r" 0.95 || MET=0; else ge 1.05 "$r" || MET=0; fi
}
echo
echo "Medians of $ROUNDS rounds (higher is better for qps and conn/s, lower for the rest):"
line "dns qps" "${QPS[NEW]}" "${QPS[BASE]}" 1
line "dns CPU/query (us)" "${CPUQ[NEW]}" "${CPUQ[BASE]}" 0
line "set-ups/s ($INFLIGHT in flight)" "${RATE[NEW]}" "${RATE[BASE]}" 1
line "set-up p50 (us, $INFLIGHT in flight)" "${SP50[NEW]}" "${SP50[BASE]}" 0
line "connection p50 (us, 1 in flight)" "${LP50[NEW]}" "${LP50[BASE]}" 0
echo
echo "limits cost nothing measurable (no median ratio more than 5 % worse): $(verdict test $MET = 1)"
