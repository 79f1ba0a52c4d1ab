#!/usr/bin/env bash
#
# proxy_bench.sh: benchmark of gatekeeperd's egress proxies (SOCKS5 and
# HTTP CONNECT) against a direct connection, dante-server, microsocks and
# floor relays: policy-free relays that show what a relay costs at least
# on this machine, each gatekeeperd path held against the floor that
# speaks its protocol. Not a test: it prints figures, ratios and
# "TARGET MET" / "TARGET MISSED" lines, and exits 0 either way (1 only when
# something broke: a server would not start, gatekeeperd died, a transfer
# through gatekeeperd or a floor came back wrong).
#
#   sudo bash tests/bench/proxy_bench.sh [path/to/gatekeeperd]   (default build/gatekeeperd)
#
# Environment:
#   GK_BENCH_SECONDS=3        length of each set-up rate run (after 1 s
#                             warm-up; 3 s, not 5, since every run is
#                             repeated in GK_BENCH_ROUNDS rounds)
#   GK_BENCH_INFLIGHT="1 16 128"  set-up runs: connections in flight
#   GK_BENCH_ROUNDS=3         set-up rounds; the median of the rounds is shown
#   GK_BENCH_BULK_MB=1024     size of the bulk file (MiB, >= 1024 for the issue)
#   GK_BENCH_BULK_RUNS=3      bulk rounds; the best run of each server is kept
#   GK_BENCH_IDLE=10000       idle tunnels held through gatekeeperd's SOCKS5
#   GK_BENCH_AUDIT=1          gatekeeperd writes its audit log (0: off)
#   GK_BENCH_LOG_LEVEL=warn   gatekeeperd's --log-level
#   GK_KEEP_TMP=1             keep the temp directory (logs, raw outputs)
# A default run takes about ten minutes on two CPUs.
#
# Topology, all inside namespaces this script makes (lib.sh: a private
# network, mount and PID namespace, gone when the script exits; the
# machine's own interfaces, routes and nftables are never touched):
#   host      this script's netns: the load client, gatekeeperd, dante,
#             microsocks and the floors, all listening on 127.0.0.1; up0
#             198.51.100.249/29, one end of a veth (e2e_net.sh's en_netns)
#   internet  a second netns behind that veth (inet0 198.51.100.250/29,
#             documentation addresses on its lo, a default route back;
#             the host routes 192.0.2.0/24 through it):
#               nginx on 192.0.2.10:80, one worker, sendfile, access log
#               off: /small (100 bytes), /big (GK_BENCH_BULK_MB MiB, a
#               deterministic pattern the load client can check)
#               hold on 192.0.2.10:9000 (socks_load hold), the idle
#               tunnels' target
# Every path crosses the veth once each way: the client's own connection
# (direct) or the relay's connection to nginx. Client -> relay stays on
# loopback: the client binds 127.0.0.2 (the cage's source address) for
# every server but direct, which leaves from up0's address (a loopback
# source cannot leave through a veth).
#
# Servers (the names in the output; relays on 127.0.0.1):
#   direct             no relay: the client connects to 192.0.2.10:80
#   gk-socks5          gatekeeperd :1080 (SOCKS5); one cage for 127.0.0.2
#                      allowing "192.0.2.10/32", the per-cage caps off,
#                      DNS :53, --log-level warn, audit log on
#   gk-http            the same gatekeeperd on :3128 (HTTP CONNECT)
#   dante              danted :1081 (dante-server), external 198.51.100.249,
#                      socksmethod none, log: error
#   microsocks         microsocks :1082
#   floor-copy         :1083 "floor (copy relay)": socks_load floor, SOCKS5,
#                      recv/send through 64 KiB buffers
#   floor-splice       :1084 "floor (splice relay)": socks_load floor-splice,
#                      SOCKS5, splice(2) through a 256 KiB pipe per
#                      direction as gatekeeperd's relay: the SOCKS5 floor
#   floor-splice-http  :1085 "floor (splice, CONNECT)": socks_load
#                      floor-splice-http, the same relay behind a minimal
#                      HTTP CONNECT (request head to its blank line, "200
#                      Connection established" once connected): the
#                      CONNECT floor
#   floor-splice-bare  :1086 "floor (splice, bare)": socks_load
#                      floor-splice-bare -t 192.0.2.10:80, the same relay
#                      with no protocol: every accepted connection is
#                      forwarded at once. Against it the protocols' round
#                      trips are measured (floor-splice - bare: SOCKS5's
#                      two; floor-splice-http - bare: CONNECT's one), and
#                      against direct what a relay adds apart from them
# The floors are one program (tests/bench/floor.c): the same
# single-threaded epoll accept loop, connect and relay code, no policy;
# they differ only in the protocol (and floor-copy in the byte moving).
# The load client is tests/bench/socks_load.c (with the parts socks_load.h
# lists), built here with cc -O2.
#
# Figures:
#   bulk     one connection, GET /big, MB/s = 10^6 bytes/s of body from
#            socket() to EOF. First one untimed run per server checks every
#            byte; then GK_BENCH_BULK_RUNS rounds, each running every server
#            once in turn; the best run of each server is shown.
#   CPU      s per GB (10^9 bytes of body) for every relay: its process
#            tree's CPU ticks (bench_tree_ticks: utime + stime of the
#            process and of each live descendant from /proc/PID/stat, plus
#            the cutime + cstime of those its members reaped; dante's
#            mother and the children it forks are all counted) read just
#            before and just after each of its timed bulk runs, summed over
#            the runs and divided by the bytes they relayed. gatekeeperd is
#            one process: its SOCKS5 and CONNECT runs are counted apart.
#            Ticks are 1/CLK_TCK s; what the kernel does in the relay's
#            context (its system calls, TCP on loopback and the veth) is
#            included.
#   set-ups  N connections in flight, each a full tunnel set-up (SOCKS5:
#            no-auth greeting + CONNECT, one round trip each, as curl does;
#            HTTP CONNECT: one round trip; bare and direct: none), GET
#            /small, read to EOF, close; latency per connection from
#            socket() to EOF. GK_BENCH_ROUNDS rounds, each running every
#            server at every in-flight level in turn, so that a drift of the
#            machine's speed weighs on every server alike; the median of
#            the rounds' rate, p50 and p99 is shown.
#   idle     GK_BENCH_IDLE SOCKS5 tunnels through gatekeeperd to hold, each
#            having carried 6 bytes, then gatekeeperd's VmRSS (fewer when
#            the open files limit cannot be raised enough for one cage to
#            hold them all: the growth per tunnel is then scaled).
#
# Summary: for each server bulk MB/s (x direct, x its splice floor), CPU
# s/GB (x its splice floor), p50 at 1 in flight (added over direct, minus
# its splice floor's p50), set-ups/s at the highest in-flight level (x its
# splice floor, x dante). Its splice floor: floor-splice for the SOCKS5
# servers (gk-socks5, dante, microsocks, floor-copy), floor-splice-http
# for gk-http; floor-splice-bare is held against floor-splice (the same
# relay), but its p50 against direct. Targets (the issue's):
#   added p50 at 1 in flight: gk-http within 40 us of floor-splice-http's,
#     gk-socks5 within 70 us of floor-splice's (both sides of each
#     comparison include the protocol's own round trips)
#   set-ups at 128 (the highest level) in flight: gk-socks5 and gk-http
#     each >= its splice floor's rate and >= 2x dante's
#   bulk: each gatekeeperd path >= its splice floor's MB/s, and its CPU per
#     GB <= that floor's
#   idle: GK_BENCH_IDLE tunnels held in under 100 MiB of VmRSS
#
# The machine's CPUs are shared by the client, the relay and nginx: on a
# small machine a relay competes for CPU with both ends. Anything else
# running on the machine makes the figures noisy; the rounds spread that
# over all servers.

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
gk_need "$BENCH_NAME" nginx danted microsocks cc dig unshare nsenter ip sysctl \
	"$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKD"
