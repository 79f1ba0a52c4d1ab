#!/usr/bin/env bash
#
# test_transparent_peek.sh: end-to-end test of the peek gatekeeper's
# transparent listener takes at a redirected connection's first bytes:
# programs in a gk-run cage that ignore the proxy settings cannot get a
# foreign Host or server name past it.
#
#   bash tests/integration/test_transparent_peek.sh build/gatekeeperd build/spawner/gk-run
#   meson test -C build transparent_peek_integration   (suite "integration")
#
# Runs as root in namespaces it creates itself, with the same setup as
# test_transparent.sh (lib.sh, e2e_lib.sh, e2e_net.sh, transparent_lib.sh:
# the hermetic internet with OpenSSH on github.com:22, gatekeeperd with
# its defaults, gk-run as root and as the unprivileged user gk-e2e).
#
# Cases (as root and as gk-e2e), in a '*.github.com' cage without proxy
# settings: raw bytes from socks_client.py --via direct (peek_lib.sh),
# which resolves github.com (pinning its address) and connects to it,
# redirected to the transparent listener: blank bytes (CRLF, LF, 32 of
# them) before a request with Host evil.example, 33 blank bytes, PROXY
# v1/v2 headers, a second request with a foreign Host in the same write
# and in a later write of a kept-alive connection, a chunked POST then a
# foreign Host, HTTP/0.9, the HTTP/2 preface, CONNECT, an SSLv2 hello and
# an alert record before a hello to port 443: each cut (not left open),
# nothing (or only github.com) back, one denial counted and audited with
# its reason; two requests for github.com on one connection, a CRLF
# before one, and a line protocol to the echo port still work. TLS 1.3's
# HelloRetryRequest (hrr_client.py against a second nginx that asks
# X25519-first clients for a retry): a second ClientHello for another
# name, or none, is cut before the server answers it and counted as an
# SNI mismatch; one for the same name, and curl, go through.
#
# Prints "ok   ..." / "FAIL ..." per check and a summary; exits 1 if any
# check failed or anything needed is missing (never a silent skip, as
# test_transparent.sh). GK_KEEP_TMP=1 keeps the temp directory (logs) for
# a post-mortem. GK_TR_INTERNET_ONLY=1 stops after the internet checks.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_transparent_peek.sh

e2e_args 0 "$@"
e2e_preamble dig dnsmasq curl unshare nsenter ip ss mount nginx fcgiwrap openssl \
    git /usr/lib/git-core/git-http-backend nft bwrap setpriv useradd \
    groupadd usermod getent sha256sum timeout ssh ssh-keygen /usr/sbin/sshd \
    promtool "$PYTHON"
# The feature under test must be there: a build without it fails here.
if [ "${GK_TR_INTERNET_ONLY:-0}" != 1 ]; then
	"$GKD" --help 2>&1 | grep -q -- '--transparent-port' ||
		e2e_die "$GKD has no --transparent-port option (transparent mode not built)"
	"$GKRUN" --help 2>&1 | grep -q -- '--transparent' ||
		e2e_die "$GKRUN has no --transparent option (transparent mode not built)"
fi
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
# shellcheck source=tests/integration/transparent_lib.sh
. "$GK_LIB_DIR/transparent_lib.sh"

# ---------------------------------------------------------------------------
tr_start

# ---- the peek: what servers skip before a request or hello; every request --------
# socks_client.py --via direct in a '*.github.com' cage resolves github.com
# (pinning its address) and connects to it, redirected to the transparent
# listener, then writes the --send strings of peek_lib.sh (nginx serves
# github.com and evil.example as name-based virtual hosts on every
# address: "hello from evil.example" coming back is an escape).
# shellcheck source=tests/integration/peek_lib.sh
. "$GK_LIB_DIR/peek_lib.sh"
# --timeout 20: a cut must come within half of it (not the client giving
# up); after the last write a cut is waited for (--until-end), or the
# hellos (--hellos N), however slowly they come (TR_OPTS, set by tr_cut
# and tr_pass).
RAW=("$PYTHON" "$SHARE/socks_client.py" --via direct --timeout 20 --idle 0.3)
HELLO_HEX=$(pk_hexesc "$GK_LIB_DIR/../data/tls/openssl_sni.bin")
kv() { printf '%s\n' "$2" | sed -n "s/^$1=//p" | head -1; }
rkv() { kv "$1" "$(cat "$T/run.out" 2>/dev/null)"; }

