# shellcheck shell=bash
#
# e2e_lib.sh: what test_e2e.sh and test_transparent.sh share: their
# preamble (arguments, tools, a hermetic environment, root), the test user,
# and the helpers that run programs as root or as that user, in gk-run
# cages or not, against e2e_net.sh's hermetic internet. Source it right
# after lib.sh (before gk_enter_netns); it defines functions only. The
# functions that touch the internet (base_env, tree_check, ...) need
# e2e_net.sh, which the tests source after gk_setup, and e2e_vars.
#
# Set by the test before the preamble: E2E_NAME (the script's name, for
# messages). Set by e2e_args: GKD, GKRUN. Set by e2e_vars: T, SOCK, AUDIT,
# METRICS, GW, SHARE, GK_SUMMARY_LOG. The test user is E2E_USER in group
# E2E_GROUP (uid E2E_UID once e2e_user ran).

# shellcheck disable=SC2034  # variables used by the sourcing scripts
# shellcheck disable=SC2016  # eval'd conditions are single-quoted on purpose

E2E_USER=gk-e2e
E2E_GROUP=gatekeeper

# e2e_die MSG: fail before any check could run (never a silent skip).
e2e_die() {
	echo "$E2E_NAME: FAIL: $*"
	echo "---- 0 passed, 1 failed ----"
	exit 1
}

# e2e_args GKRUN-OPTIONAL "$@": GKD and GKRUN from the script's arguments
# (absolute). With GKRUN-OPTIONAL 1, gk-run may be left out (GKRUN empty).
e2e_args() {
	local opt=$1
	shift
	if [ $# -lt 1 ] || { [ $# -lt 2 ] && [ "$opt" != 1 ]; }; then
		echo "usage: bash $E2E_NAME /path/to/gatekeeperd /path/to/gk-run" >&2
		exit 2
	fi
	GKD=$(readlink -f "$1")
	[ -x "$GKD" ] || e2e_die "$1: not an executable (gatekeeperd)"
	GKRUN=
	if [ -n "${2:-}" ]; then
		GKRUN=$(readlink -f "$2")
		[ -x "$GKRUN" ] || e2e_die "$2: not an executable (gk-run)"
	fi
}
# e2e_ctl_arg PATH: GKCTL_BIN, gatekeeperctl (a script's third argument),
# which must be given and executable.
e2e_ctl_arg() {
	[ -n "${1:-}" ] || e2e_die "usage: bash $E2E_NAME GATEKEEPERD GK-RUN GATEKEEPERCTL (gatekeeperctl missing)"
	GKCTL_BIN=$(readlink -f "$1")
	[ -x "$GKCTL_BIN" ] || e2e_die "$1: not an executable (gatekeeperctl)"
}

# e2e_preamble TOOL...: a fixed PATH, every TOOL installed, hermetic
# clients (lib.sh: gk_unset_client_env), root; e2e_die otherwise.
e2e_preamble() {
	local t
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 ||
			e2e_die "$t is not installed (bash deploy/install-deps.sh installs it)"
	done
	gk_unset_client_env
	[ "$(id -u)" -eq 0 ] ||
		e2e_die "needs root (network namespaces, nftables, a test user)"
}

# e2e_vars: inside the namespaces, after gk_setup: the paths and addresses
# both tests use.
e2e_vars() {
	T=$GK_TMP
	SOCK=$T/run/control.sock
	AUDIT=$T/audit.log
	METRICS=127.0.0.1:9477
	GW=10.143.0.1
	SHARE=$T/share			# read-only in cages: CA, probe scripts
	GK_SUMMARY_LOG=$T/GKD_PID.log
}

# e2e_begin: inside the namespaces, after e2e_net.sh: say what runs, then
# start the test internet (or abort with nginx's log).
e2e_begin() {
	echo "# gatekeeperd: $GKD"
	echo "# gk-run: ${GKRUN:-(none)}"
	echo "# temp $T"
	if ! en_start; then
		gk_abort "the test internet starts (netns, veth, resolv.conf, CA, dnsmasq, echo, fcgiwrap, nginx)" \
			"$T/inet/nginx-error.log"
	fi
}

# ---------------------------------------------------------------------------
# Output and metrics

oneline() { printf '%s' "$1" | tr '\n' ' ' | cut -c1-400; }

fetch_metrics() { gk_metrics_fetch "$METRICS" "$1" || : >"$1"; }
# mark / after: the metrics before and after a case ($T/m0.txt, m1.txt);
# dm NAME LABELS...: the change of a sum between them.
mark() { fetch_metrics "$T/m0.txt"; }
after() { fetch_metrics "$T/m1.txt"; }
dm() {
	local a b
	a=$(gk_metric_sum "$T/m0.txt" "$@")
	b=$(gk_metric_sum "$T/m1.txt" "$@")
	echo $((b - a))
}

# ---------------------------------------------------------------------------
# The kernel state a cage leaves: gk-* links and elements of the set.

gk_links() { ip -o link show | grep -o ' gk-[^:@]*' | tr -d ' ' | sort; }
nlinks() { gk_links | grep -c .; }
set_elems() {	# the elements of inet gatekeeper cages, one per line
	nft list set inet gatekeeper cages 2>/dev/null |
		tr -d '\n' | sed -n 's/.*elements = {\([^}]*\)}.*/\1/p' |
		tr ',' '\n' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | grep .
}
nelems() { set_elems | grep -c .; }
no_leftovers() { [ "$(nlinks)" -eq 0 ] && [ "$(nelems)" -eq 0 ]; }
# leftover_detail [PGREP-PATTERN]: links, set elements and processes, for
# failure details.
leftover_detail() {
	printf 'links: [%s] set elements: [%s] processes: [%s]' \
		"$(gk_links | paste -sd, -)" "$(set_elems | paste -sd, -)" \
		"$(pgrep -f "${1:-^$}" 2>/dev/null | xargs -r ps -o pid=,comm= -p |
			sed 's/^ *//' | paste -sd, -)"
}

