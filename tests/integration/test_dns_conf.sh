#!/usr/bin/env bash
#
# test_dns_conf.sh: gatekeeperd's configuration, with real peers: the
# command line (--help, bad options and config keys), a run from a config
# file alone, SIGHUP reloads (the TTL cap, restart-only keys warned about
# and kept, a broken file), and upstreams that die under a running daemon
# (a black hole, a closed port).
#
#   bash tests/integration/test_dns_conf.sh build/gatekeeperd
#   meson test -C build dns_conf_integration   (suite "integration")
#
# Runs as root in namespaces it creates itself, like test_dns.sh (lib.sh,
# dns_lib.sh): a fresh network namespace with only lo, dnsmasq as the
# upstream on 127.0.0.1:5300, gatekeeperd on 127.0.0.1:53 with one cage
# for 127.0.0.2 ('*.github.com'). Nothing leaves the namespace.
#
# Prints one line per check ("ok   ..." or "FAIL ..."), exits 1 if any check
# failed, 77 (skip) when not root or namespaces are unavailable.
# GK_KEEP_TMP=1 keeps the temp directory (logs) for a post-mortem.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_daemon_arg test_dns_conf.sh "$@"
gk_require dig dnsmasq curl promtool unshare ip "$PYTHON"

gk_enter_netns 77 "$GK_SELF" "$GKD"
gk_setup

# shellcheck source=tests/integration/dns_lib.sh
. "$GK_LIB_DIR/dns_lib.sh"

# ---------------------------------------------------------------------------
echo "# gatekeeperd: $GKD"
echo "# netns: lo only; upstream dnsmasq 127.0.0.1:5300; temp $T"

# ---- command line -----------------------------------------------------------
out=$("$GKD" --help 2>&1)
rc=$?
GK_DETAIL="rc=$rc output: $(printf '%s' "$out" | head -3)"
gk_check "--help exits 0 and documents --ttl-cap" \
	eval '[ "$rc" = 0 ] && printf "%s" "$out" | grep -q -- "--ttl-cap"'

out=$(timeout 60 "$GKD" -f --no-such-option 2>&1 </dev/null)
rc=$?
GK_DETAIL="rc=$rc output: $out"
gk_check "an unknown option exits 2 naming it" \
	eval '[ "$rc" = 2 ] && printf "%s" "$out" | grep -q "no-such-option"'

out=$(timeout 60 "$GKD" -f -c /dev/null --ttl-cap banana --control "$T/x.sock" \
	--metrics off --listen 127.0.0.1 --dns-port 5454 2>&1 </dev/null)
rc=$?
GK_DETAIL="rc=$rc output: $out"
gk_check "a bad --ttl-cap value exits 2 naming the option" \
	eval '[ "$rc" = 2 ] && printf "%s" "$out" | grep -q "ttl-cap"'

printf '# a comment\nbogus-key = 1\n' >"$T/bad.conf"
out=$(timeout 60 "$GKD" -f -c "$T/bad.conf" --control "$T/x.sock" \
	--metrics off --listen 127.0.0.1 --dns-port 5454 2>&1 </dev/null)
rc=$?
GK_DETAIL="rc=$rc output: $out"
gk_check "an unknown config key exits 2 naming file:line" \
	eval '[ "$rc" = 2 ] && printf "%s" "$out" | grep -qF "$T/bad.conf:2"'

# ---- the upstream ---------------------------------------------------------
dn_upstream

# ---- second run: config file, SIGHUP, dead upstream ---------------------------------
SOCK2=$T/control2.sock
CONF=$T/gk2.conf
write_conf() {	# TTLCAP UPSTREAM [METRICS AUDIT-LOG]
	cat >"$CONF" <<EOF
# gatekeeperd test configuration (second run)
listen = 127.0.0.1
dns-port = 53
control = $SOCK2
upstream = $2
ttl-cap = $1
upstream-timeout = 2
metrics = ${3:-$METRICS}
audit-log = ${4:-$T/audit2.log}
log-level = debug
EOF
}
# A black hole upstream: reads queries, never answers.
( gk_close_ctl_fds; exec "$PYTHON" -c '
import socket, select
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 5398))
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", 5398)); t.listen(16)
conns = []
while True:
    r, _, _ = select.select([u, t] + conns, [], [])
    for s in r:
        if s is u: u.recv(65535)
        elif s is t: conns.append(t.accept()[0])
        elif not s.recv(65535): conns.remove(s); s.close()