# tr_deltas: the changes between mark and after in one pass (the checks
# below would otherwise start python two dozen times each): D_OK, D_NO
# (transparent connections allowed, denied), D_ALL (transparent denials,
# all reasons), D_PX (connections through the proxies), D_WHY (the
# reasons that moved, "reason+N ...") and D_R_<reason>.
tr_deltas() {
	eval "$("$PYTHON" - "$T/m0.txt" "$T/m1.txt" <<'EOF'
import re, sys
def load(path):
    v = {}
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return v
    for ln in lines:
        m = re.match(r'^(\w+)\{([^}]*)\}\s+(\S+)$', ln)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            v[(m.group(1), tuple(sorted(labels.items())))] = float(m.group(3))
    return v
a, b = load(sys.argv[1]), load(sys.argv[2])
def d(name, **want):
    t = 0
    for (n, labels), x in b.items():
        l = dict(labels)
        if n == name and all(l.get(k) == w for k, w in want.items()):
            t += x - a.get((n, labels), 0)
    return int(t)
c = "gatekeeper_connections_total"
print("D_OK=%d D_NO=%d" % (d(c, proto="transparent", verdict="allowed"),
                           d(c, proto="transparent", verdict="denied")))
print("D_PX=%d" % (d(c, proto="socks5") + d(c, proto="http")))
print("D_ALL=%d" % d("gatekeeper_denied_total", kind="transparent"))
why = []
for r in ("no_sni", "sni_mismatch", "ip_not_pinned", "not_allowlisted",
          "special_range", "host_mismatch", "unknown_source", "malformed"):
    n = d("gatekeeper_denied_total", kind="transparent", reason=r)
    print("D_R_%s=%d" % (r, n))
    if n:
        why.append("%s+%d" % (r, n))
print("D_WHY='%s'" % " ".join(why))
EOF
)"
}
d_moved() { printf 'allowed+%s denied+%s; reasons: %s; proxies+%s' "$D_OK" "$D_NO" "${D_WHY:-none}" "$D_PX"; }

# tr_raw WHO PORT SEND...: the raw client in a cage, to github.com:PORT.
tr_raw() {
	local who=$1 port=$2 x args=()
	shift 2
	for x in "$@"; do args+=(--send "$x"); done
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" "${RAW[@]}" "${TR_OPTS[@]}" raw github.com "$port" \
		"${args[@]}"
}

# tr_cut WHO WHAT PORT REASON SEEN HELLO SEND...: cut after the last
# write, before the client gave up (within half its timeout); nothing came back (HELLO "": the connection is counted
# denied) or only HELLO (the "hello from" names of the requests before:
# the connection stays counted allowed); denied_total{kind=transparent,
# reason=REASON} +1 and nothing else; one audit line.
tr_cut() {
	local who=$1 what=$2 port=$3 reason=$4 seen=$5 hello=$6 line
	shift 6
	mark
	TR_OPTS=(--until-end)
	tr_raw "$who" "$port" "$@"
	# (then as long as a second line takes to come: there must be none)
	audit_wait 1 && audit_wait 2 2
	after
	tr_deltas
	line=$(audit_new | head -1)
	local n="D_R_$reason"
	GK_DETAIL="$(run_detail) | $(d_moved)"
	if [ -z "$hello" ]; then
		gk_check "$who: $what: cut in $(rkv raw_end_ms) ms, nothing came back, counted denied ($reason)" \
			eval '[ "$(rkv raw_end)" != open ] && [ "$(rkv raw_end_ms)" -lt 10000 ] &&
			      [ "$(rkv raw_recv)" = 0 ] && [ "${!n}" = 1 ] &&
			      [ "$D_ALL" = 1 ] && [ "$D_NO" = 1 ] && [ "$D_OK" = 0 ]'
	else
		gk_check "$who: $what: cut in $(rkv raw_end_ms) ms after $hello only, the denial counted ($reason)" \
			eval '[ "$(rkv raw_end)" != open ] && [ "$(rkv raw_end_ms)" -lt 10000 ] &&
			      [ "$(rkv raw_hello)" = "$hello" ] && [ "${!n}" = 1 ] &&
			      [ "$D_ALL" = 1 ] && [ "$D_NO" = 0 ] && [ "$D_OK" = 1 ]'
	fi
	GK_DETAIL="new audit lines: $(audit_new | paste -sd' ' -)"
	gk_check "$who: $what: one proxy.deny audit line: reason $reason, host github.com, port $port${seen:+, seen $seen}" \
		eval '[ "$(audit_n)" = 1 ] && audit_match "$line" "$reason" github.com "$port" "$seen"'
}