# ---------------------------------------------------------------------------
# The test user

# e2e_make_user: the group and the user, made if missing (under
# gk_users_locked: tests run two at a time).
e2e_make_user() {
	gk_group_exists "$E2E_GROUP" || return 1
	if ! getent passwd "$E2E_USER" >/dev/null; then
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin --comment "gatekeeper e2e test" \
			--groups "$E2E_GROUP" "$E2E_USER" || return 1
	fi
	if ! id -nG "$E2E_USER" | tr ' ' '\n' | grep -qx "$E2E_GROUP"; then
		usermod -aG "$E2E_GROUP" "$E2E_USER" || return 1
	fi
}

# e2e_user: the group and the user (created if missing, idempotently, as a
# system user without a home), their directories under $T, and the check
# that the user is not root and is in the group. Sets E2E_UID.
e2e_user() {
	gk_users_locked e2e_make_user || gk_abort "create the test user $E2E_USER in group $E2E_GROUP"
	E2E_UID=$(id -u "$E2E_USER")
	mkdir -p "$T/home-user" "$T/work-user" "$T/work-root" "$SHARE" "$T/run"
	chown "$E2E_USER:" "$T/home-user" "$T/work-user"
	GK_DETAIL="id: $(id "$E2E_USER")"
	gk_check "test user $E2E_USER (uid $E2E_UID) is not root and is in group $E2E_GROUP" \
		eval '[ "$E2E_UID" -ne 0 ] && id -nG "$E2E_USER" | tr " " "\n" | grep -qx "$E2E_GROUP"'
}

# ---------------------------------------------------------------------------
# Running programs as root or as the test user, in cages or not

# The environment every cage starts from: what a person would have, plus
# the test CA (must pass through gk-run: not on its code-injection list).
# The machine's own git, npm and pip settings are left out like its CA
# (a global npmrc's cafile would replace NODE_EXTRA_CA_CERTS' CA, a
# pip.conf could point pip elsewhere).
base_env() {	# base_env HOME
	printf '%s\n' "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" \
		"HOME=$1" "LANG=C.UTF-8" "GIT_CONFIG_NOSYSTEM=1" \
		"GIT_TERMINAL_PROMPT=0" "GIT_HTTP_LOW_SPEED_LIMIT=1000" \
		"GIT_HTTP_LOW_SPEED_TIME=20" "npm_config_globalconfig=/dev/null" \
		"PIP_CONFIG_FILE=/dev/null"
	en_ca_env
	# A sanitizer build of gk-run reports the way the other tests ask.
	local v
	for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
		[ -n "${!v:-}" ] && printf '%s=%s\n' "$v" "${!v}"
	done
	return 0
}

# as_cmd WHO: AS_CMD becomes the prefix that runs a command as root or as
# the test user, with base_env only.
as_cmd() {
	local env=()
	if [ "$1" = user ]; then
		mapfile -t env < <(base_env "$T/home-user")
		AS_CMD=(setpriv --reuid="$E2E_USER" --regid="$E2E_USER"
			--init-groups -- env -i "${env[@]}")
	else
		mapfile -t env < <(base_env "$T/home-root")
		AS_CMD=(env -i "${env[@]}")
	fi
}
as() {	# as WHO CMD...
	local who=$1
	shift
	as_cmd "$who"
	"${AS_CMD[@]}" "$@"
}