gk_setup
# shellcheck source=tests/integration/e2e_net.sh
. "$GK_ROOT/tests/integration/e2e_net.sh"

SECS=${GK_BENCH_SECONDS:-3}
INFLIGHT=${GK_BENCH_INFLIGHT:-1 16 128}
ROUNDS=${GK_BENCH_ROUNDS:-3}
BULK_MB=${GK_BENCH_BULK_MB:-1024}
BULK_RUNS=${GK_BENCH_BULK_RUNS:-3}
NIDLE=${GK_BENCH_IDLE:-10000}
AUDIT=${GK_BENCH_AUDIT:-1}
HZ=$(getconf CLK_TCK)
T=$GK_TMP
SRC=127.0.0.2
NGINX_ADDR=${EN_ADDR[github.com]}	# 192.0.2.10
TARGET=$NGINX_ADDR:80
HOLD=$NGINX_ADDR:9000
LOAD=$T/socks_load

# server -> "MODE PROXY TARGET SOURCE" for socks_load ("-": none)
declare -A VIA=(
	[direct]="direct - $TARGET -"
	[gk-socks5]="socks5 127.0.0.1:1080 $TARGET $SRC"
	[gk-http]="http 127.0.0.1:3128 $TARGET $SRC"
	[dante]="socks5 127.0.0.1:1081 $TARGET $SRC"
	[microsocks]="socks5 127.0.0.1:1082 $TARGET $SRC"
	[floor-copy]="socks5 127.0.0.1:1083 $TARGET $SRC"
	[floor-splice]="socks5 127.0.0.1:1084 $TARGET $SRC"
	[floor-splice-http]="http 127.0.0.1:1085 $TARGET $SRC"
	[floor-splice-bare]="direct - 127.0.0.1:1086 $SRC"
)
SERVERS=(direct gk-socks5 gk-http dante microsocks floor-copy floor-splice
	floor-splice-http floor-splice-bare)
