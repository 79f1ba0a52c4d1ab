#!/usr/bin/env bash
#
# test_plumb_transparent.sh: the nft module's transparent mode
# (transparent_port 15001) on a real kernel: per cage, TCP to any other
# address is redirected to the transparent port with the original
# destination intact, or (transparent off, in the same table) reset at
# once as without the port; the teardowns of both kinds.
#
#   bash tests/integration/test_plumb_transparent.sh build/tests/plumb_drive
#   meson test -C build nft_transparent_integration
#                                              (suites "nft", "integration")
#
# Runs as root in namespaces it creates itself (see lib.sh), like
# test_plumb.sh, with the same plumb_drive, cages and gateway listeners
# (plumb_lib.sh).
#
# Prints one line per check ("ok   ..." or "FAIL ..."); exits 1 if any
# check failed, 77 (skip) when not root or namespaces/nftables are
# unavailable. GK_KEEP_TMP=1 keeps the logs.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_exe_args test_plumb_transparent.sh DRV=plumb_drive -- "$@"
gk_require unshare nsenter setpriv ip nft socat nc dig curl ping sysctl \
	"$PYTHON"

gk_enter_netns 77 "$GK_SELF" "$DRV"
gk_setup

# shellcheck source=tests/integration/plumb_lib.sh
. "$GK_LIB_DIR/plumb_lib.sh"
pl_setup
# A second host address (another link): redirected like any other.
pl_host_dummy

# ===========================================================================
echo "---- transparent mode (transparent_port 15001), per cage ----"

gk_check "start with -t 15001" drv_start tp -t 15001 -v
new_cage TC user
new_cage TN user
up tp "$TC" gk-cagetp TC_IP transparent
GK_DETAIL=$UP_REPLY
gk_check "cage TC plumbed with transparent on" test -n "${TC_IP:-}"
up tp "$TN" gk-cagetn TN_IP
GK_DETAIL=$UP_REPLY
gk_check "cage TN plumbed with transparent off" test -n "${TN_IP:-}"
nft list table inet gatekeeper >"$T/table-tp.txt" 2>&1
GK_DETAIL=$(grep -E 'redirect|15001' "$T/table-tp.txt")
gk_check "nat_pre redirects only set transparent" grep -qF \
	'iifname "gk-*" ip daddr != 10.143.0.1 meta l4proto tcp iifname . ip saddr @transparent redirect to :15001' \
	"$T/table-tp.txt"
gk_check "input accepts port 15001 only redirected, from set transparent" \
	grep -qF \
	'iifname "gk-*" ip daddr 10.143.0.1 tcp dport 15001 ct status dnat iifname . ip saddr @transparent accept' \
	"$T/table-tp.txt"
GK_DETAIL=$(sets)
gk_check "set cages holds TC and TN, set transparent TC only" eval \
	'table_has "\"gk-cagetp\" . $TC_IP" && table_has "\"gk-cagetn\" . $TN_IP" &&
	 tp_has "\"gk-cagetp\" . $TC_IP" && ! tp_has gk-cagetn'

# Transparent on: redirected, the original destination intact.
nc_hello "TC: TCP to 203.0.113.50:443 arrives at gateway:15001 with SO_ORIGINAL_DST 203.0.113.50:443" \
	"$TC" 203.0.113.50 443 "hello 15001 $TC_IP orig=203.0.113.50:443"
timed in_cage "$TC" curl -sS --http0.9 --max-time 2 http://203.0.113.50:80/
GK_DETAIL="$(out) (${MS} ms)"
gk_check "TC: curl to 203.0.113.50:80 reaches the transparent port" \
	grep -q "hello 15001 $TC_IP orig=203.0.113.50:80" "$T/out"
nc_hello "TC: TCP to another host address is redirected too" "$TC" \
	10.200.0.1 2222 "hello 15001 $TC_IP orig=10.200.0.1:2222"
# A direct connection would carry SO_ORIGINAL_DST = the listener itself:
# input accepts only redirected ones (ct status dnat).
n0=$(lines "tcp 15001 $TC_IP:")
refused "TC: gateway:15001 directly is refused at once (not redirected)" \
	"refused" in_cage "$TC" nc -v -w 2 $GW 15001
GK_DETAIL="lines before $n0, after $(lines "tcp 15001 $TC_IP:")"
gk_check "... and the listener saw nothing of it" \
	test "$(lines "tcp 15001 $TC_IP:")" = "$n0"
nc_hello "TC: the SOCKS port still works" "$TC" "$GW" 1080 \
	"hello 1080 $TC_IP"
refused "TC: other gateway ports are still refused" "refused" \
	in_cage "$TC" nc -v -w 2 $GW 22
refused "TC: UDP elsewhere is still refused (dig)" "refused" \
	in_cage "$TC" dig @203.0.113.5 -p 5353 probe.test +time=2 +tries=1