# cage WHO GK-RUN-ARGS... -- COMMAND...: run gk-run as WHO in $T/work-WHO,
# bounded (an outer `timeout -s KILL`, exit 137, so gk-run's own 124 stays
# readable). stdout in $T/run.out, stderr in $T/run.err (and appended to
# $T/all-runs.err); sets RUN_RC and RUN_MS.
cage() {
	local who=$1 t0
	shift
	as_cmd "$who"
	t0=$(date +%s%N)
	( cd "$T/work-$who" &&
	  exec timeout -s KILL 300 "${AS_CMD[@]}" "$GKRUN" --control "$SOCK" "$@" \
		>"$T/run.out" 2>"$T/run.err" </dev/null )
	RUN_RC=$?
	RUN_MS=$((($(date +%s%N) - t0) / 1000000))
	cat "$T/run.err" >>"$T/all-runs.err"
}
run_detail() {
	printf 'rc=%s %sms | out: %s | err: %s' "$RUN_RC" "$RUN_MS" \
		"$(oneline "$(head -c 600 "$T/run.out")")" \
		"$(oneline "$(head -c 800 "$T/run.err")")"
}

# ask_run ANSWER DELAY GK-RUN-ARGS... -- COMMAND...: `cage root --ask`
# with ask_supervisor.py answering ANSWER after DELAY s on --events-fd 3
# and --decisions-fd 4; what it saw in $T/sup.log.
ask_run() {
	local answer=$1 delay=$2 sup
	shift 2
	rm -f "$T/ev.fifo" "$T/dec.fifo"
	: >"$T/sup.log"
	mkfifo "$T/ev.fifo" "$T/dec.fifo"
	timeout -s KILL 115 "$PYTHON" "$GK_LIB_DIR/ask_supervisor.py" "$T/ev.fifo" "$T/dec.fifo" \
		"$T/sup.log" "$answer" "$delay" &
	sup=$!
	cage root --ask --events-fd 3 --decisions-fd 4 --ro "$EN_DIR" "$@" \
		3>"$T/ev.fifo" 4<"$T/dec.fifo"
	gk_wait_exit "$sup" 50 2>/dev/null || kill -KILL "$sup" 2>/dev/null
	wait "$sup" 2>/dev/null
}
# nevents EVENT: how many lines of that event the supervisor got.
nevents() {
	"$PYTHON" - "$T/sup.log" "$1" <<'EOF'
import json, sys
n = 0
for line in open(sys.argv[1]):
    try:
        n += json.loads(line).get("event") == sys.argv[2]
    except ValueError:
        pass
print(n)
EOF
}
# cage_bg VAR WHO GK-RUN-ARGS... -- COMMAND...: start gk-run in the
# background; VAR gets its pid (the gk-run process itself: setpriv execs).
# stdout and stderr are appended to $T/VAR.out and $T/VAR.err.
cage_bg() {
	local var=$1 who=$2 pid
	shift 2
	as_cmd "$who"
	( gk_close_ctl_fds; cd "$T/work-$who" &&
	  exec "${AS_CMD[@]}" "$GKRUN" --control "$SOCK" "$@" \
		>>"$T/$var.out" 2>>"$T/$var.err" </dev/null ) &
	pid=$!
	gk_track_pid "$pid"
	printf -v "$var" '%s' "$pid"
}

# kill9 PID: kill -9 a background child quietly and reap it.
kill9() {
	{
		kill -KILL "$1"
		gk_wait_exit "$1" 30
	} 2>/dev/null
}

# wait_ms TENTHS COND...: poll COND every 50 ms for at most TENTHS/10 s;
# WAIT_MS is the time it took (or the bound).
wait_ms() {
	local max=$(($1 * 2)) i t0
	shift
	t0=$(date +%s%N)
	for ((i = 0; i <= max; i++)); do
		if "$@"; then
			WAIT_MS=$((($(date +%s%N) - t0) / 1000000))
			return 0
		fi
		sleep 0.05
	done
	WAIT_MS=$((($(date +%s%N) - t0) / 1000000))
	return 1
}

