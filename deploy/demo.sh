#!/usr/bin/env bash
#
# demo.sh: gatekeeper's offline demo, the main job end to end.
#
#   sudo bash deploy/demo.sh [path/to/gatekeeperd [path/to/gk-run]]
#                           (default build/gatekeeperd, build/spawner/gk-run)
#
# Inside network namespaces this script creates (nothing leaves the
# machine, and the machine's own interfaces, routes and nftables are never
# touched) a stand-in internet on documentation addresses serves
# github.com (a git repository over smart HTTP, TLS from a test CA) and
# evil.example; gatekeeperd runs in the foreground with its log lines on
# this terminal. Then:
#
#   gk-run --allow '*.github.com' -- git clone https://github.com/acme/hello.git
#
# works, and the same cage's attempts to reach anything else fail fast: a
# proxied request to evil.example, a direct connection to its address, a
# DNS query to another resolver. Then the /metrics and audit lines those
# produced, nothing left behind, and a clean stop. Exits 0 when everything
# behaved as narrated.
#
# GK_DEMO_LOGLEVEL=debug shows gatekeeperd's per-query log lines.

GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
GK_ROOT=$(cd "$(dirname "$GK_SELF")/.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"
# shellcheck source=tests/integration/e2e_net.sh
. "$GK_ROOT/tests/integration/e2e_net.sh"

binary() {	# binary GIVEN DEFAULT NAME
	local b=${1:-$GK_ROOT/$2}
	if [ ! -x "$b" ]; then
		echo "demo.sh: $b: no $3 executable; build first:" \
			"meson setup build && ninja -C build" >&2
		exit 1
	fi
	readlink -f "$b"
}
GKD=$(binary "${1:-}" build/gatekeeperd gatekeeperd)
GKRUN=$(binary "${2:-}" build/spawner/gk-run gk-run)
gk_need demo.sh dig dnsmasq curl git nginx fcgiwrap openssl bwrap nft unshare \
	nsenter ip "$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKD" "$GKRUN"
gk_setup

T=$GK_TMP
# the control socket in a directory of its own (gk-run hides that
# directory from every sandbox, so it must not hold the working one)
SOCK=$T/run/control.sock
mkdir -p "$T/run"
AUDIT=$T/audit.log
METRICS=127.0.0.1:9477
LOGLEVEL=${GK_DEMO_LOGLEVEL:-info}
PROBLEMS=0

if [ -t 1 ]; then
	B=$'\e[1m' G=$'\e[32m' R=$'\e[31m' D=$'\e[2m' N=$'\e[0m'
else
	B='' G='' R='' D='' N=''
fi

step() {
	sleep 0.3	# let gatekeeperd's log lines land first
	printf '\n%s==> %s%s\n' "$B" "$*" "$N"
}
cmd() { printf '%s$ %s%s\n' "$D" "$*" "$N"; }
good() { printf '    %s%s%s\n' "$G" "$*" "$N"; }
bad() {
	printf '    %sUNEXPECTED: %s%s\n' "$R" "$*" "$N"
	PROBLEMS=$((PROBLEMS + 1))
}

# cage ARGS...: narrated gk-run in $T/work, output indented; sets RC, MS.
# The test CA's variables pass into the cage (not on gk-run's drop list).
cage() {
	local t0 ca_env
	mapfile -t ca_env < <(en_ca_env)
	cmd "gk-run$(printf ' %q' "$@")"
	t0=$(date +%s%N)
	(cd "$T/work" && exec timeout -s KILL 60 env "${ca_env[@]}" \
		"$GKRUN" --control "$SOCK" --ro "$EN_DIR" "$@" </dev/null) \
		>"$T/out" 2>&1
	RC=$?
	MS=$((($(date +%s%N) - t0) / 1000000))
	sed 's/^/    | /' "$T/out" | head -20
	printf '    exit %s after %s ms\n' "$RC" "$MS"
}

printf '%sgatekeeper offline demo%s\n' "$B" "$N"
echo "Network namespaces made for this demo; nothing leaves this machine."

step "Starting a stand-in internet on documentation addresses"
echo "    (dnsmasq; nginx with TLS from a test CA serving github.com," \
	"api.github.com and"
echo "     evil.example, git over smart HTTP through fcgiwrap)"
if ! en_start; then
	echo "demo.sh: the stand-in internet did not start" >&2
	exit 1
fi
mkdir -p "$T/work"

step "Starting gatekeeperd in the foreground (its log lines follow)"
cmd "gatekeeperd -f --control $SOCK --upstream $EN_RESOLVER --metrics $METRICS --audit-log $AUDIT"
: >"$T/empty.conf"
GK_DAEMON_LOG=- gk_start_daemon GKD_PID "$GKD" -f -c "$T/empty.conf" \
	--control "$SOCK" --upstream "$EN_RESOLVER" --metrics "$METRICS" \
	--audit-log "$AUDIT" --log-level "$LOGLEVEL"
if ! gk_wait_for 50 test -S "$SOCK"; then
	echo "demo.sh: gatekeeperd did not become ready" >&2
	exit 1
fi
echo "    (default gateway 10.143.0.1 for cages from 10.143.0.0/16, nftables" \
	"table inet gatekeeper)"

step "The main job: a git clone allowed '*.github.com'"
cage --allow '*.github.com' -- git clone -q https://github.com/acme/hello.git
if [ "$RC" = 0 ] && [ -d "$T/work/hello/.git" ]; then
	cmd "ls hello; git -C hello log --oneline -1"
	(cd "$T/work/hello" && ls && git log --oneline -1) | sed 's/^/    /'
	good "cloned through the cage's own veth, resolver and proxy"
else
	bad "the clone failed"
fi

step "The same allowlist, anything else: a proxied request to evil.example"
cage --allow '*.github.com' -- curl -sS https://evil.example/
if [ "$RC" != 0 ] && [ "$MS" -lt 2000 ] && grep -q 403 "$T/out"; then
	good "refused by the proxy (403) in $MS ms"
else
	bad "wanted a fast 403"
fi

step "Going around the proxy: straight to evil.example's address"
cage --allow '*.github.com' -- curl -sS --noproxy '*' --max-time 10 \
	https://203.0.113.66/
if [ "$RC" != 0 ] && [ "$MS" -lt 2000 ] &&
	gk_wait_for 20 grep -q '"proto":"transparent".*"reason":"ip_not_pinned"' "$AUDIT"; then
	good "cut in $MS ms: nothing is routed from a cage; its TCP goes to the"
	good "transparent proxy, and this cage's DNS never led to that address"
else
	bad "wanted a fast failure, audited as transparent ip_not_pinned"
fi

step "Programs that ignore the proxy variables still reach allowed hosts"
cage --allow '*.github.com' -- env -u https_proxy -u HTTPS_PROXY -u ALL_PROXY \
	-u all_proxy curl -sS --noproxy '*' -o /dev/null -w '%{http_code}\n' \
	https://github.com/
if [ "$RC" = 0 ] && grep -qx 200 "$T/out"; then
	good "carried by the transparent proxy: the address was pinned to an"
	good "allowed name by the cage's own lookup, and the TLS name matches"
else
	bad "wanted 200 through the transparent proxy"
fi

step "Asking another resolver directly"
cage --allow '*.github.com' -- dig +tries=1 +time=2 +noall +comments \
	@"$EN_OTHER_RESOLVER" evil.example
if grep -q 'status: NXDOMAIN' "$T/out"; then
	good "the query was redirected to gatekeeperd, which refused the name"
else
	bad "wanted NXDOMAIN from gatekeeperd"
fi

step "What /metrics says"
cmd "curl -s http://$METRICS/metrics | grep -E '^gatekeeper_(denied|connections)_total' | grep -v ' 0\$'"
if gk_metrics_fetch "$METRICS" "$T/metrics.txt"; then
	grep -E '^gatekeeper_(denied|connections)_total' "$T/metrics.txt" |
		awk '$NF != 0' | sed 's/^/    /'
	d=$(gk_metric "$T/metrics.txt" gatekeeper_denied_total \
		kind=http reason=not_allowlisted)
	if [ "$(gk_num "$d")" -ge 1 ]; then
		good "the proxy denial is counted"
	else
		bad "gatekeeper_denied_total{kind=\"http\",reason=\"not_allowlisted\"} is '${d:-absent}'"
	fi
else
	bad "GET /metrics failed"
fi

step "What the audit log says"
cmd "grep -E 'deny|cage.create' $AUDIT"
gk_wait_for 20 grep -q '"proxy.deny"' "$AUDIT"
grep -E '"(proxy|dns)\.deny"|"cage\.create"' "$AUDIT" | head -8 |
	cut -c1-200 | sed 's/^/    /'
if grep -q '"proxy.deny"' "$AUDIT" && grep -q 'evil.example' "$AUDIT"; then
	good "every denial has its line"
else
	bad "no proxy.deny line for evil.example"
fi

step "Each cage went with its gk-run: no link, no set element left"
cmd "ip -o link | grep gk-; nft list set inet gatekeeper cages"
# shellcheck disable=SC2317  # called through gk_wait_for
gone() {
	! ip -o link | grep -q ' gk-' &&
		! nft list set inet gatekeeper cages | grep -q elements
}
if gk_wait_for 30 gone; then
	good "nothing left"
else
	bad "leftovers: $(ip -o link | grep ' gk-' | cut -d: -f2 | paste -sd,)"
fi

step "Stopping gatekeeperd (SIGTERM)"
gk_stop_daemon "$GKD_PID" TERM
if [ "$GK_RC" = 0 ] && ! nft list table inet gatekeeper >/dev/null 2>&1; then
	good "gatekeeperd exited 0 and removed its nftables table"
else
	bad "gatekeeperd exit status: $GK_RC"
fi

echo
if [ "$PROBLEMS" -eq 0 ]; then
	printf '%sDemo complete: every step behaved as described.%s\n' "$B" "$N"
	exit 0
fi
printf '%sDemo finished with %d unexpected result(s).%s\n' "$R" "$PROBLEMS" "$N"
exit 1
