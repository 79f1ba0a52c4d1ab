#!/usr/bin/env bash
#
# test_proxy_peek.sh: end-to-end test of the peek gatekeeperd's egress
# proxies (SOCKS5 on 127.0.0.1:1080, HTTP on 127.0.0.1:3128) take at a
# tunnel's first bytes, against the hermetic "internet" of real servers
# test_proxy.sh uses (proxy_net.sh):
#   - SNI and Host: a TLS server name or an HTTP Host other than the host
#     the tunnel was opened for, or TLS without a server name, is cut;
#   - what servers skip before a request line or a hello (blank bytes,
#     PROXY protocol headers, an alert record), later requests on a
#     kept-alive connection, and what no host can be read from (HTTP/0.9,
#     the HTTP/2 preface, h2c, an SSLv2-format hello), written with raw
#     bytes (socks_client.py raw mode, peek_lib.sh) through SOCKS5 and
#     HTTP CONNECT: each is cut (not left open until the client gives up), counted once in
#     gatekeeper_denied_total and audited once;
#   - TLS 1.3's HelloRetryRequest: a second ClientHello naming another
#     server than the first (hrr_client.py, against a second nginx that
#     asks X25519-first clients for a retry) is cut before the server
#     answers it; one naming the same server, and curl offering X25519
#     then P-256 (openssl's retry), go through.
#
#   bash tests/integration/test_proxy_peek.sh build/gatekeeperd
#
# Runs as root in namespaces it creates itself, with the same setup as
# test_proxy.sh (lib.sh, proxy_net.sh, proxy_lib.sh: the internet checked
# directly, dnsmasq as the upstream, gatekeeperd); one cage, A (source
# 127.0.0.2: github.com and api.github.com, which the certificate covers
# both).
#
# Prints "ok   ..." / "FAIL ..." per check and a summary; exits 1 if any
# check failed, 77 (skip) when not root or namespaces are unavailable.
# GK_PROXY_INTERNET_ONLY=1 stops after the internet checks.
# GK_KEEP_TMP=1 keeps the temp directory (logs) for a post-mortem.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034,SC2153  # (the *_ID are set through printf -v)
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"


gk_daemon_arg test_proxy_peek.sh "$@"
gk_require dig dnsmasq curl unshare nsenter ip mount nginx openssl git ssh \
    ssh-keygen /usr/sbin/sshd sha256sum timeout "$PYTHON"

# Hermetic clients: no proxy or CA settings from the caller's environment.
gk_unset_client_env

gk_enter_netns 77 "$GK_SELF" "$GKD"
gk_setup

# shellcheck source=tests/integration/proxy_net.sh
. "$GK_LIB_DIR/proxy_net.sh"
# shellcheck source=tests/integration/proxy_lib.sh
. "$GK_LIB_DIR/proxy_lib.sh"

# ---------------------------------------------------------------------------
px_start

# ---- cages --------------------------------------------------------------------------
cage_create A $A_SRC a '["github.com","api.github.com"]'

fetch_metrics "$T/m-start.txt"

# ---- peeking: SNI and Host -----------------------------------------------------------------------
# Cage A allows both github.com and api.github.com, and the certificate
# covers both (checked directly above): the only thing wrong is that the
# SNI / Host is not the host the tunnel was opened for.
curl_http $A_SRC --connect-to api.github.com:443:github.com:443 \
	https://api.github.com/index.html
GK_DETAIL=$(curl_detail)
gk_check "A: HTTP CONNECT github.com:443 with SNI api.github.com is cut" \
	eval '[ "$CURL_RC" != 0 ] && ! grep -q hello "$T/body" 2>/dev/null'
expect_deny sni_mismatch github.com "$A_ID" "A http sni"
curl_socks $A_SRC --connect-to api.github.com:443:github.com:443 \
	https://api.github.com/index.html
GK_DETAIL=$(curl_detail)
gk_check "A: SOCKS CONNECT github.com:443 with SNI api.github.com is cut" \
	eval '[ "$CURL_RC" != 0 ] && ! grep -q hello "$T/body" 2>/dev/null'