FLOORS=(floor-copy floor-splice floor-splice-http floor-splice-bare)
# floor -> "socks_load command, listen address"
declare -A FLOOR_CMD=(
	[floor-copy]="floor 127.0.0.1:1083"
	[floor-splice]="floor-splice 127.0.0.1:1084"
	[floor-splice-http]="floor-splice-http 127.0.0.1:1085"
	[floor-splice-bare]="floor-splice-bare 127.0.0.1:1086"
)
# server -> the splice floor it is held against (its protocol's); PREF:
# the one its p50 is held against (the bare floor's: direct)
declare -A FLOOR_OF=(
	[gk-socks5]=floor-splice [dante]=floor-splice [microsocks]=floor-splice
	[floor-copy]=floor-splice [floor-splice]=floor-splice
	[gk-http]=floor-splice-http [floor-splice-http]=floor-splice-http
	[floor-splice-bare]=floor-splice
)
declare -A PREF
for s in "${!FLOOR_OF[@]}"; do
	PREF[$s]=${FLOOR_OF[$s]}
done
PREF[floor-splice-bare]=direct
declare -A RELAY_PID	# server -> the pid whose process tree relays

vm() {
	awk -v k="$1:" '$1 == k {print $2}' "/proc/$2/status"
}
nfds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# port_open IP:PORT: something accepts there (bounded, 1 s).
port_open() {
	timeout 1 bash -c "exec 3<>/dev/tcp/${1%:*}/${1#*:}" 2>/dev/null
}
# wait_port IP:PORT: port_open, retried for up to 10 s.
wait_port() {
	gk_wait_for 100 port_open "$1"
}

# load SERVER CMD ARGS...: run socks_load CMD through SERVER; prints its
# result line, stderr to $T/load.err (appended).
load() {
	local srv=$1 cmd=$2 mode proxy to src
	local -a a=()
	shift 2
	read -r mode proxy to src <<<"${VIA[$srv]}"
	[ "$proxy" != - ] && a+=(-p "$proxy")
	[ "$src" != - ] && a+=(-b "$src")
	timeout 400 "$LOAD" "$cmd" -m "$mode" -t "$to" "${a[@]}" "$@" \
		2>>"$T/load.err" </dev/null
}

