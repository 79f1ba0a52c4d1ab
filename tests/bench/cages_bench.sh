#!/usr/bin/env bash
#
# cages_bench.sh: what one more cage costs with 0, 1,000, 5,000 and 10,000
# cages live. Not a test: it prints a table and a "TARGET MET" / "TARGET
# MISSED" line and exits 0 either way (1 only when something broke: a tool
# or binary missing, gatekeeperd would not start or died, the cages could
# not be held, a sample failed, or links were left behind).
#
#   sudo bash tests/bench/cages_bench.sh [path/to/gatekeeperd [path/to/cage_hold]]
#        (defaults build/gatekeeperd and build/tests/cage_hold)
#
# Environment:
#   GK_BENCH_LEVELS="0 1000 5000 10000"  live cages at each level
#   GK_BENCH_SAMPLES=30                  samples per level (medians)
#   GK_KEEP_TMP=1                        keep the temp directory (logs)
#   GK_BENCH_PERF=FILE                   perf record -a -g of the samples
#                                        at the largest level, into FILE
#
# Setup, all inside a private network, mount and PID namespace (lib.sh;
# the machine's own interfaces, routes and nftables are never touched):
#   internet     e2e_net.sh's second netns behind a veth: nginx on
#                192.0.2.10:80 serving /small (100 bytes)
#   dnsmasq      127.0.0.1:5300, gatekeeperd's upstream (nothing here asks)
#   gatekeeperd  defaults (gateway 10.143.0.1, cages from 10.143.0.0/16,
#                its nftables table and gk-* links, each cage's cgroup in
#                a subtree of this run's own), control-connections set
#                above the largest level, --log-level warn
#   cage_hold    the cages' owner (tests/bench/cage_hold.c): each cage a
#                fresh user and network namespace passed as gk-run passes
#                it (cage.create, "netns":true, the fd as SCM_RIGHTS),
#                allowed 192.0.2.10/32; a held cage is one control
#                connection, its namespace kept alive by that socket
# At each level (the live cages held first), GK_BENCH_SAMPLES samples of
# one more cage, each in a fresh namespace (made untimed):
#   create   connect + cage.create until its reply (address, veth pair
#            moved into the namespace, set element, cgroup)
#   +fetch   create, then GET /small through the cage's HTTP proxy
#            (10.143.0.1:3128) from inside the cage's namespace
#   teardown the control connection closed until the cage's host link is
#            gone (gatekeeperd's teardown, which runs on a worker thread)
# and gatekeeperd's resident memory with the level's cages live. Target:
# each median at most 1.5x its value at 0 live cages, at 10,000.
#
# Holding 10,000 cages takes gatekeeperd 10,000 descriptors (one each),
# and cage_hold as many; both run under this shell's open-files limit
# (raised to the hard limit here).

# shellcheck disable=SC2317  # functions called through gk_wait_for
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
BENCH_DIR=$(dirname "$GK_SELF")
GK_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"
# shellcheck source=tests/bench/bench_lib.sh
. "$BENCH_DIR/bench_lib.sh"
BENCH_NAME=cages_bench.sh

bench_exe GKD "${1:-}" build/gatekeeperd
bench_exe HOLD "${2:-}" build/tests/cage_hold
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
gk_need "$BENCH_NAME" nginx dnsmasq dig cc curl unshare nsenter ip nft sysctl "$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKD" "$HOLD"
gk_setup
# shellcheck source=tests/integration/e2e_net.sh
. "$GK_ROOT/tests/integration/e2e_net.sh"

LEVELS=${GK_BENCH_LEVELS:-0 1000 5000 10000}
SAMPLES=${GK_BENCH_SAMPLES:-30}
T=$GK_TMP
SOCK=$T/run/control.sock
TARGET=192.0.2.10
BULK_MB=1
LOAD=$T/socks_load
BROKEN=0
broken() { echo "BROKEN: $*"; BROKEN=1; }

