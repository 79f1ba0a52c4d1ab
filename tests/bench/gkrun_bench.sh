#!/usr/bin/env bash
#
# gkrun_bench.sh: what a gk-run cage costs. Not a test: it prints figures
# and a "TARGET MET" / "TARGET MISSED" line, and exits 0 either way (1 only
# when something broke: a tool or binary missing, gatekeeperd would not
# start or died, a cage failed, or a cage left a link or set element).
#
#   sudo bash tests/bench/gkrun_bench.sh [path/to/gatekeeperd [path/to/gk-run]]
#        (defaults build/gatekeeperd and build/spawner/gk-run)
#
# Environment:
#   GK_BENCH_RUNS=100        timed runs per command (after 10 warm-up runs)
#   GK_BENCH_AS="root user"  identities to measure as: root, and/or the
#                            unprivileged user gk-e2e (created if missing,
#                            in group gatekeeper, as test_e2e.sh does)
#   GK_BENCH_PARALLEL=50     concurrent cages in the start/stop run
#   GK_KEEP_TMP=1            keep the temp directory (logs, hyperfine JSON)
#
# Setup, all inside a private network, mount and PID namespace (lib.sh;
# the machine's interfaces, routes and nftables are never touched):
#   dnsmasq      127.0.0.1:5300, lib.sh's records (gatekeeperd's upstream;
#                nothing here resolves a name, but the daemon runs as it
#                would in production, not pointed at the machine's resolver)
#   gatekeeperd  defaults (gateway 10.143.0.1, cages from 10.143.0.0/16,
#                its nftables table "inet gatekeeper" and gk-* links),
#                control socket in the temp dir, --log-level warn
# Measured with hyperfine (-N: no shell in between), in one run, per
# identity:
#   none   gk-run --net none -- /bin/true          (no daemon involved)
#   gated  gk-run --allow x.example -- /bin/true   (netns, SCM_RIGHTS, veth,
#                                                   nftables element, bwrap)
#   bare   bwrap --unshare-user --unshare-pid --die-with-parent
#              --ro-bind / / --dev /dev --proc /proc -- /bin/true
#   flags  bwrap with the namespaces and mounts gk-run --net none asks
#          for, without gk-run (attribution: what the options cost, and
#          what gk-run's own work costs on top)
#   settled  the gated command again, each run only after the previous
#          cages' teardown has finished (hyperfine --prepare, untimed):
#          shows how much of "gated" is back-to-back teardown contention
# As the user, every command starts through setpriv (the same cost for all
# three, so the differences stand). The target: gated - bare <= 5 ms at the
# median. Teardown (link and element deletion) happens after gk-run has
# exited and is not in these times.
#
# Every run starts in /mnt/WHO/src/proj, a git repository in a home of 50
# entries as a developer's (gkrun_home.sh: start-up files, tool caches,
# secret stores, everyday directories), HOME=/mnt/WHO, on a tmpfs of the
# benchmark's own mount namespace.
#
# Then, where perf is installed, each step's share of a start
# (gkrun_phases.py: gk-run's own start, the namespaces, the cage,
# bwrap's namespaces and mounts, the command, the end), medians of
# GK_BENCH_PHASE_RUNS=20 traced runs of --net none and of a gated run.
#
# Then GK_BENCH_PARALLEL cages at once (`gk-run --allow x.example -- sleep 1`
# each): all must exit 0, and no gk-* link or set element may remain
# afterwards (bounded wait: 20 s). Prints the wall time, the peak number of
# links seen and how long the teardown took.
#
# The machine's CPUs are shared by hyperfine, gk-run, bwrap and gatekeeperd.
# Run it on an otherwise idle machine: on a 2-vCPU VM, a build or test
# running alongside added 2-10 ms to the gk-run medians (not to bare
# bwrap's) and turned a met target into a missed one.

# shellcheck disable=SC2317  # functions called through gk_wait_for / eval
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
BENCH_DIR=$(dirname "$GK_SELF")
GK_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"

# shellcheck source=tests/bench/bench_lib.sh
. "$BENCH_DIR/bench_lib.sh"
# shellcheck source=tests/bench/gkrun_home.sh
. "$BENCH_DIR/gkrun_home.sh"
BENCH_NAME=gkrun_bench.sh

