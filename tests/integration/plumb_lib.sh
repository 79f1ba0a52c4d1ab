# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the sourcing scripts
# shellcheck disable=SC2016  # eval'd conditions are single-quoted on purpose
#
# plumb_lib.sh: what the nft integration tests share (test_plumb.sh, the
# plumbing without a transparent port; test_plumb_transparent.sh,
# transparent mode). Source it after lib.sh, from inside the test
# namespaces (after gk_setup); it defines functions and variables only,
# and pl_setup starts what both need.
#
# plumb_drive (tests/plumb_drive.c) drives the nft module: nft_plumb_new,
# nft_cage_up/down, nft_netns_check, nft_plumb_free; one `plumb_drive
# serve` per name, fed through a fifo. Cages are network namespaces held
# by sleeping processes, made the way gk-run makes them (unshare --user
# --net) or root-owned. A Python listener on the gateway address plays
# gatekeeperd's listeners and logs every connection and datagram it gets
# ($LOG).

T=$GK_TMP
GW=10.143.0.1
LOG=$T/listen.log
# How long (seconds) a probe waits for an answer, and the scripts for
# their helpers. Answers take milliseconds here; these figures only bound
# a check that fails, so they are generous for slow (emulated) hosts. No
# verdict depends on how long anything took: a refusal is told from a
# silent drop by what came back (ECONNREFUSED, an ICMP error).
W=15

# ---------------------------------------------------------------------------
# plumb_drive processes: NAME -> fd of the fifo we write commands to, pid

declare -A DRV_FD=() DRV_PID=()

drv_close_fds() {
	local fd
	for fd in "${DRV_FD[@]}"; do
		eval "exec $fd>&-"
	done
}

# drv_start NAME [serve options]: start `plumb_drive serve`; wait (60 s at
# most) for its first line; succeed if that is "ready".
drv_start() {
	local name=$1 fifo fd i
	shift
	fifo=$T/drv-$name.in
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	: >"$T/drv-$name.out"
	(
		drv_close_fds
		exec "$DRV" serve "$@" <"$fifo" >"$T/drv-$name.out" \
			2>>"$T/drv-$name.log"
	) &
	DRV_PID[$name]=$!
	gk_track_pid "${DRV_PID[$name]}"
	exec {fd}>"$fifo"
	DRV_FD[$name]=$fd
	for ((i = 0; i < 600; i++)); do
		if [ -s "$T/drv-$name.out" ]; then
			[ "$(head -1 "$T/drv-$name.out")" = ready ]
			return
		fi
		kill -0 "${DRV_PID[$name]}" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

# drv_send NAME COMMAND: print the reply line (120 s at most: `wait`
# itself gives up after 60 s).
drv_send() {
	local name=$1 out n i
	out=$T/drv-$name.out
	n=$(($(wc -l <"$out") + 1))
	printf '%s\n' "$2" 1>&"${DRV_FD[$name]}" 2>/dev/null || return 1
	for ((i = 0; i < 1200; i++)); do
		if [ "$(wc -l <"$out")" -ge "$n" ]; then
			sed -n "${n}p" "$out"
			return 0
		fi
		kill -0 "${DRV_PID[$name]}" 2>/dev/null || break
		sleep 0.1
	done
	echo "err no reply to '$2'"
	return 1
}

# drv_quit NAME: quit (nft_plumb_free, which waits 10 s at most for the
# teardowns), wait 60 s at most; sets GK_RC.
drv_quit() {
	local name=$1
	DRV_QUIT=$(drv_send "$name" quit)
	eval "exec ${DRV_FD[$name]}>&-"
	if ! gk_wait_exit "${DRV_PID[$name]}" 600; then
		kill -KILL "${DRV_PID[$name]}" 2>/dev/null
		gk_wait_exit "${DRV_PID[$name]}" 20
		GK_RC=timeout
	fi
	unset "DRV_FD[$name]" "DRV_PID[$name]"
}

# pl_mode NAME: how the nft module in driver NAME said at start that it
# treats a transparent cage's TCP to an address not pinned: PL_MODE=pins
# (refused at the SYN), open (the kernel cannot renew a set element's
# timeout, or GK_NFT_PINS=off: every transparent cage in set open, the
# listener decides), none (it said neither: no transparent port) or
# several (it said more than one). PL_WHY: what it said.
pl_mode() {
	local said='nft: (this kernel cannot renew|GK_NFT_PINS=off|transparent cages.* refused at the SYN)'
	PL_WHY=$(grep -E "$said" "$T/drv-$1.log")
	case $(grep -cE "$said" "$T/drv-$1.log"):$PL_WHY in
	0:*) PL_MODE=none ;;
	1:*"cannot renew"* | 1:*GK_NFT_PINS=off*) PL_MODE=open ;;
	1:*"(set pins)") PL_MODE=pins ;;
	*) PL_MODE=several ;;
	esac
}