' ) &
gk_track_pid $!

write_conf 30 127.0.0.1:5300
gk_start_daemon GKD2 "$GKD" -f -c "$CONF"
if ! gk_wait_ready "$GKD2" "$SOCK2" 53; then
	abort "second run: gatekeeperd starts from a config file alone" "$T/GKD2.log"
fi
gk_ok "second run: gatekeeperd starts from a config file alone (-c)"
gk_ctl_open D "$SOCK2"
r=$(gk_ctl_send D '{"op":"cage.create","source":"127.0.0.2","allow":["*.github.com"],"label":"d"}')
D_ID=$(gk_json_get cage.id "$r")
GK_DETAIL="reply: $r"
gk_check "second run: cage D created" json_ok "$r"
gk_dig $A_SRC github.com A
ttl=$(dig_max_ttl)
GK_DETAIL=$(dig_summary)
gk_check "config ttl-cap = 30: TTL $ttl (<= 30)" \
	eval '[ "$DIG_STATUS" = NOERROR ] && [ "$ttl" -ge 0 ] && [ "$ttl" -le 30 ]'

write_conf 5 127.0.0.1:5300
gk_hup "$GKD2" "$T/GKD2.log"
gk_check "SIGHUP: gatekeeperd keeps running" daemon_alive "$GKD2"
gk_dig $A_SRC api.github.com A
ttl=$(dig_max_ttl)
GK_DETAIL=$(dig_summary)
gk_check "SIGHUP ttl-cap = 5: a fresh name's TTL $ttl (<= 5)" \
	eval '[ "$DIG_STATUS" = NOERROR ] && [ "$ttl" -ge 0 ] && [ "$ttl" -le 5 ]'
gk_dig $A_SRC github.com A
ttl=$(dig_max_ttl)
GK_DETAIL=$(dig_summary)
gk_check "SIGHUP ttl-cap = 5: a cached name's TTL $ttl (<= 5)" \
	eval '[ "$DIG_STATUS" = NOERROR ] && [ "$ttl" -ge 0 ] && [ "$ttl" -le 5 ]'
r=$(gk_ctl_send D '{"op":"cage.list"}')
GK_DETAIL="reply: $r"
gk_check "SIGHUP: cage D survives (listed, connection open)" \
	eval 'json_ok "$r" && [[ "$r" == *"$D_ID"* ]]'

# Restart-only keys: each SIGHUP names them and keeps them running, so the
# next SIGHUP (same file) names them again.
restart_warns() { grep -c 'effect only after a restart' "$T/GKD2.log"; }
w0=$(restart_warns)
write_conf 5 127.0.0.1:5300 127.0.0.1:9478 "$T/audit3.log"
for n in 1 2; do
	gk_hup "$GKD2" "$T/GKD2.log"
	gk_wait_for 300 eval '[ "$(restart_warns)" -ge $((w0 + n)) ]'
	got=$(($(restart_warns) - w0))
	line=$(grep 'effect only after a restart' "$T/GKD2.log" | tail -n 1)
	GK_DETAIL="log: ${line:-<no warning>}"
	gk_check "SIGHUP $n, new metrics and audit-log: $got restart warnings" \
		test "$got" -eq "$n"
	GK_DETAIL="log: $line"
	gk_check "SIGHUP $n: the warning names metrics and audit-log only" \
		eval '[[ "$line" == *": metrics, audit-log changed"* ]]'
	GK_DETAIL="curl http://$METRICS/metrics failed"
	gk_check "SIGHUP $n: /metrics still on $METRICS" fetch_metrics "$T/m-hup.txt"
	GK_DETAIL="something answers on 127.0.0.1:9478"
	gk_check "SIGHUP $n: nothing on the new metrics address" \
		eval '! curl -s --max-time 2 -o /dev/null http://127.0.0.1:9478/metrics'
	expect_dns "SIGHUP $n: hup$n.example is denied" $A_SRC hup$n.example A NXDOMAIN ""
	GK_DETAIL="no dns.deny for hup$n.example in audit2.log, or audit3.log exists"
	gk_check "SIGHUP $n: the audit log is still audit2.log" \
		eval 'gk_audit_wait "$T/audit2.log" 0 300 "\"event\":\"dns.deny\"" "\"cage\":\"$D_ID\"" \
		      "hup$n.example" &&
		      [ ! -e "$T/audit3.log" ]'
