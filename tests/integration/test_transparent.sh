#!/usr/bin/env bash
#
# test_transparent.sh: end-to-end test of gatekeeper's transparent mode:
# programs that ignore the proxy settings still work inside a gk-run cage,
# and still cannot get out.
#
#   bash tests/integration/test_transparent.sh build/gatekeeperd build/spawner/gk-run
#   meson test -C build transparent_integration      (suite "integration")
#
# Runs as root in namespaces it creates itself (lib.sh: a fresh network,
# mount and PID namespace; everything started dies with it), against the
# same hermetic internet as test_e2e.sh (e2e_net.sh: nginx with TLS from a
# test CA for github.com, api.github.com, codeload.github.com and
# evil.example, git smart HTTP, dnsmasq as the ISP's resolver, TCP/UDP echo
# services) plus OpenSSH on github.com:22 (en_sshd: key-only, root login,
# runs in the internet netns). gatekeeperd runs in the host stand-in netns
# with its defaults (gateway 10.143.0.1, transparent listener :15001,
# nftables table "inet gatekeeper"); gk-run runs there as root and as the
# unprivileged user gk-e2e (created if missing, in group gatekeeper, as
# test_e2e.sh does; commands run under setpriv).
#
# In every "transparent" case the program in the cage has no proxy
# settings: the command runs under `env -u http_proxy -u https_proxy
# -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u all_proxy` inside the
# sandbox, and curl also gets --noproxy '*'. So the only way a byte reaches
# the internet is nftables' redirect of the cage's TCP to gatekeeperd's
# transparent listener, which recovers the original destination and
# applies the proxy policy (TLS: SNI; plain HTTP: Host; anything else: the
# destination must be pinned by the cage's own DNS answers to an allowed
# name:port, or allowed by a CIDR pattern).
#
# Cases (as root and as gk-e2e):
#   works:  curl https://github.com/blob.bin (byte-exact), plain
#           http://github.com/, git clone https://github.com/acme/hello.git
#           (right tree), ssh root@github.com with a key (cat of a 1 MiB
#           file, byte-exact) and git clone over ssh, with
#           --allow '*.github.com:443' --allow 'github.com:22'; with
#           --allow 192.0.2.10/32 (a CIDR, no DNS): TLS without SNI and a
#           server-first TCP service;
#   fails in < 2 s, counted and audited with the reason:
#           evil.example by name (DNS), evil.example's address forced with
#           curl --resolve, a raw IP the cage never resolved (TCP echo,
#           server-first: ip_not_pinned; HTTPS to an IP literal; also while
#           another running cage has that address pinned), an SNI other
#           than the pinned name (curl --resolve, openssl s_client
#           -servername: sni_mismatch), TLS without SNI (no_sni), a pinned
#           or CIDR-allowed address on a port no pattern allows (TCP 7777,
#           and ssh to github.com:22 with only :443 allowed:
#           not_allowlisted, audited under the pinned name), the host's
#           own address and the cloud metadata address (special_range), a
#           Host header for another name (host_mismatch), an allowed port
#           where nothing listens (counted "failed"), the transparent port
#           itself;
#   UDP:    a connected UDP socket to 192.0.2.10:443 (QUIC) gets
#           ECONNREFUSED within a second;
#   peek:   raw bytes from socks_client.py --via direct (peek_lib.sh):
#           blank bytes (CRLF, LF, 32 of them) before a request with Host
#           evil.example, 33 blank bytes, PROXY v1/v2 headers, a second
#           request with a foreign Host in the same write and in a later
#           write of a kept-alive connection, a chunked POST then a
#           foreign Host, HTTP/0.9, the HTTP/2 preface, CONNECT, an SSLv2
#           hello and an alert record before a hello to port 443: each
#           cut within a second, nothing (or only github.com) back, one
#           denial counted and audited with its reason; two requests for
#           github.com on one connection, a CRLF before one, and a line
#           protocol to the echo port still work;
#   gk-run --transparent off: direct TCP refused fast, the proxies work;
#   gatekeeperd --transparent-port off: the same for every cage, no
#           redirect rule, no listener.
# Counters: exact deltas of gatekeeper_connections_total{proto="transparent",
# verdict=...} and gatekeeper_denied_total{kind="transparent",reason=...}
# per case (the proxies' own counters must not move), and one audit line
# "event":"proxy.deny","proto":"transparent" per denial with host, port,
# reason and seen; promtool accepts /metrics.
#
# Prints "ok   ..." / "FAIL ..." per check and a summary; exits 1 if any
# check failed or anything needed is missing (never a silent skip: not
# root, no namespaces, a missing tool, or a gatekeeperd/gk-run without
# transparent mode is a failure with a message). GK_KEEP_TMP=1 keeps the
# temp directory (logs) for a post-mortem. GK_TR_INTERNET_ONLY=1 stops
# after the internet checks (sshd included), without looking for
# transparent mode in the binaries.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_transparent.sh

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
TPORT=15001
GH=192.0.2.10			# github.com
# Inside the sandbox: no proxy variables at all.
NP=(env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY
	-u ALL_PROXY -u all_proxy)
# The pattern set of the ssh cases: HTTPS on every github.com name, ssh
# on github.com only (a port pattern).
SSH_ALLOW=(--allow '*.github.com:443' --allow 'github.com:22')

# ---------------------------------------------------------------------------
# Local helpers (the cage runners are e2e_lib.sh's)