# drv_crash NAME: kill -9, as a crash would.
drv_crash() {
	local name=$1
	{
		kill -KILL "${DRV_PID[$name]}"
		gk_wait_exit "${DRV_PID[$name]}" 20
	} 2>/dev/null
	eval "exec ${DRV_FD[$name]}>&-"
	unset "DRV_FD[$name]" "DRV_PID[$name]"
}

# ---------------------------------------------------------------------------
# Cages: network namespaces held by sleeping processes

# new_cage VAR [user|root|nobody]: VAR = pid holding the netns.
#   user:   unshare --user --net, as gk-run does (owner uid 0 here)
#   root:   unshare --net only: owned by the initial user namespace
#   nobody: like user, but created by uid 65534
new_cage() {
	local kind=${2:-user} pid
	case $kind in
	user) unshare --user --net --map-root-user sleep 600 & ;;
	root) unshare --net sleep 600 & ;;
	nobody) setpriv --reuid=65534 --regid=65534 --clear-groups \
		unshare --user --net sleep 600 & ;;
	esac
	pid=$!
	gk_track_pid "$pid"
	# unshare execs sleep once the namespaces exist.
	gk_wait_for 300 eval "[ \"\$(readlink /proc/$pid/exe)\" = \"\$(readlink -f \"\$(command -v sleep)\")\" ]" ||
		return 1
	printf -v "$1" '%s' "$pid"
}

in_cage() {
	local pid=$1
	shift
	nsenter -t "$pid" -n -- "$@"
}

# up NAME CAGEPID IFNAME VAR [transparent]: plumb; VAR = the cage's
# address.
up() {
	local r ok addr
	r=$(drv_send "$1" "up /proc/$2/ns/net $3${5:+ $5}")
	UP_REPLY=$r
	read -r ok addr UP_US UP_IFINDEX <<<"$r"
	[ "$ok" = ok ] || return 1
	printf -v "$4" '%s' "$addr"
}

# timed CMD...: run CMD with output in $T/out; MS = wall time in ms (for
# the log only).
timed() {
	local t0 t1 rc
	t0=$(date +%s%N)
	"$@" >"$T/out" 2>&1
	rc=$?
	t1=$(date +%s%N)
	MS=$(((t1 - t0) / 1000000))
	return $rc
}
out() { head -c 400 "$T/out" | tr '\n' ' '; }

# refused MSG PATTERN CMD...: "refused at once", told by what came back:
# the command (whose own timeout is $W s) failed and said PATTERN (its
# words for ECONNREFUSED or an ICMP error); a silent drop would have it
# say "timed out" instead. The time taken is only reported.
refused() {
	local msg=$1 pat=$2
	shift 2
	if timed "$@"; then
		gk_fail "$msg" "succeeded: $(out)"
	elif ! grep -qiE "$pat" "$T/out"; then
		gk_fail "$msg" "no '$pat' in: $(out) (${MS} ms)"
	else
		gk_ok "$msg (${MS} ms)"
	fi
}

