#!/usr/bin/env bash
#
# sockgate_bench.sh: what the unix socket gate costs. Not a test: it prints
# figures and ratios, and exits 0 (1 only when something broke).
#
#   sudo bash tests/bench/sockgate_bench.sh [path/to/gk-run [path/to/base-gk-run]]
#        (default build/spawner/gk-run; base-gk-run: a build without the
#        gate, for the start-up comparison)
#
# Environment:
#   GK_BENCH_CONNECTS=2000   connects per kind and mode
#   GK_BENCH_RUNS=30         timed gk-run starts (after 3 warm-up runs)
#
# In a private network, mount and PID namespace (lib.sh); a tmpfs on
# /var/tmp of that namespace holds the host's socket (a python3 server
# that accepts and closes). Per connect, measured inside the sandbox by
# one python3 process (connect, the peer's accept, close; the median of
# 20 rounds):
#   unix   to the host socket given with --socket (the gate resolves the
#          path, connects on the sandbox's socket and answers)
#   inet   TCP to a listener on 127.0.0.1 inside (the gate connects on
#          the sandbox's socket to the address as read; where the address
#          leads costs the same with and without it)
# each with the gate (gk-run --net none) and without it, in the same run:
# gk-run --fs host --net none, which has no gate (the host's filesystem is
# the sandbox's), the baseline. Start-up: `gk-run --net none -- true`,
# median, against base-gk-run when given.

GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
BENCH_DIR=$(dirname "$GK_SELF")
GK_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"
# shellcheck source=tests/bench/bench_lib.sh
. "$BENCH_DIR/bench_lib.sh"
BENCH_NAME=sockgate_bench.sh

bench_exe GKRUN "${1:-}" build/spawner/gk-run
BASE=
[ -n "${2:-}" ] && bench_exe BASE "$2" build/spawner/gk-run
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
gk_need "$BENCH_NAME" bwrap unshare mount "$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKRUN" ${BASE:+"$BASE"}
gk_setup
T=$GK_TMP
N=${GK_BENCH_CONNECTS:-2000}
RUNS=${GK_BENCH_RUNS:-30}
mount -t tmpfs -o mode=1777 gk-bench-vartmp /var/tmp ||
	die "mount a tmpfs on /var/tmp in the private mount namespace"
SOCK=/var/tmp/gk-bench.sock
mkdir -p /var/tmp/gk-bench "$T/proj"

cat >/var/tmp/gk-bench/server.py <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666); s.listen(512)
while True:
    a, _ = s.accept(); a.close()
PY
cat >/var/tmp/gk-bench/connect.py <<'PY'
import socket, statistics, sys, time
kind, n = sys.argv[1], int(sys.argv[2])
if kind == "inet":
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(512)
    fam, addr = socket.AF_INET, srv.getsockname()
else:
    srv, fam, addr = None, socket.AF_UNIX, sys.argv[3]
rounds, per = 20, max(1, n // 20)
res = []
for r in range(rounds):
    t0 = time.perf_counter()
    for i in range(per):
        c = socket.socket(fam)
        c.connect(addr)
        if srv is not None:
            a, _ = srv.accept(); a.close()
        c.close()
    res.append((time.perf_counter() - t0) / per * 1e6)
print("%.2f" % statistics.median(res))
PY
( gk_close_ctl_fds; exec "$PYTHON" /var/tmp/gk-bench/server.py "$SOCK" \
	>"$T/server.log" 2>&1 ) &
gk_track_pid "$!"
gk_wait_for 50 test -S "$SOCK" || die "the host's socket server did not start"

# per KIND MODE: µs per connect inside the sandbox
per() {
	local args=(--net none --socket "$SOCK")
	[ "$2" = off ] && args+=(--fs host)
	(cd "$T/proj" && "$GKRUN" -q "${args[@]}" -- "$PYTHON" \
		/var/tmp/gk-bench/connect.py "$1" "$N" "$SOCK" 2>"$T/run.err") ||
		die "gk-run $2 $1: $(cat "$T/run.err")"
}
# start GK-RUN: median ms of `GK-RUN --net none -- true`
start() {
	"$PYTHON" - "$1" "$RUNS" "$T/proj" <<'PY'
import statistics, subprocess, sys, time
exe, runs, cwd = sys.argv[1], int(sys.argv[2]), sys.argv[3]
res = []
for i in range(runs + 3):
    t0 = time.perf_counter()
    subprocess.run([exe, "-q", "--net", "none", "--", "true"], cwd=cwd, check=True)
    if i >= 3:
        res.append((time.perf_counter() - t0) * 1e3)
print("%.2f" % statistics.median(res))
PY
}

echo "# sockgate_bench: $(bench_cpus); $N connects per kind and mode"
for kind in unix inet; do
	off=$(per "$kind" off)
	on=$(per "$kind" on)
	"$PYTHON" -c 'import sys
k, off, on = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
print("  %-4s connect: %7.2f us with the gate, %7.2f us without (baseline, --fs host): ratio %.2f, %+.2f us" % (k, on, off, on / off, on - off))' "$kind" "$off" "$on"
done
now=$(start "$GKRUN") || die "gk-run --net none -- true failed"
if [ -n "$BASE" ]; then
	base=$(start "$BASE") || die "base gk-run failed"
	"$PYTHON" -c 'import sys
on, off = float(sys.argv[1]), float(sys.argv[2])
print("  start-up: %.2f ms with the gate, %.2f ms without (base build): ratio %.2f, %+.2f ms" % (on, off, on / off, on - off))' "$now" "$base"
else
	echo "  start-up: $now ms (give a base gk-run for the ratio)"
fi