# mark: remember the counters and the audit log's length before a case;
# after: fetch them again; dm NAME LABELS...: the change of a sum.
audit_count() { if [ -f "$AUDIT" ]; then wc -l <"$AUDIT"; else echo 0; fi; }
mark() {
	fetch_metrics "$T/m0.txt"
	AUDIT_MARK=$(audit_count)
}
after() { fetch_metrics "$T/m1.txt"; }
dm() {
	local a b
	a=$(gk_metric_sum "$T/m0.txt" "$@")
	b=$(gk_metric_sum "$T/m1.txt" "$@")
	echo $((b - a))
}
tr_ok() { dm gatekeeper_connections_total proto=transparent verdict=allowed; }
tr_no() { dm gatekeeper_connections_total proto=transparent verdict=denied; }
tr_why() { dm gatekeeper_denied_total kind=transparent reason="$1"; }
tr_all_denied() { dm gatekeeper_denied_total kind=transparent; }
px_conns() {	# connections through the SOCKS5 and HTTP proxies
	echo $(($(dm gatekeeper_connections_total proto=socks5) +
		$(dm gatekeeper_connections_total proto=http)))
}
# The transparent deny reasons that moved, "reason+N ...", for details.
tr_moved() {
	local r n out=""
	for r in no_sni sni_mismatch ip_not_pinned not_allowlisted \
	    special_range host_mismatch unknown_source malformed; do
		n=$(tr_why "$r")
		[ "$n" != 0 ] && out="$out $r+$n"
	done
	printf 'transparent allowed+%s denied+%s; reasons:%s; proxies+%s' \
		"$(tr_ok)" "$(tr_no)" "${out:- none}" "$(px_conns)"
}

# audit_new: the proxy.deny lines with proto "transparent" written since
# mark, one per line as "reason|host|port|seen".
audit_new() {
	"$PYTHON" - "$AUDIT" "${AUDIT_MARK:-0}" <<'EOF'
import json, sys
try:
    lines = open(sys.argv[1], errors="replace").read().splitlines()
except OSError:
    sys.exit(0)
for l in lines[int(sys.argv[2]):]:
    try:
        o = json.loads(l)
    except ValueError:
        continue
    if o.get("event") != "proxy.deny" or o.get("proto") != "transparent":
        continue
    print("%s|%s|%s|%s" % (o.get("reason", ""), o.get("host", ""),
                           o.get("port", ""), o.get("seen", "")))
EOF
}
audit_n() { audit_new | grep -c .; }
# audit_wait N: wait (up to 2 s; lines are buffered for 100 ms) for N new
# transparent deny lines.
audit_wait() { AUDIT_WANT=$1; gk_wait_for 20 eval '[ "$(audit_n)" -ge "$AUDIT_WANT" ]'; }

out_has() { grep -q -- "$1" "$T/run.out"; }

sha_of() { sha256sum <"$1" 2>/dev/null | awk '{print $1}'; }

gkd_alive() { kill -0 "$GKD_PID" 2>/dev/null; }
listening_tport() { ss -Hltn "sport = :$TPORT" 2>/dev/null | grep -q .; }
redirect_rule() { nft list table inet gatekeeper 2>/dev/null | grep -q 'redirect'; }

# ---------------------------------------------------------------------------
# ---- the internet ----------------------------------------------------------------
e2e_begin
en_sshd || gk_abort "OpenSSH starts on github.com:22 in the test internet" \
	"$T/inet/ssh/sshd.log"
CA=$EN_DIR/ca.crt
BLOB_SHA=$(cat "$EN_DIR/blob.sha256")
GIT_HEAD=$(cat "$EN_DIR/git-head")
REPO=$EN_DIR/git/acme/hello.git
gk_ok "the test internet is up (nginx, dnsmasq, echo, fcgiwrap, sshd on $GH:22)"

