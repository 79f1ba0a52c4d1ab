#!/usr/bin/env bash
#
# test_dns_emfile.sh: gatekeeperd's TCP listeners and its descriptor
# budget when clients try to take every descriptor, against the real
# daemon started under `prlimit --nofile` (64: a budget of 48 and a
# reserve of 16), with the per-cage connection caps off so that only the
# descriptor budget stands in the way.
#
#   bash tests/integration/test_dns_emfile.sh build/gatekeeperd
#   meson test -C build dns_emfile_integration   (suite "integration")
#
# 1. Idle TCP clients of the DNS server: the daemon holds no more than its
#    budget (the rest are closed at once, counted as "descriptors" limit
#    events), never meets EMFILE, and the control socket still creates a
#    cage meanwhile (the reserve); once they leave, `dig +tcp` is answered
#    again.
# 2. Idle SOCKS5 clients: the same; a `dig +tcp` meanwhile is closed at
#    once (no room), not left hanging; once they leave, it is answered.
# Before gk_listen, the DNS TCP listener disabled itself on EMFILE and only
# a session closing at the 256-client cap re-enabled it; before the
# descriptor budget, the clients took every descriptor (EMFILE) and the
# control socket could not accept.
#
# Runs as root in namespaces it creates itself (lib.sh): lo only, nothing
# leaves it; no upstream is needed (a source without a cage is REFUSED).
# Prints "ok ..." / "FAIL ..." per check, exits 1 if any failed, 77 (skip)
# when not root. GK_KEEP_TMP=1 keeps the temp directory (logs).

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_daemon_arg test_dns_emfile.sh "$@"
gk_require dig prlimit unshare ip "$PYTHON" curl

gk_enter_netns 77 "$GK_SELF" "$GKD"
gk_setup

T=$GK_TMP
SOCK=$T/control.sock
NOFILE=64		# gatekeeperd's descriptor limit (soft and hard)
BUDGET=48		# what connections may hold: 64 less the reserve (16)
NHOLD=$((NOFILE + 40))	# clients to hold: more than it can accept
X_SRC=127.0.0.9		# no cage: REFUSED, answered without an upstream

