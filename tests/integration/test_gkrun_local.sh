#!/usr/bin/env bash
#
# test_gkrun_local.sh: gk-run with the real bwrap, real programs and the
# real gatekeeperd: --net none and host, the sandboxed filesystem, the
# environment filter, exit statuses, signals, timeouts, seccomp, --dry-run,
# and gated mode against gatekeeperd running in this script's own network
# namespace (cages plumbed with veths, table inet gatekeeper there).
#
#   bash tests/integration/test_gkrun_local.sh build/spawner/gk-run build/gatekeeperd
#   meson test -C build gkrun_local          (suite "integration")
#
# As root the script re-executes itself in private network, mount and PID
# namespaces (lib.sh, gk_enter_netns): gatekeeperd creates its nftables
# table and links there, never on the machine's own network. The checks
# then run twice: as root, and as the unprivileged user "nobody"
# (setpriv), since gk-run must work without privileges; for gated mode
# nobody runs with the primary group "gatekeeper", which may use the control
# socket (the group is created if missing). As any other user the script
# runs once, as that user, without gatekeeperd: the gated checks need root
# (they are reported as skipped). The files gk-run reads and writes for
# the user (--allow-file, --learn, --ask-save) in the working directory:
# links to a file outside planted there are refused or left alone, and
# the command cannot change them. Nothing leaves the machine: the only
# listeners are a python http.server on 127.0.0.1 and gatekeeperd on
# 10.143.0.1, both in the private namespace.
#
# Prints one line per check ("ok   ..." or "FAIL ..."), exits 1 if any
# check failed, 77 (skip) when bwrap, user or network namespaces are
# missing. GK_KEEP_TMP=1 keeps the temporary directory (gatekeeperd's log).

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"
# shellcheck source=tests/bench/gkrun_home.sh
. "$(dirname "$GK_SELF")/../bench/gkrun_home.sh"	# bench_home

gk_exe_args test_gkrun_local.sh GKRUN=gk-run GKD=gatekeeperd -- "$@"
GK_GROUP=gatekeeper	# may use the control socket (gatekeeper/gk_control.c)
if [ "$(id -u)" -eq 0 ]; then
	export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
	gk_require bwrap curl ip nft setpriv getent groupadd unshare \
		"$PYTHON" sh timeout
	gk_enter_netns 77 "$GK_SELF" "$@"	# does not return
	gk_setup
else
	gk_require bwrap curl ip "$PYTHON" sh timeout
	GK_TMP=$(mktemp -d /tmp/gk-run-test.XXXXXX) || exit 1
	chmod 755 "$GK_TMP"
	trap gk_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
fi
T=$GK_TMP
if ! bwrap --unshare-user --unshare-pid --ro-bind / / --proc /proc \
    true >/dev/null 2>&1; then
	echo "SKIP: bwrap cannot create user namespaces here"
	exit 77
fi

SOCK=$T/run/control.sock
if [ "$(id -u)" -eq 0 ]; then
	WHOS=(root nobody)
else
	WHOS=("$(id -un)")
fi
# gk-run's advice when gatekeeperd is not running fits the host
if [ -d /run/systemd/system ]; then
	START_HINT='start it with: systemctl start gatekeeperd'
else
	START_HINT='this host has no systemd; start it as root: gatekeeperd >>/var/log/gatekeeperd.log 2>&1 & \(or under a supervisor: README, "Hosts without systemd"\)'