bench_exe GKD "${1:-}" build/gatekeeperd
bench_exe GKRUN "${2:-}" build/spawner/gk-run
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
gk_need "$BENCH_NAME" hyperfine bwrap nft ip unshare dnsmasq dig curl setpriv \
	useradd groupadd usermod "$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKD" "$GKRUN"
gk_setup

RUNS=${GK_BENCH_RUNS:-100}
AS_LIST=${GK_BENCH_AS:-root user}
NPAR=${GK_BENCH_PARALLEL:-50}
BUSER=gk-e2e
T=$GK_TMP
SOCK=$T/run/control.sock
BROKEN=0

broken() {
	echo "BROKEN: $*"
	BROKEN=1
}
die() {	# (not bench_lib.sh's: gatekeeperd's log only)
	echo "$BENCH_NAME: $*" >&2
	[ -f "$T/GKD.log" ] && gk_tail "$T/GKD.log" 20 >&2
	exit 1
}

gk_links() { ip -o link show | grep -o ' gk-[^:@]*' | tr -d ' '; }
nlinks() { gk_links | grep -c .; }
nelems() {
	nft list set inet gatekeeper cages 2>/dev/null | tr -d '\n' |
		sed -n 's/.*elements = {\([^}]*\)}.*/\1/p' | tr ',' '\n' |
		grep -c '[^[:space:]]'
}
no_leftovers() { [ "$(nlinks)" -eq 0 ] && [ "$(nelems)" -eq 0 ]; }

# as_prefix WHO: the words that run a command as WHO (for hyperfine -N).
as_prefix() {
	if [ "$1" = user ]; then
		printf 'setpriv --reuid=%s --regid=%s --init-groups -- ' "$BUSER" "$BUSER"
	fi
}

# ---- the user ------------------------------------------------------------------
case " $AS_LIST " in
*" user "*)
	getent group gatekeeper >/dev/null || groupadd --system gatekeeper ||
		die "cannot create the group gatekeeper"
	if ! getent passwd "$BUSER" >/dev/null; then
		useradd --system --user-group --no-create-home \
			--home-dir /nonexistent --shell /usr/sbin/nologin \
			--comment "gatekeeper e2e test" --groups gatekeeper "$BUSER" ||
			die "cannot create the user $BUSER"
	fi
	id -nG "$BUSER" | tr ' ' '\n' | grep -qx gatekeeper ||
		usermod -aG gatekeeper "$BUSER" ||
		die "cannot add $BUSER to group gatekeeper"
	;;
esac

# ---- the homes ------------------------------------------------------------------
# A developer's home of 50 entries for each identity, on a tmpfs of this
# script's own mount namespace (outside /tmp, which gk-run shows fresh),
# and its project, the working directory of every timed run.
mount -t tmpfs -o mode=0755 gk-bench-homes /mnt ||
	die "cannot mount a tmpfs on /mnt (in the benchmark's own namespace)"
for who in $AS_LIST; do
	owner=root
	[ "$who" = user ] && owner=$BUSER
	bench_home "/mnt/$who" "$owner" || die "cannot make the home /mnt/$who"
done

# ---- gatekeeperd -----------------------------------------------------------------
GK_UPSTREAM_QUIET=1
gk_start_upstream 5300 "$T/upstream.log" ||
	die "dnsmasq (upstream) would not start"
mkdir -p "$T/run" && chmod 755 "$T/run"
: >"$T/empty.conf"
gk_start_daemon GKD_PID "$GKD" -f -c "$T/empty.conf" --control "$SOCK" \
	--upstream 127.0.0.1:5300 --metrics 127.0.0.1:9477 --log-level warn
ready() {
	kill -0 "$GKD_PID" 2>/dev/null || return 1
	[ -S "$SOCK" ] && curl -sf --max-time 1 -o /dev/null \
		http://127.0.0.1:9477/metrics
}
gk_wait_for 100 ready || die "gatekeeperd did not become ready"
# One gated run first: a broken data path fails here, not inside hyperfine.
for who in $AS_LIST; do
	# shellcheck disable=SC2046  # word splitting of the prefix is meant
	if ! (cd "/mnt/$who/src/proj" && HOME=/mnt/$who $(as_prefix "$who") \
	    "$GKRUN" --control "$SOCK" --allow x.example -- /bin/true) \
	    >"$T/first.out" 2>&1; then
		cat "$T/first.out" >&2
		die "gk-run --allow x.example -- /bin/true failed as $who"
	fi
