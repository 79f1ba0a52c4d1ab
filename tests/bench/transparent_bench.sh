#!/usr/bin/env bash
#
# transparent_bench.sh: benchmark of gatekeeperd's transparent path (a
# cage's TCP redirected by nftables to the transparent listener, original
# destination from SO_ORIGINAL_DST, policy, relay) next to its SOCKS5 path
# from the same kind of cage, a direct connection, a routed one, two floor
# relays and dante-server, in one run, against the same targets as
# proxy_bench.sh (nginx /small and a 1 GiB /big). Not a test: it prints
# figures, ratios and "TARGET MET" / "TARGET MISSED" lines, and exits 0
# either way (1 only when something broke: a server would not start,
# gatekeeperd died, a cage failed, a transfer came back wrong, or the
# transparent path did not go through the transparent listener).
#
#   sudo bash tests/bench/transparent_bench.sh [path/to/gatekeeperd [path/to/gk-run]]
#        (defaults build/gatekeeperd and build/spawner/gk-run)
#
# Environment:
#   GK_BENCH_SECONDS=5        length of each set-up rate run (after 1 s warm-up)
#   GK_BENCH_INFLIGHT="1 16 128"  set-up runs: connections in flight
#   GK_BENCH_ROUNDS=3         set-up rounds; each runs every path at every
#                             in-flight level in turn; medians are reported
#   GK_BENCH_BULK_MB=1024     size of the bulk file (MiB, >= 1024 for the issue)
#   GK_BENCH_BULK_RUNS=3      bulk repetitions per path (interleaved); the
#                             best is kept
#   GK_BENCH_PATHS="direct routed floor-copy floor-splice dante socks5 transparent"
#                             the paths to measure
#   GK_BENCH_AUDIT=1          gatekeeperd writes its audit log (0: off)
#   GK_KEEP_TMP=1             keep the temp directory (logs, raw outputs)
#
# Setup, all inside a private network, mount and PID namespace (lib.sh;
# the machine's interfaces, routes and nftables are never touched):
#   internet    a second netns (e2e_net.sh's en_netns: veth up0 <-> inet0,
#               documentation addresses on its lo, routes back); nginx on
#               192.0.2.10:80, one worker, sendfile, access log off:
#               /small (100 bytes), /big (GK_BENCH_BULK_MB MiB, the
#               deterministic pattern socks_load checks)
#   host        this script's netns stands in for the host: dnsmasq on
#               127.0.0.1:5300 (gatekeeperd's upstream; nothing here
#               resolves a name), gatekeeperd with its defaults (gateway
#               10.143.0.1, SOCKS5 :1080, transparent listener :15001,
#               nftables table "inet gatekeeper", gk-* links; the cages'
#               cgroup subtree named for this run, --cgroup
#               gatekeeper-bench.XXXXXX, so that another gatekeeperd stopping
#               on the machine cannot remove it), --log-level warn; the
#               floor relays and danted (below) on 203.0.113.241
#   router      a third netns (203.0.113.242/30 on a veth to the host's
#               203.0.113.241, default route back), forwarded by the host
#               netns (per-link forwarding on that veth and up0 only):
#               the "routed" path, and the client of the floors and dante
#   cage        every cage run is `gk-run --allow 192.0.2.10/32 --transparent
#               on --ro BIN -- socks_load ...` (a CIDR pattern allows the
#               address without DNS; BIN holds the load client, which the
#               sandbox must see), as root
# The load client is tests/bench/socks_load.c (with the parts socks_load.h
# lists), built here with cc -O2.
# Paths:
#   direct       socks_load -m direct from the host netns (no cage, no
#                gatekeeperd): the baseline
#   routed       socks_load -m direct from the router netns: one more veth
#                hop and the host's forwarding, no gatekeeperd; for
#                attribution only (what a cage's extra hop costs at least;
#                a cage itself is never routed)
#   floor-copy   "floor (copy relay)": from the router netns through
#                `socks_load floor` on the host (203.0.113.241:1083):
#                proxy_bench.sh's minimal single-threaded epoll SOCKS5 relay
#                (no policy) copying with recv/send through 64 KiB buffers;
#                for attribution only: what a copying user-space relay gets
#                on this topology
#   floor-splice "floor (splice relay)": the same through `socks_load
#                floor-splice` (203.0.113.241:1084), the same relay moving
#                bytes with splice(2) through a 256 KiB pipe per direction,
#                as gatekeeperd does: what a splicing relay gets here, the
#                floor the transparent path is held against
#   dante        from the router netns through dante-server on the host
#                (danted -N 1, 203.0.113.241:1081, socksmethod none, log:
#                error; proxy_bench.sh's configuration): the set-up rate
#                reference of the issue (>= 2x dante)
#   socks5       socks_load -m socks5 -p 10.143.0.1:1080 from a cage
#   transparent  socks_load -m direct -t 192.0.2.10:80 from a cage: the
#                connect is redirected to :15001 by nftables
# Every path leaves the host netns through the same veth to nginx; the
# relays (floors, dante, gatekeeperd) all run in the host netns, one veth
# hop from their client (router netns or cage).
#
# Bulk: one connection, GET /big, MB/s = 10^6 bytes/s of body from socket()
# to EOF; one extra untimed run per path checks every byte; then
# GK_BENCH_BULK_RUNS rounds of every path in turn, the best kept. Relay
# CPU per GB: utime + stime (/proc/PID/stat, all threads, plus reaped
# children, summed over the relay's process tree: danted works in child
# processes) of the path's relay process (gatekeeperd for socks5 and
# transparent, the floor's socks_load, danted) read around each of that
# path's timed bulk runs, over the bytes those runs relayed; shown with
# the ratio to the splice floor's.
# Set-up rate: N connections in flight, each a full tunnel set-up (SOCKS5:
# greeting + CONNECT, one round trip each; transparent: nothing, the
# connect is redirected), GET /small, read to EOF, close; latency per
# connection from socket() to EOF. GK_BENCH_ROUNDS rounds, each running
# every in-flight level and, at each, every path in turn, so a slow spell
# of the machine hits every path alike; rate, p50 and p99 are the medians
# over the rounds (the rate's min-max is shown). The
# gatekeeper_connections_total{proto="transparent"} counter must grow by
# at least the connections the transparent runs counted, or the run is
# reported broken.
#
# Targets (the transparent path against the splice floor and dante, at the
# highest in-flight level, 128 by default): set-ups/s >= the splice
# floor's and >= 2x dante's; bulk >= the splice floor's; gatekeeperd's CPU
# per GB on it <= the splice floor's. The summary table shows, per path,
# bulk, CPU per GB, p50 at 1 in flight (over direct, over the splice
# floor) and the set-up rate against the splice floor and dante. The
# earlier targets (bulk >= 0.9x direct; transparent set-ups >= the SOCKS5
# path's) are printed too.
#
# The machine's CPUs are shared by the client, the relay and nginx: on a
# small machine a relay in the path competes for CPU with both ends. Run it
# on an otherwise idle machine.

