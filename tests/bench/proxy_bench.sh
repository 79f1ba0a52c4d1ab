#!/usr/bin/env bash
#
# proxy_bench.sh: benchmark of gatekeeperd's egress proxies (SOCKS5 and
# HTTP CONNECT) against a direct connection, dante-server, microsocks and
# two floor relays (a copy relay and a splice relay).
# Not a test: it prints figures, ratios and "TARGET MET" / "TARGET MISSED"
# lines, and exits 0 either way (1 only when something broke: a server
# would not start, gatekeeperd died, a transfer came back wrong).
#
#   sudo bash tests/bench/proxy_bench.sh [path/to/gatekeeperd]   (default build/gatekeeperd)
#
# Environment:
#   GK_BENCH_SECONDS=5        length of each set-up rate run (after 1 s warm-up)
#   GK_BENCH_INFLIGHT="1 16 128"  set-up runs: connections in flight
#   GK_BENCH_BULK_MB=1024     size of the bulk file (MiB, >= 1024 for the issue)
#   GK_BENCH_BULK_RUNS=3      bulk repetitions per server; the best is kept
#   GK_BENCH_IDLE=10000       idle tunnels held through gatekeeperd's SOCKS5
#   GK_BENCH_AUDIT=1          gatekeeperd writes its audit log (0: off)
#   GK_KEEP_TMP=1             keep the temp directory (logs, raw outputs)
#
# Setup, all inside a private network + PID namespace (lib.sh; only lo):
#   nginx       127.0.0.1:80, one worker, sendfile, access log off:
#               /small (100 bytes), /big (GK_BENCH_BULK_MB MiB, a
#               deterministic pattern the load client can check)
#   gatekeeperd 127.0.0.1:1080 (SOCKS5), :3128 (HTTP), DNS :53; one cage
#               for 127.0.0.2 allowing "127.0.0.1/32" (an explicit CIDR is
#               what lets a cage reach loopback); --log-level warn
#   danted      127.0.0.1:1081 (dante-server), socksmethod none, log: error
#   microsocks  127.0.0.1:1082
#   floor-copy  127.0.0.1:1083: socks_load floor, shown as "floor (copy
#               relay)": a minimal single-threaded epoll SOCKS5 relay (no
#               policy) that copies with recv/send through 64 KiB buffers:
#               the least a copying relay costs on this machine
#   floor-splice 127.0.0.1:1084: socks_load floor-splice, shown as "floor
#               (splice relay)": the same relay (same accept loop, handshake
#               and connect) moving bytes with splice(2) through a 256 KiB
#               pipe per direction, as gatekeeperd's relay does: the least a
#               splicing relay costs here, the floor gatekeeperd's bulk is
#               held against
#   hold        127.0.0.1:9000: socks_load hold, the idle tunnels' target
# The load client is tests/bench/socks_load.c (with the parts socks_load.h
# lists), built here with cc -O2. It binds to 127.0.0.2 (the cage's source
# address) for every server, direct included, so every path is the same
# apart from the proxy.
#
# Bulk: one connection, GET /big, MB/s = 10^6 bytes/s of body from socket()
# to EOF; one extra untimed run per path checks every byte. Set-up rate:
# N connections in flight, each a full SOCKS5 no-auth greeting + CONNECT
# (one round trip each, as curl does) or HTTP CONNECT, GET /small, read to
# EOF, close; latency per connection from socket() to EOF. Idle: 10,000
# SOCKS5 tunnels that each carried 6 bytes, then gatekeeperd's VmRSS.
#
# The machine's CPUs are shared by the client, the proxy and nginx: on a
# small machine a proxy in the path competes for CPU with both ends.

# shellcheck disable=SC2317  # functions called through gk_wait_for
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
BENCH_DIR=$(dirname "$GK_SELF")
GK_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"

# shellcheck source=tests/bench/bench_lib.sh
. "$BENCH_DIR/bench_lib.sh"
BENCH_NAME=proxy_bench.sh

