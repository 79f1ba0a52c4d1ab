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
# The module says at start which way it treats a transparent cage's TCP
# to an address not pinned, and the checks follow what it said: "pins"
# (refused at the SYN, as above; the kernel renews timeouts, Linux 6.10
# and later), or "open" (a kernel that cannot, or GK_NFT_PINS=off: every
# transparent cage is in set open, pins are no-ops, and such TCP goes to
# the listener, which decides). Where the module is in pins mode, a second
# pass forces the other with GK_NFT_PINS=off, so both are covered here.
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

# ---------------------------------------------------------------------------
# One pass: driver D, fresh table, the module's own mode (PL_MODE).

# tp_begin D: start, the mode, cages TC (transparent) and TN (not), the
# rules, the sets.
tp_begin() {
	D=$1
	gk_check "start with -t 15001${GK_NFT_PINS:+ (GK_NFT_PINS=$GK_NFT_PINS)}" \
		drv_start "$D" -t 15001 -v
	pl_mode "$D"
	GK_DETAIL=$PL_WHY
	gk_check "the module says how it treats unpinned TCP (pins or open)" \
		eval '[ "$PL_MODE" = pins ] || [ "$PL_MODE" = open ]'
	if [ "$PL_MODE" = open ]; then
		gk_info "mode checked: open (every transparent cage in set open; unpinned TCP goes to the listener): $PL_WHY"
	else
		gk_info "mode checked: pins (unpinned TCP refused at the SYN): $PL_WHY"
	fi
	new_cage TC user
	new_cage TN user
	up "$D" "$TC" gk-cagetp TC_IP transparent
	TC_IDX=$UP_IFINDEX
	GK_DETAIL=$UP_REPLY
	gk_check "cage TC plumbed with transparent on" test -n "${TC_IP:-}"
	up "$D" "$TN" gk-cagetn TN_IP
	GK_DETAIL=$UP_REPLY
	gk_check "cage TN plumbed with transparent off" test -n "${TN_IP:-}"
	nft list table inet gatekeeper >"$T/table-$D.txt" 2>&1
	GK_DETAIL=$(grep -E 'redirect|15001' "$T/table-$D.txt")
	# (nft prints the protocol "tcp", or 6 on a host without /etc/protocols)
	gk_check "nat_pre redirects set transparent's TCP to its pins" grep -qE \
		'iifname "gk-\*" ip daddr != 10\.143\.0\.1 meta l4proto (tcp|6) iifname \. ip saddr @transparent iif \. ip daddr @pins redirect to :15001' \
		"$T/table-$D.txt"
	gk_check "... and set open's TCP anywhere" grep -qE \
		'iifname "gk-\*" ip daddr != 10\.143\.0\.1 meta l4proto (tcp|6) iifname \. ip saddr @transparent iifname \. ip saddr @open redirect to :15001' \
		"$T/table-$D.txt"
	GK_DETAIL=$(grep -E 'log group' "$T/table-$D.txt")
	gk_check "filter_pre logs the refused SYNs of set transparent (rate-limited)" \
		grep -qF 'iifname "gk-*" ip daddr != 10.143.0.1 tcp flags syn / syn,ack iifname . ip saddr @transparent limit rate 2000/second burst 500 packets log group 26475 snaplen 64 queue-threshold 1' \
		"$T/table-$D.txt"
	gk_check "input accepts port 15001 only redirected, from set transparent" \
		grep -qF \
		'iifname "gk-*" ip daddr 10.143.0.1 tcp dport 15001 ct status dnat iifname . ip saddr @transparent accept' \
		"$T/table-$D.txt"
	GK_DETAIL=$(sets)
	gk_check "set cages holds TC and TN, set transparent TC only" eval \
		'table_has "\"gk-cagetp\" . $TC_IP" && table_has "\"gk-cagetn\" . $TN_IP" &&
		 tp_has "\"gk-cagetp\" . $TC_IP" && ! tp_has gk-cagetn'
	if [ "$PL_MODE" = open ]; then
		gk_check "open: TC is in set open as well (as with a CIDR pattern), TN not" \
			eval 'set_has open "\"gk-cagetp\" . $TC_IP" && ! set_has open gk-cagetn'
	else
		gk_check "pins: set open stays empty" set_empty open
	fi
}