expect_deny sni_mismatch github.com "$A_ID" "A socks sni"
o=$(sc --bind $A_SRC --cafile "$CA" --sni - tls github.com 443 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "A: SOCKS CONNECT github.com:443, TLS without SNI is cut" \
	eval '[[ "$(kv tls "$o")" == cut* || "$(kv http "$o")" == cut* ]]'
expect_deny no_sni github.com "$A_ID" "A socks no sni"
o=$(sc --bind $A_SRC --cafile "$CA" --sni github.com tls github.com 443 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "A: ... the same with SNI github.com works (control)" \
	eval '[ "$(kv tls "$o")" = ok ] && [ "$(kv body "$o")" = "hello from github.com" ]'

curl_http $A_SRC -p http://github.com/index.html
GK_DETAIL=$(curl_detail)
gk_check "A: plain HTTP in a CONNECT tunnel with the right Host works (control)" \
	eval '[ "$CURL_OUT" = 200 ] && body_is "hello from github.com"'
curl_http $A_SRC -p -H 'Host: api.github.com' http://github.com/index.html
GK_DETAIL=$(curl_detail)
gk_check "A: plain HTTP in a CONNECT tunnel to github.com:80 with Host api.github.com is cut" \
	eval '[ "$CURL_OUT" != 200 ] && ! grep -q hello "$T/body" 2>/dev/null'
expect_deny host_mismatch github.com "$A_ID" "A http host"
o=$(sc --bind $A_SRC --host-header api.github.com http github.com 80 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "A: plain HTTP in a SOCKS tunnel to github.com:80 with Host api.github.com is cut" \
	eval '[ "$(kv status "$o")" != 200 ] && [ "$(kv body "$o")" != "hello from api.github.com" ]'
expect_deny host_mismatch github.com "$A_ID" "A socks host"
o=$(sc --bind $A_SRC http github.com 80 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "A: ... the same with Host github.com works (control)" \
	eval '[ "$(kv status "$o")" = 200 ] && [ "$(kv body "$o")" = "hello from github.com" ]'

# ---- peeking: what servers skip before a request or hello; every request ---------
# Cage A to github.com (nginx: github.com and evil.example are name-based
# virtual hosts on every address). Each attempt writes its bytes through
# socks_client.py's raw mode; a refusal must come (the tunnel ends) before
# the client's own timeout (20 s; within half of it), with nothing from the server (or, after an allowed first
# request, nothing but github.com), counted once in
# gatekeeper_denied_total{kind,reason} and audited once.

# deny_reasons_since MARK: wait (gk_audit_wait, 30 s) for a proxy.deny
# audit line after line MARK (gk_audit_mark), then up to 0.2 s for a
# second one; print their reasons, comma-separated.
deny_reasons_since() {
	gk_audit_wait "$AUDIT" "$1" 300 '"event":"proxy\.deny"' &&
		gk_audit_wait -n 2 "$AUDIT" "$1" 2 '"event":"proxy\.deny"'
	tail -n +"$(($1 + 1))" "$AUDIT" 2>/dev/null | grep '"event":"proxy.deny"' |
		sed 's/.*"reason":"\([a-z_]*\)".*/\1/' | paste -sd, -
}
# denies_since MARK: how many proxy.deny audit lines came after line MARK
# (waiting 0.2 s for one).
denies_since() {
	gk_audit_wait "$AUDIT" "$1" 2 '"event":"proxy\.deny"'
	echo "$GK_AUDIT_N"
}

# raw_cut MSG VIA PORT REASON HELLO SEND...: through VIA (socks, http)
# from cage A to github.com:PORT; the tunnel is cut with REASON; HELLO is
# what may come back first ("": nothing at all; else the comma list of
# "hello from" names, github.com only).
raw_cut() {
	local msg=$1 via=$2 port=$3 reason=$4 hello=$5 kind o a0 d0 d1 rs x
	local args=()
	shift 5
	for x in "$@"; do args+=(--send "$x"); done
	kind=$([ "$via" = socks ] && echo socks5 || echo http)
	fetch_metrics "$T/r0.txt"
	a0=$(gk_audit_mark "$AUDIT")
	o=$(sc --via "$via" --bind $A_SRC --timeout 20 raw github.com "$port" \
		--until-end "${args[@]}" 2>&1)
	rs=$(deny_reasons_since "$a0")
	fetch_metrics "$T/r1.txt"
	d0=$(gk_metric_sum "$T/r0.txt" gatekeeper_denied_total kind="$kind" reason="$reason")
	d1=$(gk_metric_sum "$T/r1.txt" gatekeeper_denied_total kind="$kind" reason="$reason")
	GK_DETAIL="got: $(oneline "$o") | denied_total{kind=$kind,reason=$reason} $d0 -> $d1 | audit reasons: ${rs:-none}"
	if [ -z "$hello" ]; then
		gk_check "$msg ($via): cut in $(kv raw_end_ms "$o") ms, nothing came back, denied_total{reason=$reason} +1" \
			eval '[ "$(kv raw_end "$o")" != open ] && [ "$(kv raw_end_ms "$o")" -lt 10000 ] &&
			      [ "$(kv raw_recv "$o")" = 0 ] && [ $((d1 - d0)) -eq 1 ]'
	else
		gk_check "$msg ($via): cut in $(kv raw_end_ms "$o") ms after $hello only, denied_total{reason=$reason} +1" \
			eval '[ "$(kv raw_end "$o")" != open ] && [ "$(kv raw_end_ms "$o")" -lt 10000 ] &&
			      [ "$(kv raw_hello "$o")" = "$hello" ] && [ $((d1 - d0)) -eq 1 ]'
	fi
	gk_check "$msg ($via): one proxy.deny audit line, reason $reason" test "$rs" = "$reason"
	expect_deny "$reason" github.com "$A_ID" "$msg $via"
}

# raw_ok MSG VIA PORT HELLO SEND...: the same, allowed: HELLO comes back
# (the "hello from" names), nothing is denied, the tunnel stays open.
raw_ok() {
	local msg=$1 via=$2 port=$3 hello=$4 o a0 n x
	local args=()
	shift 4
	for x in "$@"; do args+=(--send "$x"); done
	a0=$(gk_audit_mark "$AUDIT")
	# wait for as many hellos as HELLO names, however slowly they come
	o=$(sc --via "$via" --bind $A_SRC --timeout 20 raw github.com "$port" \
		--hellos "$(tr , '\n' <<<"$hello" | grep -c .)" "${args[@]}" 2>&1)
	n=$(denies_since "$a0")
	GK_DETAIL="got: $(oneline "$o") | new audit deny lines: $n"
	gk_check "$msg ($via): $hello came back, nothing denied" \
		eval '[ "$(kv raw_hello "$o")" = "$hello" ] && [ "$n" = 0 ]'
}

# shellcheck source=tests/integration/peek_lib.sh
. "$GK_LIB_DIR/peek_lib.sh"
HELLO_HEX=$(pk_hexesc "$GK_LIB_DIR/../data/tls/openssl_sni.bin")
for via in socks http; do
	raw_cut "A: CRLF before a request with Host evil.example" $via 80 \
		host_mismatch "" "\r\n$PK_EVIL"
	raw_cut "A: LF before a request with Host evil.example" $via 80 \
		host_mismatch "" "\n$PK_EVIL"
	raw_cut "A: 32 blank bytes (CRLF) before Host evil.example" $via 80 \
		host_mismatch "" "$PK_BLANK32$PK_EVIL"
	raw_cut "A: SP HTAB before Host evil.example" $via 80 \
		host_mismatch "" " \t$PK_EVIL"
	raw_cut "A: 33 blank bytes before a request, even for github.com" $via 80 \
		malformed "" "$PK_BLANK32\n$PK_GOOD"
	raw_cut "A: a PROXY v1 header before Host evil.example" $via 80 \
		malformed "" "$PK_PROXY1$PK_EVIL"
	raw_cut "A: a PROXY v2 header before Host evil.example" $via 80 \
		malformed "" "$PK_PROXY2$PK_EVIL"
	raw_cut "A: a second request with Host evil.example in the same write" $via 80 \
		host_mismatch "" "$PK_GOOD$PK_EVIL"
	raw_cut "A: a second request with Host evil.example, later, kept alive" $via 80 \
		host_mismatch github.com "$PK_GOOD" "$PK_EVIL"
	raw_cut "A: a chunked POST, then Host evil.example" $via 80 \
		host_mismatch "" "$PK_CHUNKED$PK_EVIL"
	raw_cut "A: HTTP/0.9 on port 80" $via 80 malformed "" "$PK_HTTP09"
	raw_cut "A: the HTTP/2 preface (prior knowledge)" $via 80 malformed "" "$PK_PRI"
	raw_cut "A: CONNECT evil.example:443 inside the tunnel" $via 80 \
		malformed "" "$PK_CONNECT"
	raw_cut "A: Upgrade: h2c" $via 80 malformed "" "$PK_H2C"
	raw_cut "A: an SSLv2-format ClientHello to port 443" $via 443 \
		no_sni "" "$PK_SSL2"
	raw_cut "A: an alert record, then a ClientHello, to port 443" $via 443 \
		malformed "" "$PK_ALERT$HELLO_HEX"
	raw_ok "A: two requests for github.com on one kept-alive connection" $via 80 \
		github.com,github.com "$PK_GOOD" "$PK_GOOD"
	raw_ok "A: CRLF before a request for github.com" $via 80 github.com \
		"\r\n$PK_GOOD"
	raw_ok "A: a chunked POST, then github.com" $via 80 github.com \
		"$PK_CHUNKED$PK_GOOD"
	o=$(sc --via $via --bind $A_SRC --timeout 20 raw github.com 22 --bytes 1 \
		--send "$PK_LINE" 2>&1)
	GK_DETAIL="got: $(oneline "$o")"
	gk_check "A: a line protocol's first line to github.com:22 ($via) still reaches the server (its banner comes back)" \
		eval '[ "$(kv raw_recv "$o")" -gt 0 ]'
done

# ---- TLS 1.3: the ClientHello after a HelloRetryRequest -----------------------
# nginx on :$PK_HRR_PORT (peek_lib.sh) takes only secp256r1 key shares:
# hrr_client.py's first hello (x25519 only) gets a HelloRetryRequest, its
# second names what it likes. Directly, nginx answers a second hello for
# evil.example with a ServerHello for it; through the proxies the tunnel
# is cut before any byte of that comes back, and the denial is counted
# and audited as an SNI mismatch. A second hello for the same name, and
# curl offering X25519 first, still work.
HRR=("$PYTHON" "$GK_LIB_DIR/hrr_client.py" --timeout 20)
pk_hrr_nginx pn_err "$PN_DIR" "$PN_NS_PID" PN_HRR_PID "${PN_ADDR[github.com]}"
GK_DETAIL="$(tail -n 3 "$PN_DIR/nginx-hrr-error.log" 2>/dev/null | paste -sd'|' -)"
gk_check "internet: nginx on :$PK_HRR_PORT asks an X25519-first client for a retry, and curl gets its page directly" \
	eval '[ -n "$PN_HRR_PID" ] && kill -0 "$PN_HRR_PID"'
o=$("${HRR[@]}" --via direct "${PN_ADDR[github.com]}" "$PK_HRR_PORT" \
	github.com evil.example 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "internet: directly, a second ClientHello for evil.example after a retry for github.com gets a ServerHello" \
	eval '[ "$(kv first "$o")" = hrr ] && [ "$(kv group "$o")" = 0x0017 ] &&
	      [ "$(kv after "$o")" = server_hello ]'

# hrr_cut MSG VIA SNI2 [hrr_client options]: cut, nothing but the retry
# request came back, one sni_mismatch denial counted and audited.
hrr_cut() {
	local msg=$1 via=$2 sni2=$3 kind o a0 d0 d1 rs
	shift 3
	kind=$([ "$via" = socks ] && echo socks5 || echo http)
	fetch_metrics "$T/r0.txt"
	a0=$(gk_audit_mark "$AUDIT")
	o=$("${HRR[@]}" --via "$via" --bind $A_SRC "$@" github.com "$PK_HRR_PORT" \
		github.com "$sni2" 2>&1)
	rs=$(deny_reasons_since "$a0")
	fetch_metrics "$T/r1.txt"
	d0=$(gk_metric_sum "$T/r0.txt" gatekeeper_denied_total kind="$kind" reason=sni_mismatch)
	d1=$(gk_metric_sum "$T/r1.txt" gatekeeper_denied_total kind="$kind" reason=sni_mismatch)
	GK_DETAIL="got: $(oneline "$o") | denied_total{kind=$kind,reason=sni_mismatch} $d0 -> $d1 | audit reasons: ${rs:-none}"
	gk_check "$msg ($via): the retry request came, then the tunnel was cut in $(kv after_ms "$o") ms with no ServerHello, denied_total{reason=sni_mismatch} +1" \
		eval '[ "$(kv first "$o")" = hrr ] && [ "$(kv group "$o")" = 0x0017 ] &&
		      [[ "$(kv after "$o")" == @(closed|reset) ]] &&
		      [ "$(kv after_ms "$o")" -lt 10000 ] && [ $((d1 - d0)) -eq 1 ]'
	gk_check "$msg ($via): one proxy.deny audit line, reason sni_mismatch" \
		test "$rs" = sni_mismatch
	expect_deny sni_mismatch github.com "$A_ID" "$msg $via"
}

for via in socks http; do
	hrr_cut "A: a ClientHello for evil.example after a HelloRetryRequest for github.com" \
		$via evil.example
	hrr_cut "A: ... the same without the change_cipher_spec record" \
		$via evil.example --no-ccs
	hrr_cut "A: ... a second ClientHello without a server name" $via -
	a0=$(gk_audit_mark "$AUDIT")
	o=$("${HRR[@]}" --via $via --bind $A_SRC github.com "$PK_HRR_PORT" \
		github.com GitHub.com 2>&1)
	n=$(denies_since "$a0")
	GK_DETAIL="got: $(oneline "$o") | new audit deny lines: $n"
	gk_check "A: a second ClientHello for GitHub.com after a retry for github.com ($via) gets its ServerHello, nothing denied" \
		eval '[ "$(kv first "$o")" = hrr ] && [ "$(kv after "$o")" = server_hello ] &&
		      [ "$n" = 0 ]'
done
curl_socks $A_SRC --tlsv1.3 --curves X25519:P-256 \
	"https://github.com:$PK_HRR_PORT/"
GK_DETAIL=$(curl_detail)
gk_check "A: curl offering X25519 then P-256 (a retry, the same name) through SOCKS finishes its handshake" \
	eval '[ "$CURL_OUT" = 200 ] && body_is "hello from github.com"'
curl_http $A_SRC --tlsv1.3 --curves X25519:P-256 \
	"https://github.com:$PK_HRR_PORT/"
GK_DETAIL=$(curl_detail)
gk_check "A: ... and through HTTP CONNECT" \
	eval '[ "$CURL_OUT" = 200 ] && body_is "hello from github.com"'

GK_DETAIL="pid $GKD"
gk_check "gatekeeperd is still running" daemon_alive "$GKD"

# ---- metrics: exact deltas per deny reason over the whole run --------------------------------
px_deny_totals

# ---- audit log ----------------------------------------------------------------------------------
gk_audit_wait "$AUDIT" 0 30 '"event":"[a-z0-9_.]*deny"' "\"cage\":\"$A_ID\"" \
	'github\.com' '"reason":"malformed"'
px_audit_denies

# ---- stop ----------------------------------------------------------------------------------------
px_stop A

gk_finish
