#!/usr/bin/env bash
#
# test_gkrun_local.sh: gk-run with the real bwrap and real programs, and
# no gatekeeperd: --net none and host, the sandboxed filesystem, the
# environment filter, exit statuses, signals, timeouts, seccomp, --dry-run.
# Gated mode talks to a small fake gatekeeperd (python, below) that checks
# the request and the namespace fd and answers with a cage, or refuses.
#
#   bash tests/integration/test_gkrun_local.sh build/spawner/gk-run
#   meson test -C build gkrun_local          (suite "integration")
#
# As root every check runs twice: as root, and as the unprivileged user
# "nobody" (setpriv), since gk-run must work without privileges. As any
# other user it runs once, as that user. Nothing leaves the machine: the
# only listener is a python http.server on 127.0.0.1.
#
# Prints one line per check ("ok   ..." or "FAIL ..."), exits 1 if any
# check failed, 77 (skip) when bwrap or user namespaces are missing.
# GK_KEEP_TMP=1 keeps the temporary directory.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

if [ $# -lt 1 ]; then
	echo "usage: bash test_gkrun_local.sh /path/to/gk-run" >&2
	exit 2
fi
GKRUN=$(readlink -f "$1")
if [ ! -x "$GKRUN" ]; then
	echo "test_gkrun_local.sh: $1: not an executable" >&2
	exit 1
fi
gk_require bwrap curl ip "$PYTHON" sh timeout
if ! bwrap --unshare-user --unshare-pid --ro-bind / / --proc /proc \
    true >/dev/null 2>&1; then
	echo "SKIP: bwrap cannot create user namespaces here"
	exit 77
fi

GK_TMP=$(mktemp -d /tmp/gk-run-test.XXXXXX) || exit 1
chmod 755 "$GK_TMP"
trap gk_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
T=$GK_TMP

if [ "$(id -u)" -eq 0 ]; then
	WHOS=(root nobody)
else
	WHOS=("$(id -un)")
fi
# unique durations, so pgrep finds our sleeps and no one else's
SLEEP1=60.$$
SLEEP2=61.$$
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

# as_prefix WHO: AS becomes the command prefix that runs as WHO with a
# small, known environment.
as_prefix() {
	local who=$1 env=(PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
		"HOME=$T/$1/home" LANG=C.UTF-8) v
	for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
		[ -n "${!v:-}" ] && env+=("$v=${!v}")
	done
	# a sanitizer build of gk-run: the LD_PRELOAD checks preload a library
	[ -n "${ASAN_OPTIONS:-}" ] &&
		env+=("ASAN_OPTIONS=$ASAN_OPTIONS:verify_asan_link_order=0")
	if [ "$who" = nobody ]; then
		AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups --
			env -i "${env[@]}")
	else
		AS=(env -i "${env[@]}")
	fi
}

# run WHO [ENV=VAL...] -- GK-RUN-ARGS...: gk-run as WHO in $T/WHO/work,
# bounded by an outer timeout (exit 137). Sets RC and MS; output in
# $T/out and $T/err.
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
	( cd "$T/$who/work" &&
	  exec timeout -s KILL 60 "${AS[@]}" "${extra[@]}" "$GKRUN" "$@" \
		>"$T/out" 2>"$T/err" </dev/null )
	RC=$?
	MS=$((($(date +%s%N) - t0) / 1000000))
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
# A fake gatekeeperd: one request line per connection with the namespace
# fd (SCM_RIGHTS), logged with the fd's namespace type; replies with a
# cage ("ok") or refuses ("refuse"); logs "closed" when the client goes.

start_fake() {	# start_fake MODE SOCKET LOG
	"$PYTHON" - "$@" >>"$T/fake.stderr" 2>&1 <<'EOF' &
import fcntl, json, os, socket, sys, threading
mode, path, log = sys.argv[1:4]
NS_GET_NSTYPE = (0xb7 << 8) | 3
out = open(log, "a", buffering=1)
lock = threading.Lock()
def say(*a):
    with lock:
        print(*a, file=out)
def serve(c):
    msg, fds, _, _ = socket.recv_fds(c, 65536, 4)
    buf = msg
    while buf and not buf.endswith(b"\n"):
        more = c.recv(65536)
        if not more:
            break
        buf += more
    nstype = -1
    if fds:
        try:
            nstype = fcntl.ioctl(fds[0], NS_GET_NSTYPE)
        except OSError:
            pass
    for fd in fds:
        os.close(fd)
    say("req", buf.decode().strip())
    say("fds", len(fds), "nstype", hex(nstype))
    if mode == "refuse":
        c.sendall(b'{"ok":false,"error":"pattern *.evil.example is not '
                  b'allowed here; ask for the exact names"}\n')
    else:
        req = json.loads(buf)
        cage = {"id": "abcd1234", "label": req.get("label", ""),
                "source": "10.143.0.2", "uid": os.getuid(),
                "allow": req.get("allow", []), "token": "tok123",
                "gateway": "10.143.0.1", "dns": "10.143.0.1:53",
                "socks": "10.143.0.1:1080", "http": "10.143.0.1:3128"}
        c.sendall((json.dumps({"ok": True, "cage": cage}) + "\n").encode())
    try:
        while c.recv(4096):
            pass
    except OSError:
        pass
    say("closed")
    c.close()
try:
    os.unlink(path)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o777)