# unpinned MSG CAGEPID CAGEIP: the cage's TCP to 203.0.113.50:443, which
# no pin for its link covers. Pins: refused at the SYN. Open: not
# refused, but redirected to the listener with the original destination
# intact (gatekeeperd's listener decides; this one just greets).
unpinned() {
	if [ "$PL_MODE" = open ]; then
		nc_hello "open: $1: not refused at the SYN, redirected to the listener (SO_ORIGINAL_DST 203.0.113.50:443)" \
			"$2" 203.0.113.50 443 "hello 15001 $3 orig=203.0.113.50:443"
	else
		refused "$1: ECONNREFUSED at the SYN" "connection refused" \
			in_cage "$2" nc -v -w "$W" 203.0.113.50 443
	fi
}

# tp_unpinned: TC's TCP to an address never pinned.
tp_unpinned() {
	local n0
	n0=$(lines "tcp 15001 $TC_IP:")
	unpinned "TC: TCP to 203.0.113.50:443, not pinned" "$TC" "$TC_IP"
	if [ "$PL_MODE" = open ]; then
		GK_DETAIL="listener lines before $n0, after $(lines "tcp 15001 $TC_IP:")"
		gk_check "... and the listener logged it" \
			test "$(lines "tcp 15001 $TC_IP:")" -gt "$n0"
		return
	fi
	# Pins: the refusal comes back from the log group.
	GK_DETAIL="listener lines before $n0, after $(lines "tcp 15001 $TC_IP:")"
	gk_check "... and the listener saw nothing of it" \
		test "$(lines "tcp 15001 $TC_IP:")" = "$n0"
	gk_wait_for 300 grep -q "refused ifindex=$TC_IDX $TC_IP -> 203.0.113.50:443" \
		"$T/drv-$D.log"
	GK_DETAIL=$(grep "refused ifindex" "$T/drv-$D.log" | head -3)
	gk_check "... the log group told the driver: link, cage, destination" \
		grep -q "refused ifindex=$TC_IDX $TC_IP -> 203.0.113.50:443" \
		"$T/drv-$D.log"
}

# tp_pinned: pins (for TC's link); redirected with the original
# destination intact either way.
tp_pinned() {
	local a r
	for a in 203.0.113.50 10.200.0.1; do
		r=$(drv_send "$D" "pin $TC_IDX $a 3600")
		GK_DETAIL=$r
		gk_check "pin $a to TC for an hour" test "${r%% *}" = ok
	done
	GK_DETAIL=$(sets)
	if [ "$PL_MODE" = open ]; then
		gk_check "open: pins are no-ops, set pins stays empty" \
			set_empty pins
	else
		gk_check "pins: set pins holds (TC's link . address) for both" eval \
			'set_has pins "\"gk-cagetp\" . 203.0.113.50 " &&
			 set_has pins "\"gk-cagetp\" . 10.200.0.1 "'
	fi
	nc_hello "TC: TCP to 203.0.113.50:443 arrives at gateway:15001 with SO_ORIGINAL_DST 203.0.113.50:443" \
		"$TC" 203.0.113.50 443 "hello 15001 $TC_IP orig=203.0.113.50:443"
	timed in_cage "$TC" curl -sS --http0.9 --max-time "$W" http://203.0.113.50:80/
	GK_DETAIL="$(out) (${MS} ms)"
	gk_check "TC: curl to 203.0.113.50:80 reaches the transparent port" \
		grep -q "hello 15001 $TC_IP orig=203.0.113.50:80" "$T/out"
	nc_hello "TC: TCP to another host address is redirected too" "$TC" \
		10.200.0.1 2222 "hello 15001 $TC_IP orig=10.200.0.1:2222"
}

