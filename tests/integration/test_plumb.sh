#!/usr/bin/env bash
#
# test_plumb.sh: the nft module (kernel plumbing) on a real kernel, with no
# transparent port (transparent mode: test_plumb_transparent.sh).
#
#   bash tests/integration/test_plumb.sh build/tests/plumb_drive
#   meson test -C build nft_integration        (suites "nft", "integration")
#
# Runs as root in namespaces it creates itself (see lib.sh): a fresh network
# namespace with only lo stands in for the host. plumb_drive (tests/
# plumb_drive.c) drives the module: nft_plumb_new, nft_cage_up/down,
# nft_netns_check, nft_plumb_free. Cages are network namespaces held by
# sleeping processes, made the way gk-run makes them (unshare --user --net)
# or root-owned (for the spoofing test). Everything is checked with real
# tools from inside the cages: dig, nc, curl, ping, socat, ip, nft. A
# Python listener on the gateway address plays gatekeeperd's listeners and
# logs every connection and datagram it gets (plumb_lib.sh).
#
# Without a transparent port the nft module neither probes nor uses the
# kernel's renewal of set element timeouts (test_plumb_transparent.sh
# covers both of its modes), so every check here holds on any kernel; the
# restart after the crash forces GK_NFT_PINS=off to show that it changes
# nothing here. No verdict depends on how long anything took (timings
# are reported only).
#
# Prints one line per check ("ok   ..." or "FAIL ..."), then timings
# ("info ..."); exits 1 if any check failed, 77 (skip) when not root or
# namespaces/nftables are unavailable. GK_KEEP_TMP=1 keeps the logs.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_exe_args test_plumb.sh DRV=plumb_drive -- "$@"
gk_require unshare nsenter setpriv ip nft socat nc dig curl ping sysctl \
	"$PYTHON"

gk_enter_netns 77 "$GK_SELF" "$DRV"
gk_setup

# shellcheck source=tests/integration/plumb_lib.sh
. "$GK_LIB_DIR/plumb_lib.sh"
pl_setup

# ===========================================================================
echo "---- start: table, set, chains, rules ----"

r=$(GK_NFT_PINS=bogus "$DRV" serve -t 15001 </dev/null 2>&1)
GK_DETAIL="$r; $(nft list tables 2>&1)"
gk_check "an unknown GK_NFT_PINS is refused at start, nothing made" eval \
	'[[ "$r" == "err GK_NFT_PINS=bogus: unknown value"* ]] &&
	 ! nft list table inet gatekeeper >/dev/null 2>&1'
gk_check "nft_plumb_new succeeds (plumb_drive ready)" drv_start main
# Without a transparent port, transparent cages' pins and set open do not
# arise: the module neither probes the kernel for them nor says anything,
# and every check here is the same on any kernel.
pl_mode main
GK_DETAIL=$PL_WHY
gk_check "no transparent port: the module says nothing of pins or set open" \
	test "$PL_MODE" = none
gk_info "mode checked: no transparent port (pins and set open unused; GK_NFT_PINS ${GK_NFT_PINS:-unset} here)"
nft list table inet gatekeeper >"$T/table.txt" 2>&1
GK_DETAIL=$(head -c 600 "$T/table.txt")
gk_check "table inet gatekeeper exists with set cages (ifname . ipv4_addr)" \
	eval 'grep -A1 "set cages {" "$T/table.txt" |
	    grep -q "type ifname . ipv4_addr"'
gk_check "... and set transparent (ifname . ipv4_addr), unused here" eval \
	'grep -A1 "set transparent {" "$T/table.txt" |
	    grep -q "type ifname . ipv4_addr" &&
	 ! grep -q "@transparent" "$T/table.txt"' 
GK_DETAIL=$(grep -E 'hook|policy' "$T/table.txt")
gk_check "five base chains, all policy accept" eval \
	'[ "$(grep -c "policy accept;" "$T/table.txt")" = 5 ] &&
	 ! grep -q "policy drop" "$T/table.txt"'
GK_DETAIL=$(grep -vE '^\s*(table|set|chain|type|flags|elements|\}|$)' "$T/table.txt" | grep -v 'gk-\*')
gk_check "every rule matches the cage links (gk-*) itself" eval \
	'[ -z "$(grep -vE "^\s*(table|set|chain|type|flags|elements|\}|$)" "$T/table.txt" |
	    grep -v "gk-\*")" ]'