r=$(as root curl -sS --noproxy '*' --max-time 10 https://github.com/index.html 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "internet: https://github.com/ from the host" test "$r" = "hello from github.com"

mkdir -p "$T/home-root"
mapfile -t SSH_HOST < <(en_ssh_opts "$EN_DIR/ssh/id")
r=$(HOME=$T/home-root timeout 20 ssh "${SSH_HOST[@]}" root@github.com echo ssh-ok 2>&1)
GK_DETAIL="got: $(oneline "$r") | sshd: $(tail -n 3 "$EN_DIR/ssh/sshd.log" | paste -sd'|' -)"
gk_check "internet: ssh root@github.com with the key from the host (host key verified)" \
	test "$r" = ssh-ok
r=$(HOME=$T/home-root timeout 20 ssh "${SSH_HOST[@]}" -o PasswordAuthentication=yes \
	-o PubkeyAuthentication=no root@github.com echo ssh-ok 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "internet: sshd is key-only (no key: refused)" \
	eval '[ "$r" != ssh-ok ] && [[ "$r" == *"Permission denied"* ]]'
sha=$(HOME=$T/home-root timeout 20 ssh "${SSH_HOST[@]}" root@github.com \
	cat "$EN_DIR/blob.bin" 2>/dev/null | sha256sum | awk '{print $1}')
GK_DETAIL="sha256 $sha, want $BLOB_SHA"
gk_check "internet: ssh root@github.com cat blob.bin from the host is byte-exact" \
	test "$sha" = "$BLOB_SHA"
rm -rf "$T/clone-host-ssh"
r=$(HOME=$T/home-root GIT_CONFIG_NOSYSTEM=1 timeout 60 git \
	-c core.sshCommand="ssh ${SSH_HOST[*]}" clone -q \
	"root@github.com:$REPO" "$T/clone-host-ssh" 2>&1)
tree_check "$T/clone-host-ssh"
GK_DETAIL="git: $(oneline "$r") | $TREE_WHY"
gk_check "internet: git clone over ssh from the host gives the right tree" \
	test "$TREE_WHY" = ok
if [ "${GK_TR_INTERNET_ONLY:-0}" = 1 ]; then
	gk_finish "internet only"
fi

# ---- the unprivileged user --------------------------------------------------------
e2e_user

# The ssh key, one copy per identity (ssh refuses a private key that is
# not its user's own or that others can read); not under ~/.ssh, which
# gk-run hides.
for who in root user; do
	mkdir -p "$T/keys-$who"
	cp "$EN_DIR/ssh/id" "$T/keys-$who/id"
	chmod 600 "$T/keys-$who/id"
	[ "$who" = user ] && chown "$E2E_USER:" "$T/keys-$who/id"
	chmod 755 "$T/keys-$who"
done

# ---- gatekeeperd -------------------------------------------------------------------
: >"$T/empty.conf"
GKD_ARGS=(-f -c "$T/empty.conf" --control "$SOCK" --upstream "$EN_RESOLVER"
	--metrics "$METRICS" --audit-log "$AUDIT" --log-level debug)
gk_start_daemon GKD_PID "$GKD" "${GKD_ARGS[@]}"
daemon_ready "$GKD_PID" || gk_abort "gatekeeperd starts (control socket, metrics)" "$T/GKD_PID.log"
gk_ok "gatekeeperd is ready with its defaults (pid $GKD_PID)"
chmod 755 "$T/run"
GK_DETAIL="$(ss -Hltn 2>&1 | paste -sd'|' -)"
gk_check "gatekeeperd listens on the transparent port :$TPORT (default)" listening_tport
GK_DETAIL="$(nft list table inet gatekeeper 2>&1 | grep -E 'redirect|reject' | head -5 | paste -sd'|' -)"
gk_check "the nftables table has the transparent redirect rule" redirect_rule

# Files a cage reads: the CA, the probe scripts (read-only bind).
e2e_probe_script
cp "$GK_LIB_DIR/socks_client.py" "$SHARE/socks_client.py"
chmod -R a+rX "$SHARE"
CA_ARGS=(--ro "$EN_DIR" --ro "$SHARE")
PROBE=("$PYTHON" "$SHARE/probe.py")
# The ERR code and the time of the last probe's output.
probe_err() { sed -n 's/^ERR \([A-Z0-9a-z_]*\) .*/\1/p' "$T/run.out" | head -1; }
probe_ms() { sed -n 's/.* \([0-9]*\)ms$/\1/p' "$T/run.out" | tail -1; }

# ssh_cmd WHO: SSHC is the OpenSSH client as a cage runs it, with WHO's
# key copy (an array; "${SSHC[*]}" as one string for sh -c and git).
ssh_cmd() {
	local o
	mapfile -t o < <(en_ssh_opts "$T/keys-$1/id")
	SSHC=(ssh "${o[@]}")
}

# ---- the proxies are still offered ---------------------------------------------------
cage root --allow '*.github.com' -- sh -c 'env | grep -i _proxy= | sort'
GK_DETAIL=$(run_detail)
gk_check "a transparent cage (the default) still gets the proxy variables (http_proxy ... all_proxy)" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(grep -ciE "^(http|https|all)_proxy=" "$T/run.out")" -eq 6 ]'
cage root --allow '*.github.com' -- "${NP[@]}" sh -c 'env | grep -i _proxy= | grep -vi ^no_proxy='
GK_DETAIL=$(run_detail)
gk_check "env -u ... leaves the command without any proxy variable" \
	eval '[ ! -s "$T/run.out" ]'

# ---- what works -------------------------------------------------------------------
works() {	# WHO
	local who=$1 w=$T/work-$1 n
	ssh_cmd "$who"
	rm -rf "$w/hello" "$w/hello-ssh" "$w/blob.bin" "$w/ssh-blob.bin"
	mark
	local works_mark=$AUDIT_MARK

	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" --rw "$w" --cwd "$w" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 30 -o "$w/blob.bin" \
		https://github.com/blob.bin
	after
	GK_DETAIL="$(run_detail) sha $(sha_of "$w/blob.bin" | cut -c1-16) | $(tr_moved)"
	gk_check "$who: curl --noproxy '*' https://github.com/blob.bin (no proxy variables) is byte-exact" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(sha_of "$w/blob.bin")" = "$BLOB_SHA" ]'
	gk_check "$who: ... one transparent connection allowed, none denied, the proxies unused" \
		eval '[ "$(tr_ok)" = 1 ] && [ "$(tr_no)" = 0 ] && [ "$(px_conns)" = 0 ]'
	n=$(dm gatekeeper_bytes_total direction=downstream)
	GK_DETAIL="gatekeeper_bytes_total{direction=downstream} +$n"
	gk_check "$who: ... gatekeeper_bytes_total{direction=\"downstream\"} grew by at least the 1 MiB relayed" \
		eval '[ "$n" -ge "$EN_BLOB_SIZE" ]'

	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 20 http://github.com/index.html
	after
	GK_DETAIL="$(run_detail) | $(tr_moved)"
	gk_check "$who: plain http://github.com/ (Host checked) works without proxy variables, 1 transparent connection" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(cat "$T/run.out")" = "hello from github.com" ] &&
		      [ "$(tr_ok)" = 1 ] && [ "$(px_conns)" = 0 ]'

	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" --rw "$w" --cwd "$w" \
		-- "${NP[@]}" git clone -q https://github.com/acme/hello.git hello
	after
	tree_check "$w/hello"
	GK_DETAIL="$(run_detail) | $TREE_WHY | $(tr_moved)"
	gk_check "$who: git clone https://github.com/acme/hello.git without proxy variables: right tree (${RUN_MS} ms)" \
		eval '[ "$RUN_RC" = 0 ] && [ "$TREE_WHY" = ok ]'
	gk_check "$who: ... through the transparent listener only (allowed >= 1, denied 0, proxies 0)" \
		eval '[ "$(tr_ok)" -ge 1 ] && [ "$(tr_no)" = 0 ] && [ "$(px_conns)" = 0 ]'

	mark
	cage "$who" "${SSH_ALLOW[@]}" "${CA_ARGS[@]}" --ro "$T/keys-$who" \
		--rw "$w" --cwd "$w" -- "${NP[@]}" sh -c \
		"${SSHC[*]} root@github.com cat '$EN_DIR/blob.bin' >'$w/ssh-blob.bin'"
	after
	GK_DETAIL="$(run_detail) sha $(sha_of "$w/ssh-blob.bin" | cut -c1-16) | $(tr_moved) | sshd: $(tail -n 2 "$EN_DIR/ssh/sshd.log" | paste -sd'|' -)"
	gk_check "$who: ssh root@github.com (OpenSSH, key-only, github.com:22 allowed) cat of 1 MiB is byte-exact" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(sha_of "$w/ssh-blob.bin")" = "$BLOB_SHA" ]'
	gk_check "$who: ... exactly one transparent connection allowed, none denied" \
		eval '[ "$(tr_ok)" = 1 ] && [ "$(tr_no)" = 0 ] && [ "$(px_conns)" = 0 ]'

	mark
	cage "$who" "${SSH_ALLOW[@]}" "${CA_ARGS[@]}" --ro "$T/keys-$who" \
		--rw "$w" --cwd "$w" -- "${NP[@]}" git \
		-c core.sshCommand="${SSHC[*]}" clone -q \
		"root@github.com:$REPO" hello-ssh
	after
	tree_check "$w/hello-ssh"
	GK_DETAIL="$(run_detail) | $TREE_WHY | $(tr_moved)"
	gk_check "$who: git clone root@github.com:.../hello.git over ssh: right tree, one transparent connection" \
		eval '[ "$RUN_RC" = 0 ] && [ "$TREE_WHY" = ok ] && [ "$(tr_ok)" = 1 ] && [ "$(tr_no)" = 0 ]'
	# A CIDR pattern allows the address without DNS: TLS without a
	# server name, and a server-first protocol (the echo service speaks
	# first and the client sends nothing).
	mark
	cage "$who" --allow "$GH/32" "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' -k --max-time 20 "https://$GH/index.html"
	after
	GK_DETAIL="$(run_detail) | $(tr_moved)"
	gk_check "$who: --allow $GH/32: curl -k https://$GH/ (no DNS, no SNI) works, 1 transparent connection" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(cat "$T/run.out")" = "hello from github.com" ] &&
		      [ "$(tr_ok)" = 1 ] && [ "$(tr_no)" = 0 ]'
	mark
	cage "$who" --allow "$GH/32" "${CA_ARGS[@]}" \
		-- "${NP[@]}" "${PROBE[@]}" tcp "$GH" "$EN_ECHO_PORT"
	after
	GK_DETAIL="$(run_detail) | $(tr_moved)"
	gk_check "$who: --allow $GH/32: a server-first TCP service ($GH:$EN_ECHO_PORT) answers through the transparent listener" \
		eval '[ "$RUN_RC" = 0 ] && grep -q "^GOT b.internet" "$T/run.out" &&
		      [ "$(tr_ok)" = 1 ] && [ "$(tr_no)" = 0 ]'
	if [ "$who" = user ]; then
		GK_DETAIL=$(stat -c "%u %U %n" "$w/hello/README" "$w/ssh-blob.bin" 2>&1)
		gk_check "user: the clone and the ssh download belong to $E2E_USER outside the sandbox" \
			eval '[ "$(stat -c %u "$w/hello/README")" = "$E2E_UID" ] &&
			      [ "$(stat -c %u "$w/ssh-blob.bin")" = "$E2E_UID" ]'
	fi
	sleep 0.2	# the audit log is flushed within 100 ms
	AUDIT_MARK=$works_mark
	GK_DETAIL="$(audit_new | head -3 | paste -sd' ' -)"
	gk_check "$who: no transparent proxy.deny audit line during the allowed cases" \
		eval '[ "$(audit_n)" = 0 ]'
	wait_ms 20 no_leftovers
	GK_DETAIL="links: $(gk_links | paste -sd, -) elements: $(set_elems | paste -sd, -)"
	gk_check "$who: no gk-* link or set element left within 2 s of the cages ending" \
		no_leftovers
}
works root
works user

# ---- what fails, fast, counted and audited --------------------------------------------
# denied WHO WHAT REASONS HOST PORT SEEN: checks after a cage that must
# have been refused by the transparent listener exactly once. REASONS: one
# reason, or several separated by '|' when the contract allows either
# (the first is the one expected); SEEN: the expected "seen" ('' none,
# '*' any).
denied() {
	local who=$1 what=$2 reasons=$3 host=$4 port=$5 seen=${6:-*} r n=0 line
	local -a rs
	audit_wait 1
	after
	IFS='|' read -r -a rs <<<"$reasons"
	for r in "${rs[@]}"; do
		n=$((n + $(tr_why "$r")))
	done
	line=$(audit_new | head -1)
	GK_DETAIL="$(run_detail) | $(tr_moved)"
	gk_check "$who: $what fails in under 2 s (${RUN_MS} ms)" \
		eval '[ "$RUN_RC" != 0 ] && [ "$RUN_MS" -lt 2000 ] &&
		      ! got_through'
	gk_check "$who: ... counted: transparent denied +1, denied_total{kind=transparent,reason=${rs[0]}} +1, nothing allowed" \
		eval '[ "$(tr_no)" = 1 ] && [ "$n" = 1 ] && [ "$(tr_all_denied)" = 1 ] &&
		      [ "$(tr_ok)" = 0 ] && [ "$(px_conns)" = 0 ]'
	GK_DETAIL="new audit lines: $(audit_new | paste -sd' ' -)"
	gk_check "$who: ... one proxy.deny audit line: proto transparent, reason ${rs[0]}, host $host, port $port${seen:+, seen $seen}" \
		eval '[ "$(audit_n)" = 1 ] && audit_match "$line" "$reasons" "$host" "$port" "$seen"'
	if [ "${#rs[@]}" -gt 1 ]; then
		gk_info "$who: $what: reason given: ${line%%|*}"
	fi
}
# got_through: the last cage's output shows that something answered it.
got_through() {
	grep -Eq "hello from|^GOT |ssh-ok" "$T/run.out" ||
		grep -q "CONNECTION ESTABLISHED" "$T/run.out" "$T/run.err"
}
audit_match() {	# LINE REASONS HOST PORT SEEN
	local reason host port seen
	IFS='|' read -r reason host port seen <<<"$1"
	[[ "|$2|" == *"|$reason|"* ]] && [ "$host" = "$3" ] && [ "$port" = "$4" ] &&
		{ [ "$5" = '*' ] || [ "$seen" = "$5" ]; }
}

fails() {	# WHO
	local who=$1
	ssh_cmd "$who"

	# evil.example by name: the resolver says NXDOMAIN; nothing connects.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 10 https://evil.example/index.html
	after
	GK_DETAIL="$(run_detail) | $(tr_moved) | dns denied +$(dm gatekeeper_dns_queries_total verdict=denied)"
	gk_check "$who: curl --noproxy '*' https://evil.example/ fails in under 2 s (${RUN_MS} ms; the name does not resolve)" \
		eval '[ "$RUN_RC" != 0 ] && [ "$RUN_MS" -lt 2000 ] && ! out_has "hello from" &&
		      [ "$(dm gatekeeper_dns_queries_total verdict=denied)" -ge 1 ] &&
		      [ "$(tr_ok)" = 0 ] && [ "$(tr_no)" = 0 ]'

	# evil.example's address, forced: TLS to an address never pinned.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 10 \
		--resolve evil.example:443:203.0.113.66 https://evil.example/index.html
	denied "$who" "curl --resolve evil.example:443:203.0.113.66 (TLS, SNI evil.example, address not pinned)" \
		'ip_not_pinned|not_allowlisted|sni_mismatch' 203.0.113.66 443

	# A raw IP the cage never resolved, server-first (the echo service
	# talks first): refused at once, whatever the client would send.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" -- "${NP[@]}" "${PROBE[@]}" tcp "$GH" 7777
	denied "$who" "TCP to $GH:7777, an address this cage never resolved (server-first echo)" \
		ip_not_pinned "$GH" 7777 ''
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' -k --max-time 10 "https://$GH/index.html"
	denied "$who" "curl -k https://$GH/ (an IP literal never resolved here)" \
		'ip_not_pinned|no_sni' "$GH" 443

	# SNI other than the pinned name: github.com is resolved (pinned),
	# then TLS to its address names evil.example.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" -- "${NP[@]}" sh -c \
		"getent ahostsv4 github.com >/dev/null && exec curl -sS --noproxy '*' --max-time 10 \
		--resolve evil.example:443:$GH https://evil.example/index.html"
	denied "$who" "TLS to github.com's pinned address with SNI evil.example (curl --resolve)" \
		sni_mismatch github.com 443 evil.example
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" -- "${NP[@]}" sh -c \
		"getent ahostsv4 github.com >/dev/null && exec openssl s_client -brief \
		-connect $GH:443 -servername evil.example </dev/null"
	denied "$who" "openssl s_client -connect $GH:443 -servername evil.example (github.com resolved first)" \
		sni_mismatch github.com 443 evil.example
	# TLS without a server name to a pinned address.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" -- "${NP[@]}" sh -c \
		"getent ahostsv4 github.com >/dev/null && exec openssl s_client -brief \
		-connect $GH:443 -noservername </dev/null"
	denied "$who" "openssl s_client -noservername to github.com's pinned address" \
		no_sni github.com 443 ''

	# Pinned, but on a port no pattern allows.
	mark
	cage "$who" --allow '*.github.com:443' "${CA_ARGS[@]}" \
		-- "${NP[@]}" "${PROBE[@]}" tcp "$GH" 7777 github.com
	denied "$who" "TCP to github.com:7777 with only '*.github.com:443' allowed (pinned, wrong port)" \
		not_allowlisted github.com 7777 ''
	mark
	cage "$who" --allow '*.github.com:443' "${CA_ARGS[@]}" --ro "$T/keys-$who" \
		-- "${NP[@]}" "${SSHC[@]}" root@github.com echo ssh-ok
	denied "$who" "ssh root@github.com with only '*.github.com:443' allowed" \
		not_allowlisted github.com 22 ''

	mark
	cage "$who" --allow "$GH/32:443" "${CA_ARGS[@]}" \
		-- "${NP[@]}" "${PROBE[@]}" tcp "$GH" "$EN_ECHO_PORT"
	denied "$who" "TCP to $GH:$EN_ECHO_PORT with only '$GH/32:443' allowed (CIDR, wrong port)" \
		not_allowlisted "$GH" "$EN_ECHO_PORT" ''

	# Pins belong to the cage that resolved: another cage, running now,
	# has github.com pinned; this one has not.
	rm -f "$T/pinner-$who.ready"
	PINNER_OUT=$T/pinner-$who.out
	( gk_close_ctl_fds; as_cmd "$who"; cd "$T/work-$who" &&
	  exec timeout -s KILL 60 "${AS_CMD[@]}" "$GKRUN" --control "$SOCK" \
		--allow '*.github.com' --rw "$T/work-$who" -- sh -c \
		"getent ahostsv4 github.com >'$T/work-$who/pinner.tmp' &&
		 mv '$T/work-$who/pinner.tmp' '$T/work-$who/pinner.ready' && exec sleep 30" \
		>"$PINNER_OUT" 2>&1 </dev/null ) &
	PINNER=$!
	gk_track_pid "$PINNER"
	gk_wait_for 100 test -s "$T/work-$who/pinner.ready"
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" "${PROBE[@]}" tcp "$GH" "$EN_ECHO_PORT"
	GK_DETAIL="pinner: $(oneline "$(cat "$T/work-$who/pinner.ready" 2>&1) $(cat "$PINNER_OUT")")"
	gk_check "$who: (another cage has resolved github.com and is still running)" \
		eval 'grep -q "$GH" "$T/work-$who/pinner.ready" && kill -0 "$PINNER" 2>/dev/null'
	denied "$who" "TCP to $GH:$EN_ECHO_PORT while another cage has it pinned" \
		ip_not_pinned "$GH" "$EN_ECHO_PORT" ''
	kill -TERM "$PINNER" 2>/dev/null
	gk_wait_exit "$PINNER" 50 || { kill -KILL "$PINNER" 2>/dev/null; gk_wait_exit "$PINNER" 20; }
	rm -f "$T/work-$who/pinner.ready"

	# Special ranges: the host's own address, the metadata endpoint.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" "${PROBE[@]}" tcp "$EN_HOST_ADDR" "$EN_ECHO_PORT"
	denied "$who" "TCP to the host's own address $EN_HOST_ADDR:$EN_ECHO_PORT" \
		special_range "$EN_HOST_ADDR" "$EN_ECHO_PORT" ''
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 10 \
		http://169.254.169.254/latest/meta-data/
	denied "$who" "http://169.254.169.254/ (cloud metadata address)" \
		special_range 169.254.169.254 80

	# Plain HTTP whose Host names another host than the pinned one.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 10 \
		-H 'Host: evil.example' http://github.com/index.html
	denied "$who" "http://github.com/ with 'Host: evil.example'" \
		host_mismatch github.com 80 evil.example

	# Allowed, but nothing listens there: a reset at once, counted as
	# failed (not denied).
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 10 http://github.com:81/
	after
	GK_DETAIL="$(run_detail) | $(tr_moved) | failed +$(dm gatekeeper_connections_total proto=transparent verdict=failed)"
	gk_check "$who: http://github.com:81/ (allowed, nothing listens) fails in under 2 s, counted as failed, not denied" \
		eval '[ "$RUN_RC" != 0 ] && [ "$RUN_MS" -lt 2000 ] &&
		      [ "$(dm gatekeeper_connections_total proto=transparent verdict=failed)" = 1 ] &&
		      [ "$(tr_no)" = 0 ] && [ "$(tr_ok)" = 0 ]'

	# The transparent port itself, asked directly: not a way around.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 5 "http://$GW:$TPORT/"
	after
	GK_DETAIL="$(run_detail) | $(tr_moved) | daemon alive: $(gkd_alive && echo yes || echo NO)"
	gk_check "$who: curl http://$GW:$TPORT/ (the transparent port itself) fails fast, gatekeeperd lives" \
		eval '[ "$RUN_RC" != 0 ] && [ "$RUN_MS" -lt 2000 ] && ! out_has "hello from" &&
		      [ "$(tr_ok)" = 0 ] && gkd_alive'

	# QUIC: UDP other than DNS is refused with ICMP at once.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" -- "${NP[@]}" "${PROBE[@]}" udp "$GH" 443 github.com
	after
	GK_DETAIL="$(run_detail)"
	gk_check "$who: a connected UDP socket to $GH:443 (QUIC) gets ECONNREFUSED within a second ($(probe_ms) ms)" \
		eval '[ "$RUN_RC" != 0 ] && [ "$(probe_err)" = ECONNREFUSED ] && [ "$(probe_ms)" -lt 1000 ]'
}
fails root
fails user

# ---- the peek: what servers skip before a request or hello; every request --------
# socks_client.py --via direct in a '*.github.com' cage resolves github.com
# (pinning its address) and connects to it, redirected to the transparent
# listener, then writes the --send strings of peek_lib.sh (nginx serves
# github.com and evil.example as name-based virtual hosts on every
# address: "hello from evil.example" coming back is an escape).
# shellcheck source=tests/integration/peek_lib.sh
. "$GK_LIB_DIR/peek_lib.sh"
RAW=("$PYTHON" "$SHARE/socks_client.py" --via direct --timeout 10 --idle 0.3)
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
		-- "${NP[@]}" "${RAW[@]}" raw github.com "$port" "${args[@]}"
}

# tr_cut WHO WHAT PORT REASON SEEN HELLO SEND...: cut within a second of
# the last write; nothing came back (HELLO "": the connection is counted
# denied) or only HELLO (the "hello from" names of the requests before:
# the connection stays counted allowed); denied_total{kind=transparent,
# reason=REASON} +1 and nothing else; one audit line.
tr_cut() {
	local who=$1 what=$2 port=$3 reason=$4 seen=$5 hello=$6 line
	shift 6
	mark
	tr_raw "$who" "$port" "$@"
	audit_wait 1
	sleep 0.2
	after
	tr_deltas
	line=$(audit_new | head -1)
	local n="D_R_$reason"
	GK_DETAIL="$(run_detail) | $(d_moved)"
	if [ -z "$hello" ]; then
		gk_check "$who: $what: cut in $(rkv raw_end_ms) ms, nothing came back, counted denied ($reason)" \
			eval '[ "$(rkv raw_end)" != open ] && [ "$(rkv raw_end_ms)" -lt 1000 ] &&
			      [ "$(rkv raw_recv)" = 0 ] && [ "${!n}" = 1 ] &&
			      [ "$D_ALL" = 1 ] && [ "$D_NO" = 1 ] && [ "$D_OK" = 0 ]'
	else
		gk_check "$who: $what: cut in $(rkv raw_end_ms) ms after $hello only, the denial counted ($reason)" \
			eval '[ "$(rkv raw_end)" != open ] && [ "$(rkv raw_end_ms)" -lt 1000 ] &&
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
	tr_raw "$who" "$EN_ECHO_PORT" "$PK_LINE"
	after
	tr_deltas
	GK_DETAIL="$(run_detail) | $(d_moved)"
	gk_check "$who: a line protocol's first line to github.com:$EN_ECHO_PORT passes (the service answers), nothing denied" \
		eval '[ "$(rkv raw_recv)" -gt 0 ] && [ "$D_OK" = 1 ] && [ "$D_ALL" = 0 ]'
}
peek_escapes root
peek_escapes user
GK_DETAIL="$(gk_tail "$T/GKD_PID.log" 5)"
gk_check "gatekeeperd is still running after the denials" gkd_alive
fetch_metrics "$T/m-all.txt"
GK_DETAIL="$(promtool check metrics <"$T/m-all.txt" 2>&1 | head -5)"
gk_check "promtool check metrics accepts /metrics with the transparent series" \
	eval 'promtool check metrics <"$T/m-all.txt" >/dev/null 2>&1 &&
	      grep -q "^gatekeeper_connections_total{.*proto=\"transparent\"" "$T/m-all.txt" &&
	      grep -q "^gatekeeper_denied_total{.*kind=\"transparent\"" "$T/m-all.txt"'

wait_ms 20 no_leftovers
GK_DETAIL="links: $(gk_links | paste -sd, -) elements: $(set_elems | paste -sd, -)"
gk_check "no gk-* link or set element left after the denial cases" no_leftovers

# ---- the old behaviour: no transparent redirection ------------------------------------
# old_behaviour WHO WHAT GK-RUN-ARGS...: direct TCP (even to a pinned
# address) is refused at once, the proxies still work, and the
# transparent counters do not move.
old_behaviour() {
	local who=$1 what=$2
	shift 2
	ssh_cmd "$who"
	mark
	cage "$who" --allow '*.github.com' "$@" "${CA_ARGS[@]}" \
		-- "${NP[@]}" "${PROBE[@]}" tcp "$GH" 443 github.com
	GK_DETAIL="$(run_detail)"
	gk_check "$who, $what: TCP to github.com's (pinned) address is refused at once ($(probe_ms) ms, $(probe_err))" \
		eval '[ "$RUN_RC" != 0 ] && [ "$(probe_err)" = ECONNREFUSED ] && [ "$(probe_ms)" -lt 1000 ]'
	cage "$who" --allow '*.github.com' "$@" "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 10 https://github.com/index.html
	GK_DETAIL="$(run_detail)"
	gk_check "$who, $what: curl --noproxy '*' https://github.com/ fails in under 2 s (${RUN_MS} ms)" \
		eval '[ "$RUN_RC" != 0 ] && [ "$RUN_MS" -lt 2000 ] && ! out_has "hello from"'
	cage "$who" --allow '*.github.com' "$@" "${CA_ARGS[@]}" \
		-- "${NP[@]}" "${SSHC[@]}" root@github.com echo ssh-ok
	GK_DETAIL="$(run_detail)"
	gk_check "$who, $what: ssh root@github.com fails in under 2 s (${RUN_MS} ms)" \
		eval '[ "$RUN_RC" != 0 ] && [ "$RUN_MS" -lt 2000 ] && ! out_has ssh-ok'
	cage "$who" --allow '*.github.com' "$@" "${CA_ARGS[@]}" \
		-- curl -sS --max-time 20 https://github.com/index.html
	after
	GK_DETAIL="$(run_detail) | $(tr_moved)"
	gk_check "$who, $what: the proxies still work (curl with the cage's proxy variables)" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(cat "$T/run.out")" = "hello from github.com" ] &&
		      [ "$(px_conns)" -ge 1 ]'
	gk_check "$who, $what: the transparent counters did not move" \
		eval '[ "$(tr_ok)" = 0 ] && [ "$(tr_no)" = 0 ] && [ "$(tr_all_denied)" = 0 ]'
}
old_behaviour root "gk-run --transparent off" --transparent off
old_behaviour user "gk-run --transparent off" --transparent off
cage root --allow '*.github.com' --transparent off -- sh -c 'env | grep -ciE "^(http|https|all)_proxy="'
GK_DETAIL=$(run_detail)
gk_check "gk-run --transparent off still sets the proxy variables" \
	eval '[ "$(cat "$T/run.out")" = 6 ]'
# A transparent cage next to it still works (the switch is per cage).
mark
cage user --allow '*.github.com' --transparent on "${CA_ARGS[@]}" \
	-- "${NP[@]}" curl -sS --noproxy '*' --max-time 20 https://github.com/index.html
after
GK_DETAIL="$(run_detail) | $(tr_moved)"
gk_check "user: gk-run --transparent on (explicit) works without proxy variables after the off cages" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(cat "$T/run.out")" = "hello from github.com" ] && [ "$(tr_ok)" = 1 ]'

# ---- gatekeeperd --transparent-port off -----------------------------------------------
gk_stop_daemon "$GKD_PID" TERM
GK_DETAIL="exit status $GK_RC"
gk_check "gatekeeperd stops on SIGTERM (exit 0) before the restart with --transparent-port off" \
	test "$GK_RC" = 0
mv "$T/GKD_PID.log" "$T/GKD_PID.log.1" 2>/dev/null
gk_start_daemon GKD_PID "$GKD" "${GKD_ARGS[@]}" --transparent-port off
daemon_ready "$GKD_PID" ||
	gk_abort "gatekeeperd --transparent-port off starts" "$T/GKD_PID.log"
gk_ok "gatekeeperd --transparent-port off is ready (pid $GKD_PID)"
GK_DETAIL="$(ss -Hltn 2>&1 | paste -sd'|' -)"
gk_check "--transparent-port off: nothing listens on :$TPORT" eval '! listening_tport'
cage_bg_pid=
( cd "$T/work-root" && exec timeout -s KILL 60 "$GKRUN" --control "$SOCK" \
	--allow '*.github.com' -- sleep 30 >/dev/null 2>&1 ) &
cage_bg_pid=$!
gk_track_pid "$cage_bg_pid"
wait_ms 50 eval '[ "$(nlinks)" -ge 1 ]'
GK_DETAIL="$(nft list table inet gatekeeper 2>&1 | grep -E 'redirect|reject' | head -5 | paste -sd'|' -)"
gk_check "--transparent-port off: with a (default) cage running, the table has no redirect rule" \
	eval '[ "$(nlinks)" -ge 1 ] && nft list table inet gatekeeper >/dev/null 2>&1 && ! redirect_rule'
kill -TERM "$cage_bg_pid" 2>/dev/null
gk_wait_exit "$cage_bg_pid" 50 || { kill -KILL "$cage_bg_pid" 2>/dev/null; gk_wait_exit "$cage_bg_pid" 20; }
old_behaviour root "gatekeeperd --transparent-port off"
old_behaviour user "gatekeeperd --transparent-port off"
cage user --allow '*.github.com' --transparent on "${CA_ARGS[@]}" \
	-- "${NP[@]}" curl -sS --noproxy '*' --max-time 10 https://github.com/index.html
GK_DETAIL=$(run_detail)
gk_check "gatekeeperd --transparent-port off: gk-run --transparent on does not get around it (${RUN_MS} ms)" \
	eval '[ "$RUN_RC" != 0 ] && [ "$RUN_MS" -lt 2000 ] && ! out_has "hello from"'
gk_info "gk-run --transparent on against --transparent-port off: rc $RUN_RC, stderr: $(oneline "$(cat "$T/run.err")")"

# ---- stop ---------------------------------------------------------------------------
wait_ms 20 no_leftovers
GK_DETAIL="links: $(gk_links | paste -sd, -) elements: $(set_elems | paste -sd, -)"
gk_check "no gk-* link or set element left at the end" no_leftovers
gk_stop_daemon "$GKD_PID" TERM
GK_DETAIL="exit status $GK_RC"
gk_check "SIGTERM: gatekeeperd exits 0" test "$GK_RC" = 0
GK_DETAIL="tables: $(nft list tables 2>&1 | paste -sd, -)"
gk_check "SIGTERM: the table inet gatekeeper is gone" \
	eval '! nft list table inet gatekeeper >/dev/null 2>&1'
GK_DETAIL=$(grep -Eh -m3 "AddressSanitizer|LeakSanitizer|runtime error:" "$T"/GKD_PID.log* "$T"/all-runs.err 2>/dev/null)
gk_check "no sanitizer reports in gatekeeperd's logs or on gk-run's stderr" \
	eval '! cat "$T"/GKD_PID.log* "$T"/all-runs.err 2>/dev/null | grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:"'

gk_finish