# nc_hello MSG CAGEPID ADDR PORT WANT: a TCP connection gets the listener's
# greeting, which contains WANT.
nc_hello() {
	if timed in_cage "$2" nc -w "$W" "$3" "$4" </dev/null &&
	    grep -qF -- "$5" "$T/out"; then
		gk_ok "$1"
	else
		gk_fail "$1" "$(out)"
	fi
}

# dig_ok MSG CAGEPID SERVER [DIG ARGS]: the query is answered NOERROR.
dig_ok() {
	local msg=$1 pid=$2 server=$3
	shift 3
	timed in_cage "$pid" dig @"$server" probe.test A +time="$W" +tries=1 "$@"
	if grep -q 'status: NOERROR' "$T/out" &&
	    grep -q "SERVER: $server#" "$T/out"; then
		gk_ok "$msg"
	else
		gk_fail "$msg" "$(out)"
	fi
}

lines() { grep -c -- "$1" "$LOG" 2>/dev/null; }
# set_has SET STRING, set_empty SET: set SET of table inet gatekeeper
set_has() { nft list set inet gatekeeper "$1" 2>/dev/null | grep -qF -- "$2"; }
set_empty() {
	nft list set inet gatekeeper "$1" >/dev/null 2>&1 &&
		! nft list set inet gatekeeper "$1" | grep -q elements
}
table_has() { set_has cages "$1"; }
tp_has() { set_has transparent "$1"; }
tp_empty() { set_empty transparent; }
sets() {
	local s
	for s in cages transparent open pins; do
		echo "$s: $(nft list set inet gatekeeper $s 2>&1 | tr -s '\n\t' ' ')"
	done
}
gk_links() { ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep '^gk-'; }

# $T/udp_probe.py ADDR PORT WAIT (pl_setup writes it): what a QUIC client
# sees. A connected UDP socket sends one datagram and waits WAIT s for an
# answer. Prints "refused MS" (ECONNREFUSED: an ICMP port-unreachable came
# back), "answer MS" or "timeout MS". (An unconnected socket sees no ICMP
# errors at all without IP_RECVERR: NOTES-linux.md, "does NOT work" item
# 6.)
# udp_refused MSG CAGEPID ADDR PORT: refused (not answered, not timed
# out); the time is only reported.
udp_refused() {
	local r
	r=$(in_cage "$2" "$PYTHON" "$T/udp_probe.py" "$3" "$4" "$W" 2>&1)
	GK_DETAIL=$r
	gk_check "$1 (${r#* } ms)" eval '[[ "$r" == "refused "* ]]'
}

# ---------------------------------------------------------------------------
# Setup and summary