GK_DETAIL=$(grep redirect "$T/table.txt")
gk_check "no transparent redirect without transparent_port" \
	eval '! grep -q redirect "$T/table.txt"'

# ===========================================================================
echo "---- cages A and B (user namespaces, as gk-run makes them) ----"

if ! new_cage A user || ! new_cage B user; then
	gk_fail "cage processes start"
	exit 1
fi
r=$(drv_send main "check /proc/$A/ns/net 0")
GK_DETAIL=$r
gk_check "nft_netns_check accepts a fresh user-owned netns" test "$r" = ok
GK_DETAIL=$UP_REPLY
up main "$A" gk-cagea A_IP
GK_DETAIL=$UP_REPLY
gk_check "cage A plumbed (10.143.0.2)" test "${A_IP:-}" = 10.143.0.2
# B asks for transparent mode, but this table has no transparent port
# (host-wide off): B is plumbed like A, and set transparent stays empty.
up main "$B" gk-cageb B_IP transparent
GK_DETAIL=$UP_REPLY
gk_check "cage B plumbed (10.143.0.3), transparent asked for" \
	test "${B_IP:-}" = 10.143.0.3
GK_DETAIL=$(sets)
gk_check "no transparent port: sets transparent and open stay empty" eval \
	'tp_empty && set_empty open'

GK_DETAIL=$(ip -o addr show dev gk-cagea)
gk_check "host end carries the gateway /32" \
	eval 'ip -o -4 addr show dev gk-cagea | grep -q "inet $GW/32"'
GK_DETAIL=$(ip route show)
gk_check "host route to the cage /32 via its link, src gateway" \
	eval 'ip route show $A_IP | grep -q "dev gk-cagea .*scope link src $GW"'
GK_DETAIL="rp_filter=$(cat /proc/sys/net/ipv4/conf/gk-cagea/rp_filter) forwarding=$(cat /proc/sys/net/ipv4/conf/gk-cagea/forwarding) disable_ipv6=$(cat /proc/sys/net/ipv6/conf/gk-cagea/disable_ipv6)"
gk_check "host end: rp_filter=1 forwarding=0 disable_ipv6=1" \
	test "$GK_DETAIL" = "rp_filter=1 forwarding=0 disable_ipv6=1"
GK_DETAIL=$(in_cage "$A" ip -o addr show)
gk_check "cage: eth0 with the cage /32, lo up" eval \
	'in_cage $A ip -o -4 addr show dev eth0 | grep -q "inet $A_IP/32" &&
	 in_cage $A ip -o link show lo | grep -q "[<,]UP[,>]"'
GK_DETAIL=$(in_cage "$A" ip route show)
gk_check "cage: default via the gateway, onlink" \
	eval 'in_cage $A ip route show default | grep -q "via $GW dev eth0 .*onlink"'
GK_DETAIL=$(in_cage "$A" ip -o -6 addr show)
gk_check "cage: IPv6 disabled (no IPv6 address at all)" eval \
	'[ "$(in_cage $A cat /proc/sys/net/ipv6/conf/all/disable_ipv6)" = 1 ] &&
	 [ -z "$(in_cage $A ip -o -6 addr show)" ]'
GK_DETAIL=$(nft list set inet gatekeeper cages 2>&1)
gk_check "set cages holds (gk-cagea . A) and (gk-cageb . B)" eval \
	'table_has "\"gk-cagea\" . $A_IP" && table_has "\"gk-cageb\" . $B_IP"'
r=$(drv_send main "check /proc/$A/ns/net 0")
GK_DETAIL=$r
gk_check "nft_netns_check refuses a plumbed netns (one netns, one cage)" \
	eval '[[ "$r" == *"links other than lo (lo, eth0)"* ]]'

# ===========================================================================
echo "---- what a cage can reach ----"

n0=$(lines "udp 53 $A_IP:")
dig_ok "DNS over UDP to the gateway" "$A" "$GW"
dig_ok "DNS over TCP to the gateway" "$A" "$GW" +tcp
n1=$(lines "udp 53 $A_IP:")
dig_ok "DNS over UDP to 8.8.8.8 is answered (by the gateway, as 8.8.8.8)" \
	"$A" 8.8.8.8
