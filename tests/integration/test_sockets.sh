#!/usr/bin/env bash
#
# test_sockets.sh: the unix socket gate. A sandbox connects only to the
# host sockets given with --socket, wherever the others live, and its own
# sockets keep working. Real gk-run and bwrap with --net none (no
# gatekeeperd), as root and as the unprivileged user nobody:
#
#   - a host daemon (socat) on a stream socket under /var/tmp (a tmpfs of
#     this script's mount namespace; the host sees it as a service's
#     socket): connect from inside fails with ECONNREFUSED (python3,
#     socat), also through a symbolic link the sandbox makes in its /tmp;
#     gk-run says so on stderr; with --socket PATH it is reached;
#   - a host datagram socket there: the sandbox cannot send to it (an
#     AF_UNIX SOCK_DGRAM socket cannot be made inside: EPERM), and the
#     daemon receives nothing;
#   - the sandbox's own sockets: bind, listen and connect in /tmp, in the
#     working directory (relative and absolute, ../ from a subdirectory),
#     through a link to its own socket, an abstract one, and TCP on lo.
#
#   bash tests/integration/test_sockets.sh build/spawner/gk-run
#   meson test -C build sockets_integration    (suite "integration")
#
# Root only (it skips otherwise): private network, mount and PID
# namespaces (lib.sh), everything under a temporary directory and the
# tmpfs on /var/tmp.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_exe_args test_sockets.sh GKRUN=gk-run -- "$@"
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: test_sockets.sh needs root (namespaces, another user)"
	exit 77
fi
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
gk_require bwrap socat setpriv unshare mount timeout "$PYTHON"
gk_enter_netns 77 "$GK_SELF" "$@"	# does not return
gk_setup
T=$GK_TMP
chmod 755 "$T"
if ! bwrap --unshare-user --unshare-pid --ro-bind / / --proc /proc \
    true >/dev/null 2>&1; then
	echo "SKIP: bwrap cannot create user namespaces here"
	exit 77
fi
mount -t tmpfs -o mode=1777 gk-sock-vartmp /var/tmp ||
	gk_abort "mount a tmpfs on /var/tmp in the test's mount namespace"

oneline() { printf '%s' "$1" | tr '\n' '|' | cut -c1-600; }

# run WHO DIR GK-RUN-ARGS...: gk-run --net none as WHO from DIR, bounded;
# RC, $T/out, $T/err.
run() {
	local who=$1 dir=$2 as=()
	shift 2
	[ "$who" = nobody ] && as=(setpriv --reuid=nobody --regid=nogroup
		--clear-groups)
	( cd "$dir" && exec timeout -s KILL 60 "${as[@]}" env \
		HOME="$T/$who" PATH=/usr/local/bin:/usr/bin:/bin \
		"$GKRUN" --net none "$@" >"$T/out" 2>"$T/err" </dev/null )
	RC=$?
}
detail() {
	GK_DETAIL="rc $RC; out: $(oneline "$(head -c 400 "$T/out")"); err: $(oneline "$(head -c 400 "$T/err")")"
}
out_has() { detail; grep -q -- "$1" "$T/out"; }
err_has() { detail; grep -q -- "$1" "$T/err"; }

# The host's daemons under /var/tmp: a stream one that answers, a
# datagram one that logs what it receives.
STREAM=/var/tmp/gk-relay.sock
DGRAM=/var/tmp/gk-dgram.sock
( gk_close_ctl_fds; exec socat UNIX-LISTEN:"$STREAM",fork,mode=666 \
	SYSTEM:'echo host daemon reached' >"$T/socat-stream.log" 2>&1 ) &
gk_track_pid "$!"
( gk_close_ctl_fds; exec socat -u UNIX-RECV:"$DGRAM",mode=666 \
	OPEN:"$T/dgram.got",creat,append >"$T/socat-dgram.log" 2>&1 ) &
gk_track_pid "$!"
gk_wait_for 50 test -S "$STREAM" ||
	gk_fail "socat listens on $STREAM" "$(cat "$T/socat-stream.log")"
gk_wait_for 50 test -S "$DGRAM" ||
	gk_fail "socat receives on $DGRAM" "$(cat "$T/socat-dgram.log")"
chmod 666 "$T/dgram.got" 2>/dev/null || true
S=/var/tmp/gk-scripts
mkdir -p "$S"

# What the sandbox runs (where it can read it: its /tmp is its own):
# connect to argv[1] (stream), print
# "ok: REPLY" or "errno N".
cat >"$S/connect.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.settimeout(5)
    s.connect(sys.argv[1])
    print("ok:", s.recv(100).decode().strip())
except OSError as e:
    print("errno", e.errno)
