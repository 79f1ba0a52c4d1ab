#!/usr/bin/env bash
#
# test_proxy.sh: end-to-end test of gatekeeperd's egress proxies (SOCKS5 on
# 127.0.0.1:1080, HTTP on 127.0.0.1:3128) against a hermetic "internet"
# of real servers.
#
#   bash tests/integration/test_proxy.sh build/gatekeeperd
#
# Runs as root in namespaces it creates itself (lib.sh: a fresh network,
# mount and PID namespace; everything started dies with it). Inside:
#   - the test netns: gatekeeperd (DNS 127.0.0.1:53, proxies on
#     127.0.0.1:1080/3128, metrics 127.0.0.1:9477), dnsmasq as its upstream
#     (127.0.0.1:5300, lib.sh's records plus rebind.github.com -> 127.0.0.1,
#     meta.github.com -> 169.254.169.254, priv.github.com -> 10.1.2.3,
#     dead.github.com / slow.github.com: unreachable / black-holed), and
#     the clients: curl, git, openssl s_client, ssh, socks_client.py;
#   - a second netns, "the internet" (proxy_net.sh): nginx with TLS from a
#     test CA made at run time (github.com 192.0.2.10, api.github.com
#     192.0.2.11, gitlab.com 198.51.100.20, evil.example 203.0.113.66), a
#     5 MiB random file, a git repository over dumb HTTP, and OpenSSH on
#     github.com:22.
#
# The peek is attacked with raw bytes (socks_client.py raw mode,
# peek_lib.sh) through SOCKS5 and HTTP CONNECT: what servers skip before
# a request line or a hello, and later requests on a connection.
#
# Cages are named by source address. Clients pick theirs by binding:
# curl --interface, socks_client.py --bind, and the ssh ProxyCommand is
# socks_client.py too. git and openssl s_client cannot bind, so they run
# from cage L, whose source is 127.0.0.1 (what an unbound socket to
# 127.0.0.1 gets).
#
# Prints "ok   ..." / "FAIL ..." per check and a summary; exits 1 if any
# check failed, 77 (skip) when not root or namespaces are unavailable.
# Until the proxies exist it exits 77 after checking the internet on its
# own ("proxies not built yet"); GK_PROXY_REQUIRE=1 makes that a failure.
# GK_PROXY_INTERNET_ONLY=1 stops after the internet checks.
# GK_KEEP_TMP=1 keeps the temp directory (logs) for a post-mortem.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034,SC2153  # (the *_ID are set through printf -v)
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_daemon_arg test_proxy.sh "$@"
gk_require dig dnsmasq curl unshare nsenter ip mount nginx openssl git ssh \
    ssh-keygen /usr/sbin/sshd sha256sum timeout "$PYTHON"

# Hermetic clients: no proxy or CA settings from the caller's environment.
gk_unset_client_env

gk_enter_netns 77 "$GK_SELF" "$GKD"
gk_setup

# shellcheck source=tests/integration/proxy_net.sh
. "$GK_LIB_DIR/proxy_net.sh"

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
echo "# gatekeeperd: $GKD"
echo "# temp $T"

# ---- the internet ----------------------------------------------------------------
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
t0=$(date +%s%N)
curl -sS --max-time 5 -o /dev/null "http://$PN_DEAD_ADDR/" 2>/dev/null
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
GK_DETAIL="curl rc=$rc, $ms ms"
gk_check "internet: dead.github.com ($PN_DEAD_ADDR) is unreachable at once (${ms} ms)" \
	eval '[ "$rc" = 7 ] && [ "$ms" -lt 2000 ]'
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

# ---- the upstream resolver --------------------------------------------------------
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

# ---- gatekeeperd -------------------------------------------------------------------
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

# ---- cages --------------------------------------------------------------------------
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
cage_create A $A_SRC a '["github.com","api.github.com"]'
cage_create B $B_SRC b '["gitlab.com:443"]'
cage_create P $P_SRC pin '["github.com"]'
cage_create S $S_SRC s '["*.github.com"]'
cage_create C $C_SRC cidr '["*.github.com","127.0.0.1/32","198.51.100.0/24"]'
cage_create L $L_SRC local '["github.com"]'
[ -n "$L_ID" ] || gk_info "cage L (source 127.0.0.1) missing: the git and openssl checks will fail"

fetch_metrics "$T/m-start.txt"

# ---- IP literals: before anything resolved github.com for cage P -----------------------------
socks_rep "P: SOCKS CONNECT 192.0.2.10:80 before P resolved github.com is denied" \
	$P_SRC 192.0.2.10 80 0x02