# tp_timeouts: a pin times out; adding it again renews its timeout (the
# daemon keeps a pin while a connection uses it, and renews it by adding
# it again). Told by the set's own listing, not by timing.
tp_timeouts() {
	local r r2 r3
	r=$(drv_send "$D" "pin $TC_IDX 203.0.113.61 1")
	r2=$(drv_send "$D" "pin $TC_IDX 203.0.113.62 30")
	r3=$(drv_send "$D" "pin $TC_IDX 203.0.113.62 3600")
	GK_DETAIL="$r; $r2; $r3"
	gk_check "pins with 1 s and 30 s timeouts, the second renewed to an hour" \
		eval '[ "${r%% *}" = ok ] && [ "${r2%% *}" = ok ] && [ "${r3%% *}" = ok ]'
	if [ "$PL_MODE" = open ]; then
		GK_DETAIL=$(sets)
		gk_check "open: set pins stays empty" set_empty pins
		nc_hello "open: TC: 203.0.113.61 is redirected all the same" "$TC" \
			203.0.113.61 443 "hello 15001 $TC_IP orig=203.0.113.61:443"
		return
	fi
	GK_DETAIL=$(nft list set inet gatekeeper pins 2>&1 | tr -s '\n\t' ' ')
	gk_check "pins: 203.0.113.62's timeout is now an hour (renewed)" \
		set_has pins '"gk-cagetp" . 203.0.113.62 timeout 1h '
	# Expired elements leave the listing: wait for that (30 s at most).
	gk_wait_for 300 eval '! set_has pins "\"gk-cagetp\" . 203.0.113.61 "'
	GK_DETAIL=$(nft list set inet gatekeeper pins 2>&1 | tr -s '\n\t' ' ')
	gk_check "pins: 203.0.113.61 timed out of set pins" \
		eval '! set_has pins "\"gk-cagetp\" . 203.0.113.61 "'
	refused "TC: after its timeout, 203.0.113.61 is refused again" \
		"connection refused" in_cage "$TC" nc -v -w "$W" 203.0.113.61 443
	nc_hello "TC: the renewed 203.0.113.62 is still redirected" "$TC" \
		203.0.113.62 443 "hello 15001 $TC_IP orig=203.0.113.62:443"
}

# tp_other: pins are per link; set open; another transparent cage, TO.
tp_other() {
	local r
	new_cage TO user
	up "$D" "$TO" gk-cageto TO_IP transparent
	TO_IDX=$UP_IFINDEX
	GK_DETAIL=$(sets)
	if [ "$PL_MODE" = open ]; then
		gk_check "open: TO is in set open from the start" \
			set_has open "\"gk-cageto\" . $TO_IP"
	else
		gk_check "pins: TO is not in set open" eval '! set_has open gk-cageto'
	fi
	unpinned "TO: TCP to 203.0.113.50:443, pinned for TC's link only" \
		"$TO" "$TO_IP"
	# Set open (a CIDR allowlist): every address redirected.
	r=$(drv_send "$D" "open gk-cageto $TO_IP")
	GK_DETAIL="$r; $(nft list set inet gatekeeper open 2>&1 | tr -s ' \n' ' ')"
	gk_check "TO into set open" eval \
		'[ "$r" = ok ] && set_has open "\"gk-cageto\" . $TO_IP"'
	nc_hello "TO (open): TCP to 203.0.113.77:443 is redirected" "$TO" \
		203.0.113.77 443 "hello 15001 $TO_IP orig=203.0.113.77:443"
	drv_send "$D" "down gk-cageto $TO_IP" >/dev/null
	r=$(drv_send "$D" wait)
	GK_DETAIL="$r; $(nft list set inet gatekeeper open 2>&1 | tr -s ' \n' ' ')"
	gk_check "TO down: its element in set open goes too" eval \
		'[[ "$r" == "ok "* ]] && ! set_has open gk-cageto'
	GK_DETAIL="TC $TC_IDX, TO $TO_IDX"
	gk_check "(the two links have their own indexes)" test "$TC_IDX" != "$TO_IDX"
}

