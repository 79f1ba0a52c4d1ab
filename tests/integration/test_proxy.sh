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
# The peek at a tunnel's first bytes (SNI, Host, what servers skip before
# a request or a hello) is test_proxy_peek.sh; the two share their
# helpers and the run's frame (proxy_lib.sh).
#
# Cages are named by source address. Clients pick theirs by binding:
# curl --interface, socks_client.py --bind, and the ssh ProxyCommand is
# socks_client.py too. git and openssl s_client cannot bind, so they run
# from cage L, whose source is 127.0.0.1 (what an unbound socket to
# 127.0.0.1 gets).
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

gk_daemon_arg test_proxy.sh "$@"
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
# cage_create NAME SOURCE LABEL ALLOW-JSON (proxy_lib.sh): sets <NAME>_ID
# and <NAME>_TOKEN.
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
gk_check "A: ... at once, not at the client's timeout (15 s): $LAST_MS ms" test "$LAST_MS" -lt 7500
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
gk_wait_for 300 listening 127.0.0.1 7070
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


# ---- how a handshake arrives: a byte at a time, or everything at once ----------------------------
fc() { "$PYTHON" "$GK_LIB_DIR/framing_client.py" --bind $A_SRC "$@" 2>&1; }
for m in socks-dribble:$SOCKS socks-pipelined:$SOCKS http-dribble:$HTTPP http-pipelined:$HTTPP; do
	o=$(fc --proxy "${m#*:}" "${m%%:*}" github.com 80)
	GK_DETAIL=$(oneline "$o")
	gk_check "A: ${m%%:*}: handshake framing does not matter, github.com's page arrives" \
		eval 'test "$(kv status "$o")" = 200 && test "$(kv bytes "$o")" -gt 0'
done
o=$(fc --proxy "$HTTPP" http-bighead github.com 80)
GK_DETAIL=$(oneline "$o")
gk_check "A: a 20,000-byte request head is refused with 431, not cut or hung" \
	test "$(kv status "$o")" = 431

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
# the tunnels' byte counts settle when they have ended: wait (bounded)
# until the active tunnels are back to what they were, not a fixed time
settled() {
	fetch_metrics "$T/mb1.txt" &&
		[ "$(gk_metric_sum "$T/mb1.txt" gatekeeper_active_tunnels)" = \
		  "$(gk_metric_sum "$T/mb0.txt" gatekeeper_active_tunnels)" ]
}
gk_wait_for 300 settled
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
u0=$(gk_metric_sum "$T/mb0.txt" gatekeeper_upstream_connect_seconds_count)
u1=$(gk_metric_sum "$T/mb1.txt" gatekeeper_upstream_connect_seconds_count)
i0=$(gk_metric_sum "$T/mb0.txt" gatekeeper_upstream_connect_seconds_bucket le=+Inf)
i1=$(gk_metric_sum "$T/mb1.txt" gatekeeper_upstream_connect_seconds_bucket le=+Inf)
GK_DETAIL="count $u0 -> $u1, +Inf bucket $i0 -> $i1"
gk_check "gatekeeper_upstream_connect_seconds: one observation per allowed fetch (4)" \
	eval '[ $((u1 - u0)) = 4 ] && [ $((i1 - i0)) = 4 ]'
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
gk_wait_for 300 eval 'grep -q held "$T/hold1.out" && grep -q held "$T/hold2.out"'
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
gk_check "gatekeeper_active_tunnels falls back when they close" gk_wait_for 300 tunnels_back

# ---- metrics: exact deltas per deny reason over the whole run --------------------------------
px_deny_totals

# ---- audit log ----------------------------------------------------------------------------------
gk_audit_wait "$AUDIT" 0 300 '"event":"[a-z0-9_.]*deny"' "\"cage\":\"$A_ID\"" \
	'evil\.example' '"reason":"not_allowlisted"'
px_audit_denies

# ---- traffic by host; allowed connections sampled into the audit log -------------------------
# B fetched gitlab.com's 5 MiB blob: its host's series has it (promtool
# checked the exposition above).
v=$(gk_metric_sum "$T/m-end.txt" gatekeeper_host_bytes_total host=gitlab.com direction=downstream)
GK_DETAIL="$(grep '^gatekeeper_host_' "$T/m-end.txt" | head -12 | paste -sd' ' -)"
gk_check "gatekeeper_host_bytes_total{host=\"gitlab.com\",direction=\"downstream\"} holds B's 5 MiB ($v)" \
	eval '[ "${v:-0}" -ge 5242880 ] &&
	      [ "$(gk_metric_sum "$T/m-end.txt" gatekeeper_host_connections_total host=gitlab.com)" -ge 1 ]'
# conn_allow CAGE HOST PORT: how many audit conn.allow lines of that cage,
# host and port (SOCKS5) moved bytes both ways.
conn_allow() {
	"$PYTHON" - "$AUDIT" "$@" <<'EOF'
import json, sys
path, cage, host, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
n = 0
for line in open(path):
    o = json.loads(line)
    if (o.get("event") == "conn.allow" and o.get("cage") == cage and
            o.get("host") == host and o.get("port") == port and
            o.get("proto") == "socks5" and o.get("up", 0) > 0 and
            o.get("down", 0) > 0 and "ms" in o and "conn" in o):
        n += 1
print(n)
EOF
}
GK_DETAIL="$(grep -c conn.allow "$AUDIT") conn.allow lines"
gk_check "audit-allowed is off by default: no conn.allow line so far" \
	eval '! grep -q "\"event\":\"conn.allow\"" "$AUDIT"'
echo 'audit-allowed = 2' >"$T/empty.conf"
kill -HUP "$GKD"
gk_wait_for 300 grep -q reloaded "$T/GKD.log"
for i in 1 2 3 4; do curl_socks $A_SRC http://github.com/index.html; done
gk_audit_wait -n 2 "$AUDIT" 0 300 '"event":"conn\.allow"' "\"cage\":\"$A_ID\"" \
	'"host":"github\.com"' '"port":80[,}]'
GK_DETAIL="$(grep conn.allow "$AUDIT" | tail -n 3 | paste -sd' ' -)"
gk_check "SIGHUP with audit-allowed = 2: 4 tunnels of A to github.com:80 give 2 conn.allow audit lines (cage, host, port, proto, up, down, ms)" \
	eval '[ "$(conn_allow "$A_ID" github.com 80)" = 2 ]'
: >"$T/empty.conf"
kill -HUP "$GKD"
gk_wait_for 300 eval '[ "$(grep -c reloaded "$T/GKD.log")" -ge 2 ]'

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
px_stop A B P S C L

gk_finish