done

echo "# gatekeeperd: $GKD"
echo "# gk-run: $GKRUN"
echo "# $(nproc) CPUs, kernel $(uname -r), $(bwrap --version), $(hyperfine --version)"
echo "# $RUNS runs each after 10 warm-up runs; medians"

# ---- start-up cost ---------------------------------------------------------------
BARE="bwrap --unshare-user --unshare-pid --die-with-parent --ro-bind / / --dev /dev --proc /proc -- /bin/true"
# For attribution only: bwrap with the namespaces and mounts gk-run asks
# for in --net none mode (no seccomp filter, no status fd, no gk-run).
FLAGS="bwrap --unshare-user --unshare-ipc --unshare-pid --unshare-uts --unshare-cgroup --unshare-net --die-with-parent --new-session --cap-drop ALL --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp -- /bin/true"
# settle.sh: wait (at most 5 s) until the previous cages are torn down.
cat >"$T/settle.sh" <<'EOF'
for i in $(seq 500); do
	ip -o link show | grep -q ' gk-' || exit 0
	sleep 0.01
done
EOF
for who in $AS_LIST; do
	p=$(as_prefix "$who")
	json=$T/hyperfine-$who.json
	if ! (cd "/mnt/$who/src/proj" && HOME=/mnt/$who \
	    hyperfine -N --style basic --warmup 10 --runs "$RUNS" \
	    --export-json "$json" \
	    -p true -p true -p true -p true -p "bash $T/settle.sh" \
	    -n bare "${p}$BARE" \
	    -n flags "${p}$FLAGS" \
	    -n none "${p}$GKRUN --control $SOCK --net none -- /bin/true" \
	    -n gated "${p}$GKRUN --control $SOCK --allow x.example -- /bin/true" \
	    -n settled "${p}$GKRUN --control $SOCK --allow x.example -- /bin/true") \
	    >"$T/hyperfine-$who.txt" 2>&1; then
		tail -n 20 "$T/hyperfine-$who.txt"
		broken "hyperfine as $who failed (a command exited non-zero)"
		continue
	fi
	"$PYTHON" - "$json" "$who" <<'EOF'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
who = sys.argv[2]
ms = lambda name, k: res[name][k] * 1000
print("as %s:" % who)
for name in ("bare", "flags", "none", "gated", "settled"):
    r = res[name]
    print("  %-5s median %7.2f ms  (mean %.2f, min %.2f, max %.2f, n=%d)" % (
        name, ms(name, "median"), ms(name, "mean"), ms(name, "min"),
        ms(name, "max"), len(r["times"])))
over = ms("gated", "median") - ms("bare", "median")
print("  overhead over bare bwrap at the median: gk-run's bwrap options alone %+.2f ms,"
      " gk-run --net none %+.2f ms, gated %+.2f ms (gated over --net none %+.2f ms)" % (
    ms("flags", "median") - ms("bare", "median"),
    ms("none", "median") - ms("bare", "median"), over,
    ms("gated", "median") - ms("none", "median")))
print("  settled (each run after the previous cage's teardown finished): %+.2f ms over bare" % (
    ms("settled", "median") - ms("bare", "median")))
print("  TARGET %s (as %s): gated cage costs <= 5 ms over bare bwrap at the median (%.2f ms)" % (
    "MET" if over <= 5.0 else "MISSED", who, over))
