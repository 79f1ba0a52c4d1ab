# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the sourcing scripts
#
# dns_lib.sh: what the DNS integration tests share (test_dns.sh, the
# resolver and its cages; test_dns_conf.sh, the command line, a config
# file, SIGHUP and dead upstreams): the addresses, the helpers, and
# dn_upstream, the hermetic upstream. Source it after lib.sh, from inside
# the test namespaces (after gk_setup); it defines functions and
# variables only.

T=$GK_TMP
UP_LOG=$T/upstream.log
SOCK=$T/control.sock
AUDIT=$T/audit.log
METRICS=127.0.0.1:9477
A_SRC=127.0.0.2		# cage A: *.github.com
B_SRC=127.0.0.3		# cage B: gitlab.com
X_SRC=127.0.0.9		# no cage

# ---------------------------------------------------------------------------
# Helpers

# expect_dns MSG SRC NAME TYPE STATUS RR [DIG OPTIONS...]
# RR: "" or "TYPE RDATA" that must be in the answer section.
expect_dns() {
	local msg=$1 src=$2 name=$3 type=$4 want=$5 rr=$6
	shift 6
	gk_dig "$src" "$name" "$type" "$@"
	if [ "$DIG_STATUS" != "$want" ]; then
		gk_fail "$msg" "expected $want, got $(dig_summary)"
		return 1
	fi
	if [ -n "$rr" ] && ! dig_answers | awk '{print $4, $5}' |
	    grep -qxF -- "$rr"; then
		gk_fail "$msg" "expected '$rr' in the answer, got $(dig_summary)"
		return 1
	fi
	gk_ok "$msg"
}

# metric FILE NAME [LABEL=VALUE...]: integer value, -1 when absent.
metric() {
	gk_num "$(gk_metric "$@")"
}

# fetch_metrics FILE
fetch_metrics() {
	if ! gk_metrics_fetch "$METRICS" "$1"; then
		: >"$1"
		return 1
	fi
}

# audit_query FILE MODE ARGS: inspect the audit log with python's json.
#   valid                      every line parses as a JSON object
#   has EVENT CAGE [TEXT]      a line with this event and cage (and TEXT
#                              somewhere among its values)
#   count EVENT CAGE           how many such lines
audit_query() {
	"$PYTHON" - "$@" <<'EOF'
import json, sys
path, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
recs, bad = [], []
try:
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
except OSError as e:
    print(e); sys.exit(1)
for n, ln in enumerate(lines, 1):
    if not ln.strip():
        continue
    try:
        o = json.loads(ln)
        if not isinstance(o, dict):
            raise ValueError("not an object")
        recs.append(o)
    except ValueError as e:
        bad.append("line %d: %s: %r" % (n, e, ln[:120]))
if mode == "valid":
    if bad or not recs:
        print("; ".join(bad[:3]) or "empty audit log")
        sys.exit(1)
    sys.exit(0)
def values(o):
    for v in o.values():
        if isinstance(v, dict):
            yield from values(v)
        elif isinstance(v, list):
            for x in v:
                yield str(x)
        else:
            yield str(v)
def match(o, ev, cage, text=None):
    if o.get("event") != ev or o.get("cage") != cage:
        return False
    return text is None or any(text in v for v in values(o))
if mode == "has":
    ok = any(match(o, *args) for o in recs)
    sys.exit(0 if ok else 1)
if mode == "count":
    print(sum(1 for o in recs if match(o, *args)))
    sys.exit(0)
if mode == "line":
    for o in recs:
        if match(o, *args):
            print(json.dumps(o)); sys.exit(0)
    sys.exit(1)
sys.exit(2)
EOF
}

# json_ok REPLY: "ok" is true.
json_ok() { [ "$(gk_json_get ok "$1")" = true ]; }

daemon_alive() { kill -0 "$1" 2>/dev/null; }

# Give up early (the rest cannot run) with the daemon's log.
abort() {
	gk_fail "$1"
	echo "---- gatekeeperd log (last 40 lines) ----"
	gk_tail "${2:-$T/GKD1.log}" 40
	echo "---- $GK_NPASS passed, $GK_NFAIL failed (aborted) ----"
	exit 1
}

# ---------------------------------------------------------------------------
# dn_upstream: dnsmasq plays the internet on 127.0.0.1:5300 (its own
# records on documentation addresses, TTL 3600, every query logged in
# $UP_LOG); abort when it does not start.
dn_upstream() {
	if ! gk_start_upstream 5300 "$UP_LOG"; then
		abort "dnsmasq upstream starts" "$T/dnsmasq-5300.stderr"
	fi
	gk_ok "dnsmasq upstream answers on 127.0.0.1:5300"
	GK_DNS_PORT=5300
	gk_dig 127.0.0.1 github.com A
	GK_DETAIL=$(dig_summary)
	gk_check "the upstream hands out TTL 3600 (so capping is visible)" \
		test "$(dig_max_ttl)" = 3600
	GK_DNS_PORT=53
}
