#!/usr/bin/env bash
#
# test_contain.sh: a cage owns its processes. Real gk-run, bwrap and
# gatekeeperd on the host's cgroup layout: here, the CI machines' hybrid
# one (an empty v2 hierarchy for lifetime, v1 memory, pids and cpu for
# limits); in guest_integration, a Debian 12 host's (systemd, v2 alone),
# where the daemon, in this script's PID namespace, takes a delegated
# scope of its own from systemd:
#
#   - the command runs inside the cage's cgroup (seen from outside);
#   - kill -9 of gk-run at points of start-up and run, timed from its
#     start and from its cage's link appearing, as root and as a member
#     of the socket's group, with cages in cgroups, with --cgroup off and
#     with --net none (no gatekeeperd): no process of the command, no
#     gk-* link and no cage cgroup remains (each try's time is printed;
#     the verdict waits up to 20 s, not a figure of one machine); a daemon the
#     command started with setsid does not survive gk-run's normal end
#     either;
#   - --pids 32 holds a fork bomb (never more than 32 tasks in the cage)
#     while the host keeps running commands, every one of them; one line says forks
#     were refused;
#   - --memory 64M and a program allocating 512 MiB: exit 137, "gk-run:
#     killed: out of memory (limit 64M)", a cage.limit audit line and
#     gatekeeper_cage_limit_events_total{limit="memory"};
#   - --cpus 0.5: a 2 s busy loop gets at most 3/4 of its wall time of
#     CPU (half, with room for the quota's periods and an emulated clock);
#   - gatekeeperd restarted while a command runs: the command carries on,
#     gk-run registers it again (same namespace, same cgroup), and its
#     next connection works once the daemon is back;
#   - a gatekeeperd with --cgroup off: limits exit 125 with the reason,
#     --limits best-effort runs with a warning; then a gatekeeperd that
#     starts sweeps a cage cgroup whose gk-run is gone (its process
#     killed), and leaves alone one whose gk-run lives.
#
#   bash tests/integration/test_contain.sh build/spawner/gk-run build/gatekeeperd
#   meson test -C build contain_integration      (suite "integration")
#
# Root only (it skips otherwise): private network, mount and PID
# namespaces (lib.sh); gatekeeperd's cgroup subtree has a name of this
# run's own (gk-test-PID) and is gone at the end.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_exe_args test_contain.sh GKRUN=gk-run GKD=gatekeeperd -- "$@"
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: test_contain.sh needs root (cgroups, namespaces)"
	exit 77
fi
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
gk_require bwrap ip nft unshare curl "$PYTHON" sh timeout
gk_enter_netns 77 "$GK_SELF" "$@"
gk_setup
T=$GK_TMP
CG=gk-test-$$
SOCK=$T/run/control.sock
WORK=$T/work
METRICS=127.0.0.1:9477
AUDIT=$T/audit.log
U=$$$RANDOM		# makes our sleeps' arguments unique
mkdir -p "$T/run" "$WORK" && chmod 755 "$T/run"
: >"$T/empty.conf"

oneline() { printf '%s' "$1" | tr '\n' '|' | cut -c1-600; }

# (ready: its socket is there, and it has said where cages go: that line
# comes after the socket, once the cgroups are set up, which may take a
# slow host's systemd a while; the log is appended to across restarts)
cgroups_said() { grep -c "cgroups: \|cgroup off: " "$T/GKD_PID.log" 2>/dev/null; }
start_daemon() {
	local before
	before=$(cgroups_said)
	gk_start_daemon GKD_PID "$GKD" -f -c "$T/empty.conf" --control "$SOCK" \
		--metrics "$METRICS" --upstream 127.0.0.1:5353 --log-level debug \
		--audit-log "$AUDIT" "$@"
	gk_wait_for 300 test -S "$SOCK" &&
		gk_wait_for 300 eval '[ "$(cgroups_said)" -gt "${before:-0}" ]'
}
# run ARGS...: gk-run in $WORK, stdout/stderr in $T/run.out/.err, RC.
run() {
	( cd "$WORK" && exec timeout -s KILL 60 "$GKRUN" --control "$SOCK" "$@" \
		>"$T/run.out" 2>"$T/run.err" )
	RC=$?
}
detail() {
	GK_DETAIL="rc $RC; out: $(oneline "$(head -c 300 "$T/run.out")"); err: $(oneline "$(head -c 500 "$T/run.err")")"
}
procs_with() { pgrep -f -- "$1" | grep -c .; }
links() { ip -o link show | grep -c ' gk-'; }