# tp_same: what is the same in both modes, for TC and for TN.
tp_same() {
	local n0
	# A direct connection would carry SO_ORIGINAL_DST = the listener
	# itself: input accepts only redirected ones (ct status dnat).
	n0=$(lines "tcp 15001 $TC_IP:")
	refused "TC: gateway:15001 directly is refused at once (not redirected)" \
		"refused" in_cage "$TC" nc -v -w "$W" $GW 15001
	GK_DETAIL="lines before $n0, after $(lines "tcp 15001 $TC_IP:")"
	gk_check "... and the listener saw nothing of it" \
		test "$(lines "tcp 15001 $TC_IP:")" = "$n0"
	nc_hello "TC: the SOCKS port still works" "$TC" "$GW" 1080 \
		"hello 1080 $TC_IP"
	refused "TC: other gateway ports are still refused" "refused" \
		in_cage "$TC" nc -v -w "$W" $GW 22
	refused "TC: UDP elsewhere is still refused (dig)" "connection refused" \
		in_cage "$TC" dig @203.0.113.5 -p 5353 probe.test +time="$W" +tries=1
	udp_refused "TC: UDP (QUIC) to 203.0.113.50:443, connected socket: ECONNREFUSED" \
		"$TC" 203.0.113.50 443
	dig_ok "TC: DNS to 8.8.8.8 still goes to the resolver" "$TC" 8.8.8.8
	dig_ok "TC: DNS over TCP to 8.8.8.8 too (not the transparent port)" \
		"$TC" 8.8.8.8 +tcp

	# Transparent off, in the same table: the fast reset as before.
	n0=$(lines " $TN_IP:")
	refused "TN: TCP to 203.0.113.50:443 is reset at once" "refused" \
		in_cage "$TN" nc -v -w "$W" 203.0.113.50 443
	refused "TN: curl to 203.0.113.50:80 is refused at once" \
		"connection refused" in_cage "$TN" curl -sSv --max-time "$W" \
		http://203.0.113.50:80/
	refused "TN: gateway:15001 directly is refused at once" "refused" \
		in_cage "$TN" nc -v -w "$W" $GW 15001
	GK_DETAIL="TN lines before $n0, after $(lines " $TN_IP:")"
	gk_check "... and the listeners saw nothing from TN" \
		test "$(lines " $TN_IP:")" = "$n0"
	udp_refused "TN: UDP (QUIC) to 203.0.113.50:443, connected socket: ECONNREFUSED" \
		"$TN" 203.0.113.50 443
	dig_ok "TN: DNS to 8.8.8.8 goes to the resolver" "$TN" 8.8.8.8
	nc_hello "TN: the SOCKS port works" "$TN" "$GW" 1080 "hello 1080 $TN_IP"
}