GK_DETAIL="udp 53 lines from A: before $n0, after gateway $n1, now $(lines "udp 53 $A_IP:")"
gk_check "DNS to 8.8.8.8 arrived at the gateway listener" \
	test "$(lines "udp 53 $A_IP:")" -gt "$n1"
dig_ok "DNS over TCP to 8.8.8.8 is answered by the gateway" "$A" 8.8.8.8 +tcp
GK_DETAIL=$(grep "tcp 53 $A_IP:" "$LOG" | tail -1)
gk_check "TCP DNS to 8.8.8.8 arrived at the gateway, original 8.8.8.8:53" \
	eval 'grep "tcp 53 $A_IP:" "$LOG" | tail -1 | grep -q "orig=8.8.8.8:53"'
nc_hello "SOCKS port (1080) on the gateway" "$A" "$GW" 1080 "hello 1080 $A_IP"
nc_hello "HTTP proxy port (3128) on the gateway" "$A" "$GW" 3128 \
	"hello 3128 $A_IP"
nc_hello "cage B reaches the gateway too, named by its own source" "$B" \
	"$GW" 1080 "hello 1080 $B_IP"

refused "other gateway TCP port (22): refused at once" "refused" \
	in_cage "$A" nc -v -w $W $GW 22
refused "a host service on 0.0.0.0:2222 is not reachable via the gateway" \
	"refused" in_cage "$A" nc -v -w $W $GW 2222
GK_DETAIL=$(grep "tcp 2222" "$LOG")
gk_check "... and the host service saw nothing" eval '! grep -q "tcp 2222" "$LOG"'
refused "other gateway UDP port (9999): refused at once" "connection refused" \
	in_cage "$A" dig @$GW -p 9999 probe.test +time=$W +tries=1
refused "TCP to another address: reset at once (nc)" "refused" \
	in_cage "$A" nc -v -w $W 203.0.113.5 80
refused "TCP to another address: refused at once (curl)" "connection refused" \
	in_cage "$A" curl -sSv --max-time $W http://203.0.113.5/
refused "UDP to another address: refused at once" "connection refused" \
	in_cage "$A" dig @203.0.113.5 -p 5353 probe.test +time=$W +tries=1
udp_refused "UDP (QUIC) to 203.0.113.50:443, connected socket: ECONNREFUSED" \
	"$A" 203.0.113.50 443
refused "B (transparent asked for, no port): TCP elsewhere reset at once" \
	"refused" in_cage "$B" nc -v -w $W 203.0.113.5 80
refused "ICMP to another address: admin-prohibited at once" \
	"filtered|prohibited" in_cage "$A" ping -n -c 1 -W $W 203.0.113.5
GK_DETAIL=$(out)
gk_check "ping to the gateway gets no answer (input drops it)" \
	eval '! timed in_cage $A ping -n -c 1 -W 1 $GW'

# A second host address (another link): still not reachable.
# A second host address (another link): still not reachable.
pl_host_dummy
refused "another host address (10.200.0.1:2222) is refused" "refused" \
	in_cage "$A" nc -v -w $W 10.200.0.1 2222

# ---- cage A cannot reach cage B ----
: >"$T/b.log"
(drv_close_fds; exec nsenter -t "$B" -n socat -u \
	TCP-LISTEN:7777,bind="$B_IP",reuseaddr,fork OPEN:"$T/b.log",append) &
gk_track_pid $!
(drv_close_fds; exec nsenter -t "$B" -n socat -u \
	UDP-RECV:7778,bind="$B_IP" OPEN:"$T/b.log",append) &
gk_track_pid $!
gk_wait_for 300 eval 'in_cage $B ss -ltn | grep -q ":7777"'
refused "cage A -> cage B (TCP): refused at once" "refused" \
	in_cage "$A" sh -c "echo a-to-b | nc -v -w $W $B_IP 7777"
refused "cage A -> cage B (UDP): refused at once" "refused" \
	in_cage "$A" sh -c "echo a-to-b | socat -T $W - UDP:$B_IP:7778"
