#!/usr/bin/env bash
#
# test_cage_limits.sh: one cage cannot starve the others. Each attack below
# runs from cage A (127.0.0.2, *.github.com) with ordinary sockets
# (cage_flood) while cage B (127.0.0.3, gitlab.com) works normally, and B's
# cached DNS answers, B's proxy connection set-up and cage creation on the
# control socket are probed meanwhile:
#
#   1. a flood of unique names under A's allowed wildcard (upstream lookups)
#   2. a flood of distinct denied names (the audit log)
#   3. 300 idle TCP connections to the resolver
#   4. 4,200 idle connections to the SOCKS5 port, then to the HTTP port
#   5. 13,000 tunnels to a silent server (cage-tunnels 600 here); A ends
#      while they are open
#   6. the same with the per-cage caps off (SIGHUP): the descriptor share;
#      the tunnels, whose client never sends, end at the peek deadline
#
# While an attack runs, every probe of B's cached DNS, B's proxy set-up
# (SOCKS5 and CONNECT) and cage creation is answered: none lost, none
# failed. A probe waits PROBE_WAIT (20 s) for its answer, so that a slow
# host (a qemu guest under emulation) loses only what never comes (a DNS
# query over UDP goes again every second meanwhile, as a resolver's does:
# a flood may fill the socket's queue, and UDP drops); the
# latencies (p50, p99, max) are printed as information, not checked: how
# fast is a benchmark's question, not a test's. The audit log grows by
# less than 2 MB in all; A's descriptors are back at the baseline when A
# ends, while A's client still holds its tunnels open.
#
#   bash tests/integration/test_cage_limits.sh build/gatekeeperd build/tests/cage_flood
#   meson test -C build cage_limits_integration   (suite "integration")
#
# Runs as root in namespaces it creates (lib.sh), with an "internet"
# netns behind a veth (inet_lib.sh) holding the silent servers; nothing
# leaves them. Prints "ok ..." / "FAIL ..." per check, exits 1 if any
# failed, 77 (skip) when not root. GK_KEEP_TMP=1 keeps the temp directory.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"
# shellcheck source=tests/integration/inet_lib.sh
. "$GK_LIB_DIR/inet_lib.sh"

gk_exe_args test_cage_limits.sh GKD=gatekeeperd FLOOD=cage_flood -- "$@"
gk_require dig dnsmasq prlimit unshare nsenter ip curl "$PYTHON"

gk_enter_netns 77 "$GK_SELF" "$GKD" "$FLOOD"
gk_setup

T=$GK_TMP
SOCK=$T/control.sock
AUDIT=$T/audit.log
METRICS=127.0.0.1:9477
A_SRC=127.0.0.2		# the attacker: *.github.com
B_SRC=127.0.0.3		# the victim: gitlab.com
P_SRC=127.0.0.50	# cage creation probe
SILENT=192.0.2.10	# github.com: accepts, never speaks
B_HOST=198.51.100.20	# gitlab.com: accepts, never speaks
PROBE_WAIT=20		# s: a probe's wait for its answer (cage_flood --wait)
HOLD_SECS=20		# s: held idle connections, 4 x the 5 s deadlines
GK_SUMMARY_LOG=$T/GKD1.log

tl_err() { gk_err "test_cage_limits: $*"; }

# kv KEY LINE: the value of key=value in a cage_flood output line.
kv() { sed -n "s/.*\(^\| \)$1=\([^ ]*\).*/\2/p" <<<"$2"; }

fds_of() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

metric() {
	curl -s --max-time 20 "http://$METRICS/metrics" |
		awk -v k="$1" '$1 == k { print $2 }'
}
limit_events() { metric "gatekeeper_cage_limit_events_total{limit=\"$1\"}"; }

# flood NAME MODE ARGS...: cage_flood in the background (output in
# $T/NAME.out); waits until it is in position (its ready file).
flood() {
	local name=$1
	shift
	rm -f "$T/$name.ready" "$T/$name.out"
	( gk_close_ctl_fds; exec "$FLOOD" "$@" --ready "$T/$name.ready" \
		>"$T/$name.out" 2>"$T/$name.err" ) &
	FLOOD_PID=$!
	gk_track_pid "$FLOOD_PID"
	if ! gk_wait_for 300 test -s "$T/$name.ready"; then
		tl_err "$name: not in position within 30 s: $(cat "$T/$name.err")"
		return 1
	fi
	gk_info "$name in position: $(cat "$T/$name.ready")"
}