# tr_pass WHO WHAT PORT HELLO SEND...: allowed, HELLO came back, one
# transparent connection allowed, nothing denied.
tr_pass() {
	local who=$1 what=$2 port=$3 hello=$4
	shift 4
	mark
	TR_OPTS=(--hellos "$(tr , '\n' <<<"$hello" | grep -c .)")
	tr_raw "$who" "$port" "$@"
	sleep 0.2
	after
	tr_deltas
	GK_DETAIL="$(run_detail) | $(d_moved)"
	gk_check "$who: $what: $hello came back, one transparent connection allowed, nothing denied" \
		eval '[ "$(rkv raw_hello)" = "$hello" ] && [ "$D_OK" = 1 ] &&
		      [ "$D_ALL" = 0 ] && [ "$D_NO" = 0 ]'
}

peek_escapes() {	# WHO
	local who=$1
	tr_cut "$who" "CRLF before Host evil.example" 80 host_mismatch evil.example "" \
		"\r\n$PK_EVIL"
	tr_cut "$who" "LF before Host evil.example" 80 host_mismatch evil.example "" \
		"\n$PK_EVIL"
	tr_cut "$who" "32 blank bytes before Host evil.example" 80 host_mismatch \
		evil.example "" "$PK_BLANK32$PK_EVIL"
	tr_cut "$who" "33 blank bytes before a request for github.com" 80 malformed "" "" \
		"$PK_BLANK32\n$PK_GOOD"
	tr_cut "$who" "a PROXY v1 header before Host evil.example" 80 malformed "" "" \
		"$PK_PROXY1$PK_EVIL"
	tr_cut "$who" "a PROXY v2 header before Host evil.example" 80 malformed "" "" \
		"$PK_PROXY2$PK_EVIL"
	tr_cut "$who" "a second request with Host evil.example in the same write" 80 \
		host_mismatch evil.example "" "$PK_GOOD$PK_EVIL"
	tr_cut "$who" "a second request with Host evil.example, later, kept alive" 80 \
		host_mismatch evil.example github.com "$PK_GOOD" "$PK_EVIL"
	tr_cut "$who" "a chunked POST, then Host evil.example" 80 host_mismatch \
		evil.example "" "$PK_CHUNKED$PK_EVIL"
	tr_cut "$who" "HTTP/0.9 on port 80" 80 malformed "" "" "$PK_HTTP09"
	tr_cut "$who" "the HTTP/2 preface" 80 malformed "" "" "$PK_PRI"
	tr_cut "$who" "CONNECT inside the connection" 80 malformed "" "" "$PK_CONNECT"
	tr_cut "$who" "an SSLv2-format ClientHello to port 443" 443 no_sni "" "" \
		"$PK_SSL2"
	tr_cut "$who" "an alert record, then a ClientHello, to port 443" 443 malformed \
		"" "" "$PK_ALERT$HELLO_HEX"
	tr_pass "$who" "two requests for github.com on one kept-alive connection" 80 \
		github.com,github.com "$PK_GOOD" "$PK_GOOD"
	tr_pass "$who" "CRLF before a request for github.com" 80 github.com \
		"\r\n$PK_GOOD"
	mark
	TR_OPTS=(--bytes 1)
	tr_raw "$who" "$EN_ECHO_PORT" "$PK_LINE"
	after
	tr_deltas
	GK_DETAIL="$(run_detail) | $(d_moved)"
	gk_check "$who: a line protocol's first line to github.com:$EN_ECHO_PORT passes (the service answers), nothing denied" \
		eval '[ "$(rkv raw_recv)" -gt 0 ] && [ "$D_OK" = 1 ] && [ "$D_ALL" = 0 ]'
}
# TLS 1.3's HelloRetryRequest: nginx on :$PK_HRR_PORT (peek_lib.sh) asks
# hrr_client.py's x25519-only first hello (github.com) for a retry; a
# second hello for evil.example is cut before nginx answers it, one for
# the same name gets its ServerHello, curl offering X25519 then P-256
# gets the page.
pk_hrr_nginx en_err "$EN_DIR" "$EN_NS_PID" EN_HRR_PID "${EN_ADDR[github.com]}"
GK_DETAIL="$(tail -n 3 "$EN_DIR/nginx-hrr-error.log" 2>/dev/null | paste -sd'|' -)"
gk_check "internet: nginx on :$PK_HRR_PORT asks an X25519-first client for a retry, and curl gets its page directly" \
	eval '[ -n "$EN_HRR_PID" ] && kill -0 "$EN_HRR_PID"'