udp_fast "TC: UDP (QUIC) to 203.0.113.50:443, connected socket: ECONNREFUSED" \
	"$TC" 203.0.113.50 443
dig_ok "TC: DNS to 8.8.8.8 still goes to the resolver" "$TC" 8.8.8.8
dig_ok "TC: DNS over TCP to 8.8.8.8 too (not the transparent port)" \
	"$TC" 8.8.8.8 +tcp

# Transparent off, in the same table: the fast reset as before.
n0=$(lines " $TN_IP:")
refused "TN: TCP to 203.0.113.50:443 is reset at once" "refused" \
	in_cage "$TN" nc -v -w 2 203.0.113.50 443
refused "TN: curl to 203.0.113.50:80 is refused at once" \
	"connection refused" in_cage "$TN" curl -sSv --max-time 2 \
	http://203.0.113.50:80/
refused "TN: gateway:15001 directly is refused at once" "refused" \
	in_cage "$TN" nc -v -w 2 $GW 15001
GK_DETAIL="TN lines before $n0, after $(lines " $TN_IP:")"
gk_check "... and the listeners saw nothing from TN" \
	test "$(lines " $TN_IP:")" = "$n0"
udp_fast "TN: UDP (QUIC) to 203.0.113.50:443, connected socket: ECONNREFUSED" \
	"$TN" 203.0.113.50 443
dig_ok "TN: DNS to 8.8.8.8 goes to the resolver" "$TN" 8.8.8.8
nc_hello "TN: the SOCKS port works" "$TN" "$GW" 1080 "hello 1080 $TN_IP"

# Teardown: TN alone (not in set transparent: deleting nothing there must
# not fail the transaction), then TC alone, then a mixed pair at once.
drv_send tp "down gk-cagetn $TN_IP" >/dev/null
r=$(drv_send tp wait)
GK_DETAIL="$r; $(sets)"
gk_check "TN down: link and element gone, TC's elements stay" eval \
	'[[ "$r" == "ok "* ]] && ! table_has gk-cagetn &&
	 ! ip link show gk-cagetn >/dev/null 2>&1 &&
	 table_has "\"gk-cagetp\" . $TC_IP" && tp_has "\"gk-cagetp\" . $TC_IP"'
drv_send tp "down gk-cagetp $TC_IP" >/dev/null
r=$(drv_send tp wait)
GK_DETAIL="$r; $(sets)"
gk_check "TC down: link and elements in cages and transparent gone" eval \
	'[[ "$r" == "ok "* ]] && ! table_has gk-cagetp && tp_empty &&
	 ! ip link show gk-cagetp >/dev/null 2>&1'
new_cage TC2 user
new_cage TN2 user
up tp "$TC2" gk-cagetp2 TC2_IP transparent
up tp "$TN2" gk-cagetn2 TN2_IP
GK_DETAIL="$TC2_IP $TN2_IP; $(sets)"
gk_check "a second pair plumbed (one transparent)" eval \
	'[ -n "$TC2_IP" ] && [ -n "$TN2_IP" ] &&
	 tp_has "\"gk-cagetp2\" . $TC2_IP" && ! tp_has gk-cagetn2'
nc_hello "TC2: redirected" "$TC2" 203.0.113.50 443 \
	"hello 15001 $TC2_IP orig=203.0.113.50:443"
refused "TN2: reset at once" "refused" \
	in_cage "$TN2" nc -v -w 2 203.0.113.50 443
drv_send tp "down gk-cagetp2 $TC2_IP" >/dev/null
drv_send tp "down gk-cagetn2 $TN2_IP" >/dev/null
r=$(drv_send tp wait)
GK_DETAIL="$r; $(sets)"
gk_check "both down at once: every element of both sets gone" eval \
	'[[ "$r" == "ok "* ]] && ! table_has gk-cagetp2 &&
	 ! table_has gk-cagetn2 && tp_empty'
GK_DETAIL=$(grep -E "one by one|teardown incomplete" "$T/drv-tp.log")
gk_check "... each teardown one transaction, every address back in the pool" \
	test -z "$GK_DETAIL"
GK_DETAIL=$(grep -c "plumbed, transparent" "$T/drv-tp.log")
gk_check "(the driver logged 2 transparent cages)" test "$GK_DETAIL" = 2
drv_quit tp
GK_DETAIL="rc $GK_RC"
gk_check "stop (transparent)" test "$GK_RC" = 0

# ===========================================================================
echo "---- sanitizers ----"
GK_DETAIL=$(grep -hE "AddressSanitizer|LeakSanitizer|runtime error:" "$T"/drv-*.log | head -5)
gk_check "no sanitizer reports in the drivers' logs" test -z "$GK_DETAIL"

pl_finish
