#!/usr/bin/env bash
#
# test_names.sh: a host name with an underscore gets one verdict on every
# path out of a cage. The pattern grammar, the DNS server, the SOCKS5 and
# HTTP CONNECT targets and the TLS server name all follow one rule
# (gatekeeper/gk_name.h); before it, `--allow api_x.github.com` resolved
# but its TLS tunnel was refused as a malformed ClientHello.
#
#   bash tests/integration/test_names.sh build/gatekeeperd build/spawner/gk-run
#   meson test -C build names_integration      (suite "integration")
#
# Runs as root in namespaces it creates itself (lib.sh), against
# e2e_net.sh's hermetic internet, where dnsmasq has a record for
# api_x.github.com (192.0.2.18), nginx serves it ("hello from
# api_x.github.com") and the test CA's certificate names it. gatekeeperd
# runs with its defaults (SOCKS5 :1080, HTTP :3128, transparent :15001);
# gk-run cages run as root.
#
# Cases, each `curl https://api_x.github.com/index.html` in a cage:
#   allowed, through SOCKS5 (ALL_PROXY, socks5h: the name resolved by
#           gatekeeperd), HTTP CONNECT (https_proxy) and the transparent
#           path (no proxy variables: the cage's DNS, then nftables'
#           redirect), with --allow api_x.github.com and with
#           --allow '*.github.com': the page comes back, one connection
#           of that protocol counted allowed, no denial of any kind;
#           dig in the cage resolves the name through gatekeeperd;
#   denied, with --allow api.github.com (a sibling): each path refuses
#           it as not allowlisted (and as nothing else).
#
# Prints "ok   ..." / "FAIL ..." per check and a summary; exits 1 if any
# check failed or anything needed is missing (never a silent skip).
# GK_KEEP_TMP=1 keeps the temp directory (logs).

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_names.sh

e2e_args 0 "$@"
e2e_preamble dig dnsmasq curl unshare nsenter ip mount nginx fcgiwrap openssl \
    git /usr/lib/git-core/git-http-backend nft bwrap timeout "$PYTHON"
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
UX=api_x.github.com
UX_ADDR=${EN_ADDR[$UX]}
# Inside the sandbox: the command for each path (the cage sets
# http_proxy/https_proxy to the HTTP proxy, ALL_PROXY to SOCKS5).
NOHTTP=(env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY)
NP=("${NOHTTP[@]}" -u ALL_PROXY -u all_proxy)
declare -A VIA=(
	[socks5]="${NOHTTP[*]} curl"
	[http]="curl"
	[transparent]="${NP[*]} curl --noproxy *"
)

# denials_moved: every denial series that moved between mark and after.
denials_moved() {
	awk '$1 ~ /^gatekeeper_denied_total[{]/ {
		if (FNR == NR) { a[$1] = $2; next }
		if ($2 != a[$1]) printf "%s+%d ", $1, $2 - a[$1]
	}' "$T/m0.txt" "$T/m1.txt"
}

# fetch PATH ALLOW: curl https://api_x.github.com/index.html in a cage
# allowed ALLOW, through PATH (socks5, http, transparent).
fetch() {
	local cmd
	read -ra cmd <<<"${VIA[$1]}"
	mark
	cage root --allow "$2" --ro "$EN_DIR" -- "${cmd[@]}" -sS \
		--max-time 20 "https://$UX/index.html"
	after
	GK_DETAIL="$(run_detail) | allowed +$(dm gatekeeper_connections_total \
		proto="$1" verdict=allowed) | denials: $(denials_moved)"
}

# ---- the internet ------------------------------------------------------------
e2e_begin
gk_ok "the test internet is up (nginx, dnsmasq; $UX at $UX_ADDR)"
r=$(dig +short +time=1 +tries=2 "$UX" A 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "internet: the host resolves $UX -> $UX_ADDR (dnsmasq)" \
	test "$r" = "$UX_ADDR"
r=$(as root curl -sS --noproxy '*' --max-time 20 "https://$UX/index.html" 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "internet: https://$UX/ from the host (nginx, the CA names it)" \
	test "$r" = "hello from $UX"

# ---- gatekeeperd ---------------------------------------------------------------
mkdir -p "$T/home-root" "$T/work-root" "$SHARE" "$T/run"
: >"$T/empty.conf"
GKD_ARGS=(-f -c "$T/empty.conf" --control "$SOCK" --upstream "$EN_RESOLVER"
	--metrics "$METRICS" --audit-log "$AUDIT" --log-level debug)
gk_start_daemon GKD_PID "$GKD" "${GKD_ARGS[@]}"
daemon_ready "$GKD_PID" ||
	gk_abort "gatekeeperd starts (control socket, metrics)" "$T/GKD_PID.log"
gk_ok "gatekeeperd is ready with its defaults (pid $GKD_PID)"
chmod 755 "$T/run"

# ---- DNS in a cage -------------------------------------------------------------
mark
cage root --allow "$UX" -- dig +short +time=2 +tries=1 "$UX" A
after
GK_DETAIL="$(run_detail) | denials: $(denials_moved)"
gk_check "dig $UX in a cage allowed $UX: $UX_ADDR, through gatekeeperd" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(cat "$T/run.out")" = "$UX_ADDR" ] &&
	      [ -z "$(denials_moved)" ]'

# ---- allowed: three paths, two patterns ------------------------------------
for allow in "$UX" '*.github.com'; do
	for via in socks5 http transparent; do
		fetch "$via" "$allow"
		gk_check "$via, --allow '$allow': curl https://$UX/ gets its page" \
			eval '[ "$RUN_RC" = 0 ] &&
			      [ "$(cat "$T/run.out")" = "hello from $UX" ]'
		gk_check "$via, --allow '$allow': one $via connection allowed, no denial" \
			eval '[ "$(dm gatekeeper_connections_total proto=$via \
			      verdict=allowed)" = 1 ] && [ -z "$(denials_moved)" ]'
	done
done

# ---- denied: a sibling name allowed instead ---------------------------------
# The transparent path is refused at DNS (the name is not allowed), the
# proxies at the request.
declare -A DENY_KIND=([socks5]=socks5 [http]=http [transparent]=dns)
for via in socks5 http transparent; do
	fetch "$via" api.github.com
	k=${DENY_KIND[$via]}
	gk_check "$via, --allow api.github.com: $UX is refused (no page)" \
		eval '[ "$RUN_RC" != 0 ] && ! grep -q "hello from" "$T/run.out"'
	gk_check "$via, --allow api.github.com: denied as not_allowlisted ($k), nothing else" \
		eval '[ "$(dm gatekeeper_denied_total kind="$k" \
		      reason=not_allowlisted)" -ge 1 ] &&
		      [ "$(dm gatekeeper_denied_total)" = \
		        "$(dm gatekeeper_denied_total kind="$k" reason=not_allowlisted)" ]'
done

# ---- stop --------------------------------------------------------------------------
e2e_stop_daemon

# shellcheck disable=SC2119  # no note for the summary
gk_finish
