#!/usr/bin/env bash
#
# test_plumb_transparent.sh: the nft module's transparent mode
# (transparent_port 15001) on a real kernel: per cage, TCP to an address
# pinned to its link (set pins, with timeouts that adding again renews),
# or to any address for a cage in set open, is redirected to the
# transparent port with the original destination intact; any other SYN
# is refused at once and comes back through the log group; without
# transparent (in the same table) everything is reset at once as without
# the port; the teardowns of every kind.
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
TC_IDX=$UP_IFINDEX
GK_DETAIL=$UP_REPLY
gk_check "cage TC plumbed with transparent on" test -n "${TC_IP:-}"
up tp "$TN" gk-cagetn TN_IP
GK_DETAIL=$UP_REPLY
gk_check "cage TN plumbed with transparent off" test -n "${TN_IP:-}"
nft list table inet gatekeeper >"$T/table-tp.txt" 2>&1
GK_DETAIL=$(grep -E 'redirect|15001' "$T/table-tp.txt")
gk_check "nat_pre redirects set transparent's TCP to its pins" grep -qF \
	'iifname "gk-*" ip daddr != 10.143.0.1 meta l4proto tcp iifname . ip saddr @transparent iif . ip daddr @pins redirect to :15001' \
	"$T/table-tp.txt"
gk_check "... and set open's TCP anywhere" grep -qF \
	'iifname "gk-*" ip daddr != 10.143.0.1 meta l4proto tcp iifname . ip saddr @transparent iifname . ip saddr @open redirect to :15001' \
	"$T/table-tp.txt"
GK_DETAIL=$(grep -E 'log group' "$T/table-tp.txt")
gk_check "filter_pre logs the refused SYNs of set transparent (rate-limited)" \
	grep -qF 'iifname "gk-*" ip daddr != 10.143.0.1 tcp flags syn / syn,ack iifname . ip saddr @transparent limit rate 2000/second burst 500 packets log group 26475 snaplen 64 queue-threshold 1' \
	"$T/table-tp.txt"
gk_check "input accepts port 15001 only redirected, from set transparent" \
	grep -qF \
	'iifname "gk-*" ip daddr 10.143.0.1 tcp dport 15001 ct status dnat iifname . ip saddr @transparent accept' \
	"$T/table-tp.txt"
GK_DETAIL=$(sets)
gk_check "set cages holds TC and TN, set transparent TC only" eval \
	'table_has "\"gk-cagetp\" . $TC_IP" && table_has "\"gk-cagetn\" . $TN_IP" &&
	 tp_has "\"gk-cagetp\" . $TC_IP" && ! tp_has gk-cagetn'

# Transparent on: an address never pinned is refused at the SYN (and the
# refusal comes back from the log group) ...
n0=$(lines "tcp 15001 $TC_IP:")
refused "TC: TCP to 203.0.113.50:443, not pinned: ECONNREFUSED at once" \
	"refused" in_cage "$TC" nc -v -w 2 203.0.113.50 443
GK_DETAIL="listener lines before $n0, after $(lines "tcp 15001 $TC_IP:")"
gk_check "... and the listener saw nothing of it" \
	test "$(lines "tcp 15001 $TC_IP:")" = "$n0"
gk_wait_for 50 grep -q "refused ifindex=$TC_IDX $TC_IP -> 203.0.113.50:443" \
	"$T/drv-tp.log"
GK_DETAIL=$(grep "refused ifindex" "$T/drv-tp.log" | head -3)
gk_check "... the log group told the driver: link, cage, destination" \
	grep -q "refused ifindex=$TC_IDX $TC_IP -> 203.0.113.50:443" \
	"$T/drv-tp.log"
# ... once pinned (for the cage's link), redirected with the original
# destination intact.
for a in 203.0.113.50 10.200.0.1; do
	r=$(drv_send tp "pin $TC_IDX $a 60")
	GK_DETAIL=$r
	gk_check "pin $a to TC for 60 s" test "${r%% *}" = ok
done
nc_hello "TC: TCP to 203.0.113.50:443 arrives at gateway:15001 with SO_ORIGINAL_DST 203.0.113.50:443" \
	"$TC" 203.0.113.50 443 "hello 15001 $TC_IP orig=203.0.113.50:443"