expect_deny ip_not_pinned 192.0.2.10 "$P_ID" "P socks 192.0.2.10"
socks_rep "P: SOCKS CONNECT [2001:db8::10]:80 before P asked for AAAA is denied" \
	$P_SRC 2001:db8::10 80 0x02
expect_deny ip_not_pinned 2001:db8::10 "$P_ID" "P socks [2001:db8::10]"
http_deny "P: HTTP GET http://192.0.2.10/ before resolving" $P_SRC 192.0.2.10 \
	ip_not_pinned "$P_ID" pin get
expect_deny ip_not_pinned 192.0.2.10 "$P_ID" "P http 192.0.2.10"

gk_dig $P_SRC github.com A
GK_DETAIL=$(dig_summary)
gk_check "P: dig -b $P_SRC @127.0.0.1 github.com A -> 192.0.2.10 (pins it to P)" \
	eval '[ "$DIG_STATUS" = NOERROR ] && dig_answers | grep -q "192.0.2.10"'

# (Allowed CONNECTs that send nothing go to the SSH port: no peeking
# question about an empty TLS or HTTP stream.)
socks_rep "P: SOCKS CONNECT 192.0.2.10:22 after the cage's own lookup is allowed" \
	$P_SRC 192.0.2.10 22 0x00
curl_socks $P_SRC --socks5 "$SOCKS" http://192.0.2.10/index.html
GK_DETAIL=$(curl_detail)
gk_check "P: curl --socks5 http://192.0.2.10/ fetches github.com's page" \
	eval '[ "$CURL_OUT" = 200 ] && body_is "hello from github.com"'
curl_http $P_SRC http://192.0.2.10/index.html
GK_DETAIL=$(curl_detail)
gk_check "P: HTTP proxy GET http://192.0.2.10/ is allowed after the lookup" \
	eval '[ "$CURL_OUT" = 200 ] && body_is "hello from github.com"'
socks_rep "P: 192.0.2.11 (api.github.com, never resolved by P) is still denied" \
	$P_SRC 192.0.2.11 80 0x02
expect_deny ip_not_pinned 192.0.2.11 "$P_ID" "P socks 192.0.2.11"
socks_rep "B: 192.0.2.10 pinned to P is denied to B" $B_SRC 192.0.2.10 443 0x02
expect_deny ip_not_pinned 192.0.2.10 "$B_ID" "B socks 192.0.2.10"
gk_dig $P_SRC github.com AAAA
socks_rep "P: [2001:db8::10]:22 is allowed after P's AAAA lookup" \
	$P_SRC 2001:db8::10 22 0x00
curl_socks $C_SRC --socks5 "$SOCKS" http://198.51.100.20/index.html
GK_DETAIL=$(curl_detail)
gk_check "C: 198.51.100.20 allowed by C's CIDR entry without any lookup" \
	eval '[ "$CURL_OUT" = 200 ] && body_is "hello from gitlab.com"'

# ---- allowed fetches, byte-exact -------------------------------------------------------------
curl_socks $A_SRC https://github.com/blob.bin
GK_DETAIL="$(curl_detail) sha $(body_sha)"
gk_check "A: curl --socks5-hostname https://github.com/blob.bin: 5 MiB byte-exact" \
	eval '[ "$CURL_OUT" = 200 ] && [ "$(body_sha)" = "$BLOB_SHA" ]'
curl_socks $A_SRC http://github.com/index.html
GK_DETAIL=$(curl_detail)
gk_check "A: curl --socks5-hostname http://github.com/ (plain HTTP in the tunnel)" \
	eval '[ "$CURL_OUT" = 200 ] && body_is "hello from github.com"'
curl_socks $A_SRC https://api.github.com/index.html
GK_DETAIL=$(curl_detail)
gk_check "A: curl --socks5-hostname https://api.github.com/" \
	eval '[ "$CURL_OUT" = 200 ] && body_is "hello from api.github.com"'