done

# A dead upstream: the client gets SERVFAIL, by the upstream-timeout (2 s)
# and not left to its own timeout. dig waits 30 s (15 times the
# upstream-timeout); SERVFAIL is the daemon's answer, and it must come
# within 5 times the upstream-timeout (a slow host delays it by its work,
# not by seconds).
UP_TMO_MS=2000
servfail_in_time() {
	[ "$DIG_STATUS" = SERVFAIL ] && [ "$DIG_MS" -lt $((5 * UP_TMO_MS)) ]
}
write_conf 5 127.0.0.1:5398
gk_hup "$GKD2" "$T/GKD2.log"
gk_dig $A_SRC codeload.github.com A +time=30
GK_DETAIL=$(dig_summary)
gk_check "black-hole upstream: SERVFAIL by the upstream-timeout, not the client's (${DIG_MS} ms)" \
	servfail_in_time
gk_dig $A_SRC codeload.github.com A +time=30 +tcp
GK_DETAIL=$(dig_summary)
gk_check "black-hole upstream over TCP: SERVFAIL by the upstream-timeout, not the client's (${DIG_MS} ms)" \
	servfail_in_time
GK_DETAIL="log: $(grep 'effect only after a restart' "$T/GKD2.log" | tail -n 1)"
gk_check "SIGHUP with the running metrics and audit-log again: no warning" \
	test "$(restart_warns)" -eq $((w0 + 2))

write_conf 5 127.0.0.1:5399
gk_hup "$GKD2" "$T/GKD2.log"
gk_dig $A_SRC gist.github.com A +time=30
GK_DETAIL=$(dig_summary)
gk_check "closed upstream port: SERVFAIL, not the client's timeout (${DIG_MS} ms)" \
	servfail_in_time
fetch_metrics "$T/m2.txt"
ue=$(metric "$T/m2.txt" gatekeeper_dns_upstream_errors_total)
GK_DETAIL="value $ue"
gk_check "gatekeeper_dns_upstream_errors_total counts the failures (>= 2)" test "$ue" -ge 2
expect_dns "dead upstream: a denied name is still NXDOMAIN" $A_SRC evil.example A NXDOMAIN ""

write_conf 5 127.0.0.1:5300
gk_hup "$GKD2" "$T/GKD2.log"
expect_dns "SIGHUP back to the live upstream: raw.github.com resolves" \
	$A_SRC raw.github.com A NOERROR "A 192.0.2.15"

printf 'ttl-cap = banana\n' >"$CONF"
gk_hup "$GKD2" "$T/GKD2.log"
gk_check "SIGHUP with a broken config: gatekeeperd keeps running" daemon_alive "$GKD2"
expect_dns "... keeps its old config and cages (github.com resolves)" \
	$A_SRC github.com A NOERROR "A 192.0.2.10"
gk_info "log on the bad reload: $(grep -m1 -i 'banana\|gk2.conf:1' "$T/GKD2.log")"

gk_check "no sanitizer reports in the second run's log" \
	eval '! grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:" "$T/GKD2.log"'
gk_stop_daemon "$GKD2" INT
GK_DETAIL="exit status $GK_RC"
gk_check "SIGINT: exits 0" test "$GK_RC" = 0
GK_DETAIL="$SOCK2 still there"
gk_check "SIGINT: the control socket is removed" test ! -e "$SOCK2"
gk_ctl_close D

# ---- summary ------------------------------------------------------------------------
echo "---- $GK_NPASS passed, $GK_NFAIL failed ----"
if [ "$GK_NFAIL" -gt 0 ]; then
	for f in "${GK_FAILED[@]}"; do
		echo "FAILED: $f"
	done
	if [ -f "$T/GKD2.log" ]; then
		echo "---- gatekeeperd log, second run (last 30 lines) ----"
		gk_tail "$T/GKD2.log" 30
	fi
	exit 1
fi
exit 0