EOF
# sendto a datagram to argv[1]: "sent" or "errno N".
cat >"$S/dgram.py" <<'EOF'
import socket, sys
try:
    d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    d.sendto(b"from the sandbox\n", sys.argv[1])
    print("sent")
except OSError as e:
    print("errno", e.errno)
EOF
# the sandbox's own sockets: each line "NAME ok" or "NAME errno N"
cat >"$S/own.py" <<'EOF'
import os, socket
def listen(path, family=socket.AF_UNIX, addr=None):
    s = socket.socket(family)
    if family == socket.AF_UNIX and not path.startswith("\0"):
        try: os.unlink(path)
        except OSError: pass
    s.bind(addr if addr is not None else path)
    s.listen(16)
    return s
def reach(name, srv, addr, family=socket.AF_UNIX):
    c = socket.socket(family)
    try:
        c.connect(addr)
        a, _ = srv.accept()
        c.sendall(b"ping")
        print(name, "ok" if a.recv(4) == b"ping" else "bad")
        a.close()
    except OSError as e:
        print(name, "errno", e.errno)
    c.close()
t = listen("/tmp/own.sock")
reach("tmp", t, "/tmp/own.sock")
w = listen("own.sock")
reach("cwd-relative", w, "own.sock")
reach("cwd-absolute", w, os.getcwd() + "/own.sock")
os.makedirs("sub", exist_ok=True)
os.chdir("sub")
reach("dotdot", w, "../own.sock")
os.chdir("..")
try: os.unlink("/tmp/own.link")
except OSError: pass
os.symlink("/tmp/own.sock", "/tmp/own.link")
reach("own-link", t, "/tmp/own.link")
a = listen("\0gk-own-abstract")
reach("abstract", a, "\0gk-own-abstract")
i = listen(None, socket.AF_INET, ("127.0.0.1", 0))
reach("tcp-lo", i, i.getsockname(), socket.AF_INET)
EOF
mkdir -p "$T/root" "$T/nobody"
chown nobody "$T/nobody"

"$PYTHON" -c 'import socket, sys
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"from the host\n",
    sys.argv[1])' "$DGRAM"
gk_check "the host's own datagram reaches the daemon" \
	gk_wait_for 50 grep -q "from the host" "$T/dgram.got"

for who in root nobody; do
	w=$T/$who/proj
	mkdir -p "$w"
	[ "$who" = nobody ] && chown nobody "$w"

	run "$who" "$w" -- "$PYTHON" "$S/connect.py" "$STREAM"
	gk_check "$who: a host socket under /var/tmp: connect refused (ECONNREFUSED)" \
		out_has '^errno 111$'
	gk_check "$who: gk-run says it refused $STREAM" \
		err_has "refused a connection to the host socket $STREAM"
	run "$who" "$w" -- socat -t 2 - UNIX-CONNECT:"$STREAM"
	gk_check "$who: socat UNIX-CONNECT to it fails" \
		eval '[ "$RC" -ne 0 ] && ! out_has "host daemon reached"'
	run "$who" "$w" -- sh -c "ln -s $STREAM /tmp/l.sock &&
		exec $PYTHON $S/connect.py /tmp/l.sock"
	gk_check "$who: through a link the sandbox made in /tmp: refused" \
		out_has '^errno 111$'
	run "$who" "$w" --socket "$STREAM" -- "$PYTHON" "$S/connect.py" \
		"$STREAM"
	gk_check "$who: --socket $STREAM: reached" \
		out_has '^ok: host daemon reached$'
	run "$who" "$w" --socket "$STREAM" -- socat -t 2 - \
		UNIX-CONNECT:"$STREAM"
	gk_check "$who: --socket $STREAM: socat reaches it" \
		out_has 'host daemon reached'

	run "$who" "$w" -- "$PYTHON" "$S/dgram.py" "$DGRAM"
	gk_check "$who: sendto the host datagram socket: refused (EPERM)" \
		out_has '^errno 1$'
	gk_check "$who: the datagram daemon received nothing" \
		eval '! grep -q sandbox "$T/dgram.got" 2>/dev/null'

	run "$who" "$w" -- "$PYTHON" "$S/own.py"
	for k in tmp cwd-relative cwd-absolute dotdot own-link abstract \
	    tcp-lo; do
		gk_check "$who: the sandbox's own socket ($k) works" \
			out_has "^$k ok$"
	done
	gk_check "$who: the sandbox's own sockets: nothing refused on stderr" \
		eval '! err_has refused'
	# the socket the sandbox bound in its working directory is there
	gk_check "$who: the socket it bound in the project is on the host" \
		test -S "$w/own.sock"
done

gk_finish