bench_exe GKD "${1:-}" build/gatekeeperd
export PATH=$PATH:/usr/sbin:/sbin
gk_need "$BENCH_NAME" nginx danted microsocks cc dig unshare ip sysctl "$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKD"
gk_setup

SECS=${GK_BENCH_SECONDS:-5}
INFLIGHT=${GK_BENCH_INFLIGHT:-1 16 128}
BULK_MB=${GK_BENCH_BULK_MB:-1024}
BULK_RUNS=${GK_BENCH_BULK_RUNS:-3}
NIDLE=${GK_BENCH_IDLE:-10000}
AUDIT=${GK_BENCH_AUDIT:-1}
HZ=$(getconf CLK_TCK)
T=$GK_TMP
SRC=127.0.0.2
TARGET=127.0.0.1:80
HOLD=127.0.0.1:9000
LOAD=$T/socks_load

# server -> "MODE PROXY" for socks_load
declare -A VIA=(
	[direct]="direct -"
	[gk-socks5]="socks5 127.0.0.1:1080"
	[gk-http]="http 127.0.0.1:3128"
	[dante]="socks5 127.0.0.1:1081"
	[microsocks]="socks5 127.0.0.1:1082"
	[floor-copy]="socks5 127.0.0.1:1083"
	[floor-splice]="socks5 127.0.0.1:1084"
)
SERVERS=(direct gk-socks5 gk-http dante microsocks floor-copy floor-splice)

vm() {
	awk -v k="$1:" '$1 == k {print $2}' "/proc/$2/status"
}
nfds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# kv KEY LINE: the value of KEY=... in a socks_load result line.
# wait_port PORT: something accepts on 127.0.0.1:PORT (bounded, 10 s).
port_open() {
	timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}
wait_port() {
	gk_wait_for 100 port_open "$1"
}

# load SERVER ARGS...: run socks_load through SERVER; prints its result
# line, stderr to $T/load.err (appended).
load() {
	local srv=$1 cmd=$2 mode proxy
	local -a p=()
	shift 2
	read -r mode proxy <<<"${VIA[$srv]}"
	[ "$proxy" != - ] && p=(-p "$proxy")
	timeout 400 "$LOAD" "$cmd" -m "$mode" "${p[@]}" -t "$TARGET" -b "$SRC" "$@" \
		2>>"$T/load.err" </dev/null
}

# ---- machine --------------------------------------------------------------------
echo "# gatekeeperd $("$GKD" --version 2>&1 | head -1)"
echo "# $(nginx -v 2>&1 | head -1); dante-server $(dpkg-query -W -f='${Version}' dante-server 2>/dev/null);" \
	"microsocks $(dpkg-query -W -f='${Version}' microsocks 2>/dev/null)"
echo "# $(bench_cpus), kernel $(uname -r)"
echo "# bulk ${BULK_MB} MiB x $BULK_RUNS (best kept); set-up runs ${SECS} s after 1 s warm-up," \
	"in flight: $INFLIGHT; idle tunnels: $NIDLE;" \
	"gatekeeperd audit log: $(onoff "$AUDIT")"

# ---- the namespace ----------------------------------------------------------------
# Only this netns's own settings (lib.sh made it; lo is all it has).
# gatekeeperd needs two fds per tunnel. Raising the hard limit needs
# CAP_SYS_RESOURCE, which some containers drop: then the idle run holds as
# many tunnels as the hard limit allows and scales the figure to NIDLE.
bench_nofile 262144
NIDLE_RUN=$NIDLE
# (9/10 of the limit: set-ups are paced to keep under it while fresh
# tunnels still hold their pipes, and the last fds take longest)
if [ "$NOFILE" != unlimited ] && [ $((2 * NIDLE * 10 / 9 + 64)) -gt "$NOFILE" ]; then
	NIDLE_RUN=$((NOFILE * 9 / 10 / 2))
