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
#           ECONNREFUSED (the error, not a timeout);
#   gk-run --transparent off: direct TCP refused fast, the proxies work;
#   gatekeeperd --transparent-port off: the same for every cage, no
#           redirect rule, no listener.
# Counters: exact deltas of gatekeeper_connections_total{proto="transparent",
# verdict=...} and gatekeeper_denied_total{kind="transparent",reason=...}
# per case (the proxies' own counters must not move), and one audit line
# "event":"proxy.deny","proto":"transparent" per denial with host, port,
# reason and seen; promtool accepts /metrics.
#
# The peek at a redirected connection's first bytes is
# test_transparent_peek.sh; the two share their helpers and the run's
# frame (transparent_lib.sh).
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
# shellcheck source=tests/integration/transparent_lib.sh
. "$GK_LIB_DIR/transparent_lib.sh"

# ---------------------------------------------------------------------------
tr_start

# refused_in_time: the last cage run failed, and not by a timeout: no
# curl 28, no timeout(1) 124, no kill by the run's bound (137), and within
# half of the clients' own timeout (TR_MAX, curl --max-time and ssh's
# ConnectTimeout 30 s): a refusal, told apart from a timeout on any host.
TR_MAX=30
refused_in_time() {
	[ "$RUN_RC" != 0 ] && [ "$RUN_RC" != 28 ] && [ "$RUN_RC" != 124 ] &&
		[ "$RUN_RC" != 137 ] && [ "$RUN_MS" -lt $((TR_MAX * 1000 / 2)) ]
}

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
	AUDIT_MARK=$works_mark
	audit_wait 1 2	# (as long as a line takes to come: there must be none)
	GK_DETAIL="$(audit_new | head -3 | paste -sd' ' -)"
	gk_check "$who: no transparent proxy.deny audit line during the allowed cases" \
		eval '[ "$(audit_n)" = 0 ]'
	wait_ms 300 no_leftovers
	GK_DETAIL="links: $(gk_links | paste -sd, -) elements: $(set_elems | paste -sd, -)"
	gk_check "$who: no gk-* link or set element left once the cages ended (waited up to 30 s)" \
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
	gk_check "$who: $what is refused, not timed out (${RUN_MS} ms)" \
		eval 'refused_in_time &&
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

fails() {	# WHO
	local who=$1
	ssh_cmd "$who"

	# evil.example by name: the resolver says NXDOMAIN; nothing connects.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 30 https://evil.example/index.html
	after
	GK_DETAIL="$(run_detail) | $(tr_moved) | dns denied +$(dm gatekeeper_dns_queries_total verdict=denied)"
	gk_check "$who: curl --noproxy '*' https://evil.example/ is refused, not timed out (${RUN_MS} ms; the name does not resolve)" \
		eval 'refused_in_time && ! out_has "hello from" &&
		      [ "$(dm gatekeeper_dns_queries_total verdict=denied)" -ge 1 ] &&
		      [ "$(tr_ok)" = 0 ] && [ "$(tr_no)" = 0 ]'

	# evil.example's address, forced: TLS to an address never pinned.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 30 \
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
		-- "${NP[@]}" curl -sS --noproxy '*' -k --max-time 30 "https://$GH/index.html"
	denied "$who" "curl -k https://$GH/ (an IP literal never resolved here)" \
		'ip_not_pinned|no_sni' "$GH" 443

	# SNI other than the pinned name: github.com is resolved (pinned),
	# then TLS to its address names evil.example.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" -- "${NP[@]}" sh -c \
		"getent ahostsv4 github.com >/dev/null && exec curl -sS --noproxy '*' --max-time 30 \
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
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 30 \
		http://169.254.169.254/latest/meta-data/
	denied "$who" "http://169.254.169.254/ (cloud metadata address)" \
		special_range 169.254.169.254 80

	# Plain HTTP whose Host names another host than the pinned one.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 30 \
		-H 'Host: evil.example' http://github.com/index.html
	denied "$who" "http://github.com/ with 'Host: evil.example'" \
		host_mismatch github.com 80 evil.example

	# Allowed, but nothing listens there: a reset at once, counted as
	# failed (not denied).
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 30 http://github.com:81/
	after
	GK_DETAIL="$(run_detail) | $(tr_moved) | failed +$(dm gatekeeper_connections_total proto=transparent verdict=failed)"
	gk_check "$who: http://github.com:81/ (allowed, nothing listens) is refused, not timed out, counted as failed, not denied" \
		eval 'refused_in_time &&
		      [ "$(dm gatekeeper_connections_total proto=transparent verdict=failed)" = 1 ] &&
		      [ "$(tr_no)" = 0 ] && [ "$(tr_ok)" = 0 ]'

	# The transparent port itself, asked directly: not a way around.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 30 "http://$GW:$TPORT/"
	after
	GK_DETAIL="$(run_detail) | $(tr_moved) | daemon alive: $(gkd_alive && echo yes || echo NO)"
	gk_check "$who: curl http://$GW:$TPORT/ (the transparent port itself) is refused, not timed out, gatekeeperd lives" \
		eval 'refused_in_time && ! out_has "hello from" &&
		      [ "$(tr_ok)" = 0 ] && gkd_alive'

	# QUIC: UDP other than DNS is refused with ICMP at once.
	mark
	cage "$who" --allow '*.github.com' "${CA_ARGS[@]}" -- "${NP[@]}" "${PROBE[@]}" udp "$GH" 443 github.com
	after
	GK_DETAIL="$(run_detail)"
	gk_check "$who: a connected UDP socket to $GH:443 (QUIC) gets ECONNREFUSED, not a timeout ($(probe_ms) ms)" \
		eval '[ "$RUN_RC" != 0 ] && [ "$(probe_err)" = ECONNREFUSED ]'
}
fails root
fails user