# ---- machine --------------------------------------------------------------------
echo "# gatekeeperd $("$GKD" --version 2>&1 | head -1)"
echo "# $(nginx -v 2>&1 | head -1); dante-server $(dpkg-query -W -f='${Version}' dante-server 2>/dev/null);" \
	"microsocks $(dpkg-query -W -f='${Version}' microsocks 2>/dev/null)"
echo "# $(bench_cpus), kernel $(uname -r)"
echo "# bulk ${BULK_MB} MiB x $BULK_RUNS rounds (best kept); set-up runs ${SECS} s after 1 s" \
	"warm-up, in flight: $INFLIGHT, $ROUNDS rounds (median kept); idle tunnels: $NIDLE;" \
	"gatekeeperd audit log: $(onoff "$AUDIT")"
echo "# origin: nginx on $TARGET in a second netns behind a veth; relays on 127.0.0.1," \
	"the client from $SRC (direct: from up0)"

# ---- the namespaces -----------------------------------------------------------------
# Only these netns's own settings (lib.sh made this one, en_netns the
# internet one). gatekeeperd needs two fds per tunnel, and one cage gets
# at most half of its descriptor budget (the open files limit less an
# eighth of it, 16 to 512, kept back; README "Descriptors"). Raising the
# hard limit needs CAP_SYS_RESOURCE, which some containers drop: then the
# idle run holds as many tunnels as the cage may and scales the figure to
# NIDLE.
bench_nofile 262144
NIDLE_RUN=$NIDLE
CAGE_TUNNELS=
if [ "$NOFILE" != unlimited ]; then
	reserve=$((NOFILE / 8))
	[ "$reserve" -gt 512 ] && reserve=512
	[ "$reserve" -lt 16 ] && reserve=16
	CAGE_TUNNELS=$(((NOFILE - reserve) / 2 / 2))
	# (9/10 of it: the set-ups in progress charge two fds each too)
	if [ $((NIDLE * 10 / 9)) -gt "$CAGE_TUNNELS" ]; then
		NIDLE_RUN=$((CAGE_TUNNELS * 9 / 10))
	fi
fi
echo "# open files limit $NOFILE (client, gatekeeperd, hold target)$(
	[ "$NIDLE_RUN" != "$NIDLE" ] && echo ": one cage may hold $CAGE_TUNNELS" \
		"tunnels, the idle run $NIDLE_RUN, not $NIDLE (no CAP_SYS_RESOURCE" \
		"to raise the limit)")"
en_netns || die "the internet netns and its veth could not be set up"
en_in sysctl -qw net.ipv4.ip_local_port_range="10000 65000" ||
	die "cannot set ip_local_port_range in the internet netns"

bench_build_load

# ---- servers ----------------------------------------------------------------------
bench_nginx_conf "$TARGET"
: >"$T/nginx.stderr"
inet_bg NGINX_PID "$EN_NS_PID" "$T/nginx.stderr" \
	nginx -p "$T/" -c "$T/nginx.conf" -e "$T/nginx-error.log"
wait_port "$TARGET" || die "nginx did not start on $TARGET"
inet_bg HOLD_PID "$EN_NS_PID" "$T/hold.stderr" "$LOAD" hold -l "$HOLD"

AUDIT_ARGS=()
[ "$AUDIT" = 1 ] && AUDIT_ARGS=(--audit-log "$T/audit.log")
bench_gk_conf "$T/empty.conf"
gk_start_daemon GKD_PID "$GKD" -f -c "$T/empty.conf" --listen 127.0.0.1 \
	--dns-port 53 --socks-port 1080 --http-port 3128 \
	--control "$T/control.sock" --upstream 127.0.0.1:5300 \
	--metrics 127.0.0.1:9477 "${AUDIT_ARGS[@]}" --log-level "${GK_BENCH_LOG_LEVEL:-warn}"
gk_wait_ready "$GKD_PID" "$T/control.sock" 53 ||
	die "gatekeeperd did not become ready"