timed in_cage "$TC" curl -sS --http0.9 --max-time 2 http://203.0.113.50:80/
GK_DETAIL="$(out) (${MS} ms)"
gk_check "TC: curl to 203.0.113.50:80 reaches the transparent port" \
	grep -q "hello 15001 $TC_IP orig=203.0.113.50:80" "$T/out"
nc_hello "TC: TCP to another host address is redirected too" "$TC" \
	10.200.0.1 2222 "hello 15001 $TC_IP orig=10.200.0.1:2222"
# A pin times out; adding it again renews its timeout (the daemon keeps
# a pin while a connection uses it, and renews it by adding it again).
r=$(drv_send tp "pin $TC_IDX 203.0.113.61 1")
r2=$(drv_send tp "pin $TC_IDX 203.0.113.62 1")
r3=$(drv_send tp "pin $TC_IDX 203.0.113.62 60")
GK_DETAIL="$r; $r2; $r3"
gk_check "pins with 1 s timeouts, one renewed to 60 s" eval \
	'[ "${r%% *}" = ok ] && [ "${r2%% *}" = ok ] && [ "${r3%% *}" = ok ]'
sleep 2
refused "TC: after its timeout, 203.0.113.61 is refused again" "refused" \
	in_cage "$TC" nc -v -w 2 203.0.113.61 443
nc_hello "TC: the renewed 203.0.113.62 is still redirected" "$TC" \
	203.0.113.62 443 "hello 15001 $TC_IP orig=203.0.113.62:443"
# Pins are per link: another transparent cage's SYN there is refused.
new_cage TO user
up tp "$TO" gk-cageto TO_IP transparent
TO_IDX=$UP_IFINDEX
refused "TO: TCP to TC's pinned 203.0.113.50:443 is refused" "refused" \
	in_cage "$TO" nc -v -w 2 203.0.113.50 443
# Set open (a CIDR allowlist): every address redirected.
r=$(drv_send tp "open gk-cageto $TO_IP")
GK_DETAIL="$r; $(nft list set inet gatekeeper open 2>&1 | tr -s ' \n' ' ')"
gk_check "TO into set open" eval '[ "$r" = ok ] && nft list set inet gatekeeper open | grep -q "gk-cageto"'
nc_hello "TO (open): TCP to 203.0.113.77:443 is redirected" "$TO" \
	203.0.113.77 443 "hello 15001 $TO_IP orig=203.0.113.77:443"
drv_send tp "down gk-cageto $TO_IP" >/dev/null
r=$(drv_send tp wait)
GK_DETAIL="$r; $(nft list set inet gatekeeper open 2>&1 | tr -s ' \n' ' ')"
gk_check "TO down: its element in set open goes too" eval \
	'[[ "$r" == "ok "* ]] && ! nft list set inet gatekeeper open | grep -q gk-cageto'
GK_DETAIL="TC $TC_IDX, TO $TO_IDX"
gk_check "(the two links have their own indexes)" test "$TC_IDX" != "$TO_IDX"
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
TC2_IDX=$UP_IFINDEX
up tp "$TN2" gk-cagetn2 TN2_IP
GK_DETAIL="$TC2_IP $TN2_IP; $(sets)"
gk_check "a second pair plumbed (one transparent)" eval \
	'[ -n "$TC2_IP" ] && [ -n "$TN2_IP" ] &&
	 tp_has "\"gk-cagetp2\" . $TC2_IP" && ! tp_has gk-cagetn2'
refused "TC2 (a new link): TC's pins do not apply" "refused" \
	in_cage "$TC2" nc -v -w 2 203.0.113.50 443
r=$(drv_send tp "pin $TC2_IDX 203.0.113.50 60")
nc_hello "TC2: pinned, redirected" "$TC2" 203.0.113.50 443 \
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
gk_check "(the driver logged 3 transparent cages)" test "$GK_DETAIL" = 3
drv_quit tp
GK_DETAIL="rc $GK_RC"
gk_check "stop (transparent)" test "$GK_RC" = 0

# ===========================================================================
echo "---- sanitizers ----"
GK_DETAIL=$(grep -hE "AddressSanitizer|LeakSanitizer|runtime error:" "$T"/drv-*.log | head -5)
gk_check "no sanitizer reports in the drivers' logs" test -z "$GK_DETAIL"

pl_finish