tr_after_denials

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
	gk_check "$who, $what: TCP to github.com's (pinned) address is refused at once: ECONNREFUSED, not a timeout ($(probe_ms) ms, $(probe_err))" \
		eval '[ "$RUN_RC" != 0 ] && [ "$(probe_err)" = ECONNREFUSED ]'
	cage "$who" --allow '*.github.com' "$@" "${CA_ARGS[@]}" \
		-- "${NP[@]}" curl -sS --noproxy '*' --max-time 30 https://github.com/index.html
	GK_DETAIL="$(run_detail)"
	gk_check "$who, $what: curl --noproxy '*' https://github.com/ is refused, not timed out (${RUN_MS} ms)" \
		eval 'refused_in_time && ! out_has "hello from"'
	cage "$who" --allow '*.github.com' "$@" "${CA_ARGS[@]}" \
		-- "${NP[@]}" "${SSHC[@]}" root@github.com echo ssh-ok
	GK_DETAIL="$(run_detail)"
	gk_check "$who, $what: ssh root@github.com is refused, not timed out (${RUN_MS} ms)" \
		eval 'refused_in_time && ! out_has ssh-ok'
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
wait_ms 300 eval '[ "$(nlinks)" -ge 1 ]'
GK_DETAIL="$(nft list table inet gatekeeper 2>&1 | grep -E 'redirect|reject' | head -5 | paste -sd'|' -)"
gk_check "--transparent-port off: with a (default) cage running, the table has no redirect rule" \
	eval '[ "$(nlinks)" -ge 1 ] && nft list table inet gatekeeper >/dev/null 2>&1 && ! redirect_rule'
kill -TERM "$cage_bg_pid" 2>/dev/null
gk_wait_exit "$cage_bg_pid" 50 || { kill -KILL "$cage_bg_pid" 2>/dev/null; gk_wait_exit "$cage_bg_pid" 20; }
old_behaviour root "gatekeeperd --transparent-port off"
old_behaviour user "gatekeeperd --transparent-port off"
cage user --allow '*.github.com' --transparent on "${CA_ARGS[@]}" \
	-- "${NP[@]}" curl -sS --noproxy '*' --max-time 30 https://github.com/index.html
GK_DETAIL=$(run_detail)
gk_check "gatekeeperd --transparent-port off: gk-run --transparent on does not get around it (${RUN_MS} ms)" \
	eval 'refused_in_time && ! out_has "hello from"'
gk_info "gk-run --transparent on against --transparent-port off: rc $RUN_RC, stderr: $(oneline "$(cat "$T/run.err")")"

# ---- stop ---------------------------------------------------------------------------
tr_stop

gk_finish