gk_ctl_open bench "$T/control.sock"
req="{\"op\":\"cage.create\",\"source\":\"$SRC\","
req+="\"allow\":[\"$NGINX_ADDR/32\"],\"label\":\"bench\"}"
reply=$(gk_ctl_send bench "$req")
[ "$(gk_json_get ok "$reply")" = true ] || die "cage.create failed: $reply"
RELAY_PID[gk-socks5]=$GKD_PID
RELAY_PID[gk-http]=$GKD_PID

bench_danted 127.0.0.1 1081 "$EN_HOST_ADDR"
RELAY_PID[dante]=$BENCH_DANTE_PID
( gk_close_ctl_fds; exec microsocks -i 127.0.0.1 -p 1082 >"$T/microsocks.stderr" 2>&1 ) &
RELAY_PID[microsocks]=$!
gk_track_pid "${RELAY_PID[microsocks]}"
for s in "${FLOORS[@]}"; do
	read -r cmd at <<<"${FLOOR_CMD[$s]}"
	a=(-l "$at")
	[ "$s" = floor-splice-bare ] && a+=(-t "$TARGET")
	( gk_close_ctl_fds; exec "$LOAD" "$cmd" "${a[@]}" >"$T/$s.stderr" 2>&1 ) &
	RELAY_PID[$s]=$!
	gk_track_pid "${RELAY_PID[$s]}"
done
for p in 1080 3128 1081 1082 1083 1084 1085 1086; do
	wait_port "127.0.0.1:$p" || die "nothing listens on 127.0.0.1:$p"
done
wait_port "$HOLD" || die "the idle tunnels' target did not start on $HOLD"

bench_smoke "${SERVERS[@]}"
RSS_START=$(vm VmRSS "$GKD_PID")

# ---- bulk -------------------------------------------------------------------------
declare -A BULK VERIFIED CPU_T CPU_B
echo
echo "Bulk: GET /big (${BULK_MB} MiB), one connection; relay CPU around each timed run:"
for s in "${SERVERS[@]}"; do
	out=$(load "$s" bulk -u /big -V)
	VERIFIED[$s]=$(kv verified "$out")
	if [ "${VERIFIED[$s]}" != yes ] || [ "$(kv errors "$out")" != 0 ]; then
		echo "  $(bench_label "$s"): content check FAILED: $out"
		echo "    $(tail -n 1 "$T/load.err")"
	fi
done
gk_alive "bulk content check"
for ((r = 1; r <= BULK_RUNS; r++)); do
	for s in "${SERVERS[@]}"; do
		pid=${RELAY_PID[$s]:-}
		c0=0 c1=0
		[ -n "$pid" ] && c0=$(bench_tree_ticks "$pid")
		out=$(load "$s" bulk -u /big)
		[ -n "$pid" ] && c1=$(bench_tree_ticks "$pid")
		echo "$r $s $out cpu_ticks=$((c1 - c0))" >>"$T/bulk.txt"
		if [ "$(kv ok "$out")" != 1 ]; then
			echo "  run $r $(bench_label "$s"): FAILED: $out $(tail -n 1 "$T/load.err")"
			continue
		fi
		mb=$(kv mbps "$out")
		cpu=
		if [ -n "$pid" ]; then
			CPU_T[$s]=$((${CPU_T[$s]:-0} + c1 - c0))
			CPU_B[$s]=$((${CPU_B[$s]:-0} + $(kv bytes "$out")))
			cpu=$(awk -v t="$((c1 - c0))" -v hz="$HZ" \
				'BEGIN {printf "relay CPU %.2f s", t / hz}')
		fi
		printf '  run %d %-24s %8.1f MB/s  %s\n' "$r" "$(bench_label "$s")" "$mb" "$cpu"
		ge "$mb" "${BULK[$s]:-0}" && BULK[$s]=$mb
	done
done
gk_alive "bulk runs"
# CPU[server]: s per GB relayed over its timed runs ("-": no relay)
declare -A CPU
for s in "${SERVERS[@]}"; do
	if [ -z "${RELAY_PID[$s]:-}" ]; then
		CPU[$s]=-
	elif [ "${CPU_B[$s]:-0}" -gt 0 ]; then
		CPU[$s]=$(awk -v t="${CPU_T[$s]}" -v hz="$HZ" -v b="${CPU_B[$s]}" \
			'BEGIN {printf "%.3f", t / hz / (b / 1e9)}')
	else
		CPU[$s]=nan
	fi