fi
echo "# open files limit $NOFILE (client, gatekeeperd, hold target)$(
	[ "$NIDLE_RUN" != "$NIDLE" ] && echo ": the hard limit allows $NIDLE_RUN" \
		"idle tunnels, not $NIDLE (no CAP_SYS_RESOURCE to raise it)")"

bench_build_load

# ---- servers ----------------------------------------------------------------------
bench_nginx_conf 127.0.0.1:80
( gk_close_ctl_fds; exec nginx -p "$T/" -c "$T/nginx.conf" -e "$T/nginx-error.log" \
	>"$T/nginx.stderr" 2>&1 ) &
gk_track_pid $!
wait_port 80 || die "nginx did not start"

AUDIT_ARGS=()
[ "$AUDIT" = 1 ] && AUDIT_ARGS=(--audit-log "$T/audit.log")
bench_gk_conf "$T/empty.conf"
gk_start_daemon GKD_PID "$GKD" -f -c "$T/empty.conf" --listen 127.0.0.1 \
	--dns-port 53 --socks-port 1080 --http-port 3128 \
	--control "$T/control.sock" --upstream 127.0.0.1:5300 \
	--metrics 127.0.0.1:9477 "${AUDIT_ARGS[@]}" --log-level ${GK_BENCH_LOG_LEVEL:-warn}
gk_wait_ready "$GKD_PID" "$T/control.sock" 53 ||
	die "gatekeeperd did not become ready"
gk_ctl_open bench "$T/control.sock"
reply=$(gk_ctl_send bench '{"op":"cage.create","source":"127.0.0.2","allow":["127.0.0.1/32"],"label":"bench"}')
[ "$(gk_json_get ok "$reply")" = true ] || die "cage.create failed: $reply"

cat >"$T/danted.conf" <<EOF
logoutput: $T/danted.log
internal: 127.0.0.1 port = 1081
external: 127.0.0.1
socksmethod: none
clientmethod: none
user.privileged: root
user.unprivileged: nobody
client pass { from: 0.0.0.0/0 to: 0.0.0.0/0 log: error }
socks pass { from: 0.0.0.0/0 to: 0.0.0.0/0 log: error }
EOF
( gk_close_ctl_fds; exec danted -f "$T/danted.conf" -N 1 -p "$T/danted.pid" \
	>"$T/danted.stderr" 2>&1 ) &
DANTE_PID=$!
gk_track_pid "$DANTE_PID"
( gk_close_ctl_fds; exec microsocks -i 127.0.0.1 -p 1082 >"$T/microsocks.stderr" 2>&1 ) &
MS_PID=$!
gk_track_pid "$MS_PID"
( gk_close_ctl_fds; exec "$LOAD" hold -l "$HOLD" >"$T/hold.stderr" 2>&1 ) &
HOLD_PID=$!
gk_track_pid "$HOLD_PID"
( gk_close_ctl_fds; exec "$LOAD" floor -l 127.0.0.1:1083 >"$T/floor-copy.stderr" 2>&1 ) &
gk_track_pid $!
( gk_close_ctl_fds; exec "$LOAD" floor-splice -l 127.0.0.1:1084 \
	>"$T/floor-splice.stderr" 2>&1 ) &
gk_track_pid $!
for p in 1080 3128 1081 1082 1083 1084 9000; do
	wait_port "$p" || die "nothing listens on 127.0.0.1:$p"
done

bench_smoke "${SERVERS[@]}"
RSS_START=$(vm VmRSS "$GKD_PID")

# ---- bulk -------------------------------------------------------------------------
declare -A BULK VERIFIED
echo
echo "Bulk: GET /big (${BULK_MB} MiB), one connection:"
for s in "${SERVERS[@]}"; do
	out=$(load "$s" bulk -u /big -V)
	VERIFIED[$s]=$(kv verified "$out")
	if [ "${VERIFIED[$s]}" != yes ] || [ "$(kv errors "$out")" != 0 ]; then
		echo "  $(bench_label "$s"): content check FAILED: $out"
		echo "    $(tail -n 1 "$T/load.err")"
	fi