for l in $LEVELS; do
	[[ $l =~ ^[0-9]+$ ]] || die "GK_BENCH_LEVELS: '$l' is not a number"
	[ "$l" -le 60000 ] || die "GK_BENCH_LEVELS: $l is more than the cage subnet holds"
done
[[ $SAMPLES =~ ^[0-9]+$ ]] && [ "$SAMPLES" -ge 1 ] && [ "$SAMPLES" -le 1000 ] ||
	die "GK_BENCH_SAMPLES: '$SAMPLES' is not a number from 1 to 1000"
MAXL=$(printf '%s\n' $LEVELS | sort -n | tail -1)

gk_links() { ip -o link show 2>/dev/null | grep -c ' gk-'; }
rss_kib() { awk '$1 == "VmRSS:" {print $2}' "/proc/$GKD_PID/status"; }
nfds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

# ---- the namespaces and servers ----------------------------------------------
bench_nofile 65536
[ "$NOFILE" = unlimited ] || [ "$NOFILE" -ge $((MAXL + SAMPLES + 1000)) ] ||
	die "the open files limit ($NOFILE) cannot hold $MAXL cages; lower GK_BENCH_LEVELS"
en_netns || die "the internet netns and its veth could not be set up"
bench_build_load
bench_nginx_conf "$TARGET:80"
: >"$T/nginx.stderr"
inet_bg NGINX_PID "$EN_NS_PID" "$T/nginx.stderr" \
	nginx -p "$T/" -c "$T/nginx.conf" -e "$T/nginx-error.log"
nginx_up() { curl -sf --noproxy '*' --max-time 1 -o /dev/null "http://$TARGET/small"; }
gk_wait_for 100 nginx_up || die "nginx did not start on $TARGET"

GK_UPSTREAM_QUIET=1
gk_start_upstream 5300 "$T/upstream.log" || die "dnsmasq (upstream) would not start"
mkdir -p "$T/run" && chmod 755 "$T/run"
bench_gk_conf "$T/gk.conf"
echo "control-connections = $((MAXL + SAMPLES + 100))" >>"$T/gk.conf"
gk_start_daemon GKD_PID "$GKD" -f -c "$T/gk.conf" --control "$SOCK" \
	--upstream 127.0.0.1:5300 --metrics off --log-level warn \
	--cgroup "gatekeeper-bench.${T##*.}"
gk_wait_for 100 test -S "$SOCK" || die "gatekeeperd did not start"

# the client, on a pair of fifos: hold_cmd CMD prints its answer line
mkfifo "$T/hold.in" "$T/hold.out" || die "mkfifo failed"
( gk_close_ctl_fds; exec "$HOLD" "$SOCK" 10.143.0.1:3128 "$TARGET" /small \
	"$TARGET/32" <"$T/hold.in" >"$T/hold.out" 2>"$T/hold.err" ) &
HOLD_PID=$!
gk_track_pid "$HOLD_PID"
exec {HOLD_W}>"$T/hold.in"
exec {HOLD_R}<"$T/hold.out"
hold_cmd() {
	local line
	echo "$1" >&"$HOLD_W" || die "cage_hold is gone"
	while IFS= read -r -t "$2" line <&"$HOLD_R"; do
		case $line in
		raw*) echo "$line" >>"$T/raw.txt" ;;
		*) printf '%s\n' "$line"; return 0 ;;
		esac
	done
	die "cage_hold did not answer '$1' within $2 s: $(tail -n 3 "$T/hold.err")"
}

echo "# gatekeeperd: $GKD ($("$GKD" --version 2>&1 | head -1))"
echo "# $(bench_cpus), kernel $(uname -r), open files limit $NOFILE"
echo "# levels: $LEVELS live cages; $SAMPLES samples each (medians)"