o=$(sc --bind $A_SRC --cafile "$CA" --path /blob.bin tls github.com 443 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "A: raw SOCKS5 + TLS (socks_client.py) github.com/blob.bin byte-exact" \
	eval '[ "$(kv tls "$o")" = ok ] && [ "$(kv status "$o")" = 200 ] &&
	      [ "$(kv sha256 "$o")" = "$BLOB_SHA" ]'
curl_socks $B_SRC https://gitlab.com/blob.bin
GK_DETAIL="$(curl_detail) sha $(body_sha)"
gk_check "B: curl --socks5-hostname https://gitlab.com/blob.bin byte-exact" \
	eval '[ "$CURL_OUT" = 200 ] && [ "$(body_sha)" = "$BLOB_SHA" ]'

curl_http $A_SRC https://github.com/blob.bin
GK_DETAIL="$(curl_detail) sha $(body_sha)"
gk_check "A: curl -x http://$HTTPP https://github.com/blob.bin (CONNECT) byte-exact" \
	eval '[ "$CURL_OUT" = 200 ] && [ "$(body_sha)" = "$BLOB_SHA" ]'
curl_http $A_SRC http://github.com/blob.bin
GK_DETAIL="$(curl_detail) sha $(body_sha)"
gk_check "A: curl -x http://$HTTPP http://github.com/blob.bin (absolute-form) byte-exact" \
	eval '[ "$CURL_OUT" = 200 ] && [ "$(body_sha)" = "$BLOB_SHA" ]'
curl_http $A_SRC http://api.github.com/index.html
GK_DETAIL=$(curl_detail)
gk_check "A: absolute-form GET http://api.github.com/ reaches api.github.com" \
	eval '[ "$CURL_OUT" = 200 ] && body_is "hello from api.github.com"'
curl_http $B_SRC https://gitlab.com/index.html
GK_DETAIL=$(curl_detail)
gk_check "B: curl -x https://gitlab.com/ (CONNECT)" \
	eval '[ "$CURL_OUT" = 200 ] && body_is "hello from gitlab.com"'
r=$(https_proxy="http://$HTTPP" \
	curl -sS --max-time 30 --interface $A_SRC --cacert "$CA" \
	https://api.github.com/index.html 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "A: https_proxy=http://$HTTPP in the environment works for curl" \
	test "$r" = "hello from api.github.com"

# openssl s_client (no bind option: cage L, source 127.0.0.1)
r=$(printf 'GET /index.html HTTP/1.1\r\nHost: github.com\r\nConnection: close\r\n\r\n' |
	timeout 20 openssl s_client -proxy "$HTTPP" -connect github.com:443 \
	-servername github.com -CAfile "$CA" -verify_return_error \
	-verify_hostname github.com -ign_eof 2>&1)
GK_DETAIL="got: $(printf '%s' "$r" | grep -E 'Verify return|hello|error|errno' | head -4 | paste -sd'|' -)"
gk_check "L: openssl s_client -proxy $HTTPP -connect github.com:443 -servername github.com (verified)" \
	eval 'printf "%s" "$r" | grep -q "Verify return code: 0 (ok)" &&
	      printf "%s" "$r" | grep -qx "hello from github.com"'

# git (no bind option either: cage L)
git_clone() {	# DIR URL [git -c options...]
	local dir=$1 url=$2
	shift 2
	rm -rf "$dir"
	GIT_OUT=$(pn_git -c http.sslCAInfo="$CA" "$@" clone -q "$url" "$dir" 2>&1)
	GIT_H=$(pn_git -C "$dir" rev-parse HEAD 2>/dev/null)
}
git_clone "$T/clone1" https://github.com/acme/hello.git -c http.proxy="http://$HTTPP"
GK_DETAIL="git: $(oneline "$GIT_OUT") head=$GIT_H want $GIT_HEAD"
gk_check "L: git clone https://github.com/acme/hello.git via http.proxy (CONNECT)" \
	eval '[ "$GIT_H" = "$GIT_HEAD" ] && cmp -s "$T/clone1/data.txt" "$PN_DIR/git-src/data.txt"'
git_clone "$T/clone2" http://github.com/acme/hello.git -c http.proxy="http://$HTTPP"
GK_DETAIL="git: $(oneline "$GIT_OUT") head=$GIT_H want $GIT_HEAD"
gk_check "L: git clone http://github.com/acme/hello.git via http.proxy (absolute-form)" \
	eval '[ "$GIT_H" = "$GIT_HEAD" ] && cmp -s "$T/clone2/data.txt" "$PN_DIR/git-src/data.txt"'
rm -rf "$T/clone3"
GIT_OUT=$(https_proxy="http://$HTTPP" GIT_SSL_CAINFO="$CA" \
	pn_git clone -q https://github.com/acme/hello.git "$T/clone3" 2>&1)
GIT_H=$(pn_git -C "$T/clone3" rev-parse HEAD 2>/dev/null)
GK_DETAIL="git: $(oneline "$GIT_OUT") head=$GIT_H"
gk_check "L: git clone with https_proxy and GIT_SSL_CAINFO in the environment" \
	test "$GIT_H" = "$GIT_HEAD"
git_clone "$T/clone4" https://github.com/acme/hello.git -c http.proxy="socks5h://$SOCKS"
GK_DETAIL="git: $(oneline "$GIT_OUT") head=$GIT_H"
gk_check "L: git clone via http.proxy=socks5h://$SOCKS" test "$GIT_H" = "$GIT_HEAD"

# ---- server-first: SSH -----------------------------------------------------------------------
o=$(sc --bind $S_SRC --timeout 15 banner github.com 22 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "S: SOCKS to github.com:22: the server's banner arrives with nothing sent ($(kv banner_ms "$o") ms)" \
	eval '[[ "$(kv banner "$o")" == SSH-2.0-* ]]'
o=$(sc --via http --bind $S_SRC --timeout 15 banner github.com 22 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "S: HTTP CONNECT github.com:22: the banner arrives with nothing sent" \
	eval '[[ "$(kv banner "$o")" == SSH-2.0-* ]]'
r=$(pn_ssh -o ProxyCommand="$PYTHON $SC --bind $S_SRC --timeout 15 pipe %h %p" \
	root@github.com echo ssh-ok 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "S: OpenSSH root@github.com through SOCKS5 (ProxyCommand), host key verified" \
	test "$r" = ssh-ok
r=$(pn_ssh -o ProxyCommand="$PYTHON $SC --via http --bind $S_SRC --timeout 15 pipe %h %p" \
	root@github.com echo ssh-ok 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "S: OpenSSH root@github.com through HTTP CONNECT (ProxyCommand)" \
	test "$r" = ssh-ok

# ---- denied targets ----------------------------------------------------------------------------
socks_rep "A: SOCKS evil.example:443 is denied" $A_SRC evil.example 443 0x02
expect_deny not_allowlisted evil.example "$A_ID" "A socks evil.example"
GK_DETAIL="$LAST_MS ms"
gk_check "A: ... and fast (< 1000 ms)" test "$LAST_MS" -lt 1000
socks_rep "A: SOCKS gitlab.com:443 (B's name) is denied" $A_SRC gitlab.com 443 0x02
expect_deny not_allowlisted gitlab.com "$A_ID" "A socks gitlab.com"
socks_rep "B: SOCKS gitlab.com:80 (B allows only :443) is denied" $B_SRC gitlab.com 80 0x02
expect_deny not_allowlisted gitlab.com "$B_ID" "B socks gitlab.com:80"
socks_rep "B: SOCKS github.com:443 (A's name) is denied" $B_SRC github.com 443 0x02
expect_deny not_allowlisted github.com "$B_ID" "B socks github.com"
http_deny "A: HTTP CONNECT evil.example:443" $A_SRC evil.example not_allowlisted \
	"$A_ID" a connect
expect_deny not_allowlisted evil.example "$A_ID" "A http CONNECT evil.example"
http_deny "A: HTTP GET http://evil.example/" $A_SRC evil.example not_allowlisted \
	"$A_ID" a get
expect_deny not_allowlisted evil.example "$A_ID" "A http GET evil.example"
curl_socks $A_SRC https://evil.example/index.html
GK_DETAIL=$(curl_detail)
gk_check "A: curl --socks5-hostname https://evil.example/ fails, nothing fetched" \
	eval '[ "$CURL_RC" != 0 ] && ! grep -q hello "$T/body" 2>/dev/null'
expect_deny not_allowlisted evil.example "$A_ID" "A curl socks evil.example"

# unknown source
o=$(sc --bind $X_SRC --timeout 10 connect github.com 443 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "unknown source $X_SRC: SOCKS gets no acceptable methods (0xff) or general failure" \
	eval '[ "$(kv method "$o")" = 0xff ] || [ "$(kv rep "$o")" = 0x01 ]'
expect_deny unknown_source "" "" "X socks"
http_deny "unknown source $X_SRC: HTTP GET http://github.com/" $X_SRC github.com \
	unknown_source "" "" get
expect_deny unknown_source "" "" "X http"

# ---- special ranges ------------------------------------------------------------------------------
socks_rep "S: rebind.github.com (-> 127.0.0.1) is denied" $S_SRC rebind.github.com 80 0x02
expect_deny special_range rebind.github.com "$S_ID" "S socks rebind"
socks_rep "S: meta.github.com (-> 169.254.169.254) is denied" $S_SRC meta.github.com 80 0x02
expect_deny special_range meta.github.com "$S_ID" "S socks meta"
socks_rep "S: priv.github.com (-> 10.1.2.3) is denied" $S_SRC priv.github.com 443 0x02
expect_deny special_range priv.github.com "$S_ID" "S socks priv"
http_deny "S: HTTP GET http://meta.github.com/" $S_SRC meta.github.com special_range \
	"$S_ID" s get
expect_deny special_range meta.github.com "$S_ID" "S http meta"
# A CIDR entry naming 127.0.0.1 allows rebind.github.com for cage C.
( gk_close_ctl_fds; exec "$PYTHON" -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 7070)); s.listen(16)
while True:
    c, _ = s.accept()
    try: c.sendall(b"LOCAL-7070 hello\r\n")
    except OSError: pass
    c.close()' ) &
gk_track_pid $!
gk_wait_for 30 listening 127.0.0.1 7070
o=$(sc --bind $C_SRC --timeout 10 banner rebind.github.com 7070 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "C: rebind.github.com:7070 (-> 127.0.0.1) allowed by C's CIDR entry 127.0.0.1/32" \
	eval '[ "$(kv banner "$o")" = "LOCAL-7070 hello" ]'

# ---- upstream failures -------------------------------------------------------------------------
socks_rep "S: github.com:81 (nothing listening): connection refused" $S_SRC github.com 81 0x05
socks_rep "S: dead.github.com (no route): host unreachable" $S_SRC dead.github.com 80 0x04
curl_http $S_SRC http://github.com:81/
GK_DETAIL=$(curl_detail)
gk_check "S: HTTP GET http://github.com:81/ (refused): 502" test "$CURL_OUT" = 502
o=$(sc --via http --bind $S_SRC --timeout 15 connect dead.github.com 443 2>&1)
GK_DETAIL="got: $(oneline "$o")"
gk_check "S: HTTP CONNECT dead.github.com:443 (unreachable): 502" test "$(kv status "$o")" = 502
# Connect timeouts: both in parallel (the kernel gives up after ~7 s here).
( gk_close_ctl_fds; exec "$PYTHON" "$SC" --bind $S_SRC --timeout 60 \
	connect slow.github.com 80 >"$T/slow-socks.out" 2>&1 ) &
slow_pid=$!
gk_track_pid $slow_pid
curl_http $S_SRC --max-time 60 http://slow.github.com/index.html
slow_http=$CURL_OUT
slow_http_detail=$(curl_detail)
gk_wait_exit $slow_pid 600
o=$(cat "$T/slow-socks.out")
GK_DETAIL="got: $(oneline "$o")"
gk_check "S: slow.github.com (SYNs dropped): TTL expired 0x06 ($(kv ms "$o") ms)" \
	test "$(kv rep "$o")" = 0x06
GK_DETAIL=$slow_http_detail
gk_check "S: HTTP GET http://slow.github.com/ (SYNs dropped): 504" test "$slow_http" = 504

# ---- SOCKS5 protocol errors --------------------------------------------------------------------
socks_rep "A: BIND (cmd 2) to an allowed host: command not supported" \
	$A_SRC github.com 443 0x07 --cmd 2
expect_deny unsupported_command "" "$A_ID" "A socks BIND"
socks_rep "A: UDP ASSOCIATE (cmd 3): command not supported" \
	$A_SRC github.com 443 0x07 --cmd 3
expect_deny unsupported_command "" "$A_ID" "A socks UDP ASSOCIATE"
socks_rep "A: ATYP 5: address type not supported" $A_SRC github.com 443 0x08 --atyp 5

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
# socks_client.py's raw mode; a refusal must come within a second of the
# last write, with nothing from the server (or, after an allowed first
# request, nothing but github.com), counted once in
# gatekeeper_denied_total{kind,reason} and audited once.

# proxy_deny_lines: the proxy.deny audit lines so far.
proxy_deny_lines() { grep -c '"event":"proxy.deny"' "$AUDIT" 2>/dev/null || echo 0; }
# proxy_deny_reasons_since N: the reasons of the proxy.deny lines after
# the first N, comma-separated.
proxy_deny_reasons_since() {
	grep '"event":"proxy.deny"' "$AUDIT" 2>/dev/null | tail -n +"$(($1 + 1))" |
		sed 's/.*"reason":"\([a-z_]*\)".*/\1/' | paste -sd, -
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
	a0=$(proxy_deny_lines)
	o=$(sc --via "$via" --bind $A_SRC --timeout 10 raw github.com "$port" \
		"${args[@]}" 2>&1)
	gk_wait_for 20 eval '[ "$(proxy_deny_lines)" -gt "$a0" ]'
	sleep 0.2	# (a second line would be flushed by now)
	fetch_metrics "$T/r1.txt"
	d0=$(gk_metric_sum "$T/r0.txt" gatekeeper_denied_total kind="$kind" reason="$reason")
	d1=$(gk_metric_sum "$T/r1.txt" gatekeeper_denied_total kind="$kind" reason="$reason")
	rs=$(proxy_deny_reasons_since "$a0")
	GK_DETAIL="got: $(oneline "$o") | denied_total{kind=$kind,reason=$reason} $d0 -> $d1 | audit reasons: ${rs:-none}"
	if [ -z "$hello" ]; then
		gk_check "$msg ($via): cut in $(kv raw_end_ms "$o") ms, nothing came back, denied_total{reason=$reason} +1" \
			eval '[ "$(kv raw_end "$o")" != open ] && [ "$(kv raw_end_ms "$o")" -lt 1000 ] &&
			      [ "$(kv raw_recv "$o")" = 0 ] && [ $((d1 - d0)) -eq 1 ]'
	else
		gk_check "$msg ($via): cut in $(kv raw_end_ms "$o") ms after $hello only, denied_total{reason=$reason} +1" \
			eval '[ "$(kv raw_end "$o")" != open ] && [ "$(kv raw_end_ms "$o")" -lt 1000 ] &&
			      [ "$(kv raw_hello "$o")" = "$hello" ] && [ $((d1 - d0)) -eq 1 ]'
	fi
	gk_check "$msg ($via): one proxy.deny audit line, reason $reason" test "$rs" = "$reason"
	expect_deny "$reason" github.com "$A_ID" "$msg $via"
}

# raw_ok MSG VIA PORT HELLO SEND...: the same, allowed: HELLO comes back
# (the "hello from" names), nothing is denied, the tunnel stays open.
raw_ok() {
	local msg=$1 via=$2 port=$3 hello=$4 o a0 x
	local args=()
	shift 4
	for x in "$@"; do args+=(--send "$x"); done
	a0=$(proxy_deny_lines)
	o=$(sc --via "$via" --bind $A_SRC --timeout 10 raw github.com "$port" \
		"${args[@]}" 2>&1)
	sleep 0.2
	GK_DETAIL="got: $(oneline "$o") | new audit deny lines: $(($(proxy_deny_lines) - a0))"
	gk_check "$msg ($via): $hello came back, nothing denied" \
		eval '[ "$(kv raw_hello "$o")" = "$hello" ] && [ "$(proxy_deny_lines)" = "$a0" ]'
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
	o=$(sc --via $via --bind $A_SRC --timeout 10 raw github.com 22 --send "$PK_LINE" 2>&1)
	GK_DETAIL="got: $(oneline "$o")"
	gk_check "A: a line protocol's first line to github.com:22 ($via) still reaches the server (its banner comes back)" \
		eval '[ "$(kv raw_recv "$o")" -gt 0 ]'
done

GK_DETAIL="pid $GKD"
gk_check "gatekeeperd is still running" daemon_alive "$GKD"

# ---- metrics: exact deltas over a small deterministic block ------------------------------------
fetch_metrics "$T/mb0.txt"
curl_socks $A_SRC https://github.com/blob.bin
ok1=$CURL_OUT
curl_socks $A_SRC http://github.com/index.html
ok2=$CURL_OUT
sc --bind $A_SRC connect evil.example 443 >/dev/null 2>&1
sc --bind $A_SRC connect gitlab.com 443 >/dev/null 2>&1
curl_http $A_SRC https://github.com/index.html
ok3=$CURL_OUT
curl_http $A_SRC http://api.github.com/index.html
ok4=$CURL_OUT
curl_http $A_SRC http://evil.example/index.html
expect_deny not_allowlisted evil.example "$A_ID" "metrics block socks 1"
expect_deny not_allowlisted gitlab.com "$A_ID" "metrics block socks 2"
expect_deny not_allowlisted evil.example "$A_ID" "metrics block http"
sleep 0.3	# let the tunnels' byte counts settle
fetch_metrics "$T/mb1.txt"
GK_DETAIL="block fetches: $ok1 $ok2 $ok3 $ok4"
gk_check "metrics block: the 4 allowed fetches worked" \
	test "$ok1$ok2$ok3$ok4" = 200200200200
for pv in socks5:4:2 http:3:2; do
	IFS=: read -r proto n nok <<<"$pv"
	c0=$(gk_metric_sum "$T/mb0.txt" gatekeeper_connections_total proto="$proto")
	c1=$(gk_metric_sum "$T/mb1.txt" gatekeeper_connections_total proto="$proto")
	GK_DETAIL="$c0 -> $c1 (verdicts: $(metric_values "$T/mb1.txt" gatekeeper_connections_total verdict))"
	gk_check "gatekeeper_connections_total{proto=$proto} (all verdicts) rose by exactly $n" \
		test $((c1 - c0)) -eq "$n"
	good=
	for v in $(metric_values "$T/mb1.txt" gatekeeper_connections_total verdict | tr , ' '); do
		a0=$(gk_metric_sum "$T/mb0.txt" gatekeeper_connections_total proto="$proto" verdict="$v")
		a1=$(gk_metric_sum "$T/mb1.txt" gatekeeper_connections_total proto="$proto" verdict="$v")
		case $v in *allow*|*accept*) [ $((a1 - a0)) -eq "$nok" ] && good=$v ;; esac
	done
	GK_DETAIL="no verdict=allow*/accept* series rose by exactly $nok"
	gk_check "gatekeeper_connections_total{proto=$proto,verdict=${good:-allowed}} rose by exactly $nok" \
		test -n "$good"
done
d0=$(gk_metric_sum "$T/mb0.txt" gatekeeper_denied_total reason=not_allowlisted kind!=dns)
d1=$(gk_metric_sum "$T/mb1.txt" gatekeeper_denied_total reason=not_allowlisted kind!=dns)
GK_DETAIL="$d0 -> $d1 (kinds: $(metric_values "$T/mb1.txt" gatekeeper_denied_total kind))"
gk_check "gatekeeper_denied_total{reason=not_allowlisted} (proxy kinds) rose by exactly 3" \
	test $((d1 - d0)) -eq 3
best=0
for v in $(metric_values "$T/mb1.txt" gatekeeper_bytes_total direction | tr , ' '); do
	b0=$(gk_metric_sum "$T/mb0.txt" gatekeeper_bytes_total direction="$v")
	b1=$(gk_metric_sum "$T/mb1.txt" gatekeeper_bytes_total direction="$v")
	[ $((b1 - b0)) -gt "$best" ] && best=$((b1 - b0))
	gk_info "gatekeeper_bytes_total{direction=$v} +$((b1 - b0))"
done
GK_DETAIL="largest direction delta $best"
gk_check "gatekeeper_bytes_total: one direction rose by >= 5 MiB (the blob)" \
	test "$best" -ge "$PN_BLOB_SIZE"

# active tunnels: two held tunnels to github.com:22 (server-first).
fetch_metrics "$T/mt0.txt"
t0v=$(gk_metric_sum "$T/mt0.txt" gatekeeper_active_tunnels)
hold_pids=()
for i in 1 2; do
	: >"$T/hold$i.out"
	# (exec: $! is the client itself; no control fifo inherited)
	( gk_close_ctl_fds; exec "$PYTHON" "$SC" --bind $S_SRC --timeout 30 \
		hold github.com 22 >"$T/hold$i.out" 2>&1 ) &
	hold_pids+=($!)
	gk_track_pid $!
done
gk_wait_for 50 eval 'grep -q held "$T/hold1.out" && grep -q held "$T/hold2.out"'
fetch_metrics "$T/mt1.txt"
t1v=$(gk_metric_sum "$T/mt1.txt" gatekeeper_active_tunnels)
GK_DETAIL="$t0v -> $t1v; $(cat "$T/hold1.out" "$T/hold2.out" | paste -sd' ' -)"
gk_check "gatekeeper_active_tunnels rises by 2 with two open tunnels ($t0v -> $t1v)" \
	test $((t1v - t0v)) -eq 2
for p in "${hold_pids[@]}"; do
	kill -TERM "$p" 2>/dev/null
	gk_wait_exit "$p" 30
done
tunnels_back() {
	fetch_metrics "$T/mt2.txt"
	t2v=$(gk_metric_sum "$T/mt2.txt" gatekeeper_active_tunnels)
	[ "$t2v" -eq "$t0v" ]
}
GK_DETAIL="still ${t2v:-?} (was $t0v)"
gk_check "gatekeeper_active_tunnels falls back when they close" gk_wait_for 50 tunnels_back

# ---- metrics: exact deltas per deny reason over the whole run --------------------------------
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
    gatekeeper_bytes_total gatekeeper_active_tunnels; do
	GK_DETAIL="absent"
	gk_check "$m is exported" eval 'grep -q "^$m[{ ]" "$T/m-end.txt"'
done
if command -v promtool >/dev/null 2>&1; then
	pt=$(promtool check metrics <"$T/m-end.txt" 2>&1)
	rc=$?
	GK_DETAIL="promtool (rc=$rc): $(printf '%s' "$pt" | head -5 | paste -sd'|' -)"
	gk_check "promtool check metrics accepts /metrics" test "$rc" = 0
fi

# ---- audit log ----------------------------------------------------------------------------------
gk_wait_for 30 audit_deny evil.example not_allowlisted "$A_ID"
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

# ---- after the exact counts ------------------------------------------------------------------
# The reason may be special_range or ip_not_pinned here.
socks_rep "S: the IP literal 169.254.169.254 is denied" $S_SRC 169.254.169.254 80 0x02

# ---- the cage token as proxy user name -------------------------------------------------------
# The token names the cage; without a (valid) one the source address must.
if [ -n "$A_TOKEN" ]; then
	o=$(sc --bind $A_SRC --methods 02 --user "$A_TOKEN" --password x \
		connect github.com 22 2>&1)
	GK_DETAIL="got: $(oneline "$o")"
	gk_check "A: RFC 1929 with A's token from A's source: method 0x02, auth ok, CONNECT ok" \
		eval '[ "$(kv method "$o")" = 0x02 ] && [ "$(kv auth "$o")" = 0x00 ] &&
		      [ "$(kv rep "$o")" = 0x00 ]'
	o=$(sc --bind $X_SRC --methods 02 --user "$A_TOKEN" --password x \
		connect github.com 22 2>&1)
	GK_DETAIL="got: $(oneline "$o")"
	gk_check "unknown source with A's token: auth ok, CONNECT github.com:22 ok" \
		eval '[ "$(kv auth "$o")" = 0x00 ] && [ "$(kv rep "$o")" = 0x00 ]'
	o=$(sc --bind $X_SRC --methods 02 --user "$A_TOKEN" --password x \
		connect evil.example 443 2>&1)
	GK_DETAIL="got: $(oneline "$o")"
	gk_check "unknown source with A's token: A's policy applies (evil.example 0x02)" \
		eval '[ "$(kv auth "$o")" = 0x00 ] && [ "$(kv rep "$o")" = 0x02 ]'
	o=$(sc --bind $X_SRC --methods 02 --user "not-${A_TOKEN}" --password x \
		connect github.com 22 2>&1)
	GK_DETAIL="got: $(oneline "$o")"
	gk_check "unknown source with a wrong token: refused at authentication" \
		eval '[ -z "$(kv rep "$o")" ] && { [ -n "$(kv auth "$o")" ] &&
		      [ "$(kv auth "$o")" != 0x00 ] || [ -n "$(kv closed "$o")" ] ||
		      [ "$(kv method "$o")" = 0xff ]; }'
	rm -f "$T/body"
	r=$(curl -sS --max-time 30 -x "http://$A_TOKEN:x@$HTTPP" \
		--interface $X_SRC --cacert "$CA" https://github.com/index.html 2>&1)
	GK_DETAIL="got: $(oneline "$r")"
	gk_check "unknown source, HTTP proxy with A's token as the proxy user: CONNECT works" \
		test "$r" = "hello from github.com"
	r=$(curl -sS --max-time 30 -x "http://$A_TOKEN:x@$HTTPP" \
		--interface $X_SRC http://github.com/index.html 2>&1)
	GK_DETAIL="got: $(oneline "$r")"
	gk_check "unknown source, HTTP proxy with A's token: absolute-form GET works" \
		test "$r" = "hello from github.com"
	curl_http $X_SRC -x "http://not-$A_TOKEN:x@$HTTPP" http://github.com/index.html
	GK_DETAIL=$(curl_detail)
	gk_check "unknown source, HTTP proxy with a wrong token: refused (403/407)" \
		eval '[ "$CURL_OUT" = 403 ] || [ "$CURL_OUT" = 407 ]'
else
	gk_fail "cage.create replies carry a token (RFC 1929 / proxy user checks)"
fi

# ---- stop ----------------------------------------------------------------------------------------
gk_check "no sanitizer reports in gatekeeperd's log" \
	eval '! grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:" "$T/GKD.log"'
for c in A B P S C L; do
	gk_ctl_close "$c"
done
gk_stop_daemon "$GKD" TERM
GK_DETAIL="exit status $GK_RC"
gk_check "SIGTERM: gatekeeperd exits 0" test "$GK_RC" = 0

gk_finish