done
gk_alive "bulk content check"
GK_BULK_T0=$(gk_cpu_ticks "$GKD_PID")
GK_BULK_BYTES=0
for ((r = 1; r <= BULK_RUNS; r++)); do
	for s in "${SERVERS[@]}"; do
		out=$(load "$s" bulk -u /big)
		echo "$s $out" >>"$T/bulk.txt"
		mb=$(kv mbps "$out")
		if [ "$(kv ok "$out")" != 1 ]; then
			echo "  run $r $(bench_label "$s"): FAILED: $out $(tail -n 1 "$T/load.err")"
			continue
		fi
		case $s in gk-*) GK_BULK_BYTES=$((GK_BULK_BYTES + $(kv bytes "$out"))) ;; esac
		printf '  run %d %-20s %8.1f MB/s\n' "$r" "$(bench_label "$s")" "$mb"
		ge "$mb" "${BULK[$s]:-0}" && BULK[$s]=$mb
	done
done
GK_BULK_CPU=$(awk -v t="$(($(gk_cpu_ticks "$GKD_PID") - GK_BULK_T0))" -v hz="$HZ" \
	-v b="$GK_BULK_BYTES" 'BEGIN {if (b > 0) printf "%.2f", t / hz / (b / 1e9); else print "nan"}')
gk_alive "bulk runs"

# ---- set-up rate --------------------------------------------------------------------
declare -A RATE P50 P99 ERRS
echo
echo "Set-up rate: tunnel + GET /small + close, ${SECS} s per run:"
for c in $INFLIGHT; do
	for s in "${SERVERS[@]}"; do
		out=$(load "$s" setup -c "$c" -d "$SECS" -w 1 -u /small)
		echo "$s $out" >>"$T/setup.txt"
		RATE[$s,$c]=$(kv rate "$out")
		P50[$s,$c]=$(kv p50_us "$out")
		P99[$s,$c]=$(kv p99_us "$out")
		ERRS[$s,$c]=$(kv errors "$out")
		[ -n "${RATE[$s,$c]}" ] || die "socks_load setup failed for $s: $out"
		printf '  %-20s %4d in flight %9.1f conn/s  p50 %6s us  p99 %7s us  errors %s\n' \
			"$(bench_label "$s")" "$c" "${RATE[$s,$c]}" "${P50[$s,$c]}" "${P99[$s,$c]}" "${ERRS[$s,$c]}"
		if [ "${ERRS[$s,$c]}" != 0 ]; then
			echo "    $(kv errors "$out") errors: $(printf '%s\n' "$out" |
				tr ' ' '\n' | grep '^err_' | grep -v '=0$' | paste -sd' ' -);" \
				"$(tail -n 1 "$T/load.err")"
		fi
		case $s in gk-*) gk_alive "set-up run $s, $c in flight" ;; esac
	done
done

# ---- idle tunnels -------------------------------------------------------------------
echo
echo "Idle: $NIDLE_RUN SOCKS5 tunnels through gatekeeperd to $HOLD:"
sleep 3		# let the last set-ups' tunnels drain
RSS_BEFORE=$(vm VmRSS "$GKD_PID")
FDS_BEFORE=$(nfds "$GKD_PID")
read -r mode proxy <<<"${VIA[gk-socks5]}"
( gk_close_ctl_fds; exec "$LOAD" idle -m "$mode" -p "$proxy" -t "$HOLD" -b "$SRC" \
	-n "$NIDLE_RUN" -d 300 -P "$GKD_PID" -L "$NOFILE" </dev/null >"$T/idle.out" 2>"$T/idle.err" ) &
