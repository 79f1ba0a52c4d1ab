# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the sourcing scripts
# shellcheck disable=SC2016  # eval'd conditions are single-quoted on purpose
#
# proxy_lib.sh: what the proxy integration tests share (test_proxy.sh, the
# proxies' work and their counts; test_proxy_peek.sh, the peek at a
# tunnel's first bytes): the addresses, the client helpers, the expected
# denies, and the run's frame: px_start (the test internet, the upstream
# resolver, gatekeeperd), px_deny_totals and px_audit_denies (the counts
# and audit lines of every expected deny), px_stop. Source it after
# proxy_net.sh, from inside the test namespaces (after gk_setup); it
# defines functions and variables only. Cages are named by source address
# (the *_SRC below; test_proxy.sh says how each client picks its own).

T=$GK_TMP
UP_LOG=$T/upstream.log
SOCK=$T/control.sock
AUDIT=$T/audit.log
GK_SUMMARY_LOG=$T/GKD.log
METRICS=127.0.0.1:9477
SOCKS=127.0.0.1:1080
HTTPP=127.0.0.1:3128
SC=$GK_LIB_DIR/socks_client.py

A_SRC=127.0.0.2		# github.com, api.github.com (any port)
B_SRC=127.0.0.3		# gitlab.com:443
P_SRC=127.0.0.4		# github.com: IP-literal pinning
S_SRC=127.0.0.5		# *.github.com: special ranges, failures, ssh
C_SRC=127.0.0.6		# *.github.com, 127.0.0.1/32, 198.51.100.0/24
L_SRC=127.0.0.1		# github.com: git and openssl s_client (no bind)
X_SRC=127.0.0.9		# no cage

# ---------------------------------------------------------------------------
# Local helpers

sc() { "$PYTHON" "$SC" "$@"; }
# kv KEY TEXT: the value of the first KEY=... line.
kv() { printf '%s\n' "$2" | sed -n "s/^$1=//p" | head -1; }
oneline() { printf '%s' "$1" | tr '\n' ' ' | cut -c1-300; }

CA=
# curl through SOCKS (remote resolution) from SRC; body to $T/body,
# prints the HTTP status (000 on failure); curl's exit status in CURL_RC.
curl_socks() {
	local src=$1
	shift
	rm -f "$T/body" "$T/headers"
	CURL_OUT=$(curl -sS --noproxy '' --max-time 30 --connect-timeout 10 \
		--socks5-hostname "$SOCKS" --interface "$src" --cacert "$CA" \
		-o "$T/body" -D "$T/headers" -w '%{http_code}' "$@" 2>"$T/curl.err")
	CURL_RC=$?
}
# curl through the HTTP proxy from SRC (CONNECT for https, absolute-form
# for http).
curl_http() {
	local src=$1
	shift
	rm -f "$T/body" "$T/headers"
	CURL_OUT=$(curl -sS --noproxy '' --max-time 30 --connect-timeout 10 \
		-x "http://$HTTPP" --interface "$src" --cacert "$CA" \
		-o "$T/body" -D "$T/headers" -w '%{http_code}' "$@" 2>"$T/curl.err")
	CURL_RC=$?
}
curl_detail() {
	printf 'curl rc=%s status=%s %s | body: %s' "$CURL_RC" "$CURL_OUT" \
		"$(oneline "$(cat "$T/curl.err" 2>/dev/null)")" \
		"$(head -c 200 "$T/body" 2>/dev/null | head -2 | tr -d '\0' | tr '\n' ' ')"
}
body_sha() { sha256sum <"$T/body" | awk '{print $1}'; }
body_is() { [ "$(head -c 4096 "$T/body" 2>/dev/null | tr -d '\0')" = "$1" ]; }
header() {	# header NAME: value of a response header in $T/headers
	tr -d '\r' <"$T/headers" 2>/dev/null |
		awk -v h="$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')" \
		'{ n = index($0, ":"); if (n && tolower(substr($0, 1, n - 1)) == h) { print substr($0, n + 2); exit } }'
}

json_ok() { [ "$(gk_json_get ok "$1")" = true ]; }