# shellcheck disable=SC2317  # functions called through gk_wait_for
# shellcheck disable=SC2059  # the tables' formats are variables
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
BENCH_DIR=$(dirname "$GK_SELF")
GK_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"

# shellcheck source=tests/bench/bench_lib.sh
. "$BENCH_DIR/bench_lib.sh"
BENCH_NAME=transparent_bench.sh

bench_exe GKD "${1:-}" build/gatekeeperd
bench_exe GKRUN "${2:-}" build/spawner/gk-run
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
gk_need "$BENCH_NAME" nginx dnsmasq cc dig unshare nsenter ip nft bwrap sysctl \
	curl "$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKD" "$GKRUN"
gk_setup
# shellcheck source=tests/integration/e2e_net.sh
. "$GK_ROOT/tests/integration/e2e_net.sh"

SECS=${GK_BENCH_SECONDS:-5}
INFLIGHT=${GK_BENCH_INFLIGHT:-1 16 128}
ROUNDS=${GK_BENCH_ROUNDS:-3}
BULK_MB=${GK_BENCH_BULK_MB:-1024}
BULK_RUNS=${GK_BENCH_BULK_RUNS:-3}
read -r -a PATHS <<<"${GK_BENCH_PATHS:-direct routed floor-copy floor-splice dante socks5 transparent}"
AUDIT=${GK_BENCH_AUDIT:-1}
HZ=$(getconf CLK_TCK)
T=$GK_TMP
SOCK=$T/run/control.sock
NGINX_ADDR=${EN_ADDR[github.com]}	# 192.0.2.10
TARGET=$NGINX_ADDR:80
GW=10.143.0.1
BIN=$T/bin
LOAD=$BIN/socks_load
METRICS=127.0.0.1:9477
CAGE_FLAGS=(--allow "$NGINX_ADDR/32")