# hold PORT N READY: open up to N idle TCP connections to 127.0.0.1:PORT
# (connect completes in the backlog even when nobody accepts), write how
# many to READY, keep them until killed. Prints its pid.
hold() {
	( gk_close_ctl_fds; exec "$PYTHON" -c '
import socket, sys, time
port, n, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
held = []
for i in range(n):
    try:
        held.append(socket.create_connection(("127.0.0.1", port), timeout=1))
    except OSError:
        break
with open(ready + ".tmp", "w") as f:
    f.write(str(len(held)))
import os; os.rename(ready + ".tmp", ready)
time.sleep(600)
' "$@" ) &
	gk_track_pid $!
	HOLD_PID=$!
}

# unhold: the holder exits; the kernel closes its connections.
unhold() {
	kill -TERM "$HOLD_PID" 2>/dev/null
	gk_wait_exit "$HOLD_PID" 300 || kill -KILL "$HOLD_PID" 2>/dev/null
	gk_untrack_pid "$HOLD_PID"
}


# tcp_answered SECS: dig +tcp (gk_dig's 10 s each) until answered
# REFUSED, at most SECS seconds (a bound, generous for a slow host); sets
# WAITED_MS.
tcp_answered() {
	local t0 end
	t0=$(date +%s%N)
	end=$((t0 + $1 * 1000000000))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		gk_dig $X_SRC tcp.probe A +tcp
		if [ "$DIG_STATUS" = REFUSED ]; then
			WAITED_MS=$((($(date +%s%N) - t0) / 1000000))
			return 0
		fi
		sleep 0.1
	done
	WAITED_MS=$((($(date +%s%N) - t0) / 1000000))
	return 1
}

# socks_answers: a SOCKS5 greeting (no auth) gets a SOCKS5 reply (a
# refusal: 127.0.0.1 is no cage's source).
socks_answers() {
	"$PYTHON" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", 1080), timeout=20)
s.sendall(b"\x05\x01\x00")
sys.exit(0 if s.recv(2)[:1] == b"\x05" else 1)' 2>/dev/null
}

fds_of() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

echo "# gatekeeperd: $GKD (under prlimit --nofile=$NOFILE)"

: >"$T/empty.conf"
# start_gkd VAR: a fresh gatekeeperd with at most $NOFILE descriptors;
# its log is $T/VAR.log (also LOG).
start_gkd() {
	LOG=$T/$1.log
	GK_SUMMARY_LOG=$LOG
	gk_start_daemon "$1" prlimit --nofile=$NOFILE "$GKD" -f \
		-c "$T/empty.conf" --listen 127.0.0.1 --dns-port 53 \
		--control "$SOCK" --upstream 127.0.0.1:5300 \
		--metrics 127.0.0.1:9477 --cage-dns-tcp 0 --cage-handshakes 0
	if ! gk_wait_ready "${!1}" "$SOCK" 53; then
		gk_abort "gatekeeperd starts under prlimit --nofile=$NOFILE" "$LOG"
	fi
	tcp_answered 60
	GK_DETAIL=$(dig_summary)
	gk_check "$1: dig +tcp is answered (REFUSED) before anything" \
		test "$DIG_STATUS" = REFUSED
}

# stop_gkd VAR: it is still running, reported nothing, exits 0 on SIGTERM.
stop_gkd() {
	local pid=${!1}
	gk_check "$1: gatekeeperd is still running" kill -0 "$pid"
	gk_check "$1: no sanitizer reports in gatekeeperd's log" \
		eval '! grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:" "$LOG"'
	gk_stop_daemon "$pid" TERM
	GK_DETAIL="exit status $GK_RC"
	gk_check "$1: SIGTERM: exits 0" test "$GK_RC" = 0
}

start_gkd GKD1
GK_DETAIL=$(grep 'open files' "/proc/$GKD1/limits")
gk_check "gatekeeperd runs with $NOFILE descriptors at most" \
	eval 'grep -Eq "open files +$NOFILE +$NOFILE " "/proc/$GKD1/limits"'
gk_info "descriptors open when ready: $(fds_of "$GKD1")"

# budget_held: the daemon's descriptors held by connections (metrics).
budget_held() {
	curl -s --max-time 20 http://127.0.0.1:9477/metrics |
		awk '$1 == "gatekeeper_descriptors{state=\"held\"}" { print $2 }'
}
limit_events() {
	curl -s --max-time 20 http://127.0.0.1:9477/metrics |
		awk '$1 == "gatekeeper_cage_limit_events_total{limit=\"descriptors\"}" { print $2 }'
}
# ctl_answers: cage.create over the control socket works (and the cage
# goes with the connection).
ctl_answers() {
	CTL_REPLY=$("$PYTHON" "$GKCTL" "$SOCK" --timeout 20 \
		'{"op":"cage.create","source":"127.0.0.77","allow":["example.org"]}' 2>&1)
	[ "$(gk_json_get ok "$CTL_REPLY")" = true ]
}

# ---- 1. DNS TCP clients try to take every descriptor -----------------------
hold 53 $NHOLD "$T/held1"
gk_wait_for 600 test -s "$T/held1"
gk_wait_for 300 eval '[ "$(limit_events)" -gt 0 ] 2>/dev/null'
GK_DETAIL="held by connections: $(budget_held); limit events: $(limit_events); open: $(fds_of "$GKD1")"
gk_check "$NHOLD idle DNS TCP clients: the daemon holds at most its budget ($BUDGET) and refuses the rest" \
	eval '[ "$(budget_held)" -le $BUDGET ] && [ "$(limit_events)" -gt 0 ]'
gk_info "descriptors open: $(fds_of "$GKD1") of $NOFILE"
GK_DETAIL="log: $(grep -c 'Too many open files' "$LOG") EMFILE lines"
gk_check "... and never runs out of descriptors (no EMFILE)" \
	eval '! grep -q "Too many open files" "$LOG"'
ctl_answers
GK_DETAIL="reply: $CTL_REPLY"
gk_check "... while the control socket creates a cage (the reserve)" \
	test "$(gk_json_get ok "$CTL_REPLY")" = true
gk_dig $X_SRC udp.probe A
GK_DETAIL=$(dig_summary)
gk_check "... and UDP queries are still answered (REFUSED)" \
	test "$DIG_STATUS" = REFUSED
unhold
tcp_answered 60
GK_DETAIL="$(dig_summary) after $WAITED_MS ms"
gk_check "the clients left: dig +tcp is answered again ($WAITED_MS ms)" \
	test "$DIG_STATUS" = REFUSED
GK_DETAIL="held: $(budget_held)"
gk_check "... and the budget is all given back" \
	gk_wait_for 300 eval '[ "$(budget_held)" = 0 ]'

stop_gkd GKD1

# ---- 2. SOCKS5 clients try to take every descriptor ------------------------
start_gkd GKD2
hold 1080 $NHOLD "$T/held2"
gk_wait_for 600 test -s "$T/held2"
gk_wait_for 300 eval '[ "$(limit_events)" -gt 0 ] 2>/dev/null'
GK_DETAIL="held by connections: $(budget_held); limit events: $(limit_events)"
gk_check "$NHOLD idle SOCKS5 clients: the daemon holds at most its budget ($BUDGET)" \
	eval '[ "$(budget_held)" -le $BUDGET ] && [ "$(limit_events)" -gt 0 ]'
ctl_answers
GK_DETAIL="reply: $CTL_REPLY"
gk_check "... while the control socket creates a cage (the reserve)" \
	test "$(gk_json_get ok "$CTL_REPLY")" = true
# Closed, not left hanging: dig says the connection ended (no "timed
# out"), long before its own timeout (20 s) would have ended the wait.
gk_dig $X_SRC tcp.probe A +tcp +time=20
GK_DETAIL="$(dig_summary); dig: $(grep "^;;" "$GK_TMP/dig.out" | head -n 3 | tr "\n" " ")"
gk_check "... a TCP query meanwhile finds no room: closed at once, not left hanging (${DIG_MS} ms; dig's timeout 20 s)" \
	eval '[ "$DIG_STATUS" != REFUSED ] && ! grep -q "timed out" "$GK_TMP/dig.out" &&
	    [ "$DIG_MS" -lt 10000 ]'
GK_DETAIL="log: $(grep -c 'Too many open files' "$LOG") EMFILE lines"
gk_check "... and the daemon never runs out of descriptors (no EMFILE)" \
	eval '! grep -q "Too many open files" "$LOG"'
unhold
tcp_answered 60
GK_DETAIL="$(dig_summary) after $WAITED_MS ms"
gk_check "the SOCKS5 clients left: dig +tcp is answered again" \
	test "$DIG_STATUS" = REFUSED
GK_DETAIL="no SOCKS5 reply"
gk_check "... and the SOCKS5 listener answers again" gk_wait_for 300 socks_answers

stop_gkd GKD2

gk_finish