IDLE_PID=$!
gk_track_pid "$IDLE_PID"
idle_up() { grep -q '^held=' "$T/idle.out" || ! kill -0 "$IDLE_PID" 2>/dev/null; }
gk_wait_for 1500 idle_up
held_line=$(grep '^held=' "$T/idle.out")
HELD=$(kv held "$held_line")
[ -n "$HELD" ] || die "the idle client did not report (after 150 s): $(cat "$T/idle.out" "$T/idle.err")"
# Relays release the pipes of quiet directions after a while: wait (up
# to 15 s) until gatekeeperd is down to two fds per tunnel.
t0=$(date +%s%N)
released() { [ "$(nfds "$GKD_PID")" -le $((FDS_BEFORE + 2 * HELD + 16)) ]; }
if gk_wait_for 150 released; then
	REL="pipes released $((($(date +%s%N) - t0) / 1000000)) ms after the last set-up"
else
	REL="WARNING: pipes not released within 15 s of the last set-up"
fi
sleep 1
gk_alive "holding $NIDLE_RUN idle tunnels"
RSS_IDLE=$(vm VmRSS "$GKD_PID")
HWM=$(vm VmHWM "$GKD_PID")
FDS_IDLE=$(nfds "$GKD_PID")
kill -TERM "$IDLE_PID" 2>/dev/null
gk_wait_exit "$IDLE_PID" 100 || kill -KILL "$IDLE_PID" 2>/dev/null
END_LINE=$(grep '^alive=' "$T/idle.out")
echo "  $held_line; at the end: ${END_LINE:-<no report>}"
echo "  $REL; gatekeeperd fds while holding: $FDS_IDLE"
[ -s "$T/idle.err" ] && echo "  client: $(tail -n 1 "$T/idle.err")"
drained() { [ "$(nfds "$GKD_PID")" -le $((FDS_BEFORE + 10)) ]; }
gk_wait_for 100 drained || echo "  WARNING: gatekeeperd still has $(nfds "$GKD_PID") fds 10 s after the" \
	"idle client closed its $HELD tunnels (before: $FDS_BEFORE)"
gk_alive "closing the idle tunnels"
RSS_AFTER=$(vm VmRSS "$GKD_PID")
echo "  gatekeeperd VmRSS: at start $((RSS_START / 1024)) MiB, before $((RSS_BEFORE / 1024)) MiB," \
	"holding $((RSS_IDLE / 1024)) MiB (${RSS_IDLE} kB, $((HELD > 0 ? (RSS_IDLE - RSS_BEFORE) * 1024 / HELD : 0)) bytes/tunnel" \
	"over before), after close $((RSS_AFTER / 1024)) MiB; VmHWM $((HWM / 1024)) MiB; fds $FDS_BEFORE -> $FDS_IDLE"

# ---- summary ------------------------------------------------------------------------
echo
printf '%-20s | %9s | %8s | %8s | %8s | %8s\n' bulk "MB/s" "x direct" \
	"x copy" "x splice" "bytes ok"
printf '%-20s | %9s | %8s | %8s | %8s | %8s\n' "" "" "" floor floor ""
printf '%s\n' "---------------------+-----------+----------+----------+----------+---------"
for s in "${SERVERS[@]}"; do
	printf '%-20s | %9s | %8s | %8s | %8s | %8s\n' "$(bench_label "$s")" \
		"${BULK[$s]:-fail}" "$(ratio "${BULK[$s]:-0}" "${BULK[direct]:-0}")" \
		"$(ratio "${BULK[$s]:-0}" "${BULK[floor-copy]:-0}")" \
		"$(ratio "${BULK[$s]:-0}" "${BULK[floor-splice]:-0}")" "${VERIFIED[$s]:-?}"
done
echo "gatekeeperd CPU during the bulk runs: $GK_BULK_CPU s per GB relayed"
echo
printf '%-20s | %8s | %9s | %8s | %8s | %10s | %6s\n' set-up "in flight" "conn/s" \
	"p50 us" "p99 us" "x dante" errors