# flood_end: stop the running flood (SIGTERM: it prints its line).
flood_end() {
	kill -TERM "$FLOOD_PID" 2>/dev/null
	gk_wait_exit "$FLOOD_PID" 300 || kill -KILL "$FLOOD_PID" 2>/dev/null
	gk_untrack_pid "$FLOOD_PID"
}

# probes SECS: B's DNS (UDP; with TCP=1 over TCP), SOCKS5 and CONNECT
# set-up, and cage creation, all at once for SECS (each attempt waits up
# to PROBE_WAIT); lines in PR_DNS, PR_SOCKS, PR_HTTP, PR_CTL.
probes() {
	local secs=$1 tcp=() pids=()
	[ "${TCP:-0}" = 1 ] && tcp=(--tcp)
	"$FLOOD" probe-dns --src $B_SRC --port 53 --name gitlab.com \
		--secs "$secs" --wait $PROBE_WAIT "${tcp[@]}" \
		>"$T/pr-dns" 2>>"$T/probes.err" &
	pids+=($!)
	"$FLOOD" probe-socks --src $B_SRC --port 1080 \
		--target gitlab.com:443 --secs "$secs" --wait $PROBE_WAIT \
		>"$T/pr-socks" 2>>"$T/probes.err" &
	pids+=($!)
	"$FLOOD" probe-socks --src $B_SRC --port 3128 --http \
		--target gitlab.com:443 --secs "$secs" --wait $PROBE_WAIT \
		>"$T/pr-http" 2>>"$T/probes.err" &
	pids+=($!)
	"$FLOOD" probe-ctl --src $P_SRC --sock "$SOCK" --secs "$secs" \
		--wait $PROBE_WAIT >"$T/pr-ctl" 2>>"$T/probes.err" &
	pids+=($!)
	wait "${pids[@]}"
	PR_DNS=$(cat "$T/pr-dns")
	PR_SOCKS=$(cat "$T/pr-socks")
	PR_HTTP=$(cat "$T/pr-http")
	PR_CTL=$(cat "$T/pr-ctl")
}

# lat LINE: a probe line's latencies, for information.
lat() { printf 'p50 %s, p99 %s, max %s ms' "$(kv p50_ms "$1")" \
	"$(kv p99_ms "$1")" "$(kv max_ms "$1")"; }

# victim_ok WHAT: every probe answered (none lost, none failed), each its
# own check; how fast is only said (a benchmark's figure, not a verdict).
victim_ok() {
	local what=$1 dns=${TCP:+DNS over TCP}
	dns=${dns:-DNS}
	gk_info "$what: B's cached $dns: $(lat "$PR_DNS"); SOCKS5: $(lat "$PR_SOCKS"); CONNECT: $(lat "$PR_HTTP"); cage creation: $(lat "$PR_CTL")"
	GK_DETAIL="$PR_DNS"
	gk_check "$what: B's cached $dns: every probe answered, none lost ($(kv n "$PR_DNS"))" \
		eval '[ "$(kv lost "$PR_DNS")" = 0 ] && [ "$(kv n "$PR_DNS")" -gt 0 ] &&
		    [ "$(kv rcode_noerror "$PR_DNS")" = "$(kv n "$PR_DNS")" ]'
	GK_DETAIL="$PR_SOCKS"
	gk_check "$what: B's SOCKS5 set-up: every probe ok, none lost ($(kv n "$PR_SOCKS"))" \
		eval '[ "$(kv ok "$PR_SOCKS")" = "$(kv n "$PR_SOCKS")" ] &&
		    [ "$(kv n "$PR_SOCKS")" -gt 0 ]'
	GK_DETAIL="$PR_HTTP"
	gk_check "$what: B's CONNECT set-up: every probe ok, none lost ($(kv n "$PR_HTTP"))" \
		eval '[ "$(kv ok "$PR_HTTP")" = "$(kv n "$PR_HTTP")" ] &&
		    [ "$(kv n "$PR_HTTP")" -gt 0 ]'
	GK_DETAIL="$PR_CTL"
	gk_check "$what: cage creation: every probe ok, none lost ($(kv n "$PR_CTL"))" \
		eval '[ "$(kv ok "$PR_CTL")" = "$(kv n "$PR_CTL")" ] &&
		    [ "$(kv n "$PR_CTL")" -gt 0 ]'
}

