#!/usr/bin/env bash
#
# test_e2e.sh: end-to-end test of gatekeeper: real programs (git, curl,
# dig, ip, python) run inside `gk-run` cages, whose only way out is
# gatekeeperd, against a hermetic "internet" of real servers.
#
#   bash tests/integration/test_e2e.sh build/gatekeeperd build/spawner/gk-run
#
# Runs as root in namespaces it creates itself (lib.sh: a fresh network,
# mount and PID namespace; everything started dies with it). The network
# namespace lib.sh makes stands in for the host: gatekeeperd runs there
# with its defaults (gateway 10.143.0.1, cages from 10.143.0.0/16, its
# nftables table "inet gatekeeper" and gk-* links), and gk-run runs there,
# as root and as an unprivileged user. The "internet" is a second netns
# (e2e_net.sh, whose header has the topology diagram): nginx with TLS from
# a test CA serving github.com, api.github.com, codeload.github.com,
# evil.example and https://github.com/acme/hello.git over smart HTTP
# (git-http-backend through fcgiwrap), dnsmasq as the ISP's resolver
# (192.0.2.53, the host's resolv.conf and gatekeeperd's upstream) and as
# "another resolver" (198.51.100.53), and TCP/UDP echo services in the
# internet and on the host that no cage may reach.
#
# gk-run's default --fs sandbox gives a cage a fresh /tmp, so the files a
# cage needs from the test's temp dir (the CA, the probe scripts, work
# directories) are passed with --ro / --rw; the CA reaches curl and git
# through GIT_SSL_CAINFO, CURL_CA_BUNDLE and SSL_CERT_FILE in gk-run's
# environment (not on its list of dropped variables), and the cage's
# proxies through the http_proxy/https_proxy gk-run sets. /var/tmp (mode
# 1777 on the host) is the "writable outside --rw" target.
#
# The unprivileged user is gk-e2e (created here if missing, idempotently,
# as a system user without a home, in group "gatekeeper", which may use
# the control socket; the group is created too). Programs run under
# setpriv --reuid/--regid/--init-groups.
#
# Cases: git clone and byte-exact curl with --allow '*.github.com' (root
# and user); a host not on the list is refused (not timed out) with a message and
# counts in gatekeeper_denied_total; escapes (direct IPs, UDP, DNS to
# another resolver, IPv6, the host's and the gateway's other ports,
# another cage, changing the cage's address or routes, writing outside
# --rw, reading a --hide path) all fail, as root and as the user; kill -9
# of gk-run leaves no link, set element or process behind; kill -9 of
# gatekeeperd, then a restart, removes the leftovers, the running command is
# registered again by its gk-run, and new cages work;
# --timeout exits 124; SIGTERM removes the table.
#
# Prints "ok   ..." / "FAIL ..." per check and a summary; exits 1 if any
# check failed or anything needed is missing (never a silent skip: not
# root, no namespaces or a missing tool is a failure with a message).
# GK_E2E_INTERNET_ONLY=1 stops after the internet checks (gk-run may then
# be omitted). GK_KEEP_TMP=1 keeps the temp directory (logs) for a
# post-mortem.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_e2e.sh

e2e_args "${GK_E2E_INTERNET_ONLY:-0}" "$@"
e2e_preamble dig dnsmasq curl unshare nsenter ip mount nginx fcgiwrap openssl \
    git /usr/lib/git-core/git-http-backend nft bwrap setpriv useradd \
    groupadd usermod getent sha256sum timeout pgrep ping "$PYTHON"
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
METRICS_BIND=0.0.0.0:9477	# on every address: a cage must still not reach it
RANDTAG=$$$RANDOM

# ---------------------------------------------------------------------------
# ---- the internet -------------------------------------------------------------
e2e_begin
CA=$EN_DIR/ca.crt
BLOB_SHA=$(cat "$EN_DIR/blob.sha256")
GIT_HEAD=$(cat "$EN_DIR/git-head")
gk_ok "the test internet is up (internet netns pid $EN_NS_PID: dnsmasq, nginx, fcgiwrap, echo)"

GK_DETAIL="links: $(ip -o link show | awk -F': ' '{print $2}' | paste -sd, -)"
gk_check "internet: the host netns has lo and up0, and no gk-* link yet" \
	eval '[ "$(ip -o link show | grep -vcE ": (lo|up0)[:@]")" -eq 0 ]'

for nv in github.com:192.0.2.10 api.github.com:192.0.2.11 \
    codeload.github.com:192.0.2.12 evil.example:203.0.113.66; do
	r=$(dig +short +time=1 +tries=2 "${nv%%:*}" A 2>&1)
	GK_DETAIL="got: $(oneline "$r")"
	gk_check "internet: the host resolves ${nv%%:*} -> ${nv#*:} via resolv.conf ($EN_RESOLVER)" \
		test "$r" = "${nv#*:}"