s.listen(16)
say("ready")
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
	gk_track_pid "$!"
	gk_wait_for 50 grep -qs ready "$3"
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
echo "host-only" >"/tmp/gk-run-host-marker.$$"

start_fake ok "$T/ctl-ok.sock" "$T/fake-ok.log" ||
	gk_fail "the fake gatekeeperd (ok) came up" "$(cat "$T/fake.stderr")"
start_fake refuse "$T/ctl-refuse.sock" "$T/fake-refuse.log" ||
	gk_fail "the fake gatekeeperd (refuse) came up"

echo "# gk-run: $GKRUN ($("$GKRUN" --version))"
echo "# bwrap: $(bwrap --version), running as: ${WHOS[*]}"

# ---------------------------------------------------------------------------
# The checks, once per user

checks_net() {
	local who=$1
	run "$who" -- --net none -- ip -o link
	GK_DETAIL=$(detail)
	gk_check "$who: --net none: only lo (ip -o link)" \
		eval '[ "$RC" = 0 ] && [ "$(grep -c . "$T/out")" = 1 ] && grep -q ": lo:" "$T/out"'
	run "$who" -- -- curl -sS --max-time 3 "http://127.0.0.1:$PORT/hello.txt"
	GK_DETAIL=$(detail)
	gk_check "$who: --net none: curl to a host listener on 127.0.0.1 fails" \
		eval '[ "$RC" != 0 ] && ! grep -q "hello from the host" "$T/out"'
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
	run "$who" -- -- sh -c 'echo made > made-inside'
	GK_DETAIL=$(detail)
	gk_check "$who: writing in the working directory works (seen outside)" \
		eval '[ "$RC" = 0 ] && [ "$(cat "$d/work/made-inside")" = made ]'
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
	run "$who" -- -- sh -c "ls /tmp; cat /tmp/gk-run-host-marker.$$"
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
	gk_check "$who: --timeout 1 -- sleep 30: 124 in ${MS} ms (< 7 s)" \
		eval '[ "$RC" = 124 ] && [ "$MS" -lt 7000 ]'
	run "$who" -- --timeout 1 -- sh -c 'trap "" TERM; sleep 30'
	GK_DETAIL=$(detail)
	gk_check "$who: --timeout 1 on a command ignoring SIGTERM: SIGKILL 5 s later, 124 (${MS} ms)" \
		eval '[ "$RC" = 124 ] && [ "$MS" -ge 5500 ] && [ "$MS" -lt 9000 ]'
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
		eval '[ "$RC" = 125 ] && one_line_err "^gk-run: cannot reach gatekeeperd at $T/no-such.sock: No such file or directory \(is gatekeeperd running\? start it with: systemctl start gatekeeperd\)$"'
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
	local who=$1 sig=$2 d=$T/$1 pid i
	rm -f "$d/work/sig.out"
	as_prefix "$who"
	( gk_close_ctl_fds; cd "$d/work" && exec "${AS[@]}" "$GKRUN" -- sh -c \
		"trap 'echo got-$sig > sig.out; exit 9' $sig; echo ready > sig.ready; sleep $SLEEP1 & wait" \
		>"$T/out" 2>"$T/err" </dev/null ) &
	pid=$!
	gk_track_pid "$pid"
	gk_wait_for 50 test -e "$d/work/sig.ready"
	rm -f "$d/work/sig.ready"
	kill -"$sig" "$pid"
	gk_wait_exit "$pid" 50 || kill -KILL "$pid"
	GK_DETAIL="rc=$GK_RC $(cat "$d/work/sig.out" 2>/dev/null) err: $(oneline "$(cat "$T/err")")"
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

checks_gated() {
	local who=$1 pid i
	run "$who" -- --allow '*.github.com' -a example.org:443 --control "$T/ctl-ok.sock" -- \
		sh -c 'cat /etc/resolv.conf; for v in http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY; do echo "$v=$(printenv $v)"; done'
	GK_DETAIL=$(detail)
	gk_check "$who: gated: /etc/resolv.conf names the gateway" \
		eval '[ "$RC" = 0 ] && grep -qx "nameserver 10.143.0.1" "$T/out" && [ "$(grep -c nameserver "$T/out")" = 1 ]'
	gk_check "$who: gated: proxy variables point at the cage's endpoints" \
		eval 'grep -qx "http_proxy=http://10.143.0.1:3128" "$T/out" &&
		    grep -qx "HTTPS_PROXY=http://10.143.0.1:3128" "$T/out" &&
		    grep -qx "ALL_PROXY=socks5h://10.143.0.1:1080" "$T/out" &&
		    grep -qx "NO_PROXY=localhost,127.0.0.1,::1" "$T/out"'
	gk_wait_for 20 eval '[ "$(grep -c closed "$T/fake-ok.log")" -ge 1 ]'
	GK_DETAIL=$(tail -3 "$T/fake-ok.log")
	gk_check "$who: gated: one cage.create line with netns, label and the patterns as given" \
		eval 'tail -3 "$T/fake-ok.log" | grep "^req " | sed "s/^req //" |
		    "$PYTHON" -c "import json,sys; r=json.load(sys.stdin); sys.exit(not (r[\"op\"]==\"cage.create\" and r[\"netns\"] is True and r[\"allow\"]==[\"*.github.com\",\"example.org:443\"] and r[\"label\"].startswith(\"gk-run: sh -c\") and len(r[\"label\"])<=64))"'
	gk_check "$who: gated: the request carried a network namespace fd" \
		eval 'tail -3 "$T/fake-ok.log" | grep -qx "fds 1 nstype 0x40000000"'
	gk_check "$who: gated: the connection closes when gk-run exits" \
		eval '[ "$(tail -1 "$T/fake-ok.log")" = closed ]'
	run "$who" -- --allow '*.github.com' --control "$T/ctl-ok.sock" -- "$PYTHON" -c \
		"import socket; s = socket.socket(socket.AF_UNIX); s.connect('$T/ctl-ok.sock')"
	GK_DETAIL=$(detail)
	gk_check "$who: gated: the control socket cannot be reached from inside" \
		eval '[ "$RC" != 0 ] && grep -q "ConnectionRefusedError\|Connection refused" "$T/err"'
	run "$who" -- --allow '*.evil.example' --control "$T/ctl-refuse.sock" -- true
	GK_DETAIL=$(detail)
	gk_check "$who: gated, refused: 125 and gatekeeperd's reason on one line" \
		eval '[ "$RC" = 125 ] && one_line_err "^gk-run: gatekeeperd refused the cage: pattern \*\.evil\.example is not allowed here; ask for the exact names$"'
	# kill -9 of gk-run: the connection closes, the sandbox goes
	rm -f "$T/$who/work/g.ready"
	as_prefix "$who"
	( gk_close_ctl_fds; cd "$T/$who/work" && exec "${AS[@]}" "$GKRUN" -a x.example \
		--control "$T/ctl-ok.sock" -- sh -c "touch g.ready; exec sleep $SLEEP2" \
		>/dev/null 2>&1 </dev/null ) &
	pid=$!
	gk_track_pid "$pid"
	gk_wait_for 50 test -e "$T/$who/work/g.ready"
	i=$(grep -c closed "$T/fake-ok.log")
	{ kill -KILL "$pid"; gk_wait_exit "$pid" 20; } 2>/dev/null
	gk_wait_for 20 eval '[ "$(grep -c closed "$T/fake-ok.log")" -gt "$i" ] && ! pgrep -f "^sleep $SLEEP2\$" >/dev/null'
	GK_DETAIL="closed: $(grep -c closed "$T/fake-ok.log") (was $i); $(pgrep -a -f "^sleep $SLEEP2")"
	gk_check "$who: kill -9 of gk-run closes the cage's connection and ends the command" \
		eval '[ "$(grep -c closed "$T/fake-ok.log")" -gt "$i" ] && ! pgrep -f "^sleep $SLEEP2\$" >/dev/null'
}

for who in "${WHOS[@]}"; do
	prepare "$who"
	echo "---- as $who ----"
	checks_net "$who"
	checks_fs "$who"
	checks_env "$who"
	checks_exit "$who"
	checks_signals "$who"
	checks_seccomp "$who"
	checks_dry_run "$who"
	checks_gated "$who"
done

run "${WHOS[0]}" -- --help
expect "--help: exit 0, with examples" 0 '^Examples:'
rm -f "/tmp/gk-run-host-marker.$$"

# ---- summary -------------------------------------------------------------
echo "---- $GK_NPASS passed, $GK_NFAIL failed ----"
if [ "$GK_NFAIL" -gt 0 ]; then
	for f in "${GK_FAILED[@]}"; do
		echo "FAILED: $f"
	done
	exit 1
fi
exit 0