# metric_values FILE NAME LABEL: the values LABEL takes, comma-separated.
metric_values() {
	grep -E "^$2\{" "$1" 2>/dev/null | grep -o "$3=\"[^\"]*\"" |
		sed "s/^$3=\"//; s/\"$//" | sort -u | paste -sd, -
}
fetch_metrics() {
	gk_metrics_fetch "$METRICS" "$1" || : >"$1"
}

# Every deny the proxies should produce is recorded here and checked
# against the counters (exact deltas) and the audit log at the end.
declare -A EXP_DENY=()
DENY_LOG=()	# "reason|host|cage-id-or-empty|what"
expect_deny() {	# REASON HOST CAGE_ID WHAT
	[ -n "$1" ] && EXP_DENY[$1]=$((${EXP_DENY[$1]:-0} + 1))
	DENY_LOG+=("$1|$2|$3|$4")
}

# socks_rep MSG SRC HOST PORT WANT [socks_client options]: a SOCKS5
# CONNECT whose reply code must be WANT (e.g. 0x02); denials fail fast.
socks_rep() {
	local msg=$1 src=$2 host=$3 port=$4 want=$5 o rep ms
	shift 5
	o=$(sc --bind "$src" --timeout 15 "$@" connect "$host" "$port" 2>&1)
	rep=$(kv rep "$o")
	ms=$(kv ms "$o")
	GK_DETAIL="got: $(oneline "$o")"
	gk_check "$msg (rep $want, ${ms:-?} ms)" test "$rep" = "$want"
	LAST_MS=${ms:-99999}
}

# http_deny MSG SRC HOST REASON CAGE_ID CAGE_LABEL MODE
# MODE connect: CONNECT HOST:443 (raw); get: absolute-form GET http://HOST/.
# 403, X-Gatekeeper-Deny naming REASON, a one-line body naming host, cage
# and reason.
http_deny() {
	local msg=$1 src=$2 host=$3 reason=$4 cid=$5 clabel=$6 mode=$7
	local status deny body o
	if [ "$mode" = connect ]; then
		o=$(sc --via http --bind "$src" --timeout 15 connect "$host" 443 2>&1)
		status=$(kv status "$o")
		deny=$(kv deny "$o")
		body=$(kv body "$o")
	else
		curl_http "$src" "http://$host/index.html"
		status=$CURL_OUT
		deny=$(header X-Gatekeeper-Deny)
		body=$(head -c 1000 "$T/body" 2>/dev/null)
		o="$(curl_detail) | X-Gatekeeper-Deny: $deny"
	fi
	GK_DETAIL="got: $(oneline "$o")"
	gk_check "$msg: 403" test "$status" = 403
	GK_DETAIL="X-Gatekeeper-Deny: '$deny'"
	gk_check "$msg: X-Gatekeeper-Deny names '$reason'" \
		eval '[[ "$deny" == *"$reason"* ]]'
	GK_DETAIL="body: '$(oneline "$body")'"
	if [ -n "$cid" ]; then
		gk_check "$msg: a one-line body naming $host, the cage and $reason" \
			eval '[ "$(printf "%s" "$body" | sed "/^\$/d" | wc -l)" -le 1 ] &&
			      [[ "$body" == *"$host"* && "$body" == *"$reason"* ]] &&
			      [[ "$body" == *"$cid"* || "$body" == *"$clabel"* ]]'
	else
		# No cage (unknown source): the deny may come before the
		# request is read, so only the reason is required.
		gk_check "$msg: a one-line body naming $reason" \
			eval '[ "$(printf "%s" "$body" | sed "/^\$/d" | wc -l)" -le 1 ] &&
			      [[ "$body" == *"$reason"* ]]'
	fi
}

# audit_deny HOST REASON [CAGE]: an audit line whose event contains
# "deny", with REASON as a value and HOST inside a value (and the cage).
audit_deny() {
	"$PYTHON" - "$AUDIT" "$@" <<'EOF'
import json, sys
path, host, reason = sys.argv[1], sys.argv[2], sys.argv[3]
cage = sys.argv[4] if len(sys.argv) > 4 else ""
def values(o):
    for v in o.values():
        if isinstance(v, dict):
            yield from values(v)
        elif isinstance(v, list):
            for x in v:
                yield str(x)
        else:
            yield str(v)
try:
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
except OSError:
    sys.exit(1)
for ln in lines:
    try:
        o = json.loads(ln)
    except ValueError:
        continue
    if not isinstance(o, dict) or "deny" not in str(o.get("event", "")):
        continue
    if str(o.get("event", "")).startswith("dns."):
        continue
    vals = list(values(o))
    if reason not in vals or not any(host in v for v in vals):
        continue
    if cage and o.get("cage") != cage:
        continue
    sys.exit(0)
sys.exit(1)
EOF
}