# pl_setup: skip (77) unless nftables is usable; the loose reverse-path
# mode; $T/udp_probe.py (above); the gateway's listeners (gatekeeperd
# stand-in, $T/listen.py) on $GW 53 (TCP, UDP), 1080, 3128 and 15001,
# and host services on 0.0.0.0:2222, 127.0.0.1:7000 and UDP
# 127.0.0.1:7001.
pl_setup() {
	if ! nft list tables >/dev/null 2>&1; then
		echo "SKIP: nftables is not usable here: $(nft list tables 2>&1)"
		exit 77
	fi
	# The loose reverse-path mode many distributions set: the nft set must
	# stop spoofing on its own (NOTES-linux.md, "does NOT work" item 1).
	sysctl -qw net.ipv4.conf.all.rp_filter=2
	cat >"$T/udp_probe.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(float(sys.argv[3]))
t0 = time.monotonic()
ms = lambda: int((time.monotonic() - t0) * 1000)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    s.send(b"\xc0quic-initial")
    s.recv(2048)
    print("answer", ms())
except ConnectionRefusedError:
    print("refused", ms())
except socket.timeout:
    print("timeout", ms())
PY
	cat >"$T/listen.py" <<'PY'
# listen.py LOG SPEC...: SPEC is tcp:ADDR:PORT or udp:ADDR:PORT. Binds with
# IP_FREEBIND (the gateway address may exist on no link yet). Logs
# "PROTO PORT SRC:SPORT orig=ADDR:PORT" per connection or datagram. TCP:
# DNS on port 53, else "hello PORT SRC orig=..." and close. UDP: DNS on
# port 53, else "hello PORT SRC".
import socket, struct, sys, threading
log = open(sys.argv[1], "a", buffering=1)
lock = threading.Lock()
def note(s):
    with lock:
        log.write(s + "\n")
def dns_reply(q):
    if len(q) < 12:
        return None
    i = 12
    while i < len(q) and q[i] != 0:
        i += 1 + q[i]
    end = i + 5
    if end > len(q):
        return None
    return q[:2] + b"\x81\x80\x00\x01\x00\x00\x00\x00\x00\x00" + q[12:end]
def orig_dst(c):
    try:
        raw = c.getsockopt(socket.SOL_IP, 80, 16)    # SO_ORIGINAL_DST
        port, = struct.unpack("!H", raw[2:4])
        return "%s:%d" % (socket.inet_ntoa(raw[4:8]), port)
    except OSError:
        return "-"
def tcp_conn(c, port, src):
    try:
        c.settimeout(3)
        if port == 53:
            n, = struct.unpack("!H", c.recv(2))
            q = b""
            while len(q) < n:
                q += c.recv(n - len(q))
            r = dns_reply(q)
            c.sendall(struct.pack("!H", len(r)) + r)
        else:
            c.sendall(("hello %d %s orig=%s\n" % (port, src, orig_dst(c))).encode())
    except (OSError, struct.error, TypeError):
        pass
    c.close()
def serve_tcp(s, port):
    while True:
        c, a = s.accept()
        note("tcp %d %s:%d orig=%s" % (port, a[0], a[1], orig_dst(c)))
        threading.Thread(target=tcp_conn, args=(c, port, a[0]), daemon=True).start()
def serve_udp(s, port):
    while True:
        q, a = s.recvfrom(4096)
        note("udp %d %s:%d" % (port, a[0], a[1]))
        r = dns_reply(q) if port == 53 else ("hello %d %s\n" % (port, a[0])).encode()
        if r:
            s.sendto(r, a)
threads = []
for spec in sys.argv[2:]:
    proto, addr, port = spec.split(":")
    port = int(port)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_IP, 15, 1)                  # IP_FREEBIND
    s.bind((addr, port))
    if proto == "tcp":
        s.listen(64)
    threads.append(threading.Thread(target=serve_tcp if proto == "tcp" else serve_udp, args=(s, port), daemon=True))
for t in threads:
    t.start()
note("ready")
for t in threads:
    t.join()
PY
	: >"$LOG"
	(drv_close_fds; exec "$PYTHON" "$T/listen.py" "$LOG" \
		tcp:$GW:53 udp:$GW:53 tcp:$GW:1080 tcp:$GW:3128 tcp:$GW:15001 \
		tcp:0.0.0.0:2222 tcp:127.0.0.1:7000 udp:127.0.0.1:7001 \
		2>"$T/listen.err") &
	LISTEN_PID=$!
	gk_track_pid "$LISTEN_PID"
	if ! gk_wait_for 300 grep -qx ready "$LOG"; then
		gk_fail "listeners start" "$(cat "$T/listen.err")"
		exit 1
	fi
}

# pl_host_dummy: a second host address, 10.200.0.1/24, on a link of its
# own (hostdummy).
pl_host_dummy() {
	ip link add hostdummy type dummy 2>/dev/null ||
		ip link add hostdummy type bridge
	ip addr add 10.200.0.1/24 dev hostdummy && ip link set hostdummy up
}

# pl_finish: the summary, the drivers' logs when a check failed; exits 1
# if any check failed, else 0.
pl_finish() {
	local f
	echo "---- $GK_NPASS passed, $GK_NFAIL failed ----"
	if [ "$GK_NFAIL" -gt 0 ]; then
		for f in "${GK_FAILED[@]}"; do
			echo "FAILED: $f"
		done
		for f in "$T"/drv-*.log; do
			echo "---- $(basename "$f") (last 20 lines) ----"
			gk_tail "$f" 20
		done
		exit 1
	fi
	exit 0
}