# ---- the cgroup, seen from outside -------------------------------------------
# the control socket's group, before gatekeeperd makes the socket
HAVE_GROUP=no
gk_users_locked gk_group_exists gatekeeper && HAVE_GROUP=yes
start_daemon --cgroup "$CG" || gk_abort "gatekeeperd starts" "$T/GKD_PID.log"
V2=$(sed -n "s/.*cgroups: cages' processes in \([^;]*\);.*/\1/p" "$T/GKD_PID.log" | head -1)
GK_DETAIL=$(grep -m1 cgroups: "$T/GKD_PID.log")
# the subtree as /proc/PID/cgroup names it: below the cgroup2 mount (the
# hierarchy's root here; a delegated scope of systemd's on a systemd host,
# whose name has backslashes: matched as a fixed string)
V2MNT=$(findmnt -n -t cgroup2 -o TARGET | head -1)
REL=${V2#"$V2MNT"}
gk_info "cages' cgroups: $V2 (in /proc/PID/cgroup: 0::$REL/cage-...)"
gk_check "gatekeeperd says where cages go and what limits them ($V2)" \
	eval '[ -n "$V2" ] && [ -d "$V2" ] && grep -q "limits: memory" "$T/GKD_PID.log"'
if [ -n "$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null)" ]; then
	gk_say "note: this machine has a pure cgroup v2 hierarchy; the checks below run on it"
else
	gk_say "note: hybrid layout here (controllers bound to v1; v2 at $(dirname "$V2") has none): the pure v2 layout is guest_integration's (a Debian 12 host)"
fi
( cd "$WORK" && exec "$GKRUN" --control "$SOCK" --allow x.example -- \
	sleep "50.$U" ) >"$T/bg.out" 2>&1 &
BG=$!
gk_track_pid "$BG"
gk_wait_for 50 pgrep -f -- "^sleep 50.$U" >/dev/null
pid=$(pgrep -f -- "^sleep 50.$U" | head -1)
cg=$(cat "/proc/$pid/cgroup" 2>/dev/null | tr '\n' ' ')
GK_DETAIL="sleep pid ${pid:-none}: $cg"
gk_check "the command runs in its cage's cgroup (v2 and the v1 ones it needs)" \
	eval '[ -n "$pid" ] && [ -n "$REL" ] && grep -F "0::$REL/cage-" "/proc/$pid/cgroup" |
	    grep -q "/cage-[a-z0-9]*-[0-9]*-[0-9]*-[0-9]*$"'
kill -TERM "$BG"
gk_wait_exit "$BG" 50
gk_untrack_pid "$BG"
gk_wait_for 200 eval '[ "$(procs_with "50.$U")" = 0 ] && ! ls -d "$V2"/cage-* >/dev/null 2>&1'
GK_DETAIL="processes: $(procs_with "50.$U"); cgroups: $(find "$V2" -maxdepth 1 -name "cage-*" | grep -c .)"
gk_check "gk-run ends (SIGTERM): its processes and cgroup are gone" \
	eval '[ "$(procs_with "50.$U")" = 0 ] && ! ls -d "$V2"/cage-* >/dev/null 2>&1'

# ---- a daemon the command leaves behind ---------------------------------------
run --allow x.example -- sh -c "setsid sleep 51.$U </dev/null >/dev/null 2>&1 & echo started"
gk_wait_for 10 test "$(procs_with "51.$U")" = 0
detail
gk_check "a process the command started with setsid ends with gk-run" \
	eval '[ "$RC" = 0 ] && grep -q started "$T/run.out" && [ "$(procs_with "51.$U")" = 0 ]'

# ---- kill -9 of gk-run during start-up and run ----------------------------------
# kill9 WHO TIMING FIRST 'GK-RUN OPTIONS' [PREFIX...]: gk-run (run by
# PREFIX, which execs it, in WHO's work directory) killed with SIGKILL
# at points timed from its start (TIMING "start": 30 points from 0 to
# 1000 ms), from its cage's link appearing ("link": every ms from 0 to
# 20, then 9 more in the 2-18 ms window the attack found) or both, and
# last once the command runs (it must); each try's sleep has a tag of
# its own, numbered from FIRST. Then, within
# one second, no process of the command, no gk-* link and no cage
# cgroup may remain.
kill9() {
	local who=$1 timing=$2 first=$3 opts=$4 work=$WORK
	shift 4
	[ "$#" -gt 0 ] && work=$T/nobody/work
	"$PYTHON" - "$GKRUN" "$SOCK" "${V2:-/nonexistent}" "$work" "$U" "$first" \
		"$timing" "$opts" "$@" >"$T/kill9-${who//[^a-z]/_}.txt" 2>&1 <<'EOF'
import glob, os, subprocess, sys, time
gkrun, sock, cgdir, work, u, first, timing, opts = sys.argv[1:9]
prefix = sys.argv[9:]
from_start = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 18, 20, 23, 26,
              30, 35, 40, 50, 60, 80, 100, 150, 200, 300, 500, 1000]
from_link = list(range(21)) + [2, 4, 6, 8, 10, 12, 14, 16, 18]
tries = []
if timing in ("start", "both"):
    tries += [(d, False) for d in from_start]
if timing in ("link", "both"):
    tries += [(d, True) for d in from_link]
# last, once the command runs (so a sandbox that never starts fails)
tries += [(0, None)]
def gk_links():
    # /proc/net/dev is this network namespace's (the test's), whereas
    # /sys/class/net is the one sysfs was mounted in
    with open("/proc/net/dev") as f:
        names = [l.split(":")[0].strip() for l in f.readlines()[2:]]
    return [n for n in names if n.startswith("gk-")]
def left(tag):
    procs = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            if tag.encode() in open("/proc/%s/cmdline" % p, "rb").read():
                procs.append(p)
        except OSError:
            pass
    return procs, gk_links(), glob.glob(cgdir + "/cage-*")
def sleeping(tag):
    want = b"sleep\0" + tag.encode() + b"\0"
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and open("/proc/%s/cmdline" % p, "rb").read() == want:
                return True
        except OSError:
            pass
    return False
def wait_for(what, limit):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if what():
            return True
        time.sleep(0.0002)
    return False
def link_up(limit):
    # the cage's link appearing: gatekeeperd made the cage
    return wait_for(gk_links, limit)
bad = 0
for i, (d, after_link) in enumerate(tries):
    tag = "%d.%s%d" % (int(first) + i, u, i)
    what = {True: "the link", False: "the start",
            None: "the command started"}[after_link]
    p = subprocess.Popen(prefix + [gkrun, "--control", sock] + opts.split() +
                         ["--", "sleep", tag], cwd=work,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if after_link and not link_up(5.0):
        print("FAIL kill -9 %4d ms after %s: no link within 5 s" % (d, what))
        bad += 1
    if after_link is None and not wait_for(lambda: sleeping(tag), 10.0):
        print("FAIL kill -9 %4d ms after %s: it never did within 10 s"
              % (d, what))
        bad += 1
    time.sleep(d / 1000.0)
    p.kill()
    p.wait()
    t0 = time.monotonic()
    while True:
        procs, links, cgs = left(tag)
        el = time.monotonic() - t0
        if not procs and not links and not cgs:
            print("ok   kill -9 %4d ms after %s: all gone in %3d ms"
                  % (d, what, el * 1000))
            break
        if el > 20.0:
            bad += 1
            print("FAIL kill -9 %4d ms after %s: after 20 s: processes %s, "
                  "links %s, cgroups %s" % (d, what, procs, links,
                  [os.path.basename(c) for c in cgs]))
            break
        time.sleep(0.005)
sys.exit(1 if bad else 0)
EOF
	local rc=$? f=$T/kill9-${who//[^a-z]/_}.txt n
	n=$(grep -c "^ok\|^FAIL" "$f")
	GK_DETAIL="$(grep -c "^ok" "$f") of $n clean; $(grep FAIL "$f" | head -3 | tr '\n' '|')"
	gk_check "$who: kill -9 of gk-run at $n points of start-up and run: nothing of the cage remains (times below)" \
		test "$rc" = 0
	sed 's/^/       /' "$f" | head -60
}
# as a member of the control socket's group, without privileges
NOBODY=(setpriv --reuid=nobody --regid=gatekeeper --groups=gatekeeper -- env -i
	PATH=/usr/local/bin:/usr/bin:/bin "HOME=$T/nobody/home")
mkdir -p "$T/nobody/work" "$T/nobody/home"
chown nobody "$T/nobody/work" "$T/nobody/home"
chmod 711 "$T"
kill9 root both 100 "--allow x.example"
if [ "$HAVE_GROUP" = yes ]; then
	kill9 nobody link 200 "--allow x.example" "${NOBODY[@]}"
else
	gk_fail "create the group gatekeeper (groupadd --system)"
fi

# ---- --pids: a fork bomb ---------------------------------------------------------
( cd "$WORK" && exec timeout -s KILL 60 "$GKRUN" --control "$SOCK" \
	--allow x.example --pids 32 --timeout 4 -- sh -c \
	'b() { b | b & }; b; sleep 6' >"$T/bomb.out" 2>"$T/bomb.err" ) &
BOMB=$!
gk_track_pid "$BOMB"
"$PYTHON" - "$V2" >"$T/bomb-watch.txt" <<'EOF'
import glob, os, subprocess, sys, time
cgdir = sys.argv[1]
peak, worst, runs, failed = 0, 0.0, 0, 0
# 3 s from the bomb's first process in its cage (a loaded machine may
# take a while to get there: at most 20 s)
# The cage is sampled every 2 ms (a bomb's processes come and go fast);
# the host runs /bin/true every 20 ms meanwhile.
t_end = time.monotonic() + 20.0
next_true = 0.0
started = False
while time.monotonic() < t_end:
    for d in glob.glob(cgdir + "/cage-*"):
        try:
            n = len(open(d + "/cgroup.procs").read().split())
            peak = max(peak, n)
        except OSError:
            pass
    if peak > 0 and not started:
        started = True
        t_end = time.monotonic() + 3.0
    if time.monotonic() >= next_true:
        t0 = time.monotonic()
        try:
            if subprocess.run(["/bin/true"]).returncode != 0:
                failed += 1
        except OSError:
            failed += 1
        runs += 1
        worst = max(worst, time.monotonic() - t0)
        next_true = time.monotonic() + 0.02
    time.sleep(0.002)
print("%d %d %d %d" % (peak, worst * 1000, runs, failed))
EOF
# (the bomb's size is proven by gk-run's count of refused forks below;
# sampled every 2 ms, its processes come and go between two samples)
read -r peak worst truns tfailed <"$T/bomb-watch.txt"
gk_wait_exit "$BOMB" 100
wait "$BOMB"
brc=$?
gk_untrack_pid "$BOMB"
limit_dir=$(find /sys/fs/cgroup/pids -maxdepth 3 -type d -name "$CG" | head -1)
GK_DETAIL="peak $peak processes in the cage; the host ran /bin/true $truns times, $tfailed failed, the slowest in ${worst} ms; rc $brc; err: $(oneline "$(tail -c 300 "$T/bomb.err")")"
gk_check "--pids 32: a fork bomb never has more than 32 processes; the host runs /bin/true meanwhile, every time" \
	eval '[ -n "$peak" ] && [ "$peak" -le 32 ] && [ "$peak" -ge 1 ] && [ "${truns:-0}" -gt 0 ] && [ "$tfailed" = 0 ]'
gk_check "... gk-run says forks were refused at the limit" \
	grep -q "gk-run: process limit reached (--pids 32): [0-9]* forks\? refused" "$T/bomb.err"
gk_wait_for 20 eval '! ls -d "$V2"/cage-* >/dev/null 2>&1'
GK_DETAIL=$(ls "$V2" "$limit_dir" 2>&1 | tr '\n' ' ')
gk_check "... and at its end (--timeout) nothing of it remains" \
	eval '! ls -d "$V2"/cage-* "$limit_dir"/cage-* >/dev/null 2>&1'

# ---- --memory --------------------------------------------------------------------
a0=$(gk_audit_mark "$AUDIT")
run --allow x.example --memory 64M -- "$PYTHON" -c \
	'a = bytearray(512 << 20); print("allocated", len(a))'
detail
gk_check "--memory 64M, 512 MiB allocated: exit 137 and 'gk-run: killed: out of memory (limit 64M)'" \
	eval '[ "$RC" = 137 ] && grep -qx "gk-run: killed: out of memory (limit 64M)" "$T/run.err" &&
	    ! grep -q allocated "$T/run.out"'
gk_check "... an audit line: cage.limit, memory, 67108864" \
	gk_audit_wait "$AUDIT" "$a0" 20 '"event":"cage\.limit".*"limit":"memory","value":67108864'
m=$(curl -s --max-time 5 "http://$METRICS/metrics" | grep '^gatekeeper_cage_limit_events_total{limit="memory"}')
GK_DETAIL=$m
gk_check "... and gatekeeper_cage_limit_events_total{limit=\"memory\"} 1" \
	test "$m" = 'gatekeeper_cage_limit_events_total{limit="memory"} 1'
run --allow x.example --memory 64M -- "$PYTHON" -c \
	'a = bytearray(16 << 20); print("allocated", len(a))'
detail
gk_check "--memory 64M, 16 MiB allocated: runs, no limit line" \
	eval '[ "$RC" = 0 ] && grep -q "allocated 16777216" "$T/run.out" && ! grep -q "out of memory" "$T/run.err"'

# ---- --cpus ------------------------------------------------------------------------
run --allow x.example --cpus 0.5 -- "$PYTHON" -c '
import time
c = time.process_time()
t = time.monotonic()
while time.monotonic() - t < 2.0:
    pass
print(int((time.process_time() - c) * 1000), int((time.monotonic() - t) * 1000))'
detail
read -r cpu wall <"$T/run.out"
# half of the loop's wall time (the loop's own CPU time: python's start
# alone took 0.3 s of CPU in an emulated guest), with room for the
# quota's periods; unlimited, it gets all of it (a slow host may give it
# less: that says nothing of the limit)
gk_check "--cpus 0.5: a busy loop got ${cpu:-?} ms of CPU in ${wall:-?} ms (at most 3/4 of it: limited)" \
	eval '[ "$RC" = 0 ] && [ "${cpu:-0}" -gt 0 ] && [ "${wall:-0}" -ge 2000 ] &&
	    [ "$((cpu * 4))" -le "$((wall * 3))" ]'
run --allow x.example --memory 3M -- true
detail
gk_check "--memory 3M: a usage error naming the range (125)" \
	eval '[ "$RC" = 125 ] && grep -q "out of range (4M to 1024T)" "$T/run.err"'
run --net none --pids 5 -- true
detail
gk_check "--pids with --net none: a usage error (limits need a gated run)" \
	eval '[ "$RC" = 125 ] && grep -q "apply to gated runs" "$T/run.err"'

# ---- gatekeeperd restarts under a running command ---------------------------------
mkdir -p "$T/www" && echo "hello $U" >"$T/www/a.txt"
( cd "$T/www" && exec "$PYTHON" -m http.server --bind 127.0.0.1 8088 ) \
	>"$T/www.log" 2>&1 &
gk_track_pid "$!"
gk_wait_for 50 curl -sf -o /dev/null http://127.0.0.1:8088/a.txt
rm -f "$WORK/first" "$WORK/second" "$WORK/go"
GET='curl -sf --max-time 2 --noproxy "" -x "$http_proxy" http://127.0.0.1:8088/a.txt'
( cd "$WORK" && exec timeout -s KILL 60 "$GKRUN" --control "$SOCK" \
	--allow 127.0.0.1/32:8088 -- sh -c "
$GET >first || exit 3
i=0; while [ ! -e go ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
i=0; until $GET >second; do [ \$i -lt 200 ] || exit 4; sleep 0.1; i=\$((i + 1)); done
sleep 52.$U & wait" >"$T/re.out" 2>"$T/re.err" ) &
RE=$!
gk_track_pid "$RE"
gk_wait_for 100 test -s "$WORK/first"
pid=$(pgrep -f -- "^sleep 52.$U" | head -1)
gk_stop_daemon "$GKD_PID" TERM
touch "$WORK/go"
gk_wait_for 20 grep -q "registers it again" "$T/re.err"
GK_DETAIL=$(oneline "$(cat "$T/re.err")")
gk_check "gatekeeperd stops: the command runs on, gk-run says it waits to register it again" \
	eval 'kill -0 "$RE" 2>/dev/null && grep -q "registers it again when gatekeeperd is back" "$T/re.err"'
sleep 1
a0=$(gk_audit_mark "$AUDIT")
start_daemon --cgroup "$CG" || gk_abort "gatekeeperd starts again" "$T/GKD_PID.log"
t_ready=$(date +%s%N)
gk_wait_for 100 test -s "$WORK/second"
t_second=$(date -r "$WORK/second" +%s%N 2>/dev/null || echo 0)
ms=$(( (t_second - t_ready) / 1000000 ))
GK_DETAIL="err: $(oneline "$(cat "$T/re.err")"); second: $(cat "$WORK/second" 2>&1)"
gk_check "gatekeeperd is back: the command's next connection works (${ms} ms after it is ready)" \
	eval 'grep -q "hello $U" "$WORK/second" &&
	    grep -q "gatekeeperd is back: sh has its network again" "$T/re.err"'
gk_check "... audited as a cage.create with \"reattach\": true, its cgroup taken over" \
	eval 'gk_audit_wait "$AUDIT" "$a0" 50 "\"event\":\"cage.create\".*\"reattach\":true" &&
	    gk_wait_for 50 grep -q "action=reattach" "$T/GKD_PID.log"'
pid=$(pgrep -f -- "^sleep 52.$U" | head -1)
GK_DETAIL="sleep ${pid:-gone}: $(cat "/proc/$pid/cgroup" 2>&1 | tr '\n' ' ')"
gk_check "... the command's processes are still in its cgroup" \
	eval '[ -n "$pid" ] && [ -n "$REL" ] && grep -qF "0::$REL/cage-" "/proc/$pid/cgroup"'
kill -TERM "$RE"
gk_wait_exit "$RE" 50
gk_untrack_pid "$RE"
gk_wait_for 10 eval '[ "$(procs_with "52.$U")" = 0 ] && ! ls -d "$V2"/cage-* >/dev/null 2>&1'
gk_check "... and gk-run's end still ends them all" \
	eval '[ "$(procs_with "52.$U")" = 0 ] && ! ls -d "$V2"/cage-* >/dev/null 2>&1'

# ---- a daemon that cannot contain --------------------------------------------------
gk_stop_daemon "$GKD_PID" TERM
start_daemon --cgroup off || gk_abort "gatekeeperd --cgroup off starts" "$T/GKD_PID.log"
run --allow x.example --memory 64M -- true
detail
gk_check "--cgroup off: gk-run --memory exits 125 saying the daemon cannot contain" \
	eval '[ "$RC" = 125 ] && grep -q "limits were asked for, but this gatekeeperd cannot contain" "$T/run.err"'
run --allow x.example --memory 64M --limits best-effort -- echo ran
detail
gk_check "... with --limits best-effort it runs, with a warning" \
	eval '[ "$RC" = 0 ] && grep -q ran "$T/run.out" && grep -q "warning: --limits best-effort" "$T/run.err"'
run --allow x.example -- echo ran
detail
gk_check "... and without limits it just runs" \
	eval '[ "$RC" = 0 ] && grep -q ran "$T/run.out" && ! grep -q warning "$T/run.err"'
# no cage cgroup holds the command: what ends it at any moment is gk-run's
# pid namespace keeper (spawn_start.c), whose death ends bwrap's pid 1
V2_SAVED=$V2 V2=
kill9 "root, --cgroup off" link 300 "--allow x.example"
[ "$HAVE_GROUP" = yes ] &&
	kill9 "nobody, --cgroup off" link 400 "--allow x.example" "${NOBODY[@]}"
# and without gatekeeperd at all
kill9 "root, --net none" start 500 "--net none"
kill9 "nobody, --net none" start 600 "--net none" "${NOBODY[@]}"
V2=$V2_SAVED
gk_stop_daemon "$GKD_PID" TERM

# ---- the start-up sweep -------------------------------------------------------------
NS=$(stat -Lc %i /proc/self/ns/pid)
mkdir -p "$V2"
sleep "52.$U" &
DEAD_PROC=$!
gk_track_pid "$DEAD_PROC"
mkdir "$V2/cage-zz11zz11-$NS-999999-1"
echo "$DEAD_PROC" >"$V2/cage-zz11zz11-$NS-999999-1/cgroup.procs"
sleep "53.$U" &
LIVE_PROC=$!
gk_track_pid "$LIVE_PROC"
read -r -a st <"/proc/$$/stat"
LIVE_NAME="cage-yy22yy22-$NS-$$-${st[21]}"
mkdir "$V2/$LIVE_NAME"
echo "$LIVE_PROC" >"$V2/$LIVE_NAME/cgroup.procs"
start_daemon --cgroup "$CG" || gk_abort "gatekeeperd starts again" "$T/GKD_PID.log"
# the sweep kills, then removes the cgroup once it is empty: wait for both
gk_wait_for 20 eval '! kill -0 "$DEAD_PROC" 2>/dev/null &&
    [ ! -d "$V2/cage-zz11zz11-$NS-999999-1" ]'
GK_DETAIL="$(grep -m1 leftover "$T/GKD_PID.log"); left: $(ls "$V2" | tr '\n' ' ')"
gk_check "a starting gatekeeperd kills and removes a cage cgroup whose gk-run is gone" \
	eval '! kill -0 "$DEAD_PROC" 2>/dev/null && [ ! -d "$V2/cage-zz11zz11-$NS-999999-1" ] &&
	    grep -q "1 leftover cage whose gk-run is gone" "$T/GKD_PID.log"'
gk_check "... and leaves one whose gk-run lives" \
	eval 'kill -0 "$LIVE_PROC" 2>/dev/null && [ -d "$V2/$LIVE_NAME" ]'
kill "$LIVE_PROC"
gk_wait_for 20 eval '! kill -0 "$LIVE_PROC" 2>/dev/null'
rmdir "$V2/$LIVE_NAME" 2>/dev/null

# another gatekeeperd with the same --cgroup name removes the (empty)
# subtree when it stops: this one makes it again at its next cage
rmdir "$V2"
( cd "$WORK" && exec timeout -s KILL 60 "$GKRUN" --control "$SOCK" --allow x.example \
	-- sleep "54.$U" >"$T/run.out" 2>"$T/run.err" ) &
REMADE_RUN=$!
gk_track_pid "$REMADE_RUN"
in_cage() { grep -qs "/$CG/cage-" "/proc/$(pgrep -f -- "^sleep 54.$U" | head -1)/cgroup"; }
gk_wait_for 50 in_cage
GK_DETAIL="log: $(grep -m1 'removed under us' "$T/GKD_PID.log"); err: $(oneline "$(cat "$T/run.err")")"
gk_check "its subtree removed under it: the next cage gets its cgroup all the same" \
	eval 'in_cage && grep -q "removed under us" "$T/GKD_PID.log"'
kill "$REMADE_RUN"
gk_wait_for 20 eval '! pgrep -f -- "sleep 54.$U" >/dev/null'

# ---- stop ---------------------------------------------------------------------------
gk_stop_daemon "$GKD_PID" TERM
GK_DETAIL="rc $GK_RC"
gk_check "SIGTERM: gatekeeperd exits 0" test "$GK_RC" = 0
left=$(find /sys/fs/cgroup -maxdepth 4 -type d -name "$CG" 2>/dev/null)
GK_DETAIL=$left
gk_check "its cgroup subtrees are gone once empty" test -z "$left"
GK_DETAIL=$(grep -hE "AddressSanitizer|LeakSanitizer|runtime error:" "$T"/*.log "$T"/*.err 2>/dev/null | head -5)
gk_check "no sanitizer reports" test -z "$GK_DETAIL"

# shellcheck disable=SC2119  # no note for the summary
gk_finish