# cage_a: (re)create cage A on control connection A.
cage_a() {
	local r
	gk_ctl_open A "$SOCK"
	r=$(gk_ctl_send A '{"op":"cage.create","source":"'$A_SRC'","allow":["*.github.com"],"label":"attacker"}')
	A_ID=$(gk_json_get cage.id "$r")
	[ -n "$A_ID" ]
}

# ---- the internet, the upstream, the daemon ---------------------------------
echo "# gatekeeperd: $GKD"
echo "# cage_flood: $FLOOD"
if ! inet_netns tl_err INET_PID gk-up gk-inet 198.18.0.1 198.18.0.2 loose \
    $SILENT $B_HOST; then
	gk_abort "the internet netns starts"
fi
for a in $SILENT $B_HOST; do
	inet_bg SRV_PID "$INET_PID" "$T/server-$a.log" "$FLOOD" listen-hold \
		--dst "$a" --port 443 --secs 600 --ready "$T/server-$a.ready"
	gk_wait_for 300 test -s "$T/server-$a.ready" ||
		gk_abort "the silent server on $a:443 listens" "$T/server-$a.log"
done
GK_UPSTREAM_QUIET=1 gk_start_upstream 5300 "$T/upstream.log" ||
	gk_abort "dnsmasq upstream starts" "$T/dnsmasq-5300.stderr"

echo 'cage-tunnels = 600' >"$T/gk.conf"
gk_start_daemon GKD1 prlimit --nofile=1024:4096 "$GKD" -f \
	-c "$T/gk.conf" --listen 127.0.0.1 --dns-port 53 \
	--control "$SOCK" --upstream 127.0.0.1:5300 \
	--metrics $METRICS --audit-log "$AUDIT"
gk_wait_ready "$GKD1" "$SOCK" 53 ||
	gk_abort "gatekeeperd starts" "$T/GKD1.log"
GK_DETAIL=$(grep 'open files' "/proc/$GKD1/limits")
gk_check "gatekeeperd raised its descriptor limit to the hard one (1024 -> 4096)" \
	eval 'grep -Eq "open files +4096 +4096 " "/proc/$GKD1/limits"'

cage_a || gk_abort "cage A is created"
gk_ctl_open B "$SOCK"
r=$(gk_ctl_send B '{"op":"cage.create","source":"'$B_SRC'","allow":["gitlab.com"],"label":"victim"}')
[ "$(gk_json_get ok "$r")" = true ] || gk_abort "cage B is created: $r"
gk_dig $B_SRC gitlab.com A
GK_DETAIL=$(dig_summary)
gk_check "B resolves gitlab.com (now cached)" test "$DIG_STATUS" = NOERROR

probes 2
gk_info "no attack: dns $PR_DNS"
gk_info "no attack: socks $PR_SOCKS"
gk_info "no attack: http $PR_HTTP"
gk_info "no attack: ctl $PR_CTL"
victim_ok "no attack"
FD_BASE=$(fds_of "$GKD1")
AUDIT0=$(stat -c %s "$AUDIT")
gk_info "descriptors open with both cages idle: $FD_BASE"

# ---- 1. unique names under A's wildcard --------------------------------------
flood f1 dns-flood --src $A_SRC --port 53 --suffix github.com --secs 8 ||
	gk_abort "the name flood starts"
probes 3
# over UDP, as a resolver asks: again if a datagram is lost (the flood
# fills the daemon's socket queue on a slow host, and UDP drops)
gk_dig $B_SRC gitlab.com A +tries=4 +time=2
GK_DETAIL=$(dig_summary)
gk_check "unique-name flood: dig from B is answered meanwhile" \
	test "$DIG_STATUS" = NOERROR