for p in "${PATHS[@]}"; do
	case $p in
	direct | routed | floor-copy | floor-splice | dante | socks5 | transparent) ;;
	*) die "GK_BENCH_PATHS: unknown path '$p' (direct, routed, floor-copy, floor-splice, dante, socks5, transparent)" ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "GK_BENCH_ROUNDS: '$ROUNDS' is not a positive number"
has_path() { [[ " ${PATHS[*]} " == *" $1 "* ]]; }
has_path dante && gk_need "$BENCH_NAME" danted
if "$GKRUN" --help 2>&1 | grep -q -- '--transparent'; then
	CAGE_FLAGS+=(--transparent on)
elif has_path transparent; then
	die "$GKRUN has no --transparent option (transparent mode not built); GK_BENCH_PATHS=\"direct socks5\" measures the rest"
fi

metric() {	# metric NAME LABEL=VALUE...: the value now (0 when absent)
	gk_metrics_fetch "$METRICS" "$T/metrics.now" 2>/dev/null || { echo 0; return; }
	gk_num "$(gk_metric "$T/metrics.now" "$@")" | sed 's/^-1$/0/'
}

# median X...: the median of the numbers (nan when none).
median() {
	printf '%s\n' "$@" | grep -v '^$' | sort -g | awk '{v[NR] = $1}
	END {
		if (NR == 0) print "nan"
		else if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2
	}'
}

# spread X...: "min-max" of the numbers, rounded (- when none).
spread() {
	printf '%s\n' "$@" | grep -v '^$' | sort -g |
		awk 'NR == 1 {lo = $1} {hi = $1} END {if (NR) printf "%.0f-%.0f", lo, hi; else print "-"}'
}

# tree_ticks PID: CPU time of PID and of every process below it, in clock
# ticks: utime + stime of each (all threads) plus cutime + cstime (its
# children already reaped), so a child that exits in between still counts.
tree_ticks() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" '
	{
		pid = $1 + 0; rest = $0
		sub(/^.*\) /, "", rest)
		split(rest, f, " ")
		par[pid] = f[2] + 0
		t[pid] = f[12] + f[13] + f[14] + f[15]
	}
	END {
		for (p in t) {
			q = p + 0
			while (q != root && q > 1 && (q in par))
				q = par[q]
			if (q == root)
				sum += t[p]
		}
		printf "%d\n", sum
	}'
}

# relay_ticks PATH: tree_ticks of PATH's relay process (0: no relay).
relay_ticks() {
	if [ -n "${RELAY_PID[$1]:-}" ]; then
		tree_ticks "${RELAY_PID[$1]}"
	else
		echo 0
	fi
}

# cpu_per_gb TICKS BYTES: seconds of CPU per 10^9 bytes (- when none).
cpu_per_gb() {
	awk -v t="$1" -v hz="$HZ" -v b="$2" \
		'BEGIN {if (b > 0) printf "%.3f", t / hz / (b / 1e9); else print "-"}'
}

# cpu_ratio A B: ratio of two CPU per GB figures (- when A is none).
cpu_ratio() {
	if [ "$1" = - ]; then echo -; else ratio "$1" "$2"; fi
}

# load PATH CMD ARGS...: run socks_load on PATH; prints its result line
# (stderr of the client and of gk-run to $T/load.err).
load() {
	local path=$1 cmd=$2
	shift 2
	case $path in
	direct)
		timeout 400 "$LOAD" "$cmd" -m direct -t "$TARGET" "$@" \
			2>>"$T/load.err" </dev/null ;;
	routed)
		timeout 400 nsenter --net="/proc/$RT_NS_PID/ns/net" -- \
			"$LOAD" "$cmd" -m direct -t "$TARGET" "$@" \
			2>>"$T/load.err" </dev/null ;;
	floor-copy | floor-splice | dante)
		timeout 400 nsenter --net="/proc/$RT_NS_PID/ns/net" -- \
			"$LOAD" "$cmd" -m socks5 -p "${HOSTRELAY[$path]}" -t "$TARGET" "$@" \
			2>>"$T/load.err" </dev/null ;;
	socks5)
		( cd "$T/work" && exec timeout 400 "$GKRUN" --control "$SOCK" \
			"${CAGE_FLAGS[@]}" --ro "$BIN" -- "$LOAD" "$cmd" -m socks5 \
			-p "$GW:1080" -t "$TARGET" "$@" 2>>"$T/load.err" </dev/null ) ;;
	transparent)
		( cd "$T/work" && exec timeout 400 "$GKRUN" --control "$SOCK" \
			"${CAGE_FLAGS[@]}" --ro "$BIN" -- "$LOAD" "$cmd" -m direct \
			-t "$TARGET" "$@" 2>>"$T/load.err" </dev/null ) ;;
	esac
}