# tree_check DIR: is DIR a clone of the test repository with the right
# tree? TREE_WHY is "ok" or what differs. GIT_HEAD must be set (the
# commit e2e_net.sh's repository points at). (safe.directory: the clone
# may belong to the test user.)
tgit() { git -c safe.directory='*' "$@"; }
tree_check() {
	local d=$1 h
	h=$(tgit -C "$d" rev-parse HEAD 2>&1)
	if [ "$h" != "$GIT_HEAD" ]; then
		TREE_WHY="HEAD '$(oneline "$h")', want $GIT_HEAD"
	elif [ "$(tgit -C "$d" ls-tree -r HEAD)" != "$(cat "$EN_DIR/git-tree")" ]; then
		TREE_WHY="ls-tree differs: $(oneline "$(tgit -C "$d" ls-tree -r HEAD 2>&1)")"
	elif ! cmp -s "$d/data.txt" "$EN_DIR/git-src/data.txt" ||
	    ! cmp -s "$d/src/hello.c" "$EN_DIR/git-src/src/hello.c" ||
	    ! cmp -s "$d/README" "$EN_DIR/git-src/README"; then
		TREE_WHY="the checked-out files differ from the source"
	elif ! tgit -C "$d" fsck --no-progress >"$T/fsck.out" 2>&1; then
		TREE_WHY="git fsck: $(oneline "$(cat "$T/fsck.out")")"
	else
		TREE_WHY=ok
	fi
}

# ---------------------------------------------------------------------------
# gatekeeperd and the files cages read

# daemon_ready PID: gatekeeperd's control socket is there and /metrics
# answers (bounded: 10 s; 1 at once if PID exits).
daemon_ready() {
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$1" 2>/dev/null || return 1
		[ -S "$SOCK" ] && curl -sf --max-time 1 -o /dev/null \
			"http://$METRICS/metrics" && return 0
		sleep 0.1
	done
	return 1
}

# e2e_probe_script: $SHARE/probe.py, the connect probe cages run, next to
# a copy of the CA.
e2e_probe_script() {
	cp "$CA" "$SHARE/ca.crt"
	cat >"$SHARE/probe.py" <<'EOF'
# probe.py tcp|udp HOST PORT [NAME]: (with NAME: resolve it first, which
# pins its addresses to the cage) connect, for UDP send "ping"; print what
# came back ("GOT ...") or the error ("ERR CODE ..."), with the time taken.
# Exit 0 only if data came.
import errno, socket, sys, time
kind, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if len(sys.argv) > 4:
    print("RESOLVED %s" % sorted({a[4][0] for a in socket.getaddrinfo(
        sys.argv[4], port, socket.AF_INET, socket.SOCK_STREAM)}))
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
t = time.monotonic()
ms = lambda: int((time.monotonic() - t) * 1000)
try:
    s = socket.socket(fam, socket.SOCK_STREAM if kind == "tcp" else socket.SOCK_DGRAM)
    s.settimeout(3)
    s.connect((host, port))
    if kind == "udp":
        s.send(b"ping")
    data = s.recv(200)
    print("GOT %r %dms" % (data, ms()))
    sys.exit(0 if data else 1)
except OSError as e:
    code = errno.errorcode.get(e.errno, str(e.errno)) if e.errno else type(e).__name__
    print("ERR %s %s %dms" % (code, e, ms()))
    sys.exit(1)
EOF
}

# e2e_no_sanitizer_reports: a check that neither gatekeeperd's logs nor
# gk-run's stderr of every run (all-runs.err) hold a sanitizer report.
e2e_no_sanitizer_reports() {
	GK_DETAIL=$(grep -Eh -m3 "AddressSanitizer|LeakSanitizer|runtime error:" \
		"$T"/GKD_PID.log* "$T"/all-runs.err 2>/dev/null)
	gk_check "no sanitizer reports in gatekeeperd's logs or on gk-run's stderr" \
		eval '! cat "$T"/GKD_PID.log* "$T"/all-runs.err 2>/dev/null |
		      grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:"'
}

# e2e_stop_daemon: the end of a script that ran gatekeeperd (GKD_PID):
# checks that it still runs, exits 0 on SIGTERM, and reported nothing
# (e2e_no_sanitizer_reports).
e2e_stop_daemon() {
	GK_DETAIL="$(gk_tail "$T/GKD_PID.log" 5)"
	gk_check "gatekeeperd is still running" kill -0 "$GKD_PID"
	gk_stop_daemon "$GKD_PID" TERM
	GK_DETAIL="exit status $GK_RC"
	gk_check "SIGTERM: gatekeeperd exits 0" test "$GK_RC" = 0
	e2e_no_sanitizer_reports
}