done

# ---- set-up rate --------------------------------------------------------------------
declare -A RATES P50S P99S ERRS RATE P50 P99
echo
echo "Set-up rate: tunnel + GET /small + close, ${SECS} s per run, $ROUNDS rounds:"
bench_setup_done() {
	case $1 in gk-*) gk_alive "set-up run $1, $2 in flight" ;; esac
}
bench_setup_rounds 24 "${SERVERS[@]}"

# ---- idle tunnels -------------------------------------------------------------------
echo
echo "Idle: $NIDLE_RUN SOCKS5 tunnels through gatekeeperd to $HOLD:"
sleep 3		# let the last set-ups' tunnels drain
RSS_BEFORE=$(vm VmRSS "$GKD_PID")
FDS_BEFORE=$(nfds "$GKD_PID")
( gk_close_ctl_fds; exec "$LOAD" idle -m socks5 -p 127.0.0.1:1080 -t "$HOLD" -b "$SRC" \
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

# ---- details ------------------------------------------------------------------------
C1=${INFLIGHT%% *}
CMAX=${INFLIGHT##* }
# dashes N: a rule of N dashes (the tables' separators)
dashes() { printf '%*s' "$1" '' | tr ' ' -; }
# fl SERVER: its splice floor, "-" for direct
fl() { echo "${FLOOR_OF[$1]:--}"; }
# vs FLOOR CMD ARGS...: CMD ARGS, or "-" when FLOOR is "-" (direct)
vs() {
	if [ "$1" = - ]; then
		echo -
	else
		"${@:2}"
	fi
}

echo
printf '%-24s | %9s | %8s | %8s | %8s | %9s | %8s | %8s\n' bulk "MB/s" "x direct" \
	"x copy" "x splice" "CPU s/GB" "x splice" "bytes ok"
printf '%-24s | %9s | %8s | %8s | %8s | %9s | %8s | %8s\n' "" best "" floor floor \
	"" floor ""
printf '%s+%s+%s+%s+%s+%s+%s+%s\n' "$(dashes 25)" "$(dashes 11)" "$(dashes 10)" \
	"$(dashes 10)" "$(dashes 10)" "$(dashes 11)" "$(dashes 10)" "$(dashes 9)"
for s in "${SERVERS[@]}"; do
	f=$(fl "$s")
	printf '%-24s | %9s | %8s | %8s | %8s | %9s | %8s | %8s\n' "$(bench_label "$s")" \
		"${BULK[$s]:-fail}" "$(ratio "${BULK[$s]:-}" "${BULK[direct]:-}")" \
		"$(ratio "${BULK[$s]:-}" "${BULK[floor-copy]:-}")" \
		"$(vs "$f" ratio "${BULK[$s]:-}" "${BULK[$f]:-}")" "${CPU[$s]}" \
		"$(vs "$f" ratio "${CPU[$s]}" "${CPU[$f]:-}")" "${VERIFIED[$s]:-?}"
done
echo "(CPU: the relay's process tree, utime + stime ticks of 1/$HZ s around its timed runs;" \
	"x splice floor: against the server's splice floor, floor-splice or for gk-http" \
	"floor-splice-http)"
echo
printf '%-24s | %9s | %9s | %8s | %8s | %8s | %8s | %6s\n' "set-up (median)" "in flight" \
	"conn/s" "p50 us" "p99 us" "x splice" "x dante" errors
printf '%-24s | %9s | %9s | %8s | %8s | %8s | %8s | %6s\n' "" "" "" "" "" floor "" ""
printf '%s+%s+%s+%s+%s+%s+%s+%s\n' "$(dashes 25)" "$(dashes 11)" "$(dashes 11)" \
	"$(dashes 10)" "$(dashes 10)" "$(dashes 10)" "$(dashes 10)" "$(dashes 7)"
for c in $INFLIGHT; do
	for s in "${SERVERS[@]}"; do
		f=$(fl "$s")
		printf '%-24s | %9s | %9.0f | %8s | %8s | %8s | %8s | %6s\n' "$(bench_label "$s")" "$c" \
			"${RATE[$s,$c]}" "${P50[$s,$c]}" "${P99[$s,$c]}" \
			"$(vs "$f" ratio "${RATE[$s,$c]}" "${RATE[$f,$c]:-}")" \
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

# ---- summary ------------------------------------------------------------------------
SFMT='%-24s | %8s %8s %7s | %8s %7s | %7s %8s %7s | %9s %7s %7s\n'
echo
echo "Summary: bulk best of $BULK_RUNS runs, set-ups median of $ROUNDS rounds; \"floor\": the" \
	"server's splice floor (see below)"
# shellcheck disable=SC2059  # the format is SFMT
{
	printf '%-24s | %-25s | %-16s | %-24s | %s\n' "" "bulk" "CPU per GB" \
		"p50 at $C1 in flight, us" "set-ups at $CMAX in flight"
	printf "$SFMT" server "MB/s" "x direct" "x floor" "s" "x floor" "p50" \
		"+direct" "-floor" "conn/s" "x floor" "x dante"
	printf '%s+%s+%s+%s+%s\n' "$(dashes 25)" "$(dashes 27)" "$(dashes 18)" \
		"$(dashes 26)" "$(dashes 26)"
	for s in "${SERVERS[@]}"; do
		f=$(fl "$s")
		pr=${PREF[$s]:--}
		printf "$SFMT" "$(bench_label "$s")" "${BULK[$s]:-fail}" \
			"$(ratio "${BULK[$s]:-}" "${BULK[direct]:-}")" \
			"$(vs "$f" ratio "${BULK[$s]:-}" "${BULK[$f]:-}")" "${CPU[$s]}" \
			"$(vs "$f" ratio "${CPU[$s]}" "${CPU[$f]:-}")" "${P50[$s,$C1]}" \
			"$(sub "${P50[$s,$C1]}" "${P50[direct,$C1]}")" \
			"$(vs "$pr" sub "${P50[$s,$C1]}" "${P50[$pr,$C1]:-}")" \
			"$(printf '%.0f' "${RATE[$s,$CMAX]}")" \
			"$(vs "$f" ratio "${RATE[$s,$CMAX]}" "${RATE[$f,$CMAX]:-}")" \
			"$(ratio "${RATE[$s,$CMAX]}" "${RATE[dante,$CMAX]}")"
	done
}
echo "  floor: floor-splice (SOCKS5) for gk-socks5, dante, microsocks, floor-copy;" \
	"floor-splice-http (CONNECT) for gk-http;"
echo "  floor-splice-bare: floor-splice (the same relay), but its -floor p50 is against direct"
echo "  (nan: no such floor or figure)"

rt() { sub "${P50[$1,$C1]}" "${P50[$2,$C1]}"; }
echo
echo "p50 at $C1 in flight, taken apart (medians of $ROUNDS rounds):"
printf '  %-66s %6s us\n' \
	"a splice relay without a protocol (floor-splice-bare - direct):" \
	"$(rt floor-splice-bare direct)" \
	"SOCKS5 greeting + CONNECT, two round trips (floor-splice - bare):" \
	"$(rt floor-splice floor-splice-bare)" \
	"HTTP CONNECT, one round trip (floor-splice-http - bare):" \
	"$(rt floor-splice-http floor-splice-bare)"
echo "  gatekeeperd over its floor: SOCKS5 $(rt gk-socks5 floor-splice) us," \
	"CONNECT $(rt gk-http floor-splice-http) us; over the bare floor: SOCKS5" \
	"$(rt gk-socks5 floor-splice-bare) us, CONNECT $(rt gk-http floor-splice-bare) us"
echo "  gatekeeperd set-ups at $CMAX in flight: SOCKS5" \
	"$(ratio "${RATE[gk-socks5,$CMAX]}" "${RATE[microsocks,$CMAX]}")x microsocks," \
	"CONNECT $(ratio "${RATE[gk-http,$CMAX]}" "${RATE[microsocks,$CMAX]}")x microsocks;" \
	"bulk SOCKS5 $(ratio "${BULK[gk-socks5]:-}" "${BULK[direct]:-}")x direct," \
	"CONNECT $(ratio "${BULK[gk-http]:-}" "${BULK[direct]:-}")x direct"

# ---- targets ------------------------------------------------------------------------
echo
for s in gk-http gk-socks5; do
	f=$(fl "$s")
	case $s in
	gk-http) max=40 what="HTTP CONNECT" rts="CONNECT's round trip" ;;
	*) max=70 what=SOCKS5 rts="SOCKS5's two round trips" ;;
	esac
	d=$(rt "$s" "$f")
	echo "$(verdict le "$d" "$max"): added p50 at $C1 in flight, gatekeeperd $what" \
		"$(rt "$s" direct) us over direct = $d us over $f's $(rt "$f" direct) us" \
		"(p50 ${P50[$s,$C1]} us against ${P50[$f,$C1]} us; both pay $rts;" \
		"target <= $max us over the floor's)"