flood_end
F1=$(cat "$T/f1.out")
gk_info "flood: $F1"
victim_ok "unique-name flood"
GK_DETAIL="dns_rate $(limit_events dns_rate), dns_upstream $(limit_events dns_upstream), dns_upstream_rate $(limit_events dns_upstream_rate)"
gk_check "the flood met A's DNS limits (rate, upstream)" \
	eval '[ "$(limit_events dns_rate)" -gt 0 ] &&
	    [ $(( $(limit_events dns_upstream) + $(limit_events dns_upstream_rate) )) -gt 0 ]'
gk_audit_wait "$AUDIT" 0 300 '"limit":"dns_rate"'
GK_DETAIL="$GK_AUDIT_N lines"
gk_check "... and the audit log says so (cage.limit dns_rate), about twice a second at most" \
	eval '[ "$GK_AUDIT_N" -ge 1 ] && [ "$GK_AUDIT_N" -le 20 ]'

# ---- 2. distinct denied names ------------------------------------------------
flood f2 dns-flood --src $A_SRC --port 53 --suffix denied.example --secs 8 ||
	gk_abort "the denied-name flood starts"
probes 3
gk_dig $B_SRC gitlab.com A +tcp
GK_DETAIL=$(dig_summary)
gk_check "denied-name flood: dig +tcp from B is answered meanwhile" \
	test "$DIG_STATUS" = NOERROR
flood_end
gk_info "flood: $(cat "$T/f2.out")"
victim_ok "denied-name flood"
gk_audit_wait "$AUDIT" 0 300 '"limit":"audit"' 'dns\.deny [a-z0-9]*\.denied\.example'
AUDIT_SUM=$GK_AUDIT_LINE
grown=$(($(stat -c %s "$AUDIT") - AUDIT0))
GK_DETAIL="$grown bytes; $(grep -c '"event":"dns.deny"' "$AUDIT") dns.deny lines"
gk_check "the audit log grew by less than 2 MB over both floods ($grown bytes)" \
	test "$grown" -lt $((2 * 1024 * 1024))
GK_DETAIL=$(grep '"limit":"audit"' "$AUDIT" | grep examples | head -n 1)
gk_check "... lines beyond A's audit budget are summed up with examples (cage.limit audit)" \
	test -n "$AUDIT_SUM"

# ---- 3. idle TCP connections to the resolver ---------------------------------
flood f3 hold --src $A_SRC --port 53 --count 300 --secs 30 ||
	gk_abort "the DNS TCP holder starts"
TCP=1 probes 3
flood_end
F3=$(cat "$T/f3.out")
gk_info "holder: $F3"
TCP=1 victim_ok "300 idle DNS TCP connections"
GK_DETAIL="$F3"
gk_check "A keeps 16 DNS TCP connections at most (cage-dns-tcp): the rest closed" \
	eval '[ $(( $(kv opened "$F3") - $(kv closed_by_server "$F3") )) -le 16 ]'

# ---- 4. idle connections to the proxy ports ----------------------------------
for port in 1080 3128; do
	flood f4 hold --src $A_SRC --port $port --count 4200 --secs 12 \
		--hold $HOLD_SECS || gk_abort "the proxy holder starts"
	probes 3
	gk_wait_exit "$FLOOD_PID" $(((HOLD_SECS + 30) * 10))
	flood_end
	F4=$(cat "$T/f4.out")
	gk_info "holder ($port): $F4"
	victim_ok "4200 idle connections to port $port"
	GK_DETAIL="$F4"
	gk_check "port $port: all of A's idle connections closed by the daemon (beyond cage-handshakes at once, the rest at the handshake deadline, 5 s), none left when the holder gave up ($HOLD_SECS s; the last after $(kv closed_within_ms "$F4") ms)" \
		eval '[ "$(kv opened "$F4")" -gt 0 ] &&
		    [ "$(kv closed_by_server "$F4")" = "$(kv opened "$F4")" ]'
done

# ---- 5. tunnels to a silent server; A ends while they are open ----------------
flood f5 socks-tunnels --src $A_SRC --port 1080 --target github.com:443 \
	--count 13000 --secs 30 --hold 300 || gk_abort "the tunnel flood starts"
probes 2
held=$(fds_of "$GKD1")
gk_info "tunnels: $(cat "$T/f5.ready") established; descriptors open: $held"
victim_ok "13000 tunnels asked for"
GK_DETAIL="$(cat "$T/f5.ready") established; tunnels events $(limit_events tunnels)"
gk_check "A got 600 tunnels (cage-tunnels), the rest were refused" \
	eval '[ "$(cat "$T/f5.ready")" = 600 ] && [ "$(limit_events tunnels)" -gt 0 ]'