fi
# unique durations, so pgrep finds our sleeps and no one else's
SLEEP1=60.$$$RANDOM
SLEEP2=61.$$$RANDOM
SLEEP3=62.$$$RANDOM
LIBM=
for f in /lib/*-linux-gnu/libm.so.6 /lib64/libm.so.6 /usr/lib/libm.so.6; do
	[ -f "$f" ] && { LIBM=$f; break; }
done

# ---------------------------------------------------------------------------
# Helpers

oneline() { printf '%s' "$1" | tr '\n' '|' | cut -c1-600; }

# prepare WHO: $T/WHO/{work,home,outside} owned by WHO, a HOME with the
# usual secret stores in it.
prepare() {
	local who=$1 d=$T/$1
	mkdir -p "$d/work" "$d/home/.ssh" "$d/home/.aws" "$d/outside" \
		"$d/rw" "$d/work/ro" "$d/work/hidden" "$d/bin"
	echo "ssh-secret" >"$d/home/.ssh/id_ed25519"
	echo "aws-secret" >"$d/home/.aws/credentials"
	echo "machine x login y password netrc-secret" >"$d/home/.netrc"
	echo "hidden-dir-secret" >"$d/work/hidden/s"
	echo "hidden-file-secret" >"$d/work/hidden-file"
	echo "read-only" >"$d/work/ro/f"
	printf 'echo not executable\n' >"$d/work/noexec.sh"
	printf '#!/bin/sh\necho tool ran\n' >"$d/bin/tool"
	chmod 755 "$d/bin/tool"
	if [ "$who" != "$(id -un)" ]; then
		chown -R "$who" "$d"
	fi
}

# as_prefix WHO[:GROUP]: AS becomes the command prefix that runs as WHO
# with a small, known environment. For nobody, GROUP says how it stands
# with the control socket's group "gatekeeper": "" (default) no groups at
# all; "member" primary group gatekeeper, the socket's group, so
# gatekeeperd lets it in; "outsider" gatekeeper as a supplementary group
# only: the socket's mode lets it connect, but nobody is not in the group
# as gatekeeperd checks it (SO_PEERCRED's gid, the group database), so
# gatekeeperd refuses it.
as_prefix() {
	local who=${1%%:*} grp='' env v
	[ "$1" != "$who" ] && grp=${1#*:}
	env=(PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
		"HOME=$T/$who/home" LANG=C.UTF-8)
	for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
		[ -n "${!v:-}" ] && env+=("$v=${!v}")
	done
	# a sanitizer build of gk-run: the LD_PRELOAD checks preload a library
	[ -n "${ASAN_OPTIONS:-}" ] &&
		env+=("ASAN_OPTIONS=$ASAN_OPTIONS:verify_asan_link_order=0")
	if [ "$who" = "$(id -un)" ]; then
		AS=(env -i "${env[@]}")
		return
	fi
	case $grp in
	member) AS=(setpriv --reuid=nobody --regid="$GK_GROUP"
			--groups="$GK_GROUP") ;;
	outsider) AS=(setpriv --reuid=nobody --regid=nogroup
			--groups="$GK_GROUP") ;;
	*) AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups) ;;
	esac
	AS+=(-- env -i "${env[@]}")
}

# run WHO[:GROUP] [ENV=VAL...] -- GK-RUN-ARGS...: gk-run as WHO in
# $T/WHO/work, bounded by an outer timeout (exit 137). Sets RC and MS;
# output in $T/out and $T/err.
run() {
	local who=$1 t0 extra=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		extra+=("$1")
		shift
	done
	shift
	as_prefix "$who"
	t0=$(date +%s%N)
	( cd "$T/${who%%:*}/work" &&
	  exec timeout -s KILL 60 "${AS[@]}" "${extra[@]}" "$GKRUN" "$@" \
		>"$T/out" 2>"$T/err" </dev/null )
	RC=$?
	MS=$((($(date +%s%N) - t0) / 1000000))
}

# run_bg VAR WHO[:GROUP] NAME GK-RUN-ARGS...: gk-run as WHO in $T/WHO/work
# in the background, output in $T/NAME.out and $T/NAME.err. VAR gets the
# pid of gk-run itself (setpriv and env exec), tracked for the cleanup;
# the caller bounds its wait with gk_wait_exit.
run_bg() {
	local var=$1 who=$2 name=$3
	shift 3
	as_prefix "$who"
	# an earlier run's output must not be mistaken for this one's
	rm -f "$T/$name.out" "$T/$name.err"
	( gk_close_ctl_fds; cd "$T/${who%%:*}/work" &&
	  exec "${AS[@]}" "$GKRUN" "$@" \
		>"$T/$name.out" 2>"$T/$name.err" </dev/null ) &
	printf -v "$var" '%s' "$!"
	gk_track_pid "$!"
}

# kill9 PID: kill -9 a background child quietly, reap it (bounded).
kill9() {
	{
		kill -KILL "$1"
		gk_wait_exit "$1" 30
	} 2>/dev/null
}

detail() {
	printf 'rc=%s %sms | out: %s | err: %s' "$RC" "$MS" \
		"$(oneline "$(cat "$T/out")")" "$(oneline "$(cat "$T/err")")"
}
# expect_rc MSG RC [grep -E pattern for stdout]
expect() {
	local msg=$1 rc=$2 pat=${3:-}
	GK_DETAIL=$(detail)
	if [ -n "$pat" ]; then
		gk_check "$msg" eval '[ "$RC" = "$rc" ] && grep -Eq -- "$pat" "$T/out"'
	else
		gk_check "$msg" test "$RC" = "$rc"
	fi
}
# one_line_err PATTERN: stderr is exactly one line matching PATTERN.
one_line_err() {
	[ "$(wc -l <"$T/err")" -eq 1 ] && grep -Eq -- "$1" "$T/err"
}

# ---------------------------------------------------------------------------
# Setup

mkdir -p "$T/www"
echo "hello from the host" >"$T/www/hello.txt"
PORT=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
( gk_close_ctl_fds; cd "$T/www" && exec "$PYTHON" -m http.server --bind 127.0.0.1 \
	"$PORT" >"$T/www.log" 2>&1 ) &
gk_track_pid "$!"
gk_wait_for 50 curl -sf -o /dev/null "http://127.0.0.1:$PORT/hello.txt" ||
	gk_fail "the host listener on 127.0.0.1:$PORT came up"
echo "host-only" >"$T/host-marker"

# ---------------------------------------------------------------------------
# gatekeeperd (root only), in this script's network namespace. Kernel
# plumbing is on (--listen 10.143.0.1, the default); nothing needs a DNS
# answer, so the upstream is a closed port on lo.

GKD_PID=
GKD_UP=0

# gatekeeperd with its defaults (lib.sh's gk_start_local_daemon).
start_gatekeeperd() {
	gk_start_local_daemon || return 1
	GK_DETAIL=$(nft list table inet gatekeeper 2>&1 | head -8)
	gk_check "gatekeeperd is up; its table inet gatekeeper (set cages) is in the test's network namespace" \
		eval 'nft list set inet gatekeeper cages >/dev/null 2>&1'
	GK_DETAIL=$(ls -ld "$T" "$SOCK" 2>&1)
	gk_check "the control socket is mode 660, group $GK_GROUP, in a directory all may traverse" \
		eval '[ "$(stat -c "%a %G" "$SOCK")" = "660 $GK_GROUP" ] &&
		    [ "$(($(stat -c "0%a" "$T") & 0111))" = 73 ]'
	GKD_UP=1
}

if [ "$(id -u)" -eq 0 ]; then
	start_gatekeeperd
fi

echo "# gk-run: $GKRUN ($("$GKRUN" --version))"
echo "# bwrap: $(bwrap --version), running as: ${WHOS[*]}"

# ---------------------------------------------------------------------------
# The checks, once per user

checks_net() {
	local who=$1 scope
	run "$who" -- --net none -- ip -o link
	GK_DETAIL=$(detail)
	gk_check "$who: --net none: only lo (ip -o link)" \
		eval '[ "$RC" = 0 ] && [ "$(grep -c . "$T/out")" = 1 ] && grep -q ": lo:" "$T/out"'
	run "$who" -- -- curl -sS --max-time 3 "http://127.0.0.1:$PORT/hello.txt"
	GK_DETAIL=$(detail)
	gk_check "$who: --net none: curl to a host listener on 127.0.0.1 fails" \
		eval '[ "$RC" != 0 ] && ! grep -q "hello from the host" "$T/out"'
	# no network, no long wait and no silence: lookups are refused at
	# once, and gk-run says (once) how to give the run a network. A lookup
	# left unanswered would wait the resolver's own timeout (glibc: 5 s a
	# try): both lookups take less than one such wait.
	run "$who" -- -- sh -c 'getent hosts registry.npmjs.org; echo "rc=$?"
		getent hosts example.org; echo "rc=$?"; cat /etc/resolv.conf'
	GK_DETAIL=$(detail)
	gk_check "$who: --net none: lookups fail at once; gk-run says once that the run has no network and what to type" \
		eval '[ "$RC" = 0 ] && [ "$MS" -lt 5000 ] &&
		    [ "$(grep -c "^rc=2$" "$T/out")" = 2 ] &&
		    grep -qx "nameserver 127.0.0.1" "$T/out" && one_line_err \
		    "^gk-run: sh looked up registry\.npmjs\.org, but this run has no network \(--net none, the default without --allow\); give it one: --allow registry\.npmjs\.org \(or --preset NAME, or --learn FILE to find what it needs\)$"'
	# the issue's own case: npm (whose retries, 10 and 60 s apart, gk-run
	# turns off in a run without network) fails in seconds, with the line
	# naming its registry (with its retries it would take 70 s at least:
	# the run must end within half of that)
	if command -v npm >/dev/null 2>&1; then
		run "$who" -- -- npm view left-pad version
		GK_DETAIL=$(detail)
		gk_check "$who: --net none: npm view fails within seconds, and gk-run names the registry it looked up" \
			eval '[ "$RC" != 0 ] && [ "$MS" -lt 35000 ] && grep -q EAI_AGAIN "$T/err" &&
			    grep -q "^gk-run: npm looked up registry\.npmjs\.org, but this run has no network" "$T/err"'
	else
		gk_info "$who: --net none with npm: skipped (no npm)"
	fi
	run "$who" -- -q -- getent hosts registry.npmjs.org
	GK_DETAIL=$(detail)
	gk_check "$who: --net none -q: the lookup fails at once, nothing said" \
		eval '[ "$RC" = 2 ] && [ "$MS" -lt 5000 ] && [ ! -s "$T/err" ]'
	# an address typed in: no route at once; said where the unix socket
	# gate sees connects (Yama's ptrace_scope 2 keeps it off for users)
	scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo -1)
	# (curl 7: no route; a timeout would be 28, at --max-time 30)
	run "$who" -- -- curl -sS --max-time 30 http://192.0.2.1/
	GK_DETAIL=$(detail)
	if [ "$scope" -lt 2 ] || { [ "$scope" = 2 ] && [ "$who" = root ]; }; then
		gk_check "$who: --net none: a connection to an address fails at once; gk-run says the run has no network" \
			eval '[ "$RC" = 7 ] && [ "$MS" -lt 15000 ] &&
			    grep -q "^gk-run: curl tried to reach 192\.0\.2\.1:80, but this run has no network (--net none, the default without --allow); give it one: --allow with the names it needs" "$T/err"'
	else
		gk_check "$who: --net none: a connection to an address fails at once" \
			eval '[ "$RC" = 7 ] && [ "$MS" -lt 15000 ]'
	fi
	run "$who" -- --net host -- curl -sS --max-time 3 "http://127.0.0.1:$PORT/hello.txt"
	GK_DETAIL=$(detail)
	gk_check "$who: --net host: the host network, said loudly on stderr" \
		eval '[ "$RC" = 0 ] && grep -q "hello from the host" "$T/out" &&
		    grep -q "WARNING: --net host: curl gets the host.s network with NO isolation and NO allowlist" "$T/err"'
}

checks_fs() {
	local who=$1 d=$T/$1
	rm -f "$d/outside/x" "$d/work/made-inside" "$d/rw/x"
	run "$who" -- -- sh -c "touch '$d/outside/x'"
	GK_DETAIL="$(detail) | exists: $(ls "$d/outside")"
	gk_check "$who: writing outside the working directory fails" \
		eval '[ "$RC" != 0 ] && [ ! -e "$d/outside/x" ]'
	# the descriptors the command starts with: what gk-run was given
	# (0-2 and the harness's own), none of gk-run's or bwrap's (the
	# view's texts, the seccomp filter, bwrap's status)
	local fds_out fds_in
	fds_out=$(sh -c 'ls /proc/self/fd' </dev/null 2>&1 | sort -n | paste -sd' ')
	run "$who" -- -- sh -c 'ls /proc/self/fd'
	fds_in=$(sort -n "$T/out" | paste -sd' ')
	GK_DETAIL="inside: $fds_in | outside: $fds_out | $(detail)"
	gk_check "$who: the command inherits no descriptor of gk-run's or bwrap's" \
		eval '[ "$RC" = 0 ] && [ "$fds_in" = "$fds_out" ]'
	run "$who" -- -- sh -c 'echo made > made-inside'
	GK_DETAIL=$(detail)
	gk_check "$who: writing in the working directory works (seen outside)" \
		eval '[ "$RC" = 0 ] && [ "$(cat "$d/work/made-inside")" = made ]'
	GK_DETAIL=$(detail)
	gk_check "$who: ... and gk-run says nothing of the sandbox's /tmp (the working directory is under /tmp)" \
		eval '! grep -q "never on the host" "$T/err"'
	# The working directory is under /tmp: its parent is the sandbox's
	# own /tmp, where writes vanish with the sandbox. gk-run says so.
	rm -rf "$d/sibling.txt" "$d/wt2"
	run "$who" -- -- sh -c 'echo hi > ../sibling.txt && mkdir ../wt2 && echo x > ../wt2/f'
	GK_DETAIL=$(detail)
	gk_check "$who: writing beside the working directory (../sibling.txt, ../wt2): works inside, nothing on the host, and gk-run names both at the end, with --rw $d/wt2 to keep them" \
		eval '[ "$RC" = 0 ] && [ ! -e "$d/sibling.txt" ] && [ ! -e "$d/wt2" ] &&
		    grep -F "$d/sibling.txt" "$T/err" | grep -F "$d/wt2" |
		    grep -q -- "never on the host.*--rw $d/wt2\$"'
	run "$who" -- -- sh -c 'echo hi > /tmp/elsewhere; echo hi > ../x-$$'
	GK_DETAIL=$(detail)
	gk_check "$who: ... /tmp itself too (/tmp/elsewhere), each named once, a file's directory left to choose (--rw DIR)" \
		eval '[ "$RC" = 0 ] && [ "$(grep -c "never on the host" "$T/err")" = 1 ] &&
		    grep -q "/tmp/elsewhere" "$T/err" && grep -q -- "--rw DIR\$" "$T/err"'
	run "$who" -- --cache-dir
	GK_DETAIL=$(detail)
	gk_check "$who: --cache-dir with a HOME under /tmp (the sandbox's own): exit 1, nothing kept (said)" \
		eval '[ "$RC" = 1 ] && [ ! -s "$T/out" ] && grep -q "nothing is kept" "$T/err"'
	run "$who" -- --rw "$d/rw" -- sh -c "echo rw > '$d/rw/x'"
	GK_DETAIL=$(detail)
	gk_check "$who: --rw DIR is writable" \
		eval '[ "$RC" = 0 ] && [ "$(cat "$d/rw/x")" = rw ]'
	run "$who" -- --ro ro -- sh -c 'cat ro/f; echo x > ro/f'
	GK_DETAIL=$(detail)
	gk_check "$who: --ro DIR under the working directory: readable, not writable" \
		eval '[ "$RC" != 0 ] && grep -q read-only "$T/out" && [ "$(cat "$d/work/ro/f")" = read-only ]'
	run "$who" -- --hide hidden --hide hidden-file -- \
		sh -c 'ls -A hidden; cat hidden/s; echo "[$(cat hidden-file)]"; echo x > hidden-file'
	GK_DETAIL=$(detail)
	gk_check "$who: --hide DIR is empty, --hide FILE reads empty and is read-only" \
		eval '[ "$RC" != 0 ] && ! grep -q secret "$T/out" && grep -qx "\[\]" "$T/out" &&
		    [ "$(cat "$d/work/hidden-file")" = hidden-file-secret ]'
	run "$who" -- -- sh -c 'cat "$HOME/.ssh/id_ed25519" "$HOME/.aws/credentials" "$HOME/.netrc"; ls -A "$HOME/.ssh" "$HOME/.aws"'
	GK_DETAIL=$(detail)
	gk_check "$who: ~/.ssh, ~/.aws and ~/.netrc are hidden by default" \
		eval '! grep -q secret "$T/out" && [ -s "$d/home/.ssh/id_ed25519" ]'
	run "$who" -- --fs host -- sh -c 'cat "$HOME/.ssh/id_ed25519"'
	expect "$who: --fs host leaves the filesystem as it is (~/.ssh readable)" 0 ssh-secret
	run "$who" -- -- sh -c "ls /tmp; cat '$T/host-marker'"
	GK_DETAIL=$(detail)
	gk_check "$who: /tmp is a fresh tmpfs" \
		eval '[ "$RC" != 0 ] && ! grep -q host-only "$T/out"'
	run "$who" -- --cwd "$d/rw" -- sh -c 'pwd; echo c > cwd-file'
	GK_DETAIL=$(detail)
	gk_check "$who: --cwd DIR: runs there, writable" \
		eval '[ "$RC" = 0 ] && grep -qx "$d/rw" "$T/out" && [ -e "$d/rw/cwd-file" ]'
	run "$who" -- -- sh -c 'cat /proc/1/cmdline | tr "\0" " "; echo; ls /proc | grep -c "^[0-9]"'
	GK_DETAIL=$(detail)
	gk_check "$who: a fresh /proc: only the sandbox's processes" \
		eval '[ "$RC" = 0 ] && grep -q bwrap "$T/out" && [ "$(tail -1 "$T/out")" -le 4 ]'
}

checks_env() {
	local who=$1
	run "$who" "LD_PRELOAD=$LIBM" BASH_ENV=/tmp/evil NODE_OPTIONS=--require=/x \
		GIT_SSL_CAINFO=/etc/ssl/ca.pem -- -- sh -c \
		'echo "pre=[${LD_PRELOAD:-}] bash=[${BASH_ENV:-}] node=[${NODE_OPTIONS:-}] ca=[${GIT_SSL_CAINFO:-}]"'
	expect "$who: LD_PRELOAD, BASH_ENV, NODE_OPTIONS are dropped; GIT_SSL_CAINFO passes" \
		0 '^pre=\[\] bash=\[\] node=\[\] ca=\[/etc/ssl/ca.pem\]$'
	run "$who" "LD_PRELOAD=$LIBM" -- --env "LD_PRELOAD=$LIBM" --env "GREETING=hi there" \
		-- sh -c 'echo "pre=[${LD_PRELOAD:-}] g=[$GREETING]"'
	expect "$who: --env KEY=VAL lets LD_PRELOAD through and sets variables" \
		0 "^pre=\[$LIBM\] g=\[hi there\]$"
	run "$who" -- -- sh -c 'env | grep -ci proxy'
	expect "$who: --net none sets no proxy variables" 1 '^0$'
}

checks_exit() {
	local who=$1 d=$T/$1
	run "$who" -- -- true
	expect "$who: exit 0" 0
	run "$who" -- -- false
	expect "$who: exit 1 (the command's)" 1
	run "$who" -- -- sh -c 'exit 3'
	expect "$who: exit 3 (the command's)" 3
	run "$who" -- --timeout 1 -- sleep 30
	GK_DETAIL=$(detail)
	# ended by the timeout: after 1 s, long before the sleep's own 30 s
	gk_check "$who: --timeout 1 -- sleep 30: 124 in ${MS} ms (by the timeout: 1 s to 15 s)" \
		eval '[ "$RC" = 124 ] && [ "$MS" -ge 900 ] && [ "$MS" -lt 15000 ]'
	run "$who" -- --timeout 1 -- sh -c 'trap "" TERM; sleep 30'
	GK_DETAIL=$(detail)
	gk_check "$who: --timeout 1 on a command ignoring SIGTERM: SIGKILL 5 s later, 124 (${MS} ms)" \
		eval '[ "$RC" = 124 ] && [ "$MS" -ge 5500 ] && [ "$MS" -lt 15000 ]'
	run "$who" -- --bogus -- true
	GK_DETAIL=$(detail)
	gk_check "$who: a bad option: 125, one line" \
		eval '[ "$RC" = 125 ] && one_line_err "^gk-run: unknown option .--bogus.; see gk-run --help$"'
	run "$who" -- --timeout 0 -- true
	GK_DETAIL=$(detail)
	gk_check "$who: a bad value: 125, one line" \
		eval '[ "$RC" = 125 ] && one_line_err "^gk-run: --timeout: .0. is not a whole number of seconds"'
	run "$who" -- --allow '*.github.com' --control "$T/no-such.sock" -- true
	GK_DETAIL=$(detail)
	gk_check "$who: gated without gatekeeperd: 125 and one line saying what to do" \
		eval '[ "$RC" = 125 ] && one_line_err "^gk-run: cannot reach gatekeeperd at $T/no-such.sock \(No such file or directory\): is gatekeeperd running\? $START_HINT$"'
	run "$who" -- -- ./noexec.sh
	GK_DETAIL=$(detail)
	gk_check "$who: a file without execute permission: 126" \
		eval '[ "$RC" = 126 ] && one_line_err "noexec.sh: permission denied"'
	run "$who" -- -- "$d/work"
	expect "$who: a directory: 126" 126
	run "$who" -- -- no-such-command-gk
	GK_DETAIL=$(detail)
	gk_check "$who: a missing command: 127" \
		eval '[ "$RC" = 127 ] && one_line_err "no-such-command-gk: command not found"'
	run "$who" -- -- "$d/bin/tool"
	GK_DETAIL=$(detail)
	gk_check "$who: a command under /tmp outside the sandbox's view: 127, says why" \
		eval '[ "$RC" = 127 ] && one_line_err "exists on the host but not in the sandbox"'
	run "$who" -- --ro "$d/bin" -- "$d/bin/tool"
	expect "$who: ... made visible with --ro: runs" 0 '^tool ran$'
	run "$who" -- -- sh -c 'kill -9 $$'
	expect "$who: killed by SIGKILL: 137" 137
	run "$who" -- -- sh -c 'kill -TERM $$'
	expect "$who: killed by SIGTERM: 143" 143
}

# sig_check WHO SIGNAL: the command's trap sees SIGNAL sent to gk-run.
sig_check() {
	local who=$1 sig=$2 d=$T/$1 pid
	rm -f "$d/work/sig.out"
	run_bg pid "$who" sig -- sh -c \
		"trap 'echo got-$sig > sig.out; exit 9' $sig; echo ready > sig.ready; sleep $SLEEP1 & wait"
	gk_wait_for 50 test -e "$d/work/sig.ready"
	rm -f "$d/work/sig.ready"
	kill -"$sig" "$pid"
	gk_wait_exit "$pid" 50 || kill9 "$pid"
	GK_DETAIL="rc=$GK_RC $(cat "$d/work/sig.out" 2>/dev/null) err: $(oneline "$(cat "$T/sig.err")")"
	gk_check "$who: SIG$sig to gk-run reaches the command's trap (exit 9)" \
		eval '[ "$GK_RC" = 9 ] && grep -qx "got-$sig" "$d/work/sig.out"'
}

checks_signals() {
	local who=$1 s
	for s in TERM INT HUP USR1; do
		sig_check "$who" "$s"
	done
	GK_DETAIL=$(pgrep -a -f "^sleep $SLEEP1" || true)
	gk_check "$who: no sandboxed process is left behind" \
		eval '! pgrep -f "^sleep $SLEEP1\$" >/dev/null'
}

checks_seccomp() {
	local who=$1
	run "$who" -- -- unshare -U true
	GK_DETAIL=$(detail)
	gk_check "$who: seccomp default: unshare -U fails (Operation not permitted)" \
		eval '[ "$RC" != 0 ] && grep -q "Operation not permitted" "$T/err"'
	run "$who" -- -- "$PYTHON" -c 'import ctypes, os
l = ctypes.CDLL(None, use_errno=True)
r = l.syscall(435, 0, 0)
print("clone3", r, os.strerror(ctypes.get_errno()))
pid = os.fork()
if pid == 0:
    os._exit(0)
print("fork", os.waitpid(pid, 0)[1])'
	expect "$who: seccomp default: clone3 fails with ENOSYS, fork still works" 0 \
		'clone3 -1 Function not implemented'
	if command -v strace >/dev/null 2>&1; then
		run "$who" -- -- strace -o /dev/null true
		expect "$who: seccomp default: strace fails (ptrace denied)" 1
		run "$who" -- --seccomp relaxed -- strace -f -o /dev/null true
		expect "$who: seccomp relaxed: strace works" 0
	else
		gk_info "strace not installed: ptrace checks skipped"
	fi
	run "$who" -- --seccomp relaxed -- unshare -U true
	expect "$who: seccomp relaxed: unshare -U still fails" 1
	run "$who" -- --seccomp off -- unshare -U true
	expect "$who: --seccomp off: unshare -U works (the profile is what stops it)" 0
}

checks_dry_run() {
	local who=$1 line
	run "$who" -- --dry-run -- sh -c 'echo dry-ok; ip -o link | grep -c .; unshare -U true || echo no-userns'
	line=$(cat "$T/out")
	GK_DETAIL=$(detail)
	gk_check "$who: --dry-run prints one bwrap invocation and exits 0" \
		eval '[ "$RC" = 0 ] && [ "$(grep -c . "$T/out")" = 1 ] && grep -q "^bwrap " "$T/out"'
	as_prefix "$who"
	( cd "$T/$who/work" && "${AS[@]}" bash -c "eval \"\$1\"" bash "$line" \
		>"$T/out" 2>"$T/err" </dev/null )
	RC=$?
	MS=0
	GK_DETAIL=$(detail)
	gk_check "$who: ... and that command line runs: same sandbox (lo only, seccomp)" \
		eval '[ "$RC" = 0 ] && [ "$(tr "\n" " " <"$T/out")" = "dry-ok 1 no-userns " ]'
	run "$who" -- --dry-run --platform macos --allow '*.github.com' -- curl https://github.com
	GK_DETAIL=$(detail)
	gk_check "$who: --dry-run --platform macos prints the SBPL profile" \
		eval '[ "$RC" = 0 ] && head -1 "$T/out" | grep -qx "(version 1)" &&
		    grep -q "(deny network\*)" "$T/out" && grep -q "localhost:1080" "$T/out" &&
		    grep -q "(deny file-read\* file-write\* (subpath \"$T/$who/home/.ssh\"))" "$T/out"'
	run "$who" -- --platform macos -- true
	expect "$who: --platform macos without --dry-run: 125" 125
}

# ---- gated: cages from the real gatekeeperd ----

# cage_id FILE: the cage id gk-run -v reported in FILE (its stderr).
cage_id() {
	sed -n 's/^gk-run: cage \([A-Za-z0-9._-]*\): gateway .*/\1/p' "$1" |
		head -n 1
}