done
for s in gk-socks5 gk-http; do
	f=$(fl "$s")
	r=$(ratio "${RATE[$s,$CMAX]}" "${RATE[$f,$CMAX]}")
	echo "$(verdict ge "$r" 1): set-ups at $CMAX in flight, $s ${RATE[$s,$CMAX]}/s" \
		"= ${r}x $f ${RATE[$f,$CMAX]}/s (target >= 1x)"
	r=$(ratio "${RATE[$s,$CMAX]}" "${RATE[dante,$CMAX]}")
	echo "$(verdict ge "$r" 2): set-ups at $CMAX in flight, $s ${RATE[$s,$CMAX]}/s" \
		"= ${r}x dante ${RATE[dante,$CMAX]}/s (target >= 2x)"
done
for s in gk-socks5 gk-http; do
	f=$(fl "$s")
	r=$(ratio "${BULK[$s]:-}" "${BULK[$f]:-}")
	echo "$(verdict ge "$r" 1): bulk, $s ${BULK[$s]:-fail} MB/s = ${r}x $f" \
		"${BULK[$f]:-fail} MB/s (target >= 1x)"
	r=$(ratio "${CPU[$s]}" "${CPU[$f]}")
	echo "$(verdict le "${CPU[$s]}" "${CPU[$f]}"): CPU per GB relayed, $s ${CPU[$s]} s" \
		"= ${r}x $f ${CPU[$f]} s (target <= 1x)"
