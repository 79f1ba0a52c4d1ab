# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the sourcing scripts
# shellcheck disable=SC2016  # eval'd conditions are single-quoted on purpose
#
# transparent_lib.sh: what the transparent-mode integration tests share
# (test_transparent.sh, what works and what fails through the transparent
# listener, the switches that turn it off; test_transparent_peek.sh, the
# peek at a redirected connection's first bytes): the counters and audit
# helpers, and the run's frame: tr_start (the test internet with sshd
# checked from the host, the unprivileged user, gatekeeperd with its
# defaults, the files cages read), tr_after_denials, tr_stop. Source it
# after e2e_net.sh and e2e_vars, from inside the test namespaces; it
# defines functions and variables only. The cage runners are
# e2e_lib.sh's.

TPORT=15001
GH=192.0.2.10			# github.com
# Inside the sandbox: no proxy variables at all.
NP=(env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY
	-u ALL_PROXY -u all_proxy)
# The pattern set of the ssh cases: HTTPS on every github.com name, ssh
# on github.com only (a port pattern).
SSH_ALLOW=(--allow '*.github.com:443' --allow 'github.com:22')

# ---------------------------------------------------------------------------
# Helpers

# mark: remember the counters (e2e_lib.sh's mark) and the audit log's
# length before a case; after and dm are e2e_lib.sh's.
mark() {
	fetch_metrics "$T/m0.txt"
	AUDIT_MARK=$(gk_audit_mark "$AUDIT")
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
# audit_wait N [TENTHS]: wait (gk_audit_wait, 2 s by default) for N
# transparent proxy.deny lines since mark.
audit_wait() {
	gk_audit_wait -n "$1" "$AUDIT" "${AUDIT_MARK:-0}" "${2:-300}" \
		'"event":"proxy\.deny"' '"proto":"transparent"'
}

out_has() { grep -q -- "$1" "$T/run.out"; }

sha_of() { sha256sum <"$1" 2>/dev/null | awk '{print $1}'; }

gkd_alive() { kill -0 "$GKD_PID" 2>/dev/null; }
listening_tport() { ss -Hltn "sport = :$TPORT" 2>/dev/null | grep -q .; }
redirect_rule() { nft list table inet gatekeeper 2>/dev/null | grep -q 'redirect'; }

# audit_match LINE REASONS HOST PORT SEEN: an audit_new LINE has one of
# REASONS ('|'-separated), HOST, PORT and SEEN ('*': any).
audit_match() {	# LINE REASONS HOST PORT SEEN
	local reason host port seen
	IFS='|' read -r reason host port seen <<<"$1"
	[[ "|$2|" == *"|$reason|"* ]] && [ "$host" = "$3" ] && [ "$port" = "$4" ] &&
		{ [ "$5" = '*' ] || [ "$seen" = "$5" ]; }
}

# ---------------------------------------------------------------------------
# The run's frame

# tr_start: the test internet with OpenSSH on github.com:22 (checked from
# the host; GK_TR_INTERNET_ONLY=1 stops after that), the unprivileged
# user and a copy of the ssh key per identity, gatekeeperd with its
# defaults (transparent listener and redirect rule checked), and the
# files a cage reads ($SHARE: the probe scripts, socks_client.py).
tr_start() {
	# ---- the internet ---------------------------------------------------
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

	# ---- the unprivileged user ------------------------------------------
	e2e_user

	en_ssh_keys "$T" "$E2E_USER"

	# ---- gatekeeperd ----------------------------------------------------
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
}

# tr_after_denials: gatekeeperd survived the denials, promtool accepts
# /metrics with the transparent series, no cage left anything behind.
tr_after_denials() {
	GK_DETAIL="$(gk_tail "$T/GKD_PID.log" 5)"
	gk_check "gatekeeperd is still running after the denials" gkd_alive
	fetch_metrics "$T/m-all.txt"
	GK_DETAIL="$(promtool check metrics <"$T/m-all.txt" 2>&1 | head -5)"
	gk_check "promtool check metrics accepts /metrics with the transparent series" \
		eval 'promtool check metrics <"$T/m-all.txt" >/dev/null 2>&1 &&
		      grep -q "^gatekeeper_connections_total{.*proto=\"transparent\"" "$T/m-all.txt" &&
		      grep -q "^gatekeeper_denied_total{.*kind=\"transparent\"" "$T/m-all.txt"'

	wait_ms 300 no_leftovers
	GK_DETAIL="links: $(gk_links | paste -sd, -) elements: $(set_elems | paste -sd, -)"
	gk_check "no gk-* link or set element left after the denial cases" no_leftovers
}

# tr_stop: nothing left behind, gatekeeperd exits 0 on SIGTERM and takes
# its table along, no sanitizer reports.
tr_stop() {
	wait_ms 300 no_leftovers
	GK_DETAIL="links: $(gk_links | paste -sd, -) elements: $(set_elems | paste -sd, -)"
	gk_check "no gk-* link or set element left at the end" no_leftovers
	gk_stop_daemon "$GKD_PID" TERM
	GK_DETAIL="exit status $GK_RC"
	gk_check "SIGTERM: gatekeeperd exits 0" test "$GK_RC" = 0
	GK_DETAIL="tables: $(nft list tables 2>&1 | paste -sd, -)"
	gk_check "SIGTERM: the table inet gatekeeper is gone" \
		eval '! nft list table inet gatekeeper >/dev/null 2>&1'
	e2e_no_sanitizer_reports
}