# cage_of ID: print the entry for cage ID in cage.list (JSON). Returns 1
# when gatekeeperd lists no such cage, 2 when cage.list itself failed.
cage_of() {
	local reply
	reply=$(gk_ctl_once '{"op":"cage.list"}' 2>/dev/null) || return 2
	printf '%s\n' "$reply" | "$PYTHON" -c '
import json, sys
try:
    r = json.loads(sys.stdin.readline())
except ValueError:
    sys.exit(2)
if r.get("ok") is not True or not isinstance(r.get("cages"), list):
    sys.exit(2)
for c in r["cages"]:
    if c.get("id") == sys.argv[1]:
        print(json.dumps(c, separators=(",", ":")))
        sys.exit(0)
sys.exit(1)' "$1"
}

# link_of ADDR: the host side link gatekeeperd names after a cage address
# ("gk-" and the address in hex); empty for anything but an IPv4 address.
link_of() {
	[[ $1 =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || return 0
	printf 'gk-%02x%02x%02x%02x' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" \
		"${BASH_REMATCH[3]}" "${BASH_REMATCH[4]}"
}

has_link() { ip -o link show | grep -Eq ": $1(@|:)"; }

# cage_live ID LINK: gatekeeperd lists the cage; its host link and its
# (link . address) element in the set cages exist.
cage_live() {
	[ -n "$1" ] && [ -n "$2" ] && cage_of "$1" >/dev/null && has_link "$2" &&
		nft list set inet gatekeeper cages 2>/dev/null | grep -q "\"$2\" \. "
}

# cage_gone ID LINK: gatekeeperd answers and no longer lists the cage;
# neither its link nor its set element is left.
cage_gone() {
	local set r
	cage_of "$1" >/dev/null
	r=$?
	[ "$r" = 1 ] || return 1
	set=$(nft list set inet gatekeeper cages 2>&1) || return 1
	! grep -q "\"$2\"" <<<"$set" && ! has_link "$2"
}

# gone_within T0 ID LINK: poll until cage_gone, no longer than 30 s after
# T0 (date +%s%N: a bound, generous for a slow host); GONE_MS is when it
# was seen gone.
gone_within() {
	local t0=$1 ms
	shift
	for (( ; ; )); do
		ms=$((($(date +%s%N) - t0) / 1000000))
		if cage_gone "$@"; then
			GONE_MS=$ms
			return 0
		fi
		if [ "$ms" -ge 30000 ]; then
			GONE_MS="over 30000"
			return 1
		fi
		sleep 0.05
	done
}

# plumbing_state: what the namespace holds, for failure details.
plumbing_state() {
	printf 'cages: %s | links: %s | set: %s' \
		"$(gk_ctl_once '{"op":"cage.list"}' 2>&1 | cut -c1-300)" \
		"$(ip -o link show | grep -o ': gk-[^:@]*' | tr -d ' :' | paste -sd, -)" \
		"$(nft list set inet gatekeeper cages 2>&1 | grep -o '"gk-[^;]*' | paste -sd, -)"
}

# gated_live WHO AS: a cage as seen from outside while its command runs,
# and from inside; then gone when the command exits.
gated_live() {
	local who=$1 as=$2 d=$T/$1 uid pid id obj src link t0
	uid=$(id -u "$who")
	rm -f "$d/work/g.ready" "$d/work/g.go"
	run_bg pid "$as" live -v --allow '*.github.com' -a example.org:443 \
		--control "$SOCK" -- sh -c 'ip -o -4 addr show dev eth0; ip route
for v in http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY; do
	echo "$v=$(printenv $v)"
done
cat /etc/resolv.conf; touch g.ready; i=0
while [ ! -e g.go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -e g.go ]'
	gk_wait_for 150 test -e "$d/work/g.ready"
	id=$(cage_id "$T/live.err")
	obj=$(cage_of "$id")
	src=$(gk_json_get source "$obj")
	link=$(link_of "$src")
	GK_DETAIL="id=[$id] $obj | err: $(oneline "$(cat "$T/live.err")")"
	gk_check "$who: gated: while the command runs, cage.list has its cage (uid $uid, the patterns as given)" \
		eval '[ -e "$d/work/g.ready" ] && [ -n "$obj" ] &&
		    [ "$(gk_json_get uid "$obj")" = "$uid" ] &&
		    [ "$(gk_json_get allow "$obj")" = "[\"*.github.com\",\"example.org:443\"]" ]'
	GK_DETAIL="label: $(gk_json_get label "$obj")"
	gk_check "$who: gated: the cage's label is gk-run's: \"gk-run: sh -c ... [HASH]\"" \
		eval 'gk_json_get label "$obj" | grep -Eqx "gk-run: sh -c \.\.\. \[[0-9a-f]{6}\]"'
	GK_DETAIL="source=$src link=$link | $(plumbing_state)"
	gk_check "$who: gated: the cage's host link $link and its element in set cages exist" \
		cage_live "$id" "$link"
	GK_DETAIL="source=$src | out: $(oneline "$(cat "$T/live.out")")"
	gk_check "$who: gated: the command sees eth0 with the cage's address $src/32, default via 10.143.0.1" \
		eval '[ -n "$src" ] &&
		    grep -Eq "^[0-9]+: eth0 +inet ${src//./\\.}/32 " "$T/live.out" &&
		    grep -q "^default via 10\.143\.0\.1 dev eth0" "$T/live.out"'
	GK_DETAIL="out: $(oneline "$(cat "$T/live.out")")"
	gk_check "$who: gated: /etc/resolv.conf names the gateway" \
		eval 'grep -qx "nameserver 10.143.0.1" "$T/live.out" &&
		    [ "$(grep -c nameserver "$T/live.out")" = 1 ]'
	gk_check "$who: gated: proxy variables point at the cage's endpoints" \
		eval 'grep -qx "http_proxy=http://10.143.0.1:3128" "$T/live.out" &&
		    grep -qx "HTTPS_PROXY=http://10.143.0.1:3128" "$T/live.out" &&
		    grep -qx "ALL_PROXY=socks5h://10.143.0.1:1080" "$T/live.out" &&
		    grep -qx "NO_PROXY=localhost,127.0.0.1,::1" "$T/live.out"'
	touch "$d/work/g.go"
	gk_wait_exit "$pid" 100 || kill9 "$pid"
	t0=$(date +%s%N)
	gone_within "$t0" "$id" "$link"
	GK_DETAIL="rc=$GK_RC | $(plumbing_state)"
	gk_check "$who: gated: the command exits 0; cage, link and set element gone ${GONE_MS} ms later (waited up to 30 s)" \
		eval '[ "$GK_RC" = 0 ] && [ -n "$link" ] && cage_gone "$id" "$link"'
}

# gated_kill9 WHO AS: kill -9 of gk-run ends the cage and the command.
gated_kill9() {
	local who=$1 as=$2 d=$T/$1 pid id src link live=no t0
	rm -f "$d/work/g.ready"
	run_bg pid "$as" k9 -v -a x.example --control "$SOCK" -- \
		sh -c "touch g.ready; exec sleep $SLEEP2"
	gk_wait_for 150 test -e "$d/work/g.ready"
	id=$(cage_id "$T/k9.err")
	src=$(gk_json_get source "$(cage_of "$id")")
	link=$(link_of "$src")
	cage_live "$id" "$link" && live=yes
	t0=$(date +%s%N)
	kill9 "$pid"
	gone_within "$t0" "$id" "$link"
	GK_DETAIL="id=[$id] link=$link live before: $live | $(plumbing_state)"
	gk_check "$who: gated: kill -9 of gk-run: cage, link and set element gone ${GONE_MS} ms later (waited up to 30 s)" \
		eval '[ "$live" = yes ] && cage_gone "$id" "$link"'
	gk_wait_for 20 eval '! pgrep -f "^sleep $SLEEP2\$" >/dev/null'
	GK_DETAIL=$(pgrep -a -f "^sleep $SLEEP2")
	gk_check "$who: gated: ... and the command is gone too" \
		eval '! pgrep -f "^sleep $SLEEP2\$" >/dev/null'
}


gated_timeout() {
	local who=$1 as=$2 pid id obj src link live=no t0
	run_bg pid "$as" to -v --timeout 6 -a x.example --control "$SOCK" -- \
		sleep "$SLEEP3"
	gk_wait_for 100 grep -q '^gk-run: cage [A-Za-z0-9._-]*: gateway ' "$T/to.err"
	id=$(cage_id "$T/to.err")
	obj=$(cage_of "$id")
	src=$(gk_json_get source "$obj")
	link=$(link_of "$src")
	cage_live "$id" "$link" && live=yes
	[ "$live" = yes ] || live="no ($(plumbing_state))"
	GK_DETAIL="id=[$id] $obj"
	gk_check "$who: gated: the cage's label is gk-run's: \"gk-run: sleep $SLEEP3\"" \
		eval '[ "$(gk_json_get label "$obj")" = "gk-run: sleep $SLEEP3" ]'
	gk_wait_exit "$pid" 100 || kill9 "$pid"
	t0=$(date +%s%N)
	gone_within "$t0" "$id" "$link"
	GK_DETAIL="rc=$GK_RC live before: $live | err: $(oneline "$(cat "$T/to.err")") | $(plumbing_state)"
	gk_check "$who: gated: --timeout 6: 124; cage, link and set element gone ${GONE_MS} ms later (waited up to 30 s)" \
		eval '[ "$GK_RC" = 124 ] && [ "$live" = yes ] && cage_gone "$id" "$link"'
}

# gated_refused: gatekeeperd's own refusal reaches the user. nobody with
# gatekeeper as a supplementary group only is let in (gatekeeperd reads the
# peer's groups); nobody with no groups at all is stopped by the socket's
# mode, and, when the socket is opened wider by hand, by gatekeeperd.
gated_refused() {
	GK_DETAIL="id nobody: $(id nobody)"
	gk_check "nobody is not in group $GK_GROUP in the group database (so the next checks mean something)" \
		eval '! id -nG nobody | tr " " "\n" | grep -qx "$GK_GROUP"'
	run nobody:outsider -- --allow '*.github.com' --control "$SOCK" -- true
	GK_DETAIL=$(detail)
	gk_check "nobody holding $GK_GROUP as a supplementary group only: gets a cage, 0" \
		eval '[ "$RC" = 0 ]'
	chmod 0666 "$SOCK"
	run nobody -- --allow '*.github.com' --control "$SOCK" -- true
	chmod 0660 "$SOCK"
	GK_DETAIL=$(detail)
	gk_check "nobody outside group $GK_GROUP, socket opened to all: gatekeeperd's refusal, 125, one line" \
		eval '[ "$RC" = 125 ] && one_line_err "^gk-run: gatekeeperd refused the cage: not permitted: uid $(id -u nobody) is not root and not in group .$GK_GROUP.; ask an administrator to add you to it \(usermod -aG $GK_GROUP USER, then log in again\)$"'
	run nobody -- --allow '*.github.com' --control "$SOCK" -- true
	GK_DETAIL=$(detail)
	gk_check "nobody without any group: the socket's mode refuses it, 125, one line" \
		eval '[ "$RC" = 125 ] && one_line_err "^gk-run: cannot reach gatekeeperd at $SOCK \(Permission denied\): only root and members of group $GK_GROUP may use it; ask an administrator to add you to it \(usermod -aG $GK_GROUP nobody, then log in again\)$"'
}

# gated_files WHO AS: --allow-file, --learn and --ask-save files in the
# working directory, which the command may write: a planted link to
# outside/victim is refused (125) or replaced, never followed; the files
# themselves are read-only inside.
gated_files() {
	local who=$1 as=$2 d=$T/$1 v=$T/$1/outside/victim
	echo victim.example >"$v"
	printf 'example.org:443\n' >"$d/work/deps.allow"
	[ "$who" != "$(id -un)" ] && chown "$who" "$v" "$d/work/deps.allow"
	ln -sfn ../outside/victim "$d/work/link.allow"
	run "$as" -- --allow-file link.allow --control "$SOCK" -- true
	GK_DETAIL=$(detail)
	gk_check "$who: --allow-file a link in the working directory: refused, 125, one line" \
		eval '[ "$RC" = 125 ] && one_line_err "^gk-run: --allow-file link.allow: a symbolic link"'
	run "$as" -- --allow-file deps.allow --control "$SOCK" -- sh -c \
		'echo evil.example >>deps.allow; a=$?; rm -f deps.allow; [ $a = 0 ] || exit 7'
	GK_DETAIL="file: $(oneline "$(cat "$d/work/deps.allow")") | $(detail)"
	gk_check "$who: the command cannot append to (or remove) --allow-file deps.allow; unchanged" \
		eval '[ "$RC" = 7 ] && grep -q "Read-only file system" "$T/err" &&
		    [ "$(cat "$d/work/deps.allow")" = example.org:443 ]'
	# one in a subdirectory: the directory above it cannot be moved away
	# and replaced by one holding a file of the sandbox's making
	mkdir -p "$d/work/deps"
	printf 'example.org:443\n' >"$d/work/deps/sub.allow"
	[ "$who" != "$(id -un)" ] && chown -R "$who" "$d/work/deps"
	run "$as" -- --allow-file deps/sub.allow --control "$SOCK" -- sh -c \
		'mv deps deps-old || exit 7; mkdir deps && echo evil.example >deps/sub.allow'
	GK_DETAIL="file: $(oneline "$(cat "$d/work/deps/sub.allow")") | $(ls "$d/work") | $(detail)"
	gk_check "$who: the directory above --allow-file deps/sub.allow cannot be moved away; the file unchanged" \
		eval '[ "$RC" = 7 ] && [ ! -e "$d/work/deps-old" ] &&
		    [ "$(cat "$d/work/deps/sub.allow")" = example.org:443 ]'
	rm -rf "$d/work/deps" "$d/work/deps-old"
	run "$as" -- --learn link.allow --control "$SOCK" -- true
	GK_DETAIL=$(detail)
	gk_check "$who: --learn a link: refused at start, 125, the link's target untouched" \
		eval '[ "$RC" = 125 ] && one_line_err "^gk-run: --learn link.allow: a symbolic link" &&
		    [ "$(cat "$v")" = victim.example ]'
	rm -f "$d/work/learned.allow"
	ln -sfn ../outside/victim "$d/work/learned.allow.tmp"
	run "$as" -- --learn learned.allow --control "$SOCK" -- sh -c \
		'rm -f learned.allow; ln -s ../outside/victim learned.allow; true'
	GK_DETAIL="file: $(oneline "$(cat "$d/work/learned.allow")") | $(detail)"
	gk_check "$who: --learn with links planted at FILE.tmp and FILE: written through neither, the target untouched" \
		eval '[ "$RC" = 0 ] && [ "$(cat "$v")" = victim.example ] &&
		    [ -f "$d/work/learned.allow" ] && [ ! -L "$d/work/learned.allow" ] &&
		    head -n 1 "$d/work/learned.allow" | grep -q "^# learned by gk-run --learn" &&
		    grep -q "gk-run: --learn: 0 entries written to learned.allow" "$T/err"'
	as_prefix "$as"
	( cd "$d/work" && exec timeout -s KILL 60 "${AS[@]}" "$GKRUN" --control "$SOCK" \
		--allow example.org --ask --events-fd 3 --decisions-fd 4 \
		--ask-save link.allow -- true \
		>"$T/out" 2>"$T/err" </dev/null 3>/dev/null 4</dev/null )
	RC=$?
	GK_DETAIL=$(detail)
	gk_check "$who: --ask-save a link: refused at start, 125, the link's target untouched" \
		eval '[ "$RC" = 125 ] && one_line_err "^gk-run: --ask-save link.allow: a symbolic link" &&
		    [ "$(cat "$v")" = victim.example ]'
	rm -f "$d/work/link.allow" "$d/work/learned.allow"*
}

checks_gated() {
	local who=$1 as=$1
	if [ "$(id -u)" -ne 0 ]; then
		gk_info "$who: gated checks skipped: they need root (gatekeeperd in a private network namespace)"
		return 0
	fi
	if [ "$GKD_UP" != 1 ]; then
		gk_fail "$who: gated checks: gatekeeperd is not running" \
			"$(gk_tail "$T/GKD_PID.log")"
		return 0
	fi
	[ "$who" = nobody ] && as=nobody:member
	gated_live "$who" "$as"
	gated_files "$who" "$as"
	run "$as" -- --allow '*.github.com' --control "$SOCK" -- "$PYTHON" -c \
		"import socket; s = socket.socket(socket.AF_UNIX); s.connect('$SOCK')"
	GK_DETAIL=$(detail)
	gk_check "$who: gated: the control socket cannot be reached from inside (its directory is hidden)" \
		eval '[ "$RC" != 0 ] && grep -q "FileNotFoundError" "$T/err"'
	gated_kill9 "$who" "$as"
	gated_timeout "$who" "$as"
	[ "$who" = nobody ] && gated_refused
	return 0
}

# checks_view WHO: the view gk-run's child makes with the kernel's mount
# API is bwrap's own (GK_RUN_VIEW=bwrap), path for path: kind, mode,
# owner and whether it can be written, in a developer's home of 50
# entries outside /tmp (tests/bench/gkrun_home.sh) and its git project.
VIEW_PROBE='cd "$HOME" || exit 9
for p in . .[!.]* * .cargo/registry .cargo/git .local/bin .local/lib \
    go/pkg/mod .m2/repository src/proj src/proj/.git \
    src/proj/.git/hooks src/proj/.git/config src/proj/.vscode \
    src/proj/.envrc; do
	if [ ! -e "$p" ] && [ ! -L "$p" ]; then echo "$p absent"; continue; fi
	w=ro
	if [ -d "$p" ] && [ ! -L "$p" ]; then
		touch "$p/.gk-view-probe" 2>/dev/null &&
			rm -f "$p/.gk-view-probe" && w=rw
	elif (: >>"$p") 2>/dev/null; then w=rw; fi
	echo "$p $(stat -c "%F %a %U" "$p") $w"
done
echo "tmp: $(ls -A /tmp | wc -l); shadow: $(stat -c "%F %a" /etc/shadow) $(wc -c </etc/shadow)"
echo "dev: $(ls -A /dev | tr "\n" " ")"
echo "resolv: $(stat -c "%F %a" /etc/resolv.conf) $(wc -c </etc/resolv.conf)"'
checks_view() {
	local who=$1 h
	h=$(mktemp -d /var/tmp/gk-view-test.XXXXXX) || return
	chmod 755 "$h"
	if ! bench_home "$h" "${who%%:*}" 2>"$T/view-home.err"; then
		GK_DETAIL=$(head -c 300 "$T/view-home.err")
		rm -rf "$h"
		gk_check "$who: the view made by gk-run is bwrap's (a 50-entry home)" false
		return
	fi
	as_prefix "$who"
	( cd "$h/src/proj" && exec timeout -s KILL 60 "${AS[@]}" HOME="$h" \
	    "$GKRUN" --net none -- sh -c "$VIEW_PROBE" >"$T/view-mine" \
	    2>"$T/view-mine.err" </dev/null )
	RC=$?
	( cd "$h/src/proj" && exec timeout -s KILL 60 "${AS[@]}" HOME="$h" \
	    GK_RUN_VIEW=bwrap "$GKRUN" --net none -- sh -c "$VIEW_PROBE" \
	    >"$T/view-bwrap" 2>"$T/view-bwrap.err" </dev/null )
	GK_DETAIL="rc $RC/$? | $(diff "$T/view-mine" "$T/view-bwrap" | head -8 |
		paste -sd'|') | $(head -c 200 "$T/view-mine.err")"
	gk_check "$who: the view made by gk-run is bwrap's, path for path (a 50-entry home, its git project: kind, mode, owner, writable)" \
		eval '[ "$RC" = 0 ] && [ "$(wc -l <"$T/view-mine")" -gt 60 ] &&
		    grep -q "^.ssh directory 755 .* ro$" "$T/view-mine" &&
		    grep -q "^src/proj/.vscode directory 755 .* ro$" "$T/view-mine" &&
		    cmp -s "$T/view-mine" "$T/view-bwrap"'
	rm -rf "$h"
}

for who in "${WHOS[@]}"; do
	prepare "$who"
	echo "---- as $who ----"
	checks_net "$who"
	checks_fs "$who"
	checks_view "$who"
	checks_env "$who"
	checks_exit "$who"
	checks_signals "$who"
	checks_seccomp "$who"
	checks_dry_run "$who"
	checks_gated "$who"
done

# ---- after every cage: nothing left, and a clean stop ----
if [ "$GKD_UP" = 1 ]; then
	GK_DETAIL=$(plumbing_state)
	gk_check "no cage, gk- link or set element is left" \
		eval '[ "$(gk_json_get cages "$(gk_ctl_once "{\"op\":\"cage.list\"}")")" = "[]" ] &&
		    ! ip -o link show | grep -q ": gk-" &&
		    nft list set inet gatekeeper cages >/dev/null &&
		    ! nft list set inet gatekeeper cages | grep -q elements'
	gk_stop_daemon "$GKD_PID"
	GK_DETAIL="rc=$GK_RC | $(gk_tail "$T/GKD_PID.log" 6)"
	gk_check "gatekeeperd stops on SIGTERM with status 0 and removes table inet gatekeeper" \
		eval '[ "$GK_RC" = 0 ] && ! nft list table inet gatekeeper >/dev/null 2>&1'
fi

run "${WHOS[0]}" -- --help
expect "--help: exit 0, with examples" 0 '^Examples:'

# ---- summary -------------------------------------------------------------
echo "---- $GK_NPASS passed, $GK_NFAIL failed ----"
if [ "$GK_NFAIL" -gt 0 ]; then
	for f in "${GK_FAILED[@]}"; do
		echo "FAILED: $f"
	done
	exit 1
fi
exit 0