done
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
	echo "$(verdict idle_ok): $HELD of $NIDLE_RUN idle tunnels held (a cage's share of the fd" \
		"limit $NOFILE: $CAGE_TUNNELS) in" \
		"$((RSS_IDLE / 1024)) MiB VmRSS; scaled to $NIDLE: $((RSS_N / 1024)) MiB" \
		"(${RSS_N} kB; target: $NIDLE in < 100 MiB)"
fi
for s in "${SERVERS[@]}"; do
	for c in $INFLIGHT; do
		[ "${ERRS[$s,$c]}" = 0 ] ||
			echo "NOTE: $(bench_label "$s") had ${ERRS[$s,$c]} failed connections at $c in flight" \
				"(all rounds)"
	done
	[ "${VERIFIED[$s]}" = yes ] || echo "NOTE: $(bench_label "$s"): bulk content check ${VERIFIED[$s]:-not run}"
done
for s in "${FLOORS[@]}"; do
	[ -s "$T/$s.stderr" ] && echo "NOTE: $(bench_label "$s") said: $(tail -n 1 "$T/$s.stderr")"
done
for s in gk-socks5 gk-http "${FLOORS[@]}"; do
	[ "${VERIFIED[$s]}" = yes ] ||
		die "$s delivered wrong bytes in the bulk content check"
done
gk_check_log() {
	grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:" "$T/GKD_PID.log"
}
gk_check_log && die "sanitizer reports in gatekeeperd's log"
exit 0
