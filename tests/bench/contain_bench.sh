#!/usr/bin/env bash
#
# contain_bench.sh: what a cage's cgroup adds to gk-run's start-up. Not a
# test: prints figures and a "TARGET MET" / "TARGET MISSED" line, exits 0
# either way (1 only when something broke: a tool or binary missing,
# gatekeeperd would not start, a run failed, or a cgroup was left behind).
#
#   sudo bash tests/bench/contain_bench.sh [path/to/gatekeeperd [path/to/gk-run]]
#        (defaults build/gatekeeperd and build/spawner/gk-run)
#
# Environment: GK_BENCH_RUNS=100 (timed runs per command, after 10 warm-up
# runs), GK_KEEP_TMP=1 (keep the temp directory).
#
# In a private network, mount and PID namespace (lib.sh), measured in one
# run with hyperfine (-N), each run only after the previous cage's
# teardown finished (untimed --prepare), as root, in GK_BENCH_ROUNDS (3)
# alternating rounds of a third of the runs each, so that a drift of the
# machine's speed weighs on every configuration alike:
#   off      gatekeeperd --cgroup off:   gk-run --allow x.example -- /bin/true
#   cgroup   gatekeeperd (its default cgroup subtree, here a private name):
#            the same command: the cage's cgroup, cage.attach, its removal
#   limits   the same daemon: gk-run --memory 1G --pids 4096 --cpus 2
#            (on this machine's hybrid layout: v1 memory, pids and cpu
#            directories as well)
# The baseline ("off") is measured in the same run. Target: cgroup - off
# under 1 ms at the median.

# shellcheck disable=SC2317  # functions called through gk_wait_for
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
BENCH_DIR=$(dirname "$GK_SELF")
GK_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"
# shellcheck source=tests/bench/bench_lib.sh
. "$BENCH_DIR/bench_lib.sh"
BENCH_NAME=contain_bench.sh

bench_exe GKD "${1:-}" build/gatekeeperd
bench_exe GKRUN "${2:-}" build/spawner/gk-run
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
gk_need "$BENCH_NAME" hyperfine bwrap nft ip unshare dnsmasq "$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKD" "$GKRUN"
gk_setup

RUNS=${GK_BENCH_RUNS:-100}
ROUNDS=${GK_BENCH_ROUNDS:-3}
T=$GK_TMP
CG=gk-bench-$$
BROKEN=0
broken() { echo "BROKEN: $*"; BROKEN=1; }

GK_UPSTREAM_QUIET=1
gk_start_upstream 5300 "$T/upstream.log" ||
	die "dnsmasq (upstream) would not start"
mkdir -p "$T/run" && chmod 755 "$T/run"
: >"$T/empty.conf"
cat >"$T/settle.sh" <<'EOF'
for i in $(seq 500); do
	ip -o link show | grep -q ' gk-' || exit 0
	sleep 0.01
done
EOF

# measure NAME ROUND CGROUP EXTRA-ARGS: a daemon with --cgroup CGROUP,
# hyperfine of gk-run with EXTRA-ARGS into $T/NAME-ROUND.json.
measure() {
	local name=$1 round=$2 cg=$3 extra=$4 sock=$T/run/control-$1.sock
	gk_start_daemon GKD_PID "$GKD" -f -c "$T/empty.conf" --control "$sock" \
		--upstream 127.0.0.1:5300 --metrics off --log-level warn \
		--cgroup "$cg"
	gk_wait_for 100 test -S "$sock" || die "gatekeeperd ($name) did not start"
	# shellcheck disable=SC2086  # extra is words
	"$GKRUN" --control "$sock" --allow x.example $extra -- /bin/true ||
		die "gk-run ($name) failed"
	hyperfine -N --style basic --warmup 10 --runs "$((RUNS / ROUNDS))" \
	    --export-json "$T/$name-$round.json" -p "bash $T/settle.sh" \
	    -n "$name" "$GKRUN --control $sock --allow x.example $extra -- /bin/true" \
	    >"$T/$name-$round.txt" 2>&1 || broken "hyperfine ($name) failed"
	gk_stop_daemon "$GKD_PID" TERM
}

echo "# gatekeeperd: $GKD"
echo "# gk-run: $GKRUN"
echo "# $(nproc) CPUs, kernel $(uname -r), $RUNS runs each after 10 warm-up runs"
for ((r = 1; r <= ROUNDS; r++)); do
	measure off "$r" off ""
	measure cgroup "$r" "$CG" ""
	measure limits "$r" "$CG" "--memory 1G --pids 4096 --cpus 2"
done
left=$(find /sys/fs/cgroup -maxdepth 4 -name "$CG" 2>/dev/null)
[ -z "$left" ] || broken "cgroup subtree left behind: $left"
"$PYTHON" - "$T" <<'EOF'
import glob, json, statistics, sys
med = {}
for n in ("off", "cgroup", "limits"):
    t = []
    for f in sorted(glob.glob("%s/%s-*.json" % (sys.argv[1], n))):
        t += json.load(open(f))["results"][0]["times"]
    t = [x * 1000 for x in t]
    med[n] = statistics.median(t)
    print("  %-6s median %7.2f ms  (mean %.2f, min %.2f, max %.2f, n=%d)" % (
        n, med[n], statistics.mean(t), min(t), max(t), len(t)))
d = med["cgroup"] - med["off"]
print("  a cgroup adds %+.2f ms at the median (ratio %.3f); with limits %+.2f ms" % (
    d, med["cgroup"] / med["off"], med["limits"] - med["off"]))
print("TARGET %s: a cage's cgroup adds under 1 ms to gk-run --allow ... -- true (%+.2f ms)" % (
    "MET" if d < 1.0 else "MISSED", d))
EOF
exit "$BROKEN"