done
r=$(ping -n -c 1 -W 2 192.0.2.10 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "internet: the host pings 192.0.2.10" eval '[[ "$r" == *" 0% packet loss"* ]]'
r=$(dig +short +time=1 +tries=2 @"$EN_OTHER_RESOLVER" evil.example A 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "internet: the other resolver $EN_OTHER_RESOLVER answers evil.example -> 203.0.113.66" \
	test "$r" = 203.0.113.66

hc() {	# curl from the host, the test CA trusted through the environment
	as root curl -sS --noproxy '*' --max-time 20 --connect-timeout 5 "$@"
}
for n in github.com api.github.com codeload.github.com evil.example; do
	r=$(hc "https://$n/index.html" 2>&1)
	GK_DETAIL="got: $(oneline "$r")"
	gk_check "internet: https://$n/ from the host (name via dnsmasq, CA via CURL_CA_BUNDLE)" \
		test "$r" = "hello from $n"
done
sha=$(hc https://github.com/blob.bin 2>/dev/null | sha256sum | awk '{print $1}')
GK_DETAIL="sha256 $sha, want $BLOB_SHA"
gk_check "internet: curl https://github.com/blob.bin from the host is byte-exact (1 MiB)" \
	test "$sha" = "$BLOB_SHA"
r=$(hc -g "https://[$EN_ADDR6_GITHUB]/index.html" -H 'Host: github.com' -k 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "internet: github.com over IPv6 ([$EN_ADDR6_GITHUB]) from the host" \
	test "$r" = "hello from github.com"
r=$(hc -D - -o /dev/null \
	"https://github.com/acme/hello.git/info/refs?service=git-upload-pack" 2>&1 |
	tr -d '\r' | sed -n 's/^[Cc]ontent-[Tt]ype: //p')
GK_DETAIL="Content-Type: $r"
gk_check "internet: info/refs?service=git-upload-pack is smart HTTP (git-http-backend)" \
	test "$r" = application/x-git-upload-pack-advertisement
# The echo services the escape checks rely on (UDP replies come from the
# address asked, so a connected client accepts them).
for kind in tcp udp; do
	for a in 192.0.2.10 192.0.2.53 "$EN_ADDR6_GITHUB"; do
		r=$(en_echo_probe "$kind" "$a" "$EN_ECHO_PORT" 2>&1)
		GK_DETAIL="got: $r"
		gk_check "internet: the echo service answers on [$a]:$EN_ECHO_PORT/$kind" \
			eval '[[ "$r" == internet* ]]'
	done
	for a in "$EN_HOST_ADDR" 127.0.0.1 "$EN_HOST_ADDR6"; do
		r=$(en_echo_probe "$kind" "$a" "$EN_ECHO_PORT" 2>&1)
		GK_DETAIL="got: $r"
		gk_check "internet: the host's echo service answers on [$a]:$EN_ECHO_PORT/$kind" \
			eval '[[ "$r" == host* ]]'
	done
done

mkdir -p "$T/home-root" "$T/clone-host"
rm -rf "$T/clone-host/hello"
r=$(cd "$T/clone-host" && as root timeout 60 git clone -q \
	https://github.com/acme/hello.git 2>&1)
tree_check "$T/clone-host/hello"
GK_DETAIL="git: $(oneline "$r") | $TREE_WHY"
gk_check "internet: plain git clone https://github.com/acme/hello.git from the host gives the right tree" \
	test "$TREE_WHY" = ok
GK_DETAIL=$(grep git-upload-pack "$EN_DIR/nginx-access.log" | tail -3)
gk_check "internet: the clone used smart HTTP (POST .../git-upload-pack 200)" \
	grep -q 'POST /acme/hello.git/git-upload-pack HTTP/[0-9.]*" 200' \
	"$EN_DIR/nginx-access.log"
rm -rf "$T/clone-host/evil"
r=$(cd "$T/clone-host" && as root timeout 60 git clone -q \
	https://evil.example/acme/hello.git evil 2>&1)
tree_check "$T/clone-host/evil"
GK_DETAIL="git: $(oneline "$r") | $TREE_WHY"
gk_check "internet: evil.example serves the repository too (so a leak would show)" \
	test "$TREE_WHY" = ok

if [ "${GK_E2E_INTERNET_ONLY:-0}" = 1 ]; then
	gk_finish "internet only"
fi
[ -n "$GKRUN" ] || gk_abort "gk-run given"

# ---- the unprivileged user ---------------------------------------------------
e2e_user

# ---- gatekeeperd ---------------------------------------------------------------
: >"$T/empty.conf"
GKD_ARGS=(-f -c "$T/empty.conf" --control "$SOCK" --upstream "$EN_RESOLVER"
	--metrics "$METRICS_BIND" --audit-log "$AUDIT" --log-level debug)
gk_start_daemon GKD_PID "$GKD" "${GKD_ARGS[@]}"
daemon_ready "$GKD_PID" || gk_abort "gatekeeperd starts (control socket, metrics)" "$T/GKD_PID.log"
gk_ok "gatekeeperd is ready (pid $GKD_PID)"
GK_DETAIL="$(nft list table inet gatekeeper 2>&1 | head -5)"
gk_check "gatekeeperd created the nftables table inet gatekeeper with the set cages" \
	eval 'nft list set inet gatekeeper cages >/dev/null 2>&1'
GK_DETAIL=$(ls -l "$SOCK" 2>&1)
gk_check "the control socket is group $E2E_GROUP, mode 0660" \
	eval '[ "$(stat -c "%a %G" "$SOCK")" = "660 $E2E_GROUP" ]'
chmod 755 "$T/run"

# Files a cage reads: the CA, the probe scripts (read-only bind).
e2e_probe_script
cp "$EN_DIR/echo.py" "$SHARE/echo.py"
# escapes.sh OUTDIR PEER-ADDR HIDDEN-FILE OUTSIDE-FILE CONTROL-SOCKET: every
# escape attempt, each into OUTDIR/NAME.out and OUTDIR/NAME.rc. Runs inside
# a cage.
cat >"$SHARE/escapes.sh" <<'EOF'
out=$1 peer=$2 hidden=$3 outside=$4 ctl=$5
share=$(dirname "$0")
p() { name=$1; shift; "$@" >"$out/$name.out" 2>&1 </dev/null; echo $? >"$out/$name.rc"; }
probe() { python3 "$share/probe.py" "$@"; }
c() { curl -sS --max-time 5 --connect-timeout 3 "$@"; }
p ip_tcp        probe tcp 192.0.2.10 7777
p ip_https      c --noproxy '*' -k https://192.0.2.10/index.html
p ip_proxyenv   c -k https://192.0.2.10/index.html
p evil_ip       c --noproxy '*' -k https://203.0.113.66/index.html
p evil_resolve  c --noproxy '*' -k --resolve evil.example:443:203.0.113.66 https://evil.example/index.html
p udp_inet      probe udp 192.0.2.10 7777
p icmp          ping -n -c 1 -W 2 192.0.2.10
p udp_resolver  probe udp 192.0.2.53 7777
p udp_host      probe udp 198.51.100.249 7777
p udp_gw        probe udp 10.143.0.1 7777
p dns_other     dig @198.51.100.53 evil.example A +time=2 +tries=1
p dns_other_tcp dig @198.51.100.53 evil.example A +tcp +time=2 +tries=1
p dns_other_ok  dig @198.51.100.53 github.com A +time=2 +tries=1
p dns_system    dig evil.example A +time=2 +tries=1
p v6_tcp        probe tcp 2001:db8::10 7777
p v6_udp        probe udp 2001:db8::10 7777
p v6_https      c -6 --noproxy '*' -gk https://[2001:db8::10]/index.html
p v6_host       probe tcp 2001:db8:ffff::1 7777
p host_tcp      probe tcp 198.51.100.249 7777
p gw_tcp        probe tcp 10.143.0.1 7777
p gw_metrics    c --noproxy '*' http://10.143.0.1:9477/metrics
p peer_tcp      probe tcp "$peer" 7000
p peer_udp      probe udp "$peer" 7000
p ip_addr_add   ip addr add 10.143.250.250/32 dev eth0
p ip_route_add  ip route add 198.51.100.0/24 dev eth0
p ip_route_del  ip route del default
p ip_link_down  ip link set eth0 down
p write_outside sh -c "echo escaped > '$outside'"
p write_usr     sh -c "echo escaped > /usr/gk-e2e-escape"
p write_rw      sh -c "echo inside > '$out/rw-ok'"
p read_hidden   cat "$hidden"
p control       python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(3)
s.connect(sys.argv[1])
s.sendall(b"{\"op\":\"cage.list\"}\n")
print(s.recv(4096).decode(errors="replace"))' "$ctl"
p unshare_user  unshare -U true
p unshare_net   unshare -rn true
p ls_hidden     ls -A "$(dirname "$hidden")"
echo done >"$out/done"
EOF
chmod -R a+rX "$SHARE"

# ---- gk-run basics ---------------------------------------------------------------
cage root --net none -- /bin/true
GK_DETAIL=$(run_detail)
gk_check "gk-run --net none -- /bin/true exits 0" test "$RUN_RC" = 0
cage root --net none -- /bin/sh -c 'exit 3'
GK_DETAIL=$(run_detail)
gk_check "gk-run passes the command's exit status (3)" test "$RUN_RC" = 3
cage root --net none -- /nonexistent/gk-e2e-cmd
GK_DETAIL=$(run_detail)
gk_check "gk-run: a command that does not exist exits 127" test "$RUN_RC" = 127
cage root --net none -- /bin/sh -c 'kill -TERM $$'
GK_DETAIL=$(run_detail)
gk_check "gk-run: a command killed by SIGTERM exits 143" test "$RUN_RC" = 143
cage user --net none -- /bin/sh -c 'printf "%s|%s|%s|%s" "$(id -u)" "$GIT_SSL_CAINFO" "$CURL_CA_BUNDLE" "$SSL_CERT_FILE"'
GK_DETAIL=$(run_detail)
gk_check "gk-run as $E2E_USER: runs, and GIT_SSL_CAINFO, CURL_CA_BUNDLE, SSL_CERT_FILE pass into the sandbox" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(cat "$T/run.out")" = "$E2E_UID|$CA|$CA|$CA" ]'
cage root --net none -- /usr/bin/curl -sS --max-time 3 --noproxy '*' http://192.0.2.10/index.html
GK_DETAIL=$(run_detail)
gk_check "gk-run --net none: no network at all (curl to 192.0.2.10 fails)" \
	eval '[ "$RUN_RC" != 0 ] && ! grep -q "hello from" "$T/run.out"'
GK_DETAIL=$(leftover_detail)
gk_check "no gk-* link or set element after --net none runs" no_leftovers

# CA_ARGS: gk-run options that make the CA and probes visible in a cage.
CA_ARGS=(--ro "$EN_DIR" --ro "$SHARE")

# ---- the main case: git clone and curl, --allow '*.github.com' alone ----------
main_case() {	# WHO
	local who=$1 w=$T/work-$1 h
	rm -rf "$w/hello" "$w/blob.bin"
	fetch_metrics "$T/m-main-$who.txt"
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" --rw "$w" --cwd "$w" \
		-- git clone -q https://github.com/acme/hello.git hello
	tree_check "$w/hello"
	GK_DETAIL="$(run_detail) | $TREE_WHY"
	gk_check "$who: gk-run --allow '*.github.com' -- git clone https://github.com/acme/hello.git: right tree (${RUN_MS} ms)" \
		eval '[ "$RUN_RC" = 0 ] && [ "$TREE_WHY" = ok ]'
	if [ "$who" = user ]; then
		GK_DETAIL=$(stat -c "%u %U %n" "$w/hello/README" 2>&1)
		gk_check "user: the clone belongs to $E2E_USER outside the sandbox" \
			eval '[ "$(stat -c %u "$w/hello/README")" = "$E2E_UID" ]'
	fi
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" --rw "$w" --cwd "$w" \
		-- curl -sS --max-time 30 -o "$w/blob.bin" https://github.com/blob.bin
	GK_DETAIL="$(run_detail) sha $(sha256sum <"$w/blob.bin" 2>/dev/null | cut -c1-16)"
	gk_check "$who: gk-run --allow '*.github.com' -- curl https://github.com/blob.bin is byte-exact" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(sha256sum <"$w/blob.bin" | awk "{print \$1}")" = "$BLOB_SHA" ]'
	for n in api.github.com codeload.github.com; do
		cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
			-- curl -sS --max-time 20 "https://$n/index.html"
		GK_DETAIL=$(run_detail)
		gk_check "$who: curl https://$n/ in a '*.github.com' cage" \
			eval '[ "$RUN_RC" = 0 ] && [ "$(cat "$T/run.out")" = "hello from $n" ]'
	done
	wait_ms 300 no_leftovers
	GK_DETAIL="$(leftover_detail) after ${WAIT_MS} ms"
	gk_check "$who: no gk-* link or set element left once the cages ended (${WAIT_MS} ms; waited up to 30 s)" \
		no_leftovers
}
main_case root
main_case user
GK_DETAIL=$(grep -c 'POST /acme/hello.git/git-upload-pack' "$EN_DIR/nginx-access.log")
gk_check "the cages' clones used smart HTTP too (4 POSTs to git-upload-pack in all)" \
	eval '[ "$(grep -c "POST /acme/hello.git/git-upload-pack HTTP/[0-9.]*\" 200" "$EN_DIR/nginx-access.log")" -ge 4 ]'

# ---- a host that is not on the list ----------------------------------------------
deny_case() {	# WHO
	local who=$1 before after
	fetch_metrics "$T/m-deny-a.txt"
	before=$(gk_metric_sum "$T/m-deny-a.txt" gatekeeper_denied_total)
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- curl -sS --max-time 30 https://evil.example/index.html
	GK_DETAIL=$(run_detail)
	gk_check "$who: curl https://evil.example/ in a '*.github.com' cage is refused, not timed out: no curl 28, in under half its --max-time 30 (${RUN_MS} ms)" \
		eval '[ "$RUN_RC" != 0 ] && [ "$RUN_RC" != 28 ] && [ "$RUN_MS" -lt 15000 ] &&
		      ! grep -q "hello from" "$T/run.out"'
	gk_info "$who: curl's message: $(oneline "$(cat "$T/run.err")")"
	gk_check "$who: ... with a clear message (names evil.example, or the proxy's 403)" \
		eval 'grep -Eqi "evil\.example|403|denied|not allowed" "$T/run.err"'
	fetch_metrics "$T/m-deny-b.txt"
	after=$(gk_metric_sum "$T/m-deny-b.txt" gatekeeper_denied_total)
	GK_DETAIL="gatekeeper_denied_total (all series) $before -> $after"
	gk_check "$who: gatekeeper_denied_total on /metrics moved" \
		eval '[ "$after" -gt "$before" ]'
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" --rw "$T/work-$who" \
		--cwd "$T/work-$who" -- timeout 30 git clone -q https://evil.example/acme/hello.git evil
	GK_DETAIL=$(run_detail)
	gk_check "$who: git clone https://evil.example/... is refused, not timed out: not timeout's 124, in under half of its 30 s (${RUN_MS} ms)" \
		eval '[ "$RUN_RC" != 0 ] && [ "$RUN_RC" != 124 ] && [ "$RUN_MS" -lt 15000 ] && [ -s "$T/run.err" ]'
}
evil_queries_before=$(grep -c 'evil\.example' "$EN_DIR/upstream.log")
deny_case root
deny_case user

# ---- escapes ---------------------------------------------------------------------
# A second cage B (the user's) listens on its own address, TCP and UDP 7000.
mkdir -p "$T/peer"
chown "$E2E_USER:" "$T/peer"
rm -f "$T/peer/ready"
cage_bg PEER user --allow x.example --ro "$SHARE" --rw "$T/peer" \
	-- python3 "$SHARE/echo.py" cage-b 7000 "$T/peer/ready"
gk_wait_for 100 test -s "$T/peer/ready"
PEER_ADDR=$(awk '{print $2}' "$T/peer/ready" 2>/dev/null)
GK_DETAIL="ready: $(cat "$T/peer/ready" 2>&1) | $(oneline "$(cat "$T/PEER.err" 2>/dev/null)")"
gk_check "cage B (user, --allow x.example) listens on its own address $PEER_ADDR:7000" \
	eval '[[ "$PEER_ADDR" == 10.143.* ]]'
r=$(en_echo_probe tcp "${PEER_ADDR:-10.143.255.254}" 7000 2>&1)
GK_DETAIL="got: $r"
gk_check "control: the host reaches cage B at $PEER_ADDR:7000 (so a cage that cannot is blocked, not broken)" \
	test "$r" = cage-b

mkdir -p "$T/secret"
echo "gk-e2e-secret-$RANDTAG" >"$T/secret/key"
chmod 755 "$T/secret"
chmod 644 "$T/secret/key"
cage user --net none --ro "$T/secret" -- cat "$T/secret/key"
GK_DETAIL=$(run_detail)
gk_check "control: without --hide, a cage reads $T/secret/key" \
	grep -q "gk-e2e-secret-$RANDTAG" "$T/run.out"

# escaped NAME PATTERN: the probe's output shows PATTERN (it got through).
esc_out() { cat "$ESC/$1.out" 2>/dev/null; }
esc_rc() { cat "$ESC/$1.rc" 2>/dev/null || echo missing; }
escape_check() {	# WHO NAME PATTERN WHAT
	local who=$1 name=$2 pat=$3 what=$4
	GK_DETAIL="rc=$(esc_rc "$name") $(oneline "$(esc_out "$name")")"
	gk_check "$who escape: $what fails" \
		eval '[ -f "$ESC/$name.rc" ] && ! esc_out "$name" | grep -Eq "$pat"'
}
# (In the eval'd conditions, name the probe through a local variable:
# "$1", "$2" there would be gk_check's own arguments.)
eperm_check() {	# WHO NAME WHAT
	local who=$1 name=$2 what=$3
	GK_DETAIL="rc=$(esc_rc "$name") $(oneline "$(esc_out "$name")")"
	gk_check "$who escape: $what: Operation not permitted" \
		eval '[ "$(esc_rc "$name")" != 0 ] && [ "$(esc_rc "$name")" != missing ] &&
		      esc_out "$name" | grep -q "Operation not permitted"'
}
dns_refused_check() {	# WHO NAME WHAT
	local who=$1 name=$2 what=$3 st
	st=$(esc_out "$name" | sed -n 's/.*status: \([A-Z]*\),.*/\1/p' | head -1)
	GK_DETAIL="status=${st:-none} $(oneline "$(esc_out "$name" | grep -E 'status|IN[[:space:]]+A')")"
	gk_check "$who escape: $what is answered with a refusal (NXDOMAIN/REFUSED), not 203.0.113.66" \
		eval '{ [ "$st" = NXDOMAIN ] || [ "$st" = REFUSED ]; } &&
		      ! esc_out "$name" | grep -q 203.0.113.66'
}

escapes() {	# WHO
	local who=$1
	ESC=$T/esc-$who
	OUTSIDE=/var/tmp/gk-e2e-escape-$who-$RANDTAG	# writable for anyone on the host
	rm -rf "$ESC" "$OUTSIDE"
	mkdir -p "$ESC"
	[ "$who" = user ] && chown "$E2E_USER:" "$ESC"
	cage "$who" --allow '*.github.com' --ro "$SHARE" --rw "$ESC" \
		--hide "$T/secret" \
		-- bash "$SHARE/escapes.sh" "$ESC" "${PEER_ADDR:-10.143.255.254}" \
		"$T/secret/key" "$OUTSIDE" "$SOCK"
	GK_DETAIL=$(run_detail)
	gk_check "$who: the escape script ran to the end in a '*.github.com' cage (${RUN_MS} ms)" \
		eval '[ "$RUN_RC" = 0 ] && [ -f "$ESC/done" ]'
	escape_check "$who" ip_tcp internet "TCP straight to 192.0.2.10:7777 (no DNS, no proxy)"
	escape_check "$who" ip_https "hello from" "https://192.0.2.10/ without the proxy"
	escape_check "$who" ip_proxyenv "hello from" "https://192.0.2.10/ (an IP literal) with the cage's own settings"
	escape_check "$who" evil_ip "hello from" "https://203.0.113.66/ (evil.example's address) directly"
	escape_check "$who" evil_resolve "hello from" "curl --resolve evil.example:443:203.0.113.66"
	escape_check "$who" udp_inet "internet" "UDP to 192.0.2.10:7777"
	escape_check "$who" icmp " 0% packet loss|bytes from" "ping 192.0.2.10 (ICMP)"
	escape_check "$who" udp_resolver "internet" "UDP to 192.0.2.53:7777"
	escape_check "$who" udp_host "host" "UDP to the host's address $EN_HOST_ADDR:7777"
	escape_check "$who" udp_gw "host" "UDP to the gateway $GW:7777"
	dns_refused_check "$who" dns_other "dig @$EN_OTHER_RESOLVER evil.example (another resolver, UDP)"
	dns_refused_check "$who" dns_other_tcp "dig +tcp @$EN_OTHER_RESOLVER evil.example"
	dns_refused_check "$who" dns_system "dig evil.example (the system resolver $EN_RESOLVER)"
	GK_DETAIL=$(oneline "$(esc_out dns_other_ok | grep -E 'status|IN[[:space:]]+A')")
	gk_check "$who: dig @$EN_OTHER_RESOLVER github.com is answered (redirected to gatekeeperd, allowed)" \
		eval 'esc_out dns_other_ok | grep -q "status: NOERROR" &&
		      esc_out dns_other_ok | grep -Eq "IN[[:space:]]+A[[:space:]]+192\.0\.2\.10"'
	escape_check "$who" v6_tcp internet "IPv6 TCP to [2001:db8::10]:7777"
	escape_check "$who" v6_udp internet "IPv6 UDP to [2001:db8::10]:7777"
	escape_check "$who" v6_https "hello from" "https://[2001:db8::10]/ over IPv6"
	escape_check "$who" v6_host host "IPv6 TCP to the host [$EN_HOST_ADDR6]:7777"
	escape_check "$who" host_tcp host "TCP to the host's other port $EN_HOST_ADDR:7777"
	escape_check "$who" gw_tcp host "TCP to the gateway's other port $GW:7777 (host service on 0.0.0.0)"
	escape_check "$who" gw_metrics gatekeeper_ "the gateway's metrics port $GW:9477 (bound to 0.0.0.0)"
	escape_check "$who" peer_tcp cage-b "TCP to another cage ($PEER_ADDR:7000)"
	escape_check "$who" peer_udp cage-b "UDP to another cage ($PEER_ADDR:7000)"
	eperm_check "$who" ip_addr_add "ip addr add 10.143.250.250/32 dev eth0"
	eperm_check "$who" ip_route_add "ip route add 198.51.100.0/24 dev eth0"
	eperm_check "$who" ip_route_del "ip route del default"
	eperm_check "$who" ip_link_down "ip link set eth0 down"
	GK_DETAIL="rc=$(esc_rc write_outside) $(oneline "$(esc_out write_outside)") host file: $(cat "$OUTSIDE" 2>&1)"
	gk_check "$who escape: writing $OUTSIDE (/var/tmp is writable for $who on the host; not under --rw) fails" \
		eval '[ "$(esc_rc write_outside)" != 0 ] && [ ! -e "$OUTSIDE" ]'
	rm -f "$OUTSIDE"
	GK_DETAIL="rc=$(esc_rc write_usr) $(oneline "$(esc_out write_usr)")"
	gk_check "$who escape: writing /usr/gk-e2e-escape fails" \
		eval '[ "$(esc_rc write_usr)" != 0 ] && [ ! -e /usr/gk-e2e-escape ]'
	GK_DETAIL="rc=$(esc_rc write_rw) $(cat "$ESC/rw-ok" 2>&1)"
	gk_check "$who: writing under --rw works and shows outside" \
		eval '[ "$(esc_rc write_rw)" = 0 ] && [ "$(cat "$ESC/rw-ok")" = inside ]'
	GK_DETAIL="rc=$(esc_rc read_hidden) $(oneline "$(esc_out read_hidden)") | ls: $(oneline "$(esc_out ls_hidden)")"
	gk_check "$who escape: reading --hide $T/secret/key fails" \
		eval '! esc_out read_hidden | grep -q gk-e2e-secret &&
		      ! esc_out ls_hidden | grep -qx key'
	escape_check "$who" control '"ok"' "gatekeeperd's control socket (its directory is hidden in every mode)"
	GK_DETAIL="rc=$(esc_rc unshare_user) $(oneline "$(esc_out unshare_user)") | rc=$(esc_rc unshare_net) $(oneline "$(esc_out unshare_net)")"
	gk_check "$who escape: creating namespaces (unshare -U, unshare -rn) fails" \
		eval '[ "$(esc_rc unshare_user)" != 0 ] && [ "$(esc_rc unshare_user)" != missing ] &&
		      [ "$(esc_rc unshare_net)" != 0 ] && [ "$(esc_rc unshare_net)" != missing ]'
	rm -f /usr/gk-e2e-escape 2>/dev/null
}
fetch_metrics "$T/m-esc-a.txt"
escapes root
escapes user
cage user --allow '*.github.com' --ro "$T/run" -- true
GK_DETAIL=$(run_detail)
gk_check "gk-run --ro of the control socket's directory is refused (125, says why)" \
	eval '[ "$RUN_RC" = 125 ] && grep -q "holds gatekeeperd.s control socket, which no sandbox may reach" "$T/run.err"'
cage user --fs host --allow '*.github.com' -- python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(3)
s.connect(sys.argv[1])
s.sendall(b"{\"op\":\"cage.list\"}\n")
print(s.recv(4096).decode(errors="replace"))' "$SOCK"
GK_DETAIL=$(run_detail)
gk_check "user escape: --fs host still hides gatekeeperd's control socket" \
	eval '[ "$RUN_RC" != 0 ] && ! grep -q "\"ok\"" "$T/run.out"'
fetch_metrics "$T/m-esc-b.txt"
a=$(gk_metric_sum "$T/m-esc-a.txt" gatekeeper_dns_queries_total verdict!=allowed)
b=$(gk_metric_sum "$T/m-esc-b.txt" gatekeeper_dns_queries_total verdict!=allowed)
GK_DETAIL="gatekeeper_dns_queries_total{verdict!=allowed} $a -> $b"
gk_check "gatekeeperd counted the redirected evil.example queries as not allowed" \
	eval '[ "$b" -ge $((a + 6)) ]'
n=$(grep -c 'evil\.example' "$EN_DIR/upstream.log")
GK_DETAIL="upstream log lines naming evil.example: $evil_queries_before -> $n: $(grep 'evil\.example' "$EN_DIR/upstream.log" | tail -3 | paste -sd'|' -)"
gk_check "no query for evil.example from a cage reached any real resolver" \
	test "$n" = "$evil_queries_before"

GK_DETAIL="gatekeeper_cages $(gk_metric_sum "$T/m-esc-b.txt" gatekeeper_cages)"
gk_check "gatekeeper_cages shows cage B while it runs" \
	eval '[ "$(gk_metric_sum "$T/m-esc-b.txt" gatekeeper_cages)" -ge 1 ]'
kill -TERM "$PEER" 2>/dev/null
gk_wait_exit "$PEER" 50 || kill9 "$PEER"
GK_DETAIL="gk-run exit $GK_RC"
gk_info "cage B's gk-run exited $GK_RC after SIGTERM"
wait_ms 300 no_leftovers
GK_DETAIL="$(leftover_detail 'echo\.py cage-b') after ${WAIT_MS} ms"
gk_check "cage B stopped: no link, set element or process left (${WAIT_MS} ms; waited up to 30 s)" \
	eval 'no_leftovers && ! pgrep -f "echo\.py cage-b" >/dev/null'

# ---- --timeout ------------------------------------------------------------------
cage user --allow '*.github.com' --timeout 1 -- sleep "30.$RANDTAG"
GK_DETAIL=$(run_detail)
# ended by the timeout: 124, not before 1 s, and well before the
# command's own end (30 s)
gk_check "gk-run --timeout 1 -- sleep 30 exits 124 by the timeout: after 1 s, long before the sleep's 30 s (${RUN_MS} ms)" \
	eval '[ "$RUN_RC" = 124 ] && [ "$RUN_MS" -ge 900 ] && [ "$RUN_MS" -lt 15000 ]'
wait_ms 300 eval 'no_leftovers && ! pgrep -f "sleep 30\.$RANDTAG" >/dev/null'
GK_DETAIL="$(leftover_detail "sleep 30\.$RANDTAG")"
gk_check "--timeout: the sleep, its link and its set element are gone (waited up to 30 s)" \
	eval 'no_leftovers && ! pgrep -f "sleep 30\.$RANDTAG" >/dev/null'

# ---- kill -9 of gk-run -----------------------------------------------------------
MARK="3600.1$RANDTAG"
cage_bg K9 user --allow '*.github.com' -- sleep "$MARK"
wait_ms 300 eval '[ "$(nlinks)" -ge 1 ] && [ "$(nelems)" -ge 1 ] && pgrep -f "sleep $MARK" >/dev/null'
GK_DETAIL="$(leftover_detail "sleep $MARK") | $(oneline "$(cat "$T/K9.err")")"
gk_check "a running cage has its link, its set element and its process" \
	eval '[ "$(nlinks)" = 1 ] && [ "$(nelems)" = 1 ] && pgrep -f "sleep $MARK" >/dev/null'
kill9 "$K9"
wait_ms 300 eval 'no_leftovers && ! pgrep -f "sleep $MARK" >/dev/null'
GK_DETAIL="$(leftover_detail "sleep $MARK") after ${WAIT_MS} ms"
gk_check "kill -9 of gk-run: no link, set element or process left (${WAIT_MS} ms; waited up to 30 s)" \
	eval 'no_leftovers && ! pgrep -f "sleep $MARK" >/dev/null'

# ---- kill -9 of gatekeeperd, then a restart --------------------------------------
MARK2="3600.2$RANDTAG"
cage_bg KD user --allow '*.github.com' -- sleep "$MARK2"
wait_ms 300 eval '[ "$(nlinks)" -ge 1 ] && [ "$(nelems)" -ge 1 ]'
old_links=$(gk_links | paste -sd, -)
GK_DETAIL=$(leftover_detail "sleep $MARK2")
gk_check "a cage runs before gatekeeperd is killed (link $old_links)" \
	eval '[ "$(nlinks)" = 1 ] && [ "$(nelems)" = 1 ]'
kill9 "$GKD_PID"
sleep 0.5
gk_info "after kill -9 of gatekeeperd: $(leftover_detail "sleep $MARK2"), table: $(nft list tables 2>/dev/null | paste -sd, -)"
if gk_wait_exit "$KD" 30; then
	gk_info "the orphaned cage's gk-run exited $GK_RC"
else
	gk_info "the orphaned cage's gk-run is still running 3 s after gatekeeperd died"
fi
rm -f "$T/GKD_PID.log.1"
[ -f "$T/GKD_PID.log" ] && mv "$T/GKD_PID.log" "$T/GKD_PID.log.1"
gk_start_daemon GKD_PID "$GKD" "${GKD_ARGS[@]}"
if daemon_ready "$GKD_PID"; then
	gk_ok "gatekeeperd restarts after kill -9 (pid $GKD_PID)"
else
	gk_fail "gatekeeperd restarts after kill -9" "$(gk_tail "$T/GKD_PID.log" 10)"
fi
# gk-run keeps its command running when gatekeeperd goes away and
# registers it again once gatekeeperd is back: the old link went with the
# restart's sweep, the new cage has one of its own.
wait_ms 300 grep -q "gatekeeperd is back:" "$T/KD.err"
GK_DETAIL="$(leftover_detail) (before: $old_links); gk-run: $(oneline "$(cat "$T/KD.err")")"
gk_check "after the restart the orphaned cage's gk-run registers its command again: one link, one set element (${WAIT_MS} ms)" \
	eval '[ "$(nlinks)" -eq 1 ] && [ "$(nelems)" -eq 1 ] &&
	    grep -q "gatekeeperd is back:" "$T/KD.err"'
# it said so when gatekeeperd went away
GK_DETAIL="gk-run stderr: $(oneline "$(cat "$T/KD.err")")"
gk_check "the orphaned cage's gk-run said on stderr that gatekeeperd went away" \
	grep -qi 'gatekeeperd' "$T/KD.err"
if pgrep -f "sleep $MARK2" >/dev/null; then
	gk_info "the orphaned cage's command still runs (without a network) after the restart"
fi
kill -TERM "$KD" 2>/dev/null
gk_wait_exit "$KD" 50 || kill9 "$KD"
gk_info "the orphaned cage's gk-run exited $GK_RC on SIGTERM"
rm -f "$T/work-user/blob2.bin"
cage user --allow '*.github.com' "${CA_ARGS[@]}" --rw "$T/work-user" \
	-- curl -sS --max-time 30 -o "$T/work-user/blob2.bin" https://github.com/blob.bin
GK_DETAIL=$(run_detail)
gk_check "after the restart a new cage works (curl https://github.com/blob.bin byte-exact)" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(sha256sum <"$T/work-user/blob2.bin" | awk "{print \$1}")" = "$BLOB_SHA" ]'
cage root --allow '*.github.com' "${CA_ARGS[@]}" \
	-- curl -sS --max-time 10 https://evil.example/index.html
GK_DETAIL=$(run_detail)
gk_check "after the restart evil.example is still denied" \
	eval '[ "$RUN_RC" != 0 ] && ! grep -q "hello from" "$T/run.out"'
wait_ms 300 no_leftovers
GK_DETAIL="$(leftover_detail)"
gk_check "after the restart's cages: no link or set element left" no_leftovers

# ---- stop ------------------------------------------------------------------------
fetch_metrics "$T/m-end.txt"
GK_DETAIL="gatekeeper_cages $(gk_metric_sum "$T/m-end.txt" gatekeeper_cages)"
gk_check "gatekeeper_cages is 0 with no cage running" \
	eval '[ "$(gk_metric_sum "$T/m-end.txt" gatekeeper_cages)" = 0 ]'
gk_check "no sanitizer reports in gatekeeperd's logs" \
	eval '! cat "$T"/GKD_PID.log* | grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:"'
GK_DETAIL=$(grep -Eh -m3 "AddressSanitizer|LeakSanitizer|runtime error:" "$T"/*.err 2>/dev/null)
gk_check "no sanitizer reports on gk-run's stderr" \
	eval '! cat "$T"/*.err 2>/dev/null | grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:"'
cage_bg LAST user --allow '*.github.com' -- sleep "3600.3$RANDTAG"
wait_ms 300 eval '[ "$(nlinks)" -ge 1 ]'
gk_stop_daemon "$GKD_PID" TERM
GK_DETAIL="exit status $GK_RC"
gk_check "SIGTERM with a cage running: gatekeeperd exits 0" test "$GK_RC" = 0
wait_ms 300 eval '[ "$(nlinks)" = 0 ] && ! nft list table inet gatekeeper >/dev/null 2>&1'
GK_DETAIL="links: $(gk_links | paste -sd, -) tables: $(nft list tables 2>&1 | paste -sd, -)"
gk_check "SIGTERM: the table inet gatekeeper and every gk-* link are gone" \
	eval '[ "$(nlinks)" = 0 ] && ! nft list table inet gatekeeper >/dev/null 2>&1'
if gk_wait_exit "$LAST" 30; then
	gk_info "the running cage's gk-run exited $GK_RC when gatekeeperd stopped"
else
	gk_info "the running cage's gk-run was still running 3 s after gatekeeperd stopped"
	kill9 "$LAST"
fi

gk_finish