printf '%s\n' "---------------------+-----------+-----------+----------+----------+------------+-------"
for c in $INFLIGHT; do
	for s in "${SERVERS[@]}"; do
		printf '%-20s | %9s | %9.0f | %8s | %8s | %10s | %6s\n' "$(bench_label "$s")" "$c" \
			"${RATE[$s,$c]}" "${P50[$s,$c]}" "${P99[$s,$c]}" \
			"$(ratio "${RATE[$s,$c]}" "${RATE[dante,$c]}")" "${ERRS[$s,$c]}"
	done
done

if gk_metrics_fetch 127.0.0.1:9477 "$T/metrics.txt"; then
	echo
	echo "gatekeeperd /metrics after the runs:"
	grep -E '^gatekeeper_(proxy|connections|tunnel|relay|denied)' "$T/metrics.txt" |
		head -n 20 | sed 's/^/  /'
	grep -E '^process_(resident_memory_bytes|cpu_seconds_total|open_fds)' "$T/metrics.txt" |
		sed 's/^/  /'
fi
[ "$AUDIT" = 1 ] && [ -f "$T/audit.log" ] &&
	echo "  audit log: $(wc -l <"$T/audit.log") lines, $(du -h "$T/audit.log" | cut -f1)"

C1=${INFLIGHT%% *}
CMAX=${INFLIGHT##* }
echo
echo "ratios (issue's reference on this kind of machine: dante 0.54x direct and ~6,500/s" \
	"at 128 in flight, microsocks 0.17x and ~8,600/s):"
for s in gk-socks5 gk-http dante microsocks floor-copy floor-splice; do
	printf '  %-20s bulk %sx direct; set-up at %s in flight %sx dante, %sx microsocks;' \
		"$(bench_label "$s")" "$(ratio "${BULK[$s]:-0}" "${BULK[direct]:-0}")" "$CMAX" \
		"$(ratio "${RATE[$s,$CMAX]}" "${RATE[dante,$CMAX]}")" \
		"$(ratio "${RATE[$s,$CMAX]}" "${RATE[microsocks,$CMAX]}")"
	printf ' added p50 at %s in flight %s us\n' "$C1" \
		"$(sub "${P50[$s,$C1]}" "${P50[direct,$C1]}")"
done

echo
echo "floors (policy-free SOCKS5 relays, one accept loop, handshake and connect;" \
	"they differ only in how bytes move):"
for s in floor-copy floor-splice; do
	printf '  %-20s bulk %s MB/s = %sx direct; set-up at %s in flight %s/s = %sx direct\n' \
		"$(bench_label "$s")" "${BULK[$s]:-fail}" "$(ratio "${BULK[$s]:-0}" "${BULK[direct]:-0}")" \
		"$CMAX" "${RATE[$s,$CMAX]}" "$(ratio "${RATE[$s,$CMAX]}" "${RATE[direct,$CMAX]}")"
done
echo "  splice relay / copy relay: bulk $(ratio "${BULK[floor-splice]:-0}" "${BULK[floor-copy]:-0}")x," \
	"set-up at $CMAX in flight $(ratio "${RATE[floor-splice,$CMAX]}" "${RATE[floor-copy,$CMAX]}")x"
for s in gk-socks5 gk-http; do
	printf '  %-20s bulk %sx the splice floor (%sx the copy floor); set-up at %s in flight %sx the splice floor\n' \
		"$s" "$(ratio "${BULK[$s]:-0}" "${BULK[floor-splice]:-0}")" \
		"$(ratio "${BULK[$s]:-0}" "${BULK[floor-copy]:-0}")" "$CMAX" \
		"$(ratio "${RATE[$s,$CMAX]}" "${RATE[floor-splice,$CMAX]}")"
done

echo
r=$(ratio "${BULK[gk-socks5]:-0}" "${BULK[direct]:-0}")
echo "$(verdict ge "$r" 0.9): bulk through gatekeeperd SOCKS5 ${BULK[gk-socks5]:-fail} MB/s" \
	"= ${r}x direct ${BULK[direct]:-fail} MB/s (target >= 0.9x)"
r=$(ratio "${BULK[gk-http]:-0}" "${BULK[direct]:-0}")
echo "$(verdict ge "$r" 0.9): bulk through gatekeeperd HTTP CONNECT ${BULK[gk-http]:-fail} MB/s" \
	"= ${r}x direct (target >= 0.9x)"
r=$(ratio "${RATE[gk-socks5,$CMAX]}" "${RATE[dante,$CMAX]}")
echo "$(verdict ge "$r" 2): set-up rate at $CMAX in flight gatekeeperd" \
	"${RATE[gk-socks5,$CMAX]}/s = ${r}x dante ${RATE[dante,$CMAX]}/s (target >= 2x)"
r=$(ratio "${RATE[gk-socks5,$CMAX]}" "${RATE[microsocks,$CMAX]}")
echo "$(verdict ge "$r" 1.5): set-up rate at $CMAX in flight gatekeeperd" \
	"${RATE[gk-socks5,$CMAX]}/s = ${r}x microsocks ${RATE[microsocks,$CMAX]}/s (target >= 1.5x)"
added=$(sub "${P50[gk-socks5,$C1]}" "${P50[direct,$C1]}")
echo "$(verdict awk -v a="$added" 'BEGIN {exit !(a != "nan" && a <= 60)}'): added p50 latency at $C1 in flight" \
	"${added} us (gatekeeperd ${P50[gk-socks5,$C1]} us - direct ${P50[direct,$C1]} us; target <= 60 us)"
# RSS for NIDLE tunnels: measured, or (when the fd limit capped the run)
# the measured per-tunnel growth scaled to NIDLE on top of "before".
RSS_N=$RSS_IDLE
if [ "$HELD" -gt 0 ] && [ "$HELD" -lt "$NIDLE" ]; then
	RSS_N=$((RSS_BEFORE + (RSS_IDLE - RSS_BEFORE) * NIDLE / HELD))
fi
idle_ok() {
	[ "$HELD" -ge "$NIDLE_RUN" ] && [ "$HELD" -gt 0 ] && [ "$RSS_N" -lt $((100 * 1024)) ]
}
if [ "$HELD" -ge "$NIDLE" ]; then
	echo "$(verdict idle_ok): $HELD idle tunnels held in $((RSS_IDLE / 1024)) MiB" \
		"VmRSS (${RSS_IDLE} kB; target: $NIDLE in < 100 MiB)"
else
	echo "$(verdict idle_ok): $HELD of $NIDLE_RUN idle tunnels held (fd limit $NOFILE) in" \
		"$((RSS_IDLE / 1024)) MiB VmRSS; scaled to $NIDLE: $((RSS_N / 1024)) MiB" \
		"(${RSS_N} kB; target: $NIDLE in < 100 MiB)"
fi
for s in "${SERVERS[@]}"; do
	for c in $INFLIGHT; do
		[ "${ERRS[$s,$c]}" = 0 ] ||
			echo "NOTE: $(bench_label "$s") had ${ERRS[$s,$c]} failed connections at $c in flight"
	done
	[ "${VERIFIED[$s]}" = yes ] || echo "NOTE: $(bench_label "$s"): bulk content check ${VERIFIED[$s]:-not run}"
done
for s in floor-copy floor-splice; do
	[ -s "$T/$s.stderr" ] && echo "NOTE: $(bench_label "$s") said: $(tail -n 1 "$T/$s.stderr")"
done
case "${VERIFIED[gk-socks5]}${VERIFIED[gk-http]}" in
yesyes) ;;
*) die "gatekeeperd delivered wrong bytes in the bulk content check" ;;
esac
gk_check_log() {
	grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:" "$T/GKD_PID.log"
}
gk_check_log && die "sanitizer reports in gatekeeperd's log"
exit 0