sysctl -qw net.ipv4.ip_forward=1
refused "cage A -> cage B with ip_forward=1 on the host: still refused" \
	"refused" in_cage "$A" sh -c "echo a-to-b | nc -v -w $W $B_IP 7777"
sysctl -qw net.ipv4.ip_forward=0
GK_DETAIL=$(cat "$T/b.log")
gk_check "cage B received nothing from A" test ! -s "$T/b.log"
GK_DETAIL=$(in_cage "$B" sh -c "echo self | nc -N -w $W $B_IP 7777" 2>&1)
gk_check "(control: B's own listener works)" \
	gk_wait_for 300 grep -q self "$T/b.log"

# ---- the host is untouched ----
GK_DETAIL=$(nc -w $W 127.0.0.1 7000 </dev/null 2>&1)
gk_check "host: TCP over lo still accepted" eval \
	'nc -w $W 127.0.0.1 7000 </dev/null 2>&1 | grep -q "hello 7000"'
GK_DETAIL=$(echo x | socat -T $W - UDP:127.0.0.1:7001 2>&1)
gk_check "host: UDP over lo still accepted" eval \
	'echo x | socat -T $W - UDP:127.0.0.1:7001 2>&1 | grep -q "hello 7001"'
GK_DETAIL=$(nc -w $W $GW 1080 </dev/null 2>&1)
gk_check "host: its own traffic to the gateway's proxy port works" eval \
	'nc -w $W $GW 1080 </dev/null 2>&1 | grep -q "hello 1080"'
new_cage O root
ip link add other0 type veth peer name eth0 netns "/proc/$O/ns/net"
ip addr add 10.200.1.1/24 dev other0 && ip link set other0 up
in_cage "$O" ip addr add 10.200.1.2/24 dev eth0
in_cage "$O" ip link set eth0 up
in_cage "$O" ip link set lo up
GK_DETAIL=$(in_cage "$O" nc -w $W 10.200.1.1 2222 </dev/null 2>&1)
gk_check "host: a non-gk link reaches a host service (not filtered)" eval \
	'in_cage $O nc -w $W 10.200.1.1 2222 </dev/null 2>&1 | grep -q "hello 2222"'
GK_DETAIL=$(in_cage "$O" ping -n -c 1 -W $W 10.200.1.1 2>&1)
gk_check "host: a non-gk link pings the host" \
	eval 'in_cage $O ping -n -q -c 1 -W $W 10.200.1.1 >/dev/null 2>&1'

# ===========================================================================
echo "---- IPv6 from a cage link is dropped ----"