# ---- machine --------------------------------------------------------------------
echo "# gatekeeperd: $GKD ($("$GKD" --version 2>&1 | head -1))"
echo "# gk-run: $GKRUN ($("$GKRUN" --version 2>&1 | head -1))"
echo "# $(nginx -v 2>&1 | head -1); $(bwrap --version 2>&1)$(has_path dante &&
	echo "; dante-server $(dpkg-query -W -f='${Version}' dante-server 2>/dev/null)")"
echo "# $(bench_cpus), kernel $(uname -r)"
echo "# paths: ${PATHS[*]}; bulk ${BULK_MB} MiB x $BULK_RUNS (best kept); set-up runs ${SECS} s" \
	"after 1 s warm-up, in flight: $INFLIGHT, $ROUNDS round(s) (medians); gatekeeperd audit log:" \
	"$(onoff "$AUDIT")"
echo "# cage: gk-run ${CAGE_FLAGS[*]} --ro $BIN -- socks_load ... (as root)"

# ---- the namespaces ------------------------------------------------------------------
# Only this netns's own settings (lib.sh made it).
bench_nofile 65536
en_netns || die "the internet netns and its veth could not be set up"
en_in sysctl -qw net.ipv4.ip_local_port_range="10000 65000" 2>/dev/null
# The router netns (the "routed" path, the floors' and dante's client):
# forwarding on its veth and on up0 only, never conf.all (gatekeeperd
# keeps forwarding off on gk-* links).
RT_NS_PID=
# the relays on the host netns, reached from the router netns
declare -A HOSTRELAY=([floor-copy]=203.0.113.241:1083 [floor-splice]=203.0.113.241:1084
	[dante]=203.0.113.241:1081)
declare -A RELAY_PID=()		# path -> the pid whose process tree relays it
declare -A RELAY_NAME=([floor-copy]="socks_load floor" [floor-splice]="socks_load floor-splice"
	[dante]=danted [socks5]=gatekeeperd [transparent]=gatekeeperd)
if has_path routed || has_path floor-copy || has_path floor-splice || has_path dante; then
	( gk_close_ctl_fds; exec unshare --net sleep 86400 ) &
	RT_NS_PID=$!
	gk_track_pid "$RT_NS_PID"
	rt_ns_up() {
		local ns
		ns=$(readlink "/proc/$RT_NS_PID/ns/net" 2>/dev/null) &&
			[ "$ns" != "$(readlink /proc/self/ns/net)" ]
	}
	gk_wait_for 50 rt_ns_up || die "the router netns did not appear"
	rt_in() { nsenter --net="/proc/$RT_NS_PID/ns/net" -- "$@"; }
	{ ip link add rt-host type veth peer name rt-cage &&
	  ip link set rt-cage netns "$RT_NS_PID" &&
	  ip addr add 203.0.113.241/30 dev rt-host && ip link set rt-host up &&
	  rt_in ip link set lo up &&
	  rt_in ip addr add 203.0.113.242/30 dev rt-cage &&
	  rt_in ip link set rt-cage up &&
	  rt_in ip route add default via 203.0.113.241 &&
	  rt_in sysctl -qw net.ipv4.ip_local_port_range="10000 65000" &&
	  sysctl -qw net.ipv4.conf.rt-host.forwarding=1 &&
	  sysctl -qw net.ipv4.conf.up0.forwarding=1; } ||
		die "cannot set up the router netns"
fi

mkdir -p "$BIN" "$T/work" "$T/run"
chmod 755 "$BIN" "$T/work" "$T/run"
bench_build_load

# ---- servers ----------------------------------------------------------------------
bench_nginx_conf "$NGINX_ADDR:80"
: >"$T/nginx.stderr"
inet_bg NGINX_PID "$EN_NS_PID" "$T/nginx.stderr" \
	nginx -p "$T/" -c "$T/nginx.conf" -e "$T/nginx-error.log"
nginx_up() { curl -sf --noproxy '*' --max-time 1 -o /dev/null "http://$TARGET/small"; }
gk_wait_for 100 nginx_up || die "nginx did not start on $TARGET"