cp "$GK_LIB_DIR/hrr_client.py" "$SHARE/hrr_client.py"
chmod a+r "$SHARE/hrr_client.py"
HRR=("$PYTHON" "$SHARE/hrr_client.py" --via direct --timeout 20)

peek_hrr() {	# WHO
	local who=$1 sni2 line what
	for sni2 in evil.example -; do
		what="for $sni2"
		[ "$sni2" = - ] && what="without a server name"
		mark
		cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
			-- "${NP[@]}" "${HRR[@]}" github.com "$PK_HRR_PORT" github.com "$sni2"
		audit_wait 1 && audit_wait 2 2
		after
		tr_deltas
		line=$(audit_new | head -1)
		GK_DETAIL="$(run_detail) | $(d_moved)"
		gk_check "$who: a second ClientHello $what after a HelloRetryRequest for github.com: cut in $(rkv after_ms) ms with no ServerHello, counted (sni_mismatch)" \
			eval '[ "$(rkv first)" = hrr ] && [ "$(rkv group)" = 0x0017 ] &&
			      [[ "$(rkv after)" == @(closed|reset) ]] && [ "$(rkv after_ms)" -lt 10000 ] &&
			      [ "$D_R_sni_mismatch" = 1 ] && [ "$D_ALL" = 1 ] && [ "$D_OK" = 1 ]'
		GK_DETAIL="new audit lines: $(audit_new | paste -sd' ' -)"
		gk_check "$who: ... one proxy.deny audit line: reason sni_mismatch, host github.com, port $PK_HRR_PORT" \
			eval '[ "$(audit_n)" = 1 ] && audit_match "$line" sni_mismatch github.com "$PK_HRR_PORT" "*"'
	done
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" "${HRR[@]}" github.com "$PK_HRR_PORT" github.com github.com
	sleep 0.2
	after
	tr_deltas
	GK_DETAIL="$(run_detail) | $(d_moved)"
	gk_check "$who: a second ClientHello for github.com after a retry gets its ServerHello, nothing denied" \
		eval '[ "$(rkv first)" = hrr ] && [ "$(rkv after)" = server_hello ] &&
		      [ "$D_OK" = 1 ] && [ "$D_ALL" = 0 ]'
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --max-time 20 --cacert "$EN_DIR/ca.crt" \
		--tlsv1.3 --curves X25519:P-256 "https://github.com:$PK_HRR_PORT/"
	after
	tr_deltas
	GK_DETAIL="$(run_detail) | $(d_moved)"
	gk_check "$who: curl offering X25519 then P-256 (a retry, the same name) gets the page" \
		eval 'out_has "hello from github.com" && [ "$D_ALL" = 0 ]'
}

peek_escapes root
peek_escapes user
peek_hrr root
peek_hrr user
tr_after_denials

# ---- stop ---------------------------------------------------------------------------
tr_stop

gk_finish