# tp_teardown: TN alone (not in set transparent: deleting nothing there
# must not fail the transaction), then TC alone, then a mixed pair at
# once; stop.
tp_teardown() {
	local r
	drv_send "$D" "down gk-cagetn $TN_IP" >/dev/null
	r=$(drv_send "$D" wait)
	GK_DETAIL="$r; $(sets)"
	gk_check "TN down: link and element gone, TC's elements stay" eval \
		'[[ "$r" == "ok "* ]] && ! table_has gk-cagetn &&
		 ! ip link show gk-cagetn >/dev/null 2>&1 &&
		 table_has "\"gk-cagetp\" . $TC_IP" && tp_has "\"gk-cagetp\" . $TC_IP"'
	drv_send "$D" "down gk-cagetp $TC_IP" >/dev/null
	r=$(drv_send "$D" wait)
	GK_DETAIL="$r; $(sets)"
	gk_check "TC down: link and elements in cages, transparent and open gone" eval \
		'[[ "$r" == "ok "* ]] && ! table_has gk-cagetp && tp_empty &&
		 set_empty open && ! ip link show gk-cagetp >/dev/null 2>&1'
	new_cage TC2 user
	new_cage TN2 user
	up "$D" "$TC2" gk-cagetp2 TC2_IP transparent
	TC2_IDX=$UP_IFINDEX
	up "$D" "$TN2" gk-cagetn2 TN2_IP
	GK_DETAIL="$TC2_IP $TN2_IP; $(sets)"
	gk_check "a second pair plumbed (one transparent)" eval \
		'[ -n "$TC2_IP" ] && [ -n "$TN2_IP" ] &&
		 tp_has "\"gk-cagetp2\" . $TC2_IP" && ! tp_has gk-cagetn2'
	unpinned "TC2 (a new link): TC's pins do not apply" "$TC2" "$TC2_IP"
	r=$(drv_send "$D" "pin $TC2_IDX 203.0.113.50 3600")
	nc_hello "TC2: pinned, redirected" "$TC2" 203.0.113.50 443 \
		"hello 15001 $TC2_IP orig=203.0.113.50:443"
	refused "TN2: reset at once" "refused" \
		in_cage "$TN2" nc -v -w "$W" 203.0.113.50 443
	drv_send "$D" "down gk-cagetp2 $TC2_IP" >/dev/null
	drv_send "$D" "down gk-cagetn2 $TN2_IP" >/dev/null
	r=$(drv_send "$D" wait)
	GK_DETAIL="$r; $(sets)"
	gk_check "both down at once: every element of sets cages, transparent and open gone" eval \
		'[[ "$r" == "ok "* ]] && ! table_has gk-cagetp2 &&
		 ! table_has gk-cagetn2 && tp_empty && set_empty open'
	GK_DETAIL=$(grep -E "one by one|teardown incomplete" "$T/drv-$D.log")
	gk_check "... each teardown one transaction, every address back in the pool" \
		test -z "$GK_DETAIL"
	tp_logged
	drv_quit "$D"
	GK_DETAIL="rc $GK_RC"
	gk_check "stop (transparent)" test "$GK_RC" = 0
}

# tp_logged: what the driver logged of the three transparent cages.
tp_logged() {
	GK_DETAIL=$(grep "plumbed, transparent" "$T/drv-$D.log")
	if [ "$PL_MODE" = open ]; then
		gk_check "(the driver logged 3 transparent cages, each open)" \
			test "$(grep -c "plumbed, transparent, open" "$T/drv-$D.log")" = 3
		GK_DETAIL=$(grep "refused ifindex" "$T/drv-$D.log" | head -3)
		gk_check "open: no SYN refused (the log group reported none)" \
			test -z "$GK_DETAIL"
	else
		gk_check "(the driver logged 3 transparent cages, none open)" eval \
			'[ "$(grep -c "plumbed, transparent" "$T/drv-$D.log")" = 3 ] &&
			 ! grep -q "plumbed, transparent, open" "$T/drv-$D.log"'
	fi
}

# tp_pass D: one pass with driver D.
tp_pass() {
	tp_begin "$1"
	tp_unpinned
	tp_pinned
	tp_timeouts
	tp_other
	tp_same
	tp_teardown
}

# ===========================================================================
echo "---- transparent mode (transparent_port 15001), per cage ----"
tp_pass tp
if [ "$PL_MODE" = pins ]; then
	echo "---- the same with GK_NFT_PINS=off (as on a kernel before 6.10) ----"
	GK_NFT_PINS=off tp_pass tpoff
	GK_DETAIL=$PL_WHY
	gk_check "GK_NFT_PINS=off put the module in open mode" \
		eval '[ "$PL_MODE" = open ] && [[ "$PL_WHY" == *"GK_NFT_PINS=off"* ]]'
else
	gk_info "the module is in open mode already: no second pass"
fi

# ===========================================================================
echo "---- sanitizers ----"
GK_DETAIL=$(grep -hE "AddressSanitizer|LeakSanitizer|runtime error:" "$T"/drv-*.log | head -5)
gk_check "no sanitizer reports in the drivers' logs" test -z "$GK_DETAIL"

pl_finish