# relay_up ADDR: something accepts on ADDR (IP:PORT).
relay_up() { timeout 1 bash -c "exec 3<>/dev/tcp/${1%:*}/${1#*:}" 2>/dev/null; }
for p in floor-copy floor-splice; do
	has_path "$p" || continue
	cmd=floor
	[ "$p" = floor-splice ] && cmd=floor-splice
	( gk_close_ctl_fds; exec "$LOAD" "$cmd" -l "${HOSTRELAY[$p]}" >"$T/$p.stderr" 2>&1 ) &
	RELAY_PID[$p]=$!
	gk_track_pid $!
	gk_wait_for 100 relay_up "${HOSTRELAY[$p]}" ||
		die "socks_load $cmd did not start on ${HOSTRELAY[$p]}"
done
if has_path dante; then
	# Outgoing connections leave from up0's address, like everything
	# else that reaches nginx from the host netns.
	bench_danted "${HOSTRELAY[dante]%:*}" "${HOSTRELAY[dante]#*:}" "$EN_HOST_ADDR"
	RELAY_PID[dante]=$BENCH_DANTE_PID
	gk_wait_for 100 relay_up "${HOSTRELAY[dante]}" ||
		die "danted did not start on ${HOSTRELAY[dante]}"
fi

GK_UPSTREAM_QUIET=1
gk_start_upstream 5300 "$T/upstream.log" || die "dnsmasq (upstream) would not start"
AUDIT_ARGS=()
[ "$AUDIT" = 1 ] && AUDIT_ARGS=(--audit-log "$T/audit.log")
bench_gk_conf "$T/empty.conf"
# The cages' cgroup subtree is this run's own: another gatekeeperd on the
# machine that stops removes its (empty) subtree, which under the default
# name would be this one's too.
gk_start_daemon GKD_PID "$GKD" -f -c "$T/empty.conf" --control "$SOCK" \
	--upstream 127.0.0.1:5300 --metrics "$METRICS" "${AUDIT_ARGS[@]}" \
	--cgroup "gatekeeper-bench.${T##*.}" --log-level warn
gkd_ready() {
	kill -0 "$GKD_PID" 2>/dev/null || return 1
	[ -S "$SOCK" ] && curl -sf --max-time 1 -o /dev/null "http://$METRICS/metrics"
}
gk_wait_for 100 gkd_ready || die "gatekeeperd did not become ready"
RELAY_PID[socks5]=$GKD_PID
RELAY_PID[transparent]=$GKD_PID

bench_smoke "${PATHS[@]}"
TR0=$(metric gatekeeper_connections_total proto=transparent verdict=allowed)
S50=$(metric gatekeeper_connections_total proto=socks5 verdict=allowed)
TR_CONNS=0	# connections the transparent runs made (at least)

# ---- bulk -------------------------------------------------------------------------
declare -A BULK BULKS VERIFIED CPUT CPUB
echo
echo "Bulk: GET /big (${BULK_MB} MiB), one connection:"
for p in "${PATHS[@]}"; do
	out=$(load "$p" bulk -u /big -V)
	VERIFIED[$p]=$(kv verified "$out")
	[ "$p" = transparent ] && TR_CONNS=$((TR_CONNS + 1))
	if [ "${VERIFIED[$p]}" != yes ] || [ "$(kv errors "$out")" != 0 ]; then
		echo "  $(bench_label "$p"): content check FAILED: $out"
		echo "    $(tail -n 1 "$T/load.err")"
	fi
done
gk_alive "bulk content check"
for ((r = 1; r <= BULK_RUNS; r++)); do
	for p in "${PATHS[@]}"; do
		c0=$(relay_ticks "$p")
		out=$(load "$p" bulk -u /big)
		c1=$(relay_ticks "$p")
		echo "$r $p $out" >>"$T/bulk.txt"
		[ "$p" = transparent ] && TR_CONNS=$((TR_CONNS + 1))
		if [ "$(kv ok "$out")" != 1 ]; then
			echo "  run $r $(bench_label "$p"): FAILED: $out $(tail -n 1 "$T/load.err")"
			continue
		fi
		CPUT[$p]=$((${CPUT[$p]:-0} + c1 - c0))
		CPUB[$p]=$((${CPUB[$p]:-0} + $(kv bytes "$out")))
		mb=$(kv mbps "$out")
		BULKS[$p]+=" $mb"
		cpu=
		[ -n "${RELAY_PID[$p]:-}" ] &&
			cpu="  ${RELAY_NAME[$p]} CPU $(cpu_per_gb $((c1 - c0)) "$(kv bytes "$out")") s/GB"
		printf '  run %d %-20s %8.1f MB/s%s\n' "$r" "$(bench_label "$p")" "$mb" "$cpu"
		ge "$mb" "${BULK[$p]:-0}" && BULK[$p]=$mb
	done
	gk_alive "bulk run $r"