EOF
done
# ---- where the time goes ----------------------------------------------------------
# perf trace's scheduler and system call events of one run at a time
# (gkrun_phases.py says which steps they bound), PHASE_RUNS runs of each.
PHASE_RUNS=${GK_BENCH_PHASE_RUNS:-20}
if command -v perf >/dev/null 2>&1 &&
    perf trace --no-syscalls -e sched:sched_process_exit -o /dev/null -- \
    true >/dev/null 2>&1; then
	echo "where the time goes (perf trace; its own cost is in these figures):"
	for who in $AS_LIST; do
		for mode in none gated; do
			net="--net none"
			[ "$mode" = gated ] && net="--allow x.example"
			rm -f "$T"/phase-*.txt
			for ((i = 0; i < PHASE_RUNS; i++)); do
				bash "$T/settle.sh"
				# shellcheck disable=SC2046,SC2086  # words meant
				(cd "/mnt/$who/src/proj" && HOME=/mnt/$who perf trace \
				    --no-syscalls -o "$T/phase-$i.txt" -e \
				    sched:sched_process_exec,sched:sched_process_exit,syscalls:sys_enter_unshare,syscalls:sys_exit_unshare,syscalls:sys_enter_pivot_root \
				    -- $(as_prefix "$who") "$GKRUN" --control "$SOCK" \
				    $net -- /bin/true) >/dev/null 2>&1 ||
					broken "perf trace of gk-run $net as $who failed"
			done
			"$PYTHON" "$BENCH_DIR/gkrun_phases.py" "$who $mode" \
				"$T"/phase-*.txt
		done
	done
else
	echo "where the time goes: perf (linux-perf) is not installed or may not trace here; skipped"
fi

gk_wait_for 200 no_leftovers ||
	broken "after the hyperfine runs: $(nlinks) gk-* links and $(nelems) set elements remain"
kill -0 "$GKD_PID" 2>/dev/null || die "gatekeeperd died during the hyperfine runs"

# ---- many cages at once -------------------------------------------------------------
for who in $AS_LIST; do
	p=$(as_prefix "$who")
	rm -f "$T"/par-*.rc "$T"/par-*.err
	peak=0
	t0=$(date +%s%N)
	pids=()
	for ((i = 0; i < NPAR; i++)); do
		# shellcheck disable=SC2086  # the prefix is words
		( $p "$GKRUN" --control "$SOCK" --allow x.example -- sleep 1 \
			>/dev/null 2>"$T/par-$i.err" </dev/null
		  echo $? >"$T/par-$i.rc" ) &
		pids+=($!)
	done
	# Sample the links while they run (bounded: the cages sleep 1 s).
	for ((i = 0; i < 100; i++)); do
		n=$(nlinks)
		[ "$n" -gt "$peak" ] && peak=$n
		done_n=$(find "$T" -maxdepth 1 -name 'par-*.rc' | wc -l)
		[ "$done_n" -ge "$NPAR" ] && break
		sleep 0.1
	done
	for pid in "${pids[@]}"; do
		wait "$pid"
	done
	t1=$(date +%s%N)
	fails=0
	for ((i = 0; i < NPAR; i++)); do
		rc=$(cat "$T/par-$i.rc" 2>/dev/null || echo missing)
		if [ "$rc" != 0 ]; then
			fails=$((fails + 1))
			[ "$fails" -le 3 ] && echo "  cage $i exited $rc: $(head -c 300 "$T/par-$i.err")"
		fi
	done
	t2=$(date +%s%N)
	if gk_wait_for 200 no_leftovers; then
		clean="no link or set element left $((($(date +%s%N) - t2) / 1000000)) ms after the last exit"
	else
		clean="LEFT: $(nlinks) links, $(nelems) set elements after 20 s"
		broken "$NPAR concurrent cages as $who left $(nlinks) links and $(nelems) set elements"
	fi
	echo "as $who: $NPAR concurrent cages (sleep 1): $((NPAR - fails)) exited 0, $fails failed;" \
		"wall $((( t1 - t0) / 1000000)) ms; peak $peak gk-* links; $clean"
	[ "$fails" -eq 0 ] || broken "$fails of $NPAR concurrent cages as $who failed"
done
kill -0 "$GKD_PID" 2>/dev/null || die "gatekeeperd died during the concurrent run"

gk_stop_daemon "$GKD_PID" TERM
[ "$GK_RC" = 0 ] || broken "gatekeeperd exited $GK_RC on SIGTERM"
if [ "$BROKEN" -ne 0 ]; then
	echo "gkrun_bench.sh: something broke (see BROKEN lines above)"
	exit 1
fi
exit 0