daemon_alive() { kill -0 "$1" 2>/dev/null; }

# listening ADDR PORT: something accepts TCP connections there.
listening() {
	"$PYTHON" -c '
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1).close()
except OSError:
    sys.exit(1)' "$1" "$2"
}

# ---------------------------------------------------------------------------
# The run's frame

# px_start: the test internet (checked directly), the upstream resolver
# (checked), then gatekeeperd with both proxies; gk_abort when a part does
# not start. GK_PROXY_INTERNET_ONLY=1 stops after the internet checks.
px_start() {
	echo "# gatekeeperd: $GKD"
	echo "# temp $T"

	# ---- the internet ---------------------------------------------------
	if ! pn_start; then
		gk_abort "the test internet starts (netns, veth, CA, nginx, sshd)" \
			"$T/inet/nginx-error.log"
	fi
	CA=$PN_DIR/ca.crt
	BLOB_SHA=$(cat "$PN_DIR/blob.sha256")
	GIT_HEAD=$(cat "$PN_DIR/git-head")
	gk_ok "the test internet is up (internet netns pid $PN_NS_PID, nginx, sshd)"

	GK_DETAIL="ip route: $(ip route | paste -sd'|' -)"
	gk_check "internet: the test netns has lo, gk-up and nothing else" \
		eval '[ "$(ip -o link show | grep -vcE ": (lo|gk-up)[:@]")" -eq 0 ]'

	r=$(pn_curl_direct https://github.com/index.html 2>&1)
	GK_DETAIL="got: $r"
	gk_check "internet: https://github.com/ directly, verified by the test CA" \
		test "$r" = "hello from github.com"
	for n in api.github.com gitlab.com evil.example; do
		r=$(pn_curl_direct "https://$n/index.html" 2>&1)
		GK_DETAIL="got: $r"
		gk_check "internet: https://$n/ directly" test "$r" = "hello from $n"
	done
	r=$(pn_curl_direct http://api.github.com/index.html 2>&1)
	GK_DETAIL="got: $r"
	gk_check "internet: http://api.github.com/ (port 80) directly" \
		test "$r" = "hello from api.github.com"
	r=$(pn_curl_direct http://192.0.2.10/index.html 2>&1)
	GK_DETAIL="got: $r"
	gk_check "internet: http://192.0.2.10/ (Host: the address) is github.com" \
		test "$r" = "hello from github.com"
	r=$(pn_curl_direct -g --resolve "github.com:443:[$PN_ADDR6_GITHUB]" \
		"https://github.com/index.html" 2>&1)
	GK_DETAIL="got: $r"
	gk_check "internet: github.com over IPv6 ([$PN_ADDR6_GITHUB]:443) directly" \
		test "$r" = "hello from github.com"
	sha=$(pn_curl_direct https://github.com/blob.bin 2>/dev/null | sha256sum | awk '{print $1}')
	GK_DETAIL="sha256 $sha, want $BLOB_SHA"
	gk_check "internet: the 5 MiB blob comes back byte-exact directly" \
		test "$sha" = "$BLOB_SHA"
	r=$(pn_curl_direct --connect-to api.github.com:443:github.com:443 \
		https://api.github.com/index.html 2>&1)
	GK_DETAIL="got: $r"
	gk_check "internet: SNI api.github.com to github.com's address works directly (the cert covers both)" \
		test "$r" = "hello from api.github.com"
	r=$(pn_curl_direct -H 'Host: api.github.com' http://github.com/index.html 2>&1)
	GK_DETAIL="got: $r"
	gk_check "internet: Host api.github.com to github.com's address works directly" \
		test "$r" = "hello from api.github.com"
	pn_curl_direct -o /dev/null http://192.0.2.10:81/ 2>/dev/null
	rc=$?
	GK_DETAIL="curl rc=$rc"
	gk_check "internet: github.com:81 is refused (curl 7)" test "$rc" = 7
	# unreachable (curl 7), not black-holed (28), and long before curl's
	# own --max-time 20 would have ended it
	t0=$(date +%s%N)
	curl -sS --max-time 20 -o /dev/null "http://$PN_DEAD_ADDR/" 2>/dev/null
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	GK_DETAIL="curl rc=$rc, $ms ms"
	gk_check "internet: dead.github.com ($PN_DEAD_ADDR) is unreachable at once: curl 7, not a timeout (${ms} ms)" \
		eval '[ "$rc" = 7 ] && [ "$ms" -lt 10000 ]'
	curl -sS --connect-timeout 2 --max-time 5 -o /dev/null "http://$PN_SLOW_ADDR/" 2>/dev/null
	rc=$?
	GK_DETAIL="curl rc=$rc"
	gk_check "internet: slow.github.com ($PN_SLOW_ADDR) black-holes SYNs (curl timeout 28)" \
		test "$rc" = 28

	r=$(pn_ssh -o HostKeyAlias=github.com "root@${PN_ADDR[github.com]}" echo ssh-ok 2>&1)
	GK_DETAIL="got: $r | sshd: $(tail -n 3 "$PN_DIR/ssh/sshd.log" | paste -sd'|' -)"
	gk_check "internet: OpenSSH to github.com:22 directly (host key verified)" \
		test "$r" = ssh-ok

	rm -rf "$T/clone-direct"
	r=$(pn_git -c http.sslCAInfo="$CA" \
		-c http.curloptResolve="github.com:443:${PN_ADDR[github.com]}" \
		clone -q https://github.com/acme/hello.git "$T/clone-direct" 2>&1)
	h=$(pn_git -C "$T/clone-direct" rev-parse HEAD 2>/dev/null)
	GK_DETAIL="git: $(oneline "$r") head=$h want $GIT_HEAD"
	gk_check "internet: git clone https://github.com/acme/hello.git directly (dumb HTTP)" \
		eval '[ "$h" = "$GIT_HEAD" ] && cmp -s "$T/clone-direct/data.txt" "$PN_DIR/git-src/data.txt"'

	# ---- the upstream resolver ------------------------------------------
	if ! gk_start_upstream 5300 "$UP_LOG" "${PN_UPSTREAM_EXTRA[@]}"; then
		gk_abort "dnsmasq upstream starts" "$T/dnsmasq-5300.stderr"
	fi
	GK_DNS_PORT=5300
	for nv in rebind.github.com:127.0.0.1 meta.github.com:169.254.169.254 \
	    priv.github.com:10.1.2.3 api.github.com:192.0.2.11 \
	    gitlab.com:198.51.100.20 evil.example:203.0.113.66; do
		gk_dig 127.0.0.1 "${nv%%:*}" A
		GK_DETAIL=$(dig_summary)
		gk_check "upstream: ${nv%%:*} -> ${nv#*:}" \
			eval 'dig_answers | awk "{print \$5}" | grep -qx "${nv#*:}"'
	done
	GK_DNS_PORT=53

	if [ "${GK_PROXY_INTERNET_ONLY:-0}" = 1 ]; then
		gk_finish "internet only"
	fi

	# ---- gatekeeperd ----------------------------------------------------
	: >"$T/empty.conf"
	gk_start_daemon GKD "$GKD" -f -c "$T/empty.conf" --listen 127.0.0.1 \
		--dns-port 53 --socks-port 1080 --http-port 3128 --control "$SOCK" \
		--upstream 127.0.0.1:5300 --ttl-cap 600 --upstream-timeout 2 \
		--metrics "$METRICS" --audit-log "$AUDIT" --log-level debug
	if ! gk_wait_ready "$GKD" "$SOCK" 53; then
		gk_abort "gatekeeperd starts and answers DNS" "$T/GKD.log"
	fi
	gk_ok "gatekeeperd is ready (control socket, DNS)"

	GK_DETAIL="nothing on $SOCKS"
	gk_check "the SOCKS5 proxy listens on $SOCKS" listening 127.0.0.1 1080
	GK_DETAIL="nothing on $HTTPP"
	gk_check "the HTTP proxy listens on $HTTPP" listening 127.0.0.1 3128
}

# cage_create NAME SOURCE LABEL ALLOW-JSON: sets <NAME>_ID and <NAME>_TOKEN.
cage_create() {
	local name=$1 src=$2 label=$3 allow=$4 r id tok
	gk_ctl_open "$name" "$SOCK"
	r=$(gk_ctl_send "$name" "{\"op\":\"cage.create\",\"source\":\"$src\",\"allow\":$allow,\"label\":\"$label\"}")
	id=$(gk_json_get cage.id "$r")
	tok=$(gk_json_get token "$r" 2>/dev/null) ||
		tok=$(gk_json_get cage.token "$r" 2>/dev/null) || tok=
	printf -v "${name}_ID" '%s' "$id"
	printf -v "${name}_TOKEN" '%s' "$tok"
	GK_DETAIL="reply: $r"
	gk_check "cage $name ($src, $allow) created, id '$id'" \
		eval 'json_ok "$r" && [ -n "$id" ]'
}

# px_deny_totals: gatekeeper_denied_total (proxy kinds) rose over the run
# (since $T/m-start.txt, fetched after the cages were made) by exactly
# what expect_deny recorded, reason by reason; the proxies' metrics are
# exported (and promtool accepts them, when installed).
px_deny_totals() {
	fetch_metrics "$T/m-end.txt"
	for reason in not_allowlisted ip_not_pinned special_range sni_mismatch no_sni \
	    host_mismatch unsupported_command unknown_source malformed; do
		want=${EXP_DENY[$reason]:-0}
		v0=$(gk_metric_sum "$T/m-start.txt" gatekeeper_denied_total reason=$reason kind!=dns)
		v1=$(gk_metric_sum "$T/m-end.txt" gatekeeper_denied_total reason=$reason kind!=dns)
		GK_DETAIL="$v0 -> $v1 ($(grep "^gatekeeper_denied_total{.*reason=\"$reason\"" "$T/m-end.txt" | paste -sd' ' -))"
		gk_check "gatekeeper_denied_total{reason=$reason} rose by exactly $want over the run" \
			test $((v1 - v0)) -eq "$want"
	done
	for m in gatekeeper_connections_total gatekeeper_denied_total \
	    gatekeeper_bytes_total gatekeeper_active_tunnels \
	    gatekeeper_host_bytes_total gatekeeper_host_connections_total; do
		GK_DETAIL="absent"
		gk_check "$m is exported" eval 'grep -q "^$m[{ ]" "$T/m-end.txt"'
	done
	if command -v promtool >/dev/null 2>&1; then
		pt=$(promtool check metrics <"$T/m-end.txt" 2>&1)
		rc=$?
		GK_DETAIL="promtool (rc=$rc): $(printf '%s' "$pt" | head -5 | paste -sd'|' -)"
		gk_check "promtool check metrics accepts /metrics" test "$rc" = 0
	fi
}

# px_audit_denies: an audit line for every expected deny (call it once
# they are flushed).
px_audit_denies() {
	declare -A seen=()
	for e in "${DENY_LOG[@]}"; do
		IFS='|' read -r reason host cid what <<<"$e"
		[ -n "$reason" ] || continue
		key="$reason|$host|$cid"
		[ -n "${seen[$key]:-}" ] && continue
		seen[$key]=1
		GK_DETAIL="no *deny* line with host ${host:-(any)}, reason $reason${cid:+, cage $cid} ($what); last: $(grep deny "$AUDIT" 2>/dev/null | tail -n 1)"
		gk_check "audit: a deny line for ${host:-(any host)}, reason $reason${cid:+, cage $cid}" \
			audit_deny "$host" "$reason" ${cid:+"$cid"}
	done
	if [ -s "$AUDIT" ]; then
		gk_info "an audit deny line: $(grep -m1 -E '"event":"[a-z0-9_.]*deny' "$AUDIT" | grep -v '"dns\.' | head -c 300)"
	fi
}

# px_stop CAGE...: no sanitizer reports, the cages' control connections
# closed, gatekeeperd stopped with SIGTERM and exiting 0.
px_stop() {
	local c
	gk_check "no sanitizer reports in gatekeeperd's log" \
		eval '! grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:" "$T/GKD.log"'
	for c in "$@"; do
		gk_ctl_close "$c"
	done
	gk_stop_daemon "$GKD" TERM
	GK_DETAIL="exit status $GK_RC"
	gk_check "SIGTERM: gatekeeperd exits 0" test "$GK_RC" = 0
}