done
declare -A CPUGB
for p in "${PATHS[@]}"; do
	CPUGB[$p]=-
	[ -n "${RELAY_PID[$p]:-}" ] && CPUGB[$p]=$(cpu_per_gb "${CPUT[$p]:-0}" "${CPUB[$p]:-0}")
done

# ---- set-up rate --------------------------------------------------------------------
# Per (path, in flight): the rounds' figures, space-separated; then their
# medians.
declare -A RATES P50S P99S ERRS RATE P50 P99
echo
echo "Set-up rate: connect (+ tunnel) + GET /small + close, ${SECS} s per run," \
	"$ROUNDS round(s):"
bench_setup_done() {
	[ "$1" = transparent ] && TR_CONNS=$((TR_CONNS + $(kv conns "$4")))
	case $1 in socks5 | transparent) gk_alive "set-up run $1, $2 in flight, round $3" ;; esac
}
bench_setup_rounds 20 "${PATHS[@]}"
TR1=$(metric gatekeeper_connections_total proto=transparent verdict=allowed)
S51=$(metric gatekeeper_connections_total proto=socks5 verdict=allowed)

# ---- summary ------------------------------------------------------------------------
C1=${INFLIGHT%% *}
CMAX=${INFLIGHT##* }
# rule HEADER: the header line with its characters turned into a rule.
rule() { printf '%s\n' "$1" | sed 's/[^|]/-/g; s/|/+/g'; }

echo
echo "Bulk (best of $BULK_RUNS; relay CPU over all $BULK_RUNS timed runs; x splice: against the splice floor):"
fmt='%-20s | %9s | %9s | %8s | %8s | %8s | %-23s | %8s | %8s\n'
h=$(printf "$fmt" path "best MB/s" "median" "x direct" "x splice" "bytes ok" relay "CPU s/GB" "x splice")
printf '%s\n' "$h"
rule "$h"
for p in "${PATHS[@]}"; do
	# shellcheck disable=SC2086  # the list splits on purpose
	printf "$fmt" "$(bench_label "$p")" "${BULK[$p]:-fail}" \
		"$(printf '%.1f' "$(median ${BULKS[$p]})")" \
		"$(ratio "${BULK[$p]:-0}" "${BULK[direct]:-0}")" \
		"$(ratio "${BULK[$p]:-0}" "${BULK[floor-splice]:-0}")" "${VERIFIED[$p]:-?}" \
		"${RELAY_NAME[$p]:--}" "${CPUGB[$p]}" \
		"$(cpu_ratio "${CPUGB[$p]}" "${CPUGB[floor-splice]:-}")"
done

echo
echo "Set-up (medians of $ROUNDS round(s); conn/s min-max over the rounds; errors: all rounds):"
fmt='%-20s | %9s | %9s | %13s | %8s | %8s | %8s | %8s | %8s | %8s | %6s\n'
h=$(printf "$fmt" path "in flight" "conn/s" "min-max" "p50 us" "p99 us" "x direct" \
	"x socks5" "x splice" "x dante" errors)
printf '%s\n' "$h"
rule "$h"
for c in $INFLIGHT; do
	for p in "${PATHS[@]}"; do
		# shellcheck disable=SC2086  # the list splits on purpose
		printf "$fmt" "$(bench_label "$p")" "$c" "$(printf '%.0f' "${RATE[$p,$c]}")" \
			"$(spread ${RATES[$p,$c]})" "${P50[$p,$c]}" "${P99[$p,$c]}" \
			"$(ratio "${RATE[$p,$c]}" "${RATE[direct,$c]:-}")" \
			"$(ratio "${RATE[$p,$c]}" "${RATE[socks5,$c]:-}")" \
			"$(ratio "${RATE[$p,$c]}" "${RATE[floor-splice,$c]:-}")" \
			"$(ratio "${RATE[$p,$c]}" "${RATE[dante,$c]:-}")" "${ERRS[$p,$c]}"
	done
done

echo
echo "Summary (x splice: against the splice floor; p50 - direct: added over direct;" \
	"p50 - splice: over the splice floor's):"
fmt='%-20s | %8s | %8s | %8s | %8s | %8s | %7s | %8s | %8s | %8s | %8s | %7s\n'
printf '%-20s | %-30s | %-19s | %-28s | %s\n' "" bulk "relay CPU" \
	"p50 at $C1 in flight, us" "set-ups/s at $CMAX in flight"
h=$(printf "$fmt" path "MB/s" "x direct" "x splice" "s/GB" "x splice" "p50" "- direct" \
	"- splice" "conn/s" "x splice" "x dante")
printf '%s\n' "$h"
rule "$h"
for p in "${PATHS[@]}"; do
	printf "$fmt" "$(bench_label "$p")" "${BULK[$p]:-fail}" \
		"$(ratio "${BULK[$p]:-0}" "${BULK[direct]:-0}")" \
		"$(ratio "${BULK[$p]:-0}" "${BULK[floor-splice]:-0}")" \
		"${CPUGB[$p]}" "$(cpu_ratio "${CPUGB[$p]}" "${CPUGB[floor-splice]:-}")" \
		"${P50[$p,$C1]}" "$(sub "${P50[$p,$C1]}" "${P50[direct,$C1]:-}")" \
		"$(sub "${P50[$p,$C1]}" "${P50[floor-splice,$C1]:-}")" \
		"$(printf '%.0f' "${RATE[$p,$CMAX]}")" \
		"$(ratio "${RATE[$p,$CMAX]}" "${RATE[floor-splice,$CMAX]:-}")" \
		"$(ratio "${RATE[$p,$CMAX]}" "${RATE[dante,$CMAX]:-}")"
done

echo
echo "gatekeeperd counters: connections_total{proto=\"transparent\",verdict=\"allowed\"} +$((TR1 - TR0))" \
	"(the transparent runs made at least $TR_CONNS), {proto=\"socks5\",verdict=\"allowed\"} +$((S51 - S50))"
[ "$AUDIT" = 1 ] && [ -f "$T/audit.log" ] &&
	echo "gatekeeperd audit log: $(wc -l <"$T/audit.log") lines"

echo
if has_path floor-copy && has_path floor-splice; then
	echo "splice relay against copy relay on this topology:" \
		"bulk $(ratio "${BULK[floor-splice]:-0}" "${BULK[floor-copy]:-0}")x," \
		"CPU per GB $(cpu_ratio "${CPUGB[floor-splice]}" "${CPUGB[floor-copy]}")x," \
		"set-up rate at $CMAX in flight $(ratio "${RATE[floor-splice,$CMAX]}" "${RATE[floor-copy,$CMAX]}")x"
fi
if has_path transparent && has_path routed; then
	echo "transparent against the routed path (one more veth hop, no relay):" \
		"bulk $(ratio "${BULK[transparent]:-0}" "${BULK[routed]:-0}")x," \
		"set-up rate at $CMAX in flight $(ratio "${RATE[transparent,$CMAX]}" "${RATE[routed,$CMAX]}")x"
fi
if has_path transparent && has_path socks5; then
	echo "transparent against gatekeeperd's SOCKS5 path from a cage:" \
		"bulk $(ratio "${BULK[transparent]:-0}" "${BULK[socks5]:-0}")x," \
		"CPU per GB $(cpu_ratio "${CPUGB[transparent]}" "${CPUGB[socks5]}")x," \
		"p50 at $C1 in flight $(sub "${P50[transparent,$C1]}" "${P50[socks5,$C1]}") us"
fi

echo
if has_path transparent && has_path floor-splice; then
	r=$(ratio "${RATE[transparent,$CMAX]}" "${RATE[floor-splice,$CMAX]}")
	echo "$(verdict ge "$r" 1): set-up rate at $CMAX in flight transparent" \
		"$(printf '%.0f' "${RATE[transparent,$CMAX]}")/s = ${r}x the splice floor's" \
		"$(printf '%.0f' "${RATE[floor-splice,$CMAX]}")/s (target >= 1x; medians of $ROUNDS)"
fi
if has_path transparent && has_path dante; then
	r=$(ratio "${RATE[transparent,$CMAX]}" "${RATE[dante,$CMAX]}")
	echo "$(verdict ge "$r" 2): set-up rate at $CMAX in flight transparent" \
		"$(printf '%.0f' "${RATE[transparent,$CMAX]}")/s = ${r}x dante's" \
		"$(printf '%.0f' "${RATE[dante,$CMAX]}")/s (target >= 2x; medians of $ROUNDS)"
fi
if has_path transparent && has_path floor-splice; then
	r=$(ratio "${BULK[transparent]:-0}" "${BULK[floor-splice]:-0}")
	echo "$(verdict ge "$r" 1): bulk through the transparent path ${BULK[transparent]:-fail} MB/s" \
		"= ${r}x the splice floor's ${BULK[floor-splice]:-fail} MB/s (target >= 1x; best of $BULK_RUNS)"
	r=$(cpu_ratio "${CPUGB[transparent]}" "${CPUGB[floor-splice]}")
	cpu_le() { awk -v r="$r" 'BEGIN {exit !(r ~ /^[0-9.]+$/ && r <= 1)}'; }
	echo "$(verdict cpu_le): gatekeeperd CPU on the transparent path ${CPUGB[transparent]} s/GB" \
		"= ${r}x the splice floor's ${CPUGB[floor-splice]} s/GB (target <= 1x; all $BULK_RUNS timed bulk runs)"
fi
if has_path transparent && has_path direct; then
	r=$(ratio "${BULK[transparent]:-0}" "${BULK[direct]:-0}")
	echo "$(verdict ge "$r" 0.9): bulk through the transparent path ${BULK[transparent]:-fail} MB/s" \
		"= ${r}x direct ${BULK[direct]:-fail} MB/s (earlier target >= 0.9x direct)"
fi
if has_path socks5 && has_path direct; then
	r=$(ratio "${BULK[socks5]:-0}" "${BULK[direct]:-0}")
	echo "$(verdict ge "$r" 0.9): bulk through gatekeeperd SOCKS5 from a cage ${BULK[socks5]:-fail} MB/s" \
		"= ${r}x direct (earlier target >= 0.9x direct)"
fi
if has_path transparent && has_path socks5; then
	r=$(ratio "${RATE[transparent,$CMAX]}" "${RATE[socks5,$CMAX]}")
	echo "$(verdict ge "$r" 1.0): set-up rate at $CMAX in flight transparent" \
		"$(printf '%.0f' "${RATE[transparent,$CMAX]}")/s = ${r}x gatekeeperd SOCKS5" \
		"$(printf '%.0f' "${RATE[socks5,$CMAX]}")/s (earlier target >= 1x: the transparent" \
		"path skips the SOCKS5 round trips)"
fi
for p in "${PATHS[@]}"; do
	for c in $INFLIGHT; do
		[ "${ERRS[$p,$c]}" = 0 ] ||
			echo "NOTE: $(bench_label "$p") had ${ERRS[$p,$c]} failed connections at $c in flight" \
				"($ROUNDS round(s))"
	done
	[ "${VERIFIED[$p]}" = yes ] || echo "NOTE: $(bench_label "$p"): bulk content check ${VERIFIED[$p]:-not run}"
	case $p in floor-*)
		[ -s "$T/$p.stderr" ] && echo "NOTE: $(bench_label "$p") said: $(tail -n 1 "$T/$p.stderr")" ;;
	esac
done
[ -n "${RELAY_PID[dante]:-}" ] && [ -s "$T/danted.stderr" ] &&
	echo "NOTE: danted said: $(tail -n 1 "$T/danted.stderr")"

for p in "${PATHS[@]}"; do
	[ "${VERIFIED[$p]}" = yes ] || die "$p delivered wrong bytes in the bulk content check"
done
if has_path transparent && [ $((TR1 - TR0)) -lt "$TR_CONNS" ]; then
	die "the transparent runs made $TR_CONNS connections but gatekeeper_connections_total{proto=\"transparent\",verdict=\"allowed\"} grew by $((TR1 - TR0)): they did not all go through the transparent listener"
fi
if has_path socks5 && [ $((S51 - S50)) -lt 1 ]; then
	die "gatekeeper_connections_total{proto=\"socks5\",verdict=\"allowed\"} did not move during the SOCKS5 runs"
fi
grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:" "$T/GKD_PID.log" 2>/dev/null &&
	die "sanitizer reports in gatekeeperd's log"
gk_stop_daemon "$GKD_PID" TERM
[ "$GK_RC" = 0 ] || die "gatekeeperd exited $GK_RC on SIGTERM"
exit 0