# Make IPv6 possible on A's link (both ends), then watch with counters in
# a table of our own at priority -400 (before gatekeeper's guard at -300):
# prerouting sees the packets, input never does, the listener gets none.
MAC=$(ip -o link show gk-cagea | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
sysctl -qw net.ipv6.conf.gk-cagea.disable_ipv6=0
ip -6 addr add fd00:143::1/64 dev gk-cagea nodad
in_cage "$A" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=0
in_cage "$A" ip -6 addr add fd00:143::2/64 dev eth0 nodad
in_cage "$A" ip -6 neigh replace fd00:143::1 lladdr "$MAC" dev eth0 nud permanent
nft -f - <<EOF
table inet probe {
	chain pre {
		type filter hook prerouting priority -400; policy accept;
		iifname "gk-cagea" meta nfproto ipv6 counter
	}
	chain in {
		type filter hook input priority -400; policy accept;
		iifname "gk-cagea" meta nfproto ipv6 counter
	}
}
EOF
: >"$T/v6.log"
(drv_close_fds; exec socat -u TCP6-LISTEN:7070,bind='[fd00:143::1]',reuseaddr \
	OPEN:"$T/v6.log",append 2>/dev/null) &
gk_track_pid $!
timed in_cage "$A" sh -c 'echo v6 | nc -6 -w 2 fd00:143::1 7070'
pkts() { nft list chain inet probe "$1" | sed -n 's/.*counter packets \([0-9]*\).*/\1/p'; }
GK_DETAIL="prerouting saw $(pkts pre), input saw $(pkts in), listener: $(cat "$T/v6.log"); nc: $(out)"
gk_check "IPv6 from a cage link: seen at prerouting, dropped before input" \
	eval '[ "$(pkts pre)" -gt 0 ] && [ "$(pkts in)" = 0 ] && [ ! -s "$T/v6.log" ]'
nft delete table inet probe
in_cage "$A" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
sysctl -qw net.ipv6.conf.gk-cagea.disable_ipv6=1

# ===========================================================================
echo "---- spoofed sources are dropped (with rp_filter loose) ----"

new_cage S root
up main "$S" gk-cages S_IP
GK_DETAIL=$UP_REPLY
gk_check "root-owned cage S plumbed (10.143.0.4)" test "${S_IP:-}" = 10.143.0.4
in_cage "$S" ip addr add 10.143.0.99/32 dev eth0
in_cage "$S" ip addr add "$B_IP/32" dev eth0
nc_hello "(control: S from its own address reaches the gateway)" "$S" \
	"$GW" 1080 "hello 1080 $S_IP"
nb=$(lines " $B_IP:")
timed in_cage "$S" nc -s 10.143.0.99 -w 2 $GW 1080 </dev/null
GK_DETAIL="$(out) (${MS} ms); listener: $(grep 10.143.0.99 "$LOG")"
gk_check "source 10.143.0.99 (not a cage) from S: dropped" \
	eval '! grep -q "hello" "$T/out" && ! grep -q "10.143.0.99" "$LOG"'
timed in_cage "$S" nc -s "$B_IP" -w 2 $GW 1080 </dev/null
GK_DETAIL="$(out) (${MS} ms); B lines before $nb, after $(lines " $B_IP:")"
gk_check "source = cage B's address from S: dropped" \
	eval '! grep -q "hello" "$T/out" && [ "$(lines " $B_IP:")" = "$nb" ]'
timed in_cage "$S" dig -b 10.143.0.99 @$GW probe.test +time=1 +tries=1
GK_DETAIL="$(out)"
gk_check "spoofed UDP DNS from S: dropped" \
	eval '! grep -q "status:" "$T/out" && ! grep -q "10.143.0.99" "$LOG"'

# ===========================================================================
echo "---- nft_netns_check refuses what it must ----"

echo hello >"$T/regular"
# check_refused MSG WANT PLUMB_DRIVE-CHECK-ARGS... (runs plumb_drive check)
check_refused() {
	local msg=$1 want=$2 r
	shift 2
	r=$("$@" 2>&1)
	GK_DETAIL=$r
	gk_check "$msg" eval '[[ "$r" == "refused: "*"$want"* ]]'
}
check_refused "a regular file" "not a namespace" "$DRV" check "$T/regular" 0
check_refused "a user namespace fd" "user namespace, not a network" \
	"$DRV" check "/proc/$A/ns/user" 0
check_refused "the daemon's own network namespace" "gatekeeperd's own" \
	"$DRV" check /proc/self/ns/net 0
# Run from S's netns so that pid 1's netns is not also our own.
check_refused "pid 1's network namespace" "host's (pid 1's)" \
	in_cage "$S" "$DRV" check /proc/1/ns/net 0
check_refused "a root-made netns (initial user namespace)" \
	"initial user namespace" "$DRV" check "/proc/$S/ns/net" 0
new_cage E user
in_cage "$E" ip link add v0 type veth peer name v1
check_refused "a netns with an extra link" "other than lo (lo, v" \
	"$DRV" check "/proc/$E/ns/net" 0
if new_cage U nobody; then
	check_refused "a netns created by another uid" \
		"created by uid 65534, not by the caller (uid 0)" \
		"$DRV" check "/proc/$U/ns/net" 0
	r=$("$DRV" check "/proc/$U/ns/net" 65534 2>&1)
	GK_DETAIL=$r
	gk_check "(control: the same netns for its own uid 65534 is fine)" \
		test "$r" = ok
else
	gk_info "unprivileged user namespaces unavailable: owner-uid check skipped"
fi

# ===========================================================================
echo "---- teardown ----"

drv_send main "down gk-cagea $A_IP" >/dev/null
r=$(drv_send main wait)	# answers when the worker reported back (60 s max)
DOWN_US=${r#ok }
GK_DETAIL=$r
gk_check "teardown completes (${DOWN_US} us)" eval '[[ "$r" == "ok "* ]]'
GK_DETAIL="link: $(ip -o link show gk-cagea 2>&1); set: $(nft list set inet gatekeeper cages 2>&1 | tr '\n' ' ')"
gk_check "... and then link and element are gone" eval \
	'! ip link show gk-cagea >/dev/null 2>&1 && ! table_has "\"gk-cagea\""'
GK_DETAIL=$(in_cage "$A" ip -o link show)
gk_check "cage A's eth0 went with the host end" \
	eval '[ "$(in_cage $A ip -o link show | grep -vc ": lo:")" = 0 ]'
GK_DETAIL=$(ip route show)
gk_check "the route to A is gone" eval '[ -z "$(ip route show $A_IP)" ]'
dig_ok "cage B still resolves (the gateway lives on its own link)" "$B" "$GW"
new_cage A2 user
up main "$A2" gk-cagea2 A2_IP
GK_DETAIL=$UP_REPLY
gk_check "next cage gets the next address (.5), not the released .2" \
	test "${A2_IP:-}" = 10.143.0.5
r=$(drv_send main "up /proc/$E/ns/net gk-bad.name")
GK_DETAIL=$r
gk_check "an invalid link name is refused" eval '[[ "$r" == "err invalid cage link name"* ]]'
r=$(drv_send main "up /proc/$E/ns/net gk-cageb")
GK_DETAIL="$r; links: $(gk_links | tr '\n' ' ')"
gk_check "a failing nft_cage_up (name taken) reports the kernel's reason" \
	eval '[[ "$r" == "err creating veth gk-cageb: a link of that name already exists" ]]'

r=$(drv_send main "up /proc/self/ns/net gk-own")
GK_DETAIL="$r; links: $(gk_links | tr '\n' ' ')"
gk_check "nft_cage_up refuses our own netns (even unchecked)" eval \
	'[[ "$r" == "err cage gk-own: the namespace fd is our own"* ]] &&
	 ! ip link show gk-own >/dev/null 2>&1'
new_cage F user
in_cage "$F" ip link add eth0 type veth peer name eth1
r=$(drv_send main "up /proc/$F/ns/net gk-cagef")
GK_DETAIL="$r; links: $(gk_links | tr '\n' ' ')"
gk_check "a cage with its own eth0 is refused, nothing left behind" eval \
	'[[ "$r" == "err creating veth gk-cagef: the cage already has a link named eth0" ]] &&
	 ! ip link show gk-cagef >/dev/null 2>&1'

# A failure after the veth exists is undone in the background: block the
# host route of the next address (next-fit: the one after a fresh alloc,
# which the driver keeps).
r=$(drv_send main alloc)
X=${r#ok }
NEXT=${X%.*}.$((${X##*.} + 1))
ip route add "$NEXT/32" dev hostdummy
new_cage G user
r=$(drv_send main "up /proc/$G/ns/net gk-undo")
GK_DETAIL=$r
gk_check "a failure after the veth exists names what failed" \
	eval '[[ "$r" == "err adding route $NEXT/32 dev gk-undo: "*"exists"* ]]'
r=$(drv_send main wait)
GK_DETAIL="$r; links: $(gk_links | tr '\n' ' '); cage: $(in_cage "$G" ip -o link show | wc -l) links"
gk_check "... and is undone: link gone, the cage back to only lo" eval \
	'[[ "$r" == "ok "* ]] && ! ip link show gk-undo >/dev/null 2>&1 &&
	 [ "$(in_cage $G ip -o link show | grep -vc ": lo:")" = 0 ]'
ip route del "$NEXT/32" dev hostdummy

# ===========================================================================
echo "---- crash: kill -9, then the next start sweeps ----"

drv_crash main
GK_DETAIL=$(gk_links | tr '\n' ' ')
gk_check "after kill -9 the table and links are still there (fail closed)" \
	eval 'nft list table inet gatekeeper >/dev/null 2>&1 &&
	      [ "$(gk_links | wc -l)" = 3 ]'
ip link add gk-stale0 type veth peer name gk-stale1
ip link add gk-notveth type dummy 2>/dev/null ||
	ip link add gk-notveth type bridge
nft add chain inet gatekeeper junk
# The restart forces the older kernels' mode: without a transparent port
# it must change nothing (cage C below asks for transparent).
GK_NFT_PINS=off drv_start main2
GK_DETAIL=$(cat "$T/drv-main2.log")
gk_check "restart: logs that it replaced a stale table" \
	grep -q "replacing a stale table inet gatekeeper" "$T/drv-main2.log"
gk_check "restart: logs how many leftover links it removed (4)" \
	grep -q "removed 4 leftover gk-\* links" "$T/drv-main2.log"
pl_mode main2
GK_DETAIL=$PL_WHY
gk_check "restart with GK_NFT_PINS=off, no transparent port: nothing said of pins" \
	test "$PL_MODE" = none
GK_DETAIL=$(gk_links | tr '\n' ' ')
gk_check "restart: no gk-* veth left (a gk-* dummy is not ours and stays)" \
	test "$(gk_links | tr '\n' ' ')" = "gk-notveth "
ip link del gk-notveth
GK_DETAIL=$(nft list table inet gatekeeper 2>&1 | head -20)
gk_check "restart: fresh table (empty set, stale chain gone)" eval \
	'! nft list table inet gatekeeper | grep -q -e junk -e elements'
GK_DETAIL=$(in_cage "$B" ip -o link show)
gk_check "restart: cage B's eth0 is gone" \
	eval '[ "$(in_cage $B ip -o link show | grep -vc ": lo:")" = 0 ]'

# ===========================================================================
echo "---- timings ----"

N=20
CAGES=()
for ((i = 0; i < N; i++)); do
	new_cage P user && CAGES+=("$P")
done
: >"$T/up.us"
ADDRS=()
for ((i = 0; i < ${#CAGES[@]}; i++)); do
	if up main2 "${CAGES[$i]}" "gk-t$i" IPX; then
		echo "$UP_US" >>"$T/up.us"
		ADDRS+=("$IPX")
	fi
done
GK_DETAIL="$(wc -l <"$T/up.us") of $N"
gk_check "$N cages plumbed in a row" test "${#ADDRS[@]}" = "$N"
median() { sort -n "$1" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
UP_MED=$(median "$T/up.us")
UP_MAX=$(sort -n "$T/up.us" | tail -1)
gk_info "cage up: median ${UP_MED} us, max ${UP_MAX} us over ${#ADDRS[@]} cages"
for ((i = 0; i < ${#ADDRS[@]}; i++)); do
	drv_send main2 "down gk-t$i ${ADDRS[$i]}" >/dev/null
done
r=$(drv_send main2 wait)
GK_DETAIL=$r
gk_check "$N teardowns queued at once complete" eval '[[ "$r" == "ok "* ]]'
gk_info "cage down: one alone ${DOWN_US} us; $N queued at once ${r#ok } us in all"
GK_DETAIL=$(gk_links | tr '\n' ' ')
gk_check "no gk-* link left after the teardowns" test -z "$(gk_links)"

# ===========================================================================
echo "---- stop: nft_plumb_free ----"

new_cage C user
up main2 "$C" gk-cagec C_IP transparent
GK_DETAIL="$UP_REPLY; $(sets)"
gk_check "GK_NFT_PINS=off, no port: C (transparent asked for) in neither set transparent nor open" \
	eval '[ -n "${C_IP:-}" ] && table_has "\"gk-cagec\" . $C_IP" &&
	      tp_empty && set_empty open'
drv_quit main2
GK_DETAIL="rc $GK_RC, $DRV_QUIT"
gk_check "nft_plumb_free returns (driver exits 0)" test "$GK_RC" = 0
GK_DETAIL=$(nft list ruleset)
gk_check "the table is gone" eval '! nft list table inet gatekeeper >/dev/null 2>&1'
GK_DETAIL=$(gk_links | tr '\n' ' ')
gk_check "no gk-* link is left (the live cage's too)" test -z "$(gk_links)"
GK_DETAIL=$(in_cage "$C" ip -o link show)
gk_check "the live cage's eth0 is gone" \
	eval '[ "$(in_cage $C ip -o link show | grep -vc ": lo:")" = 0 ]'

# ===========================================================================
echo "---- sanitizers ----"
GK_DETAIL=$(grep -hE "AddressSanitizer|LeakSanitizer|runtime error:" "$T"/drv-*.log | head -5)
gk_check "no sanitizer reports in the drivers' logs" test -z "$GK_DETAIL"

pl_finish
