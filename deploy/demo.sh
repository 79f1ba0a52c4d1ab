#!/usr/bin/env bash
#
# demo.sh: gatekeeper's offline demo.
#
#   sudo bash deploy/demo.sh [path/to/gatekeeperd]     (default build/gatekeeperd)
#
# Inside a private network namespace (only `lo`; nothing leaves the machine)
# dnsmasq plays the internet, gatekeeperd runs in the foreground with its log
# lines on this terminal, and a cage for source address 127.0.0.2 is allowed
# '*.github.com'. Then a few lookups with dig, the /metrics lines and audit
# log lines they produced, the cage vanishing with its control connection,
# and a clean stop. Exits 0 when everything behaved as narrated.
#
# GK_DEMO_LOGLEVEL=debug shows gatekeeperd's per-query log lines.

GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
GK_ROOT=$(cd "$(dirname "$GK_SELF")/.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"

GKD=${1:-build/gatekeeperd}
[ -x "$GKD" ] || [ -n "${1:-}" ] || GKD=$GK_ROOT/build/gatekeeperd
if [ ! -x "$GKD" ]; then
	echo "demo.sh: $GKD: no such executable; build first:" \
		"meson setup build && ninja -C build" >&2
	exit 1
fi
GKD=$(readlink -f "$GKD")
for t in dig dnsmasq curl unshare ip "$PYTHON"; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "demo.sh: $t is not installed (bash deploy/install-deps.sh)" >&2
		exit 1
	fi
done

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKD"
gk_setup

T=$GK_TMP
SOCK=$T/control.sock
AUDIT=$T/audit.log
METRICS=127.0.0.1:9477
CAGE=127.0.0.2
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

# lookup SRC NAME WANT_STATUS: narrated dig.
lookup() {
	local src=$1 name=$2 want=$3
	cmd "dig -b $src @127.0.0.1 $name"
	gk_dig "$src" "$name" A
	printf '    status: %s' "$DIG_STATUS"
	dig_answers | awk '{printf "   %s %s %s (ttl %s)", $1, $4, $5, $2}'
	printf '\n'
	if [ "$DIG_STATUS" != "$want" ]; then
		bad "wanted $want"
	elif [ "$want" = NOERROR ] && [ "$(dig_max_ttl)" -gt 60 ]; then
		bad "TTL $(dig_max_ttl) is over the cap of 60 (upstream says 3600)"
	else
		good "as expected: $want"
	fi
}

printf '%sgatekeeper offline demo%s\n' "$B" "$N"
echo "A private network namespace with only loopback: nothing leaves this machine."

step "Starting dnsmasq as a stand-in internet on 127.0.0.1:5300"
echo "    (github.com, api.github.com, gitlab.com, evil.example ... on" \
	"documentation addresses, TTL 3600; it logs every query it receives)"
if ! gk_start_upstream 5300 "$T/internet.log"; then
	echo "demo.sh: dnsmasq did not start" >&2
	exit 1
fi

step "Starting gatekeeperd in the foreground (its log lines follow)"
cmd "gatekeeperd -f --listen 127.0.0.1 --control $SOCK --upstream 127.0.0.1:5300 --ttl-cap 60 --metrics $METRICS --audit-log $AUDIT --log-level $LOGLEVEL"
: >"$T/empty.conf"
GK_DAEMON_LOG=- gk_start_daemon GKD_PID "$GKD" -f -c "$T/empty.conf" \
	--listen 127.0.0.1 --dns-port 53 --control "$SOCK" \
	--upstream 127.0.0.1:5300 --ttl-cap 60 --upstream-timeout 2 \
	--metrics "$METRICS" --audit-log "$AUDIT" --log-level "$LOGLEVEL"
if ! gk_wait_ready "$GKD_PID" "$SOCK" 53; then
	echo "demo.sh: gatekeeperd did not become ready" >&2
	exit 1
fi

step "Creating a cage for source address $CAGE, allowed '*.github.com'"
echo "    (a cage lives exactly as long as the control connection that created it;"
echo "     this one stays open until we close it below)"
gk_ctl_open demo "$SOCK"
REQ='{"op":"cage.create","source":"127.0.0.2","allow":["*.github.com"],"label":"demo"}'
cmd "python3 tests/integration/gkctl.py $SOCK --hold '$REQ'"
echo "    > $REQ"
reply=$(gk_ctl_send demo "$REQ")
echo "    < $reply"
CAGE_ID=$(gk_json_get cage.id "$reply")
if [ "$(gk_json_get ok "$reply")" != true ] || [ -z "$CAGE_ID" ]; then
	bad "cage.create failed"
	exit 1
fi
good "cage $CAGE_ID created"

step "Allowed names resolve (forwarded once, then cached; TTL capped at 60)"
lookup $CAGE github.com NOERROR
lookup $CAGE api.github.com NOERROR
lookup $CAGE github.com NOERROR

step "Everything else is refused with NXDOMAIN, and never asked upstream"
lookup $CAGE evil.example NXDOMAIN
lookup $CAGE github.com.evil.example NXDOMAIN
gk_upstream_wait "$T/internet.log" api.github.com
if grep -q 'evil\.example' "$T/internet.log"; then
	bad "the stand-in internet saw a query for evil.example"
else
	good "the stand-in internet's query log has no evil.example at all"
fi

step "A source address that names no cage gets REFUSED"
lookup 127.0.0.9 github.com REFUSED

step "What /metrics says"
cmd "curl -s http://$METRICS/metrics | grep -E '^gatekeeper_(cages|dns_|denied_total|cage_denied_total)'"
echo "    (the DNS lines; series at 0 for the proxies still to come are left out)"
if gk_metrics_fetch "$METRICS" "$T/metrics.txt"; then
	grep -E '^gatekeeper_(cages|dns_queries_total|dns_cache_hits_total|dns_cache_misses_total|dns_upstream_errors_total|denied_total|cage_denied_total)' \
		"$T/metrics.txt" |
		awk '!/^gatekeeper_(cage_)?denied_total/ || (/kind="dns"/ && $NF != 0)' |
		sed 's/^/    /'
	d=$(gk_metric "$T/metrics.txt" gatekeeper_cage_denied_total \
		cage="$CAGE_ID" kind=dns)
	if [ "$(gk_num "$d")" -eq 2 ]; then
		good "the cage's two denials are counted"
	else
		bad "gatekeeper_cage_denied_total{cage=\"$CAGE_ID\"} is '${d:-absent}', not 2"
	fi
else
	bad "GET /metrics failed"
fi

step "What the audit log says"
cmd "cat $AUDIT"
gk_wait_for 20 grep -q '"dns.deny"' "$AUDIT"
sed 's/^/    /' "$AUDIT"
if grep -q '"dns.deny"' "$AUDIT" && grep -q 'evil.example' "$AUDIT"; then
	good "the denials are in the audit log"
else
	bad "no dns.deny line for evil.example"
fi

step "Closing the control connection: the cage goes with it"
gk_ctl_close demo
gone() { gk_dig "$CAGE" github.com A; [ "$DIG_STATUS" = REFUSED ]; }
gk_wait_for 30 gone
lookup $CAGE github.com REFUSED
gk_wait_for 20 grep -q '"cage.destroy"' "$AUDIT"
grep '"cage.destroy"' "$AUDIT" | sed 's/^/    /'

step "Stopping gatekeeperd (SIGTERM)"
gk_stop_daemon "$GKD_PID" TERM
if [ "$GK_RC" = 0 ]; then
	good "gatekeeperd exited 0"
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