GK_DETAIL="$held open, baseline $FD_BASE"
gk_check "... and they are open when A ends" \
	test "$held" -gt $((FD_BASE + 1000))
# A's client holds its tunnels (--hold 300) and never closes one: the
# descriptors can come back only by the daemon's closing them with A.
gk_ctl_close A
t0=$(date +%s%N)
gk_wait_for 600 eval '[ "$(fds_of "$GKD1")" -le "$FD_BASE" ]'
ms=$((($(date +%s%N) - t0) / 1000000))
GK_DETAIL="$held open while A lived, $(fds_of "$GKD1") after ${ms} ms (baseline $FD_BASE)"
gk_check "A ended: its tunnels ended with it, descriptors at the baseline while A's client still held them (${ms} ms)" \
	eval '[ "$(fds_of "$GKD1")" -le "$FD_BASE" ] && kill -0 "$FLOOD_PID" 2>/dev/null'
flood_end
F5=$(cat "$T/f5.out")
gk_info "tunnel flood: $F5"
GK_DETAIL="$F5"
gk_check "... all of A's tunnels were closed by the daemon" \
	test "$(kv closed_by_server "$F5")" = "$(kv established "$F5")"

# ---- 6. the caps off: the descriptor share -----------------------------------
printf 'cage-tunnels = 0\ncage-handshakes = 0\n' >"$T/gk.conf"
kill -HUP "$GKD1"
gk_wait_for 300 grep -q 'reloaded' "$T/GKD1.log"
cage_a || gk_abort "cage A is created again"
flood f6 socks-tunnels --src $A_SRC --port 1080 --target github.com:443 \
	--count 13000 --secs 30 --hold $HOLD_SECS ||
	gk_abort "the tunnel flood starts (no caps)"
probes 2
gk_info "tunnels: $(cat "$T/f6.ready") established; descriptors open: $(fds_of "$GKD1") of 4096; held $(metric 'gatekeeper_descriptors{state="held"}')"
victim_ok "13000 tunnels asked for, no per-cage caps"
GK_DETAIL="$(cat "$T/f6.ready") tunnels; descriptors events $(limit_events descriptors)"
gk_check "A got no more than its share of the daemon's descriptors (half the budget: 3584 / 2)" \
	eval '[ $(( $(cat "$T/f6.ready") * 2 )) -le 1800 ] &&
	    [ "$(cat "$T/f6.ready")" -gt 500 ] &&
	    [ "$(limit_events descriptors)" -gt 0 ]'
gk_wait_exit "$FLOOD_PID" $(((HOLD_SECS + 30) * 10))
flood_end
F6=$(cat "$T/f6.out")
gk_info "tunnel flood: $F6"
GK_DETAIL="$F6; $(grep -c 'reason=peek_timeout' "$T/GKD1.log") peek_timeout lines"
gk_check "A's tunnels, whose client never sent a byte, ended at the peek deadline (5 s), all before the client gave up ($HOLD_SECS s; the last after $(kv closed_within_ms "$F6") ms)" \
	eval '[ "$(kv closed_by_server "$F6")" = "$(kv established "$F6")" ] &&
	    grep -q "reason=peek_timeout" "$T/GKD1.log"'
gk_ctl_close A

# ---- the end ------------------------------------------------------------------
gk_audit_wait "$AUDIT" 0 300 '"event":"cage\.destroy"' '"limits":\{"dns_rate":[0-9]'
GK_DETAIL=$(grep -E '"event":"cage.destroy".*"attacker"' "$AUDIT" | head -n 1)
gk_check "A's cage.destroy line sums up what its limits refused" \
	test "$GK_AUDIT_N" -ge 1
gk_check "gatekeeperd is still running" kill -0 "$GKD1"
gk_check "no sanitizer reports in gatekeeperd's log" \
	eval '! grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:" "$T/GKD1.log"'
gk_ctl_close B
gk_stop_daemon "$GKD1" TERM
GK_DETAIL="exit status $GK_RC"
gk_check "SIGTERM: exits 0" test "$GK_RC" = 0

gk_finish