# ---- the levels ----------------------------------------------------------------
declare -A CREATE FETCH TEARDOWN RSS
out=$(hold_cmd "sample 3" 60)	# warm-up: the first cages' one-time costs
[ "$(kv errors "$out")" = 0 ] || broken "warm-up samples failed: $(tail -n 2 "$T/hold.err")"
for l in $LEVELS; do
	out=$(hold_cmd "hold $l" $((60 + l / 20)))
	held=$(kv held "$out")
	held_s=$(awk -v m="$(kv ms "$out")" 'BEGIN {printf "%.1f", m / 1000}')
	[ "$held" = "$l" ] || die "could not hold $l cages: $out $(tail -n 2 "$T/hold.err")"
	gk_alive "holding $l cages"
	sleep 1		# the creations' teardown-free tail settles
	RSS[$l]=$(rss_kib)
	perf_pid=
	if [ -n "${GK_BENCH_PERF:-}" ] && [ "$l" = "$MAXL" ]; then
		perf record -q -a -g -F 999 -o "$GK_BENCH_PERF" \
			>"$T/perf.log" 2>&1 &
		perf_pid=$!
		sleep 1
	fi
	out=$(hold_cmd "sample $SAMPLES" $((60 + SAMPLES * 30)))
	if [ -n "$perf_pid" ]; then
		kill -INT "$perf_pid" 2>/dev/null
		gk_wait_exit "$perf_pid" 100 || kill -KILL "$perf_pid" 2>/dev/null
		echo "  (perf record of the samples at $l cages: $GK_BENCH_PERF)"
	fi
	gk_alive "sampling at $l cages"
	[ "$(kv errors "$out")" = 0 ] || broken "at $l cages: $out: $(tail -n 1 "$T/hold.err")"
	CREATE[$l]=$(kv create_us "$out")
	FETCH[$l]=$(kv fetch_us "$out")
	TEARDOWN[$l]=$(kv teardown_us "$out")
	printf '  %6d live (held in %s s; gatekeeperd %d fds, %d KiB): create %s us, +fetch %s us, teardown %s us\n' \
		"$l" "$held_s" \
		"$(nfds "$GKD_PID")" "${RSS[$l]}" "${CREATE[$l]}" "${FETCH[$l]}" "${TEARDOWN[$l]}"
done

# ---- the end: every cage down, nothing left --------------------------------------
hold_cmd "hold 0" 600 >/dev/null
no_links() { [ "$(gk_links)" -eq 0 ]; }
gk_wait_for 600 no_links || broken "$(gk_links) gk-* links left 60 s after every cage ended"
echo quit >&"$HOLD_W"
gk_wait_exit "$HOLD_PID" 100 || broken "cage_hold did not exit"
gk_stop_daemon "$GKD_PID" TERM || broken "gatekeeperd did not stop"

# ---- the table ---------------------------------------------------------------------
BASE=${LEVELS%% *}
echo
echo "| live cages | create us | x at $BASE | create+fetch us | x at $BASE | teardown us | x at $BASE | gatekeeperd RSS KiB |"
echo "|---|---|---|---|---|---|---|---|"
for l in $LEVELS; do
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$l" \
		"${CREATE[$l]}" "$(ratio "${CREATE[$l]}" "${CREATE[$BASE]}")" \
		"${FETCH[$l]}" "$(ratio "${FETCH[$l]}" "${FETCH[$BASE]}")" \
		"${TEARDOWN[$l]}" "$(ratio "${TEARDOWN[$l]}" "${TEARDOWN[$BASE]}")" \
		"${RSS[$l]}"
done
if [ "$MAXL" -gt "$BASE" ]; then
	echo "gatekeeperd memory per live cage: $(awk -v a="${RSS[$MAXL]}" -v b="${RSS[$BASE]}" \
		-v n=$((MAXL - BASE)) 'BEGIN {printf "%.1f KiB", (a - b) / n}') (RSS at $MAXL less at $BASE)"
fi
met() {
	le "$(ratio "${CREATE[$MAXL]}" "${CREATE[$BASE]}")" 1.5 &&
		le "$(ratio "${FETCH[$MAXL]}" "${FETCH[$BASE]}")" 1.5 &&
		le "$(ratio "${TEARDOWN[$MAXL]}" "${TEARDOWN[$BASE]}")" 1.5
}
echo "$(verdict met): create, create+fetch and teardown each at most 1.5x at $MAXL live cages"
exit "$BROKEN"
