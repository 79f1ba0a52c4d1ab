#!/usr/bin/env bash
#
# broker_bench.sh: benchmark of gatekeeperd's credential broker (a cage's
# TLS to a host its credential is bound to is terminated, the placeholder
# in the request head replaced by the secret, the request sent on over
# gatekeeperd's own TLS to the server) against the opaque tunnel to the
# same server from a cage without a credential, and against mitmproxy
# doing the same replacement, in one run; and what request rules cost on
# both: the broker's cage with rules for the host instead of the plain
# pattern, the tunnel's cage with rules for other hosts besides it; and
# what counting bytes against upload budgets costs on both (the same
# cages with budgets that cover the host, never reached), with uploads
# measured besides downloads. Not a test: it prints figures,
# ratios and "TARGET MET" / "TARGET MISSED" lines and exits 0 either way;
# 1 when something broke (a server would not start, gatekeeperd died, a
# transfer came back wrong) or when the broker or the rules could not be
# measured (gatekeeperd without --upstream-ca, cage.credential refused, a
# gatekeeperd without request rules): then the other paths are measured
# all the same and the reason is the last line.
#
#   sudo bash tests/bench/broker_bench.sh [path/to/gatekeeperd]   (default build/gatekeeperd)
#
# mitmproxy is Debian's package (mitmdump); the script installs it with
# apt-get when it is missing (before it leaves the machine's network).
#
# Environment:
#   GK_BENCH_LAT_RUNS=200     sequential requests per path for the latency
#                             (a new curl, so a new connection, each; the
#                             paths interleaved)
#   GK_BENCH_SETUPS=2000      requests per set-up run
#   GK_BENCH_INFLIGHT=128     set-up runs: requests in flight
#   GK_BENCH_ROUNDS=3         set-up rounds (every path in turn, the order
#                             reversed in even rounds); the median
#   GK_BENCH_BULK_MB=1024     size of the bulk file (MiB)
#   GK_BENCH_BULK_RUNS=3      bulk rounds (every path in turn, the order
#                             reversed in even rounds); the best kept
#   GK_BENCH_AUDIT=1          gatekeeperd writes its audit log (0: off)
#   GK_BENCH_LOG_LEVEL=warn   gatekeeperd's --log-level
#   GK_BENCH_RULES=50         request rules in the rules and tunnel+rules
#                             cages' allowlists (at least 2)
#   GK_BENCH_UP_MB=256        size of the upload (MiB), PUT through the
#                             tunnel and broker paths with and without
#                             budgets, GK_BENCH_BULK_RUNS rounds
#   GK_KEEP_TMP=1             keep the temp directory (logs, raw figures)
#
# Topology, all inside namespaces this script makes (lib.sh: a private
# network, mount and PID namespace, gone when the script exits; the
# machine's own interfaces, routes, nftables and files are never touched):
#   host      this script's netns: curl (the client), gatekeeperd and
#             mitmdump on 127.0.0.1, dnsmasq on 127.0.0.1:5300 (lib.sh's
#             records: github.com -> 192.0.2.10; gatekeeperd's upstream),
#             /etc/hosts bind-mounted in this mount namespace only with
#             github.com -> 192.0.2.10 (mitmproxy resolves through it);
#             up0 198.51.100.249/29, one end of a veth (e2e_net.sh's
#             en_netns)
#   internet  a second netns behind that veth: nginx on 192.0.2.10:443,
#             TLS with e2e_net.sh's test CA (en_pki), one worker, access
#             log off, no keep-alive; /small (100 bytes) and /big
#             (GK_BENCH_BULK_MB MiB, socks_load's deterministic pattern),
#             both answered only to "Authorization: Bearer SECRET" (else
#             401), so every path must deliver the secret
# Paths (each request: curl --http1.1 --no-sessionid, "Connection: close",
# a new TCP connection and a full TLS handshake, through an HTTP proxy's
# CONNECT):
#   tunnel   gatekeeperd's HTTP proxy (127.0.0.1:3128) from cage
#            127.0.0.3 (cage.create, allow github.com, no credential): the
#            opaque, SNI-checked tunnel; the client sends the secret itself
#            and trusts the test CA
#   broker   the same proxy from cage 127.0.0.2, made on the control
#            socket with a cage.credential GH_TOKEN bound to github.com:
#            the client sends the placeholder and trusts the cage's CA (the
#            reply's "ca"); gatekeeperd terminates TLS, puts the secret in
#            and verifies nginx against the test CA (--upstream-ca)
#   rules    the same proxy from cage 127.0.0.4, made like broker's (the
#            same credential, its own CA) but allowed GK_BENCH_RULES
#            request rules instead of the plain pattern: GK_BENCH_RULES - 2
#            for other paths and methods of github.com (none matches a GET
#            of /small or /big), then "GET github.com/small" and
#            "GET,HEAD github.com/**" last, so every request is held
#            against the rules before it (the inspected path with rules;
#            a POST is checked to get gatekeeper's 403)
#   tunnel+rules  the same proxy from cage 127.0.0.5, allowed github.com
#            plus GK_BENCH_RULES request rules for other hosts
#            (api-N.github.com, hosts under example.net): rules are
#            present but github.com is not inspected, the opaque tunnel
#            as for tunnel
#   tunnel+budget  the same proxy from cage 127.0.0.6, made as tunnel's
#            with "max_upload":["1000T","1000T@github.com"]: every byte
#            up is counted against two budgets (the relay's quota, a
#            grant each 256 KiB), never reached
#   broker+budget  the same proxy from cage 127.0.0.7, made as broker's
#            (its credential, its own CA) with the same budgets: the
#            broker's writes upstream counted
#   mitm     mitmdump (127.0.0.1:8080, regular proxy mode) with an addon
#            that replaces the placeholder by the secret in the
#            Authorization header, upstream certificates verified against
#            the test CA (ssl_verify_upstream_trusted_ca), bodies over 1 MB
#            streamed (stream_large_bodies); the client trusts mitmproxy's CA
# The per-cage caps are off (bench_gk_conf).
#
# Figures:
#   p50      of GK_BENCH_LAT_RUNS requests for /small, each a new curl:
#            curl's time_total (connect to the proxy, CONNECT, TLS, request,
#            response), in ms; p90 beside it
#   set-ups  GK_BENCH_SETUPS requests for /small with curl --parallel
#            --parallel-max GK_BENCH_INFLIGHT --parallel-immediate (each
#            a new connection: "Connection: close", nginx without
#            keep-alive), answered 200 per second of the run's wall time
#   bulk     GET /big, one connection, MB/s = 10^6 bytes of body per second
#            of curl's time_total; first one untimed run per path compared
#            byte for byte with the file
#   upload   PUT /sink/NAME of GK_BENCH_UP_MB MiB (nginx's WebDAV, answered
#            once all of it arrived), one connection, MB/s of curl's
#            time_total, for tunnel, tunnel+budget, broker and
#            broker+budget; the relay's CPU per GB of them
#   CPU      the relay's CPU per GB (10^9 bytes of body) over the timed
#            bulk runs: gatekeeperd's utime + stime (/proc/PID/stat, every
#            thread; lib.sh gk_cpu_ticks) for the gatekeeperd paths,
#            mitmdump's process tree for mitm
# Targets (the issue's): broker bulk >= 0.7x tunnel bulk; broker CPU per
# GB <= 2x tunnel's; broker p50 <= tunnel p50 + 1 ms; broker throughput
# >= 10x mitmproxy's (bulk MB/s, and set-ups/s). Rules (the rule
# checking issue's): rules within 5% of broker (bulk and set-ups >= 0.95x,
# p50 <= 1.05x); tunnel+rules within 5% of tunnel, the run-to-run noise
# (bulk and set-ups >= 0.95x, p50 <= 1.05x). Budgets (the byte counting
# issue's): tunnel+budget within 5% of tunnel and broker+budget within 5%
# of broker, the run-to-run noise (download and upload bulk and set-ups
# >= 0.95x, p50 <= 1.05x).
#
# The machine's CPUs are shared by curl, gatekeeperd or mitmdump, and
# nginx; anything else running makes the figures noisy.

# shellcheck disable=SC2317  # functions called through gk_wait_for
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
BENCH_DIR=$(dirname "$GK_SELF")
GK_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$GK_ROOT/tests/integration/lib.sh"

# shellcheck source=tests/bench/bench_lib.sh
. "$BENCH_DIR/bench_lib.sh"
BENCH_NAME=broker_bench.sh

bench_exe GKD "${1:-}" build/gatekeeperd
export PATH=$PATH:/usr/sbin:/sbin
if [ "${GK_IN_NETNS:-}" != 1 ] && ! command -v mitmdump >/dev/null 2>&1; then
	echo "# mitmdump is missing: apt-get install mitmproxy"
	log=$(mktemp /tmp/broker-bench-apt.XXXXXX)
	if ! DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -q \
	    --no-install-recommends mitmproxy </dev/null >"$log" 2>&1; then
		timeout 300 apt-get update -q >>"$log" 2>&1
		DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -q \
			--no-install-recommends mitmproxy </dev/null >>"$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; rm -f "$log"
			  echo "$BENCH_NAME: cannot install mitmproxy (apt-get install mitmproxy)" >&2
			  exit 1; }
	fi
	rm -f "$log"
fi
gk_need "$BENCH_NAME" nginx curl dnsmasq mitmdump cc dig openssl unshare nsenter \
	ip sysctl mount "$PYTHON"

GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$GKD"
gk_setup
# shellcheck source=tests/integration/e2e_net.sh
. "$GK_ROOT/tests/integration/e2e_net.sh"
gk_unset_client_env

T=$GK_TMP
HZ=$(getconf CLK_TCK)
LAT_RUNS=${GK_BENCH_LAT_RUNS:-200}
NSET=${GK_BENCH_SETUPS:-2000}
INFL=${GK_BENCH_INFLIGHT:-128}
ROUNDS=${GK_BENCH_ROUNDS:-3}
BULK_MB=${GK_BENCH_BULK_MB:-1024}
BULK_RUNS=${GK_BENCH_BULK_RUNS:-3}
AUDIT_ON=${GK_BENCH_AUDIT:-1}
HOST=github.com
NGINX_ADDR=${EN_ADDR[github.com]}	# 192.0.2.10
LOAD=$T/socks_load
SECRET=ghp_$(openssl rand -hex 18)
PH=ghp_$(openssl rand -hex 18)
MITM_CA=$T/mitm/mitmproxy-ca-cert.pem
PATHS=(tunnel tunnel+rules tunnel+budget broker rules broker+budget mitm)
UP_PATHS=(tunnel tunnel+budget broker broker+budget)
UP_MB=${GK_BENCH_UP_MB:-256}
NO_BUDGET=		# why the budget paths were not measured
NO_BROKER=		# why the broker was not measured
NO_RULES=		# why the rules paths were not measured
NRULES=${GK_BENCH_RULES:-50}
if ! [[ $NRULES =~ ^[0-9]+$ ]] || [ "$NRULES" -lt 2 ]; then
	die "GK_BENCH_RULES must be a number of at least 2, not '$NRULES'"
fi

# port_open IP:PORT: something accepts there (bounded, 1 s).
port_open() {
	timeout 1 bash -c "exec 3<>/dev/tcp/${1%:*}/${1#*:}" 2>/dev/null
}

# via PATH [TOKEN]: CURLV becomes curl's options for PATH (proxy, source,
# CA and the Authorization header: TOKEN, by default the secret for the
# tunnel and the placeholder for the others), one new connection per
# request.
via() {
	case $1 in
	tunnel)
		CURLV=(-x http://127.0.0.1:3128 --interface 127.0.0.3 --cacert "$CA"
			-H "Authorization: Bearer ${2:-$SECRET}") ;;
	tunnel+rules)
		CURLV=(-x http://127.0.0.1:3128 --interface 127.0.0.5 --cacert "$CA"
			-H "Authorization: Bearer ${2:-$SECRET}") ;;
	tunnel+budget)
		CURLV=(-x http://127.0.0.1:3128 --interface 127.0.0.6 --cacert "$CA"
			-H "Authorization: Bearer ${2:-$SECRET}") ;;
	broker+budget)
		CURLV=(-x http://127.0.0.1:3128 --interface 127.0.0.7
			--cacert "$T/budget-ca.pem" -H "Authorization: Bearer ${2:-$PH}") ;;
	broker)
		CURLV=(-x http://127.0.0.1:3128 --interface 127.0.0.2
			--cacert "$T/cage-ca.pem" -H "Authorization: Bearer ${2:-$PH}") ;;
	rules)
		CURLV=(-x http://127.0.0.1:3128 --interface 127.0.0.4
			--cacert "$T/rules-ca.pem" -H "Authorization: Bearer ${2:-$PH}") ;;
	mitm)
		CURLV=(-x http://127.0.0.1:8080 --cacert "$MITM_CA"
			-H "Authorization: Bearer ${2:-$PH}") ;;
	esac
	CURLV+=(-sS --http1.1 --no-sessionid -H "Connection: close")
}
# get PATH URL-PATH CURL-ARGS...: one request through PATH (bounded).
get() {
	local p=$1 u=$2
	shift 2
	via "$p"
	timeout -s KILL 900 curl "${CURLV[@]}" --max-time 600 "$@" \
		"https://$HOST$u" 2>>"$T/curl.err"
}
# relay_ticks PATH: the CPU ticks so far of what relays PATH.
relay_ticks() {
	if [ "$1" = mitm ]; then
		bench_tree_ticks "$MITM_PID"
	else
		gk_cpu_ticks "$GKD_PID"
	fi
}
# drop_path P...: PATHS without the paths P.
drop_path() {
	local p q keep=()
	for p in "${PATHS[@]}"; do
		for q in "$@"; do
			[ "$p" = "$q" ] && continue 2
		done
		keep+=("$p")
	done
	PATHS=("${keep[@]}")
}
# round_order R: ORDER becomes the paths in round R's order: PATHS in odd
# rounds, reversed in even ones, so that no path always runs right after
# the same other one (each set-up round leaves thousands of sockets in
# TIME_WAIT for the next).
round_order() {
	local i
	ORDER=()
	for ((i = 0; i < ${#PATHS[@]}; i++)); do
		if (($1 % 2)); then
			ORDER+=("${PATHS[i]}")
		else
			ORDER=("${PATHS[i]}" "${ORDER[@]}")
		fi
	done
}
# pct P V...: the P-th percentile (nearest rank) of the numbers V.
pct() {
	local p=$1
	shift
	printf '%s\n' "$@" | tr ' ' '\n' | grep -v '^$' | sort -g |
		awk -v p="$p" '{v[NR] = $1} END {
			if (NR == 0) { print "nan"; exit }
			i = int(NR * p / 100 + 0.999999); if (i < 1) i = 1
			print v[i] }'
}

# tally R P BYTES SECS TICKS BEST T B: run R of path P moved BYTES in
# SECS with TICKS of the relay's CPU: its MB/s printed, the best kept in
# BEST[P], TICKS and BYTES added to T[P] and B[P] (BEST, T and B name
# associative arrays).
tally() {
	local -n best=$6 ticks=$7 moved=$8
	local mb
	mb=$(awk -v b="$3" -v s="$4" 'BEGIN {printf "%.1f", b / s / 1e6}')
	ticks[$2]=$((${ticks[$2]:-0} + $5))
	moved[$2]=$((${moved[$2]:-0} + $3))
	printf '  run %d %-13s %8s MB/s  relay CPU %.2f s\n' "$1" "$2" "$mb" \
		"$(awk -v t="$5" -v hz="$HZ" 'BEGIN {print t / hz}')"
	ge "$mb" "${best[$2]:-0}" && best[$2]=$mb
}
# cpu_per_gb T B OUT P...: OUT[P] becomes the relay's CPU seconds per
# 10^9 bytes from T[P] ticks over B[P] bytes (nan: nothing measured).
# shellcheck disable=SC2034  # per_gb: the caller's array
cpu_per_gb() {
	local -n all_ticks=$1 all_bytes=$2 per_gb=$3
	local p
	shift 3
	for p in "$@"; do
		per_gb[$p]=nan
		[ "${all_bytes[$p]:-0}" -gt 0 ] && per_gb[$p]=$(awk -v t="${all_ticks[$p]}" \
			-v hz="$HZ" -v b="${all_bytes[$p]}" 'BEGIN {printf "%.3f", t / hz / (b / 1e9)}')
	done
}

# ---- machine --------------------------------------------------------------------
echo "# gatekeeperd $("$GKD" --version 2>&1 | head -1)"
echo "# $(nginx -v 2>&1 | head -1); mitmproxy $(dpkg-query -W -f='${Version}' mitmproxy 2>/dev/null);" \
	"$(curl --version | head -1 | cut -d' ' -f1-2)"
echo "# $(bench_cpus), kernel $(uname -r)"
echo "# latency: $LAT_RUNS requests per path; set-ups: $NSET requests, $INFL in flight," \
	"$ROUNDS rounds (median); bulk: ${BULK_MB} MiB x $BULK_RUNS rounds (best);" \
	"gatekeeperd audit log: $(onoff "$AUDIT_ON"); $NRULES request rules in rules and tunnel+rules"

# ---- the namespaces, the servers -------------------------------------------------
bench_nofile 65536
en_netns || die "the internet netns and its veth could not be set up"
en_in sysctl -qw net.ipv4.ip_local_port_range="10000 65000" ||
	die "cannot set ip_local_port_range in the internet netns"
EN_DIR=$T/inet
mkdir -p "$EN_DIR"
en_pki || die "the test CA and the server certificate (openssl)"
CA=$EN_DIR/ca.crt
bench_build_load

bench_nginx_conf "$NGINX_ADDR:443 ssl"
mkdir -p "$T/www/sink" || die "cannot make the upload sink"
cat >"$T/nginx-tls.conf" <<EOF
		ssl_certificate $EN_DIR/pki/server.crt;
		ssl_certificate_key $EN_DIR/pki/server.key;
		ssl_protocols TLSv1.2 TLSv1.3;
		if (\$http_authorization != "Bearer $SECRET") {
			return 401 "unauthorized\n";
		}
		location /sink/ {
			dav_methods PUT;
			client_max_body_size 0;
		}
EOF
sed -i "/listen .*backlog=/r $T/nginx-tls.conf" "$T/nginx.conf"
grep -q ssl_certificate_key "$T/nginx.conf" || die "nginx.conf: the TLS lines did not go in"
inet_bg NGINX_PID "$EN_NS_PID" "$T/nginx.stderr" \
	nginx -p "$T/" -c "$T/nginx.conf" -e "$T/nginx-error.log"
gk_wait_for 100 port_open "$NGINX_ADDR:443" || die "nginx did not start on $NGINX_ADDR:443"

GK_UPSTREAM_QUIET=1 gk_start_upstream 5300 "$T/upstream.log" ||
	die "dnsmasq (gatekeeperd's upstream) did not start"
printf '127.0.0.1 localhost\n%s %s\n' "$NGINX_ADDR" "$HOST" >"$T/hosts"
mount --make-rprivate / 2>/dev/null
mount --bind "$T/hosts" /etc/hosts || die "cannot bind-mount a private /etc/hosts"

AUDIT_ARGS=()
[ "$AUDIT_ON" = 1 ] && AUDIT_ARGS=(--audit-log "$T/audit.log")
UCA_ARGS=()
if "$GKD" --help 2>&1 | grep -q -- '--upstream-ca'; then
	UCA_ARGS=(--upstream-ca "$CA")
else
	NO_BROKER="$GKD has no --upstream-ca option (the broker is not built)"
fi
bench_gk_conf "$T/gk.conf"
gk_start_daemon GKD_PID "$GKD" -f -c "$T/gk.conf" --listen 127.0.0.1 \
	--dns-port 53 --socks-port 1080 --http-port 3128 \
	--control "$T/control.sock" --upstream 127.0.0.1:5300 "${UCA_ARGS[@]}" \
	--metrics 127.0.0.1:9477 "${AUDIT_ARGS[@]}" --log-level "${GK_BENCH_LOG_LEVEL:-warn}"
gk_wait_ready "$GKD_PID" "$T/control.sock" 53 || die "gatekeeperd did not become ready"

# cage NAME SOURCE [ALLOW [MEMBERS]]: a cage allowed ALLOW (a JSON
# array's contents; default HOST), with the JSON object MEMBERS besides,
# on its own control connection (kept open: the cage lives as long as
# it); CAGE_REPLY is the reply. Returns 1 when cage.create failed.
cage() {
	gk_ctl_open "$1" "$T/control.sock"
	CAGE_REPLY=$(gk_ctl_send "$1" "{\"op\":\"cage.create\",\"source\":\"$2\",\"allow\":[${3:-\"$HOST\"}],\"label\":\"bench-$1\"${4:+,$4}}")
	[ "$(gk_json_get ok "$CAGE_REPLY")" = true ]
}
# credential NAME CA-FILE: the credential GH_TOKEN (placeholder PH, the
# secret, bound to HOST) for the cage just made on NAME's connection (its
# CAGE_REPLY), the cage's CA in CA-FILE; otherwise CRED_WHY says why not
# and it returns 1.
credential() {
	local id req reply
	id=$(gk_json_get cage.id "$CAGE_REPLY")
	req="{\"op\":\"cage.credential\",\"id\":\"$id\",\"name\":\"GH_TOKEN\","
	req+="\"placeholder\":\"$PH\",\"value\":\"$SECRET\",\"hosts\":[\"$HOST\"]}"
	reply=$(gk_ctl_send "$1" "$req")
	if [ "$(gk_json_get ok "$reply")" != true ]; then
		CRED_WHY="cage.credential was refused: $(printf '%s' "$reply" | sed "s/$SECRET/SECRET/g")"
		return 1
	fi
	gk_json_get ca "$reply" >"$2"
	grep -q 'BEGIN CERTIFICATE' "$2" && return 0
	CRED_WHY="the cage.credential reply has no \"ca\" certificate: $(printf '%s' "$reply" | sed "s/$SECRET/SECRET/g")"
	return 1
}
cage tunnel 127.0.0.3 || die "cage.create (tunnel) failed: $CAGE_REPLY"
cage broker 127.0.0.2 || die "cage.create (broker) failed: $CAGE_REPLY"
if [ -z "$NO_BROKER" ] && ! credential broker "$T/cage-ca.pem"; then
	NO_BROKER=$CRED_WHY
fi
# The rules: for rules, NRULES - 2 on github.com that a GET of /small or
# /big does not match (other methods, other paths, globs that stop short),
# then the two that do, last; for tunnel+rules, github.com and NRULES
# rules for other hosts.
R_RULES='' T_RULES="\"$HOST\""
for ((i = 0; i < NRULES - 2; i++)); do
	case $((i % 4)) in
	0) r="GET,HEAD $HOST/acme-$i/**" ;;
	1) r="POST $HOST/**/git-upload-pack-$i" ;;
	2) r="GET $HOST/org/repo-$i/*/releases/**" ;;
	3) r="PUT,PATCH,DELETE $HOST/**" ;;
	esac
	R_RULES+="\"$r\","
done
R_RULES+="\"GET $HOST/small\",\"GET,HEAD $HOST/**\""
for ((i = 0; i < NRULES; i++)); do
	if ((i % 2)); then
		T_RULES+=",\"GET,HEAD api-$i.$HOST/repos/acme/**\""
	else
		T_RULES+=",\"POST,PUT h$i.example.net/v1/*/upload/**\""
	fi
done
if [ -z "$NO_BROKER" ]; then
	if ! cage rules 127.0.0.4 "$R_RULES"; then
		NO_RULES="cage.create with $NRULES request rules failed: $CAGE_REPLY"
	elif ! credential rules "$T/rules-ca.pem"; then
		NO_RULES="the rules cage: $CRED_WHY"
	fi
else
	NO_RULES="the broker was not measured"
fi
cage tunnel-rules 127.0.0.5 "$T_RULES" ||
	NO_RULES+="${NO_RULES:+; }cage.create with github.com and $NRULES request rules for other hosts failed: $CAGE_REPLY"
BUDGETS='"max_upload":["1000T","1000T@'"$HOST"'"]'
cage tunnel-budget 127.0.0.6 "\"$HOST\"" "$BUDGETS" ||
	NO_BUDGET="cage.create with upload budgets failed: $CAGE_REPLY"
if [ -z "$NO_BROKER" ] && [ -z "$NO_BUDGET" ]; then
	if ! cage broker-budget 127.0.0.7 "\"$HOST\"" "$BUDGETS"; then
		NO_BUDGET="cage.create with upload budgets failed: $CAGE_REPLY"
	elif ! credential broker-budget "$T/budget-ca.pem"; then
		NO_BUDGET="the broker+budget cage: $CRED_WHY"
	fi
fi
if [ -n "$NO_BROKER" ]; then
	echo "# NOT MEASURED: the broker: $NO_BROKER"
	drop_path broker rules broker+budget
	UP_PATHS=(tunnel tunnel+budget)
fi
if [ -n "$NO_BUDGET" ]; then
	echo "# NOT MEASURED: the budget paths: $NO_BUDGET"
	drop_path tunnel+budget broker+budget
	UP_PATHS=(tunnel broker)
fi
if [ -n "$NO_RULES" ]; then
	echo "# NOT MEASURED: the rules paths: $NO_RULES"
	drop_path rules tunnel+rules
fi

cat >"$T/mitm_addon.py" <<'EOF'
# The placeholder in the Authorization header becomes the secret.
import os

PH = os.environ["BENCH_PH"]
SECRET = os.environ["BENCH_SECRET"]


def request(flow):
    a = flow.request.headers.get("authorization")
    if a is not None and PH in a:
        flow.request.headers["authorization"] = a.replace(PH, SECRET)
EOF
mkdir -p "$T/mitm"
# shellcheck disable=SC2031  # HOME for mitmdump only
( gk_close_ctl_fds; export BENCH_PH=$PH BENCH_SECRET=$SECRET HOME=$T/mitm
  exec mitmdump -q --listen-host 127.0.0.1 --listen-port 8080 \
	--set confdir="$T/mitm" --set ssl_verify_upstream_trusted_ca="$CA" \
	--set stream_large_bodies=1m -s "$T/mitm_addon.py" >"$T/mitm.log" 2>&1 ) &
MITM_PID=$!
gk_track_pid "$MITM_PID"
mitm_up() { [ -s "$MITM_CA" ] && port_open 127.0.0.1:8080; }
gk_wait_for 300 mitm_up || die "mitmdump did not listen on 127.0.0.1:8080 within 30 s"

# ---- smoke: every path delivers the secret, and only the secret works -------------
for p in "${PATHS[@]}"; do
	: >"$T/small.out"
	r=$(get "$p" /small -o "$T/small.out" -w '%{http_code}')
	if [ "$r" = 200 ] && cmp -s "$T/small.out" "$T/www/small"; then
		continue
	fi
	why="GET /small: $r '$(head -c 100 "$T/small.out")' $(tail -n 1 "$T/curl.err")"
	case $p in
	broker)
		NO_BROKER="through the broker, $why"
		echo "# NOT MEASURED: the broker: $NO_BROKER"
		drop_path broker rules broker+budget ;;
	tunnel+budget|broker+budget)
		NO_BUDGET+="${NO_BUDGET:+; }through $p, $why"
		echo "# NOT MEASURED: the budget paths: $NO_BUDGET"
		drop_path tunnel+budget broker+budget ;;
	rules|tunnel+rules)
		NO_RULES+="${NO_RULES:+; }through $p, $why"
		echo "# NOT MEASURED: the rules paths: $NO_RULES"
		drop_path rules tunnel+rules ;;
	*) die "$p: $why" ;;
	esac
done
for p in tunnel tunnel+rules; do
	[[ " ${PATHS[*]} " == *" $p "* ]] || continue
	via "$p" "$PH"
	r=$(timeout 60 curl "${CURLV[@]}" -o /dev/null -w '%{http_code}' "https://$HOST/small" 2>&1)
	[ "$r" = 401 ] || die "the placeholder sent through $p got '$r', not nginx's 401"
done
if [[ " ${PATHS[*]} " == *" rules "* ]]; then
	# the rules are checked: a POST matches none of them
	via rules
	r=$(timeout 60 curl "${CURLV[@]}" -X POST -o /dev/null -w '%{http_code}' \
		"https://$HOST/small" 2>&1)
	[ "$r" = 403 ] || die "a POST through rules got '$r', not gatekeeper's 403 (request_rule)"
fi
gk_alive "the smoke requests"

# ---- latency ---------------------------------------------------------------------
declare -A LAT NERR
echo
echo "Latency: GET /small, a new curl (and connection) each, $LAT_RUNS per path, interleaved:"
for ((i = 0; i < LAT_RUNS; i++)); do
	for p in "${PATHS[@]}"; do
		r=$(get "$p" /small -o /dev/null -w '%{http_code} %{time_total}')
		if [ "${r%% *}" = 200 ]; then
			LAT[$p]+=" ${r#* }"
		else
			NERR[$p]=$((${NERR[$p]:-0} + 1))
		fi
	done
done
gk_alive "the latency runs"
declare -A P50 P90
for p in "${PATHS[@]}"; do
	P50[$p]=$(awk -v s="$(median "${LAT[$p]}")" 'BEGIN {printf "%.3f", s * 1000}')
	P90[$p]=$(awk -v s="$(pct 90 "${LAT[$p]}")" 'BEGIN {printf "%.3f", s * 1000}')
	printf '  %-12s p50 %8s ms  p90 %8s ms  failed %s\n' "$p" "${P50[$p]}" "${P90[$p]}" \
		"${NERR[$p]:-0}"
done

# ---- set-ups ---------------------------------------------------------------------
for ((i = 0; i < NSET; i++)); do
	printf 'url = "https://%s/small"\noutput = "/dev/null"\n' "$HOST"
done >"$T/setups.cfg"
declare -A RATES RATE SERR
echo
echo "Set-ups: $NSET x GET /small, $INFL in flight (curl --parallel), $ROUNDS rounds:"
for ((r = 1; r <= ROUNDS; r++)); do
	round_order "$r"
	for p in "${ORDER[@]}"; do
		via "$p"
		t0=$(date +%s%N)
		timeout -s KILL 900 curl "${CURLV[@]}" --max-time 120 --parallel \
			--parallel-max "$INFL" --parallel-immediate -K "$T/setups.cfg" \
			--no-progress-meter -w '%{http_code}\n' >"$T/codes" 2>>"$T/setups.err"
		t1=$(date +%s%N)
		ok=$(grep -c '^200$' "$T/codes")
		SERR[$p]=$((${SERR[$p]:-0} + NSET - ok))
		rate=$(awk -v n="$ok" -v ns="$((t1 - t0))" 'BEGIN {printf "%.1f", n / (ns / 1e9)}')
		RATES[$p]+=" $rate"
		printf '  round %d %-12s %9s req/s  (%d of %d answered 200, %.2f s)\n' "$r" "$p" \
			"$rate" "$ok" "$NSET" "$(awk -v ns="$((t1 - t0))" 'BEGIN {print ns / 1e9}')"
	done
	gk_alive "set-up round $r"
done
for p in "${PATHS[@]}"; do
	RATE[$p]=$(median "${RATES[$p]}")
done

# ---- bulk ------------------------------------------------------------------------
# shellcheck disable=SC2034  # CPU_T, CPU_B: filled through tally's names
declare -A BULK VERIFIED CPU_T CPU_B CPU
echo
echo "Bulk: GET /big (${BULK_MB} MiB), one connection; the relay's CPU around each timed run:"
for p in "${PATHS[@]}"; do
	if get "$p" /big | cmp -s - "$T/www/big"; then
		VERIFIED[$p]=yes
	else
		VERIFIED[$p]=NO
		echo "  $p: content check FAILED: $(tail -n 1 "$T/curl.err")"
	fi
done
gk_alive "the bulk content check"
for ((r = 1; r <= BULK_RUNS; r++)); do
	round_order "$r"
	for p in "${ORDER[@]}"; do
		c0=$(relay_ticks "$p")
		out=$(get "$p" /big -o /dev/null -w '%{http_code} %{size_download} %{time_total}')
		c1=$(relay_ticks "$p")
		read -r code bytes secs <<<"$out"
		if [ "$code" != 200 ] || [ "$bytes" != $((BULK_MB * 1024 * 1024)) ]; then
			echo "  run $r $p: FAILED: '$out' $(tail -n 1 "$T/curl.err")"
			continue
		fi
		tally "$r" "$p" "$bytes" "$secs" $((c1 - c0)) BULK CPU_T CPU_B
	done
done
gk_alive "the bulk runs"
cpu_per_gb CPU_T CPU_B CPU "${PATHS[@]}"

# ---- upload ----------------------------------------------------------------------
# shellcheck disable=SC2034  # UPCPU_T, UPCPU_B: filled through tally's names
declare -A UP UPCPU_T UPCPU_B UPCPU
echo
echo "Upload: PUT /sink/NAME (${UP_MB} MiB), one connection, $BULK_RUNS rounds; the relay's CPU around each run:"
"$LOAD" mkfile "$T/up.bin" $((UP_MB * 1024 * 1024)) || die "cannot write the upload file"
for ((r = 1; r <= BULK_RUNS; r++)); do
	round_order "$r"	# the upload paths in that order
	for p in "${ORDER[@]}"; do
		[[ " ${UP_PATHS[*]} " == *" $p "* ]] || continue
		c0=$(relay_ticks "$p")
		out=$(get "$p" "/sink/$r-${p/+/-}" -T "$T/up.bin" \
			-w '%{http_code} %{size_upload} %{time_total}' -o /dev/null)
		c1=$(relay_ticks "$p")
		read -r code bytes secs <<<"$out"
		if [[ $code != 20[14] ]] || [ "$bytes" != $((UP_MB * 1024 * 1024)) ] ||
		    ! cmp -s "$T/up.bin" "$T/www/sink/$r-${p/+/-}"; then
			echo "  run $r $p: FAILED: '$out' $(tail -n 1 "$T/curl.err")"
			rm -f "$T/www/sink/$r-${p/+/-}"
			continue
		fi
		rm -f "$T/www/sink/$r-${p/+/-}"
		tally "$r" "$p" "$bytes" "$secs" $((c1 - c0)) UP UPCPU_T UPCPU_B
	done
done
gk_alive "the upload runs"
cpu_per_gb UPCPU_T UPCPU_B UPCPU "${UP_PATHS[@]}"

# ---- summary ---------------------------------------------------------------------
echo
printf '%-12s | %9s %9s | %14s | %9s %8s | %9s\n' path "p50 ms" "p90 ms" \
	"set-ups/s $INFL" "bulk MB/s" "bytes ok" "CPU s/GB"
printf '%s\n' "-------------+---------------------+----------------+--------------------+----------"
for p in tunnel tunnel+rules tunnel+budget broker rules broker+budget mitm; do
	printf '%-13s| %9s %9s | %14s | %9s %8s | %9s\n' "$p" "${P50[$p]:--}" "${P90[$p]:--}" \
		"${RATE[$p]:--}" "${BULK[$p]:--}" "${VERIFIED[$p]:--}" "${CPU[$p]:--}"
done
echo
printf '%-13s| %9s | %9s\n' path "upload MB/s" "CPU s/GB"
for p in tunnel tunnel+budget broker broker+budget; do
	printf '%-13s| %11s | %9s\n' "$p" "${UP[$p]:--}" "${UPCPU[$p]:--}"
done
echo "(CPU: gatekeeperd's utime + stime for its paths, mitmdump's for mitm, in ticks of" \
	"1/$HZ s around the timed bulk runs, per 10^9 bytes of body)"
if gk_metrics_fetch 127.0.0.1:9477 "$T/metrics.txt"; then
	echo
	echo "gatekeeperd /metrics after the runs:"
	grep -E '^gatekeeper_(connections|denied|broker|tls)' "$T/metrics.txt" | grep -v ' 0$' |
		head -n 20 | sed 's/^/  /'
fi

# against OP WANT WHAT BROKER OTHER-NAME OTHER UNIT [NAME]: the verdict
# line of the ratio BROKER / OTHER held against WANT (OP: ge or le); NAME
# (default broker) names BROKER.
against() {
	local r op='>='
	r=$(ratio "$4" "$6")
	[ "$1" = le ] && op='<='
	echo "$(verdict "$1" "$r" "$2"): $3, ${8:-broker} ${4:-fail} $7 = ${r}x $5" \
		"${6:-fail} $7 (target $op ${2}x)"
}
echo
if [ -n "$NO_BROKER" ]; then
	echo "TARGET MISSED: every broker target: the broker was not measured ($NO_BROKER)"
else
	against ge 0.7 bulk "${BULK[broker]:-}" tunnel "${BULK[tunnel]:-}" MB/s
	against le 2 "CPU per GB" "${CPU[broker]}" tunnel "${CPU[tunnel]}" s
	d=$(sub "${P50[broker]}" "${P50[tunnel]}")
	echo "$(verdict le "$d" 1): p50, broker ${P50[broker]} ms = tunnel ${P50[tunnel]} ms + $d ms" \
		"(target <= +1 ms)"
	against ge 10 "throughput (bulk)" "${BULK[broker]:-}" mitmproxy "${BULK[mitm]:-}" MB/s
	against ge 10 "throughput (set-ups at $INFL in flight)" "${RATE[broker]:-}" \
		mitmproxy "${RATE[mitm]:-}" req/s
fi
if [ -n "$NO_RULES" ]; then
	echo "TARGET MISSED: every rules target: the rules paths were not measured ($NO_RULES)"
else
	against ge 0.95 "rules, bulk" "${BULK[rules]:-}" broker "${BULK[broker]:-}" MB/s rules
	against ge 0.95 "rules, set-ups at $INFL in flight" "${RATE[rules]:-}" \
		broker "${RATE[broker]:-}" req/s rules
	against le 1.05 "rules, p50" "${P50[rules]:-}" broker "${P50[broker]:-}" ms rules
	against ge 0.95 "rules absent from the host, bulk" "${BULK[tunnel+rules]:-}" \
		tunnel "${BULK[tunnel]:-}" MB/s tunnel+rules
	against ge 0.95 "rules absent from the host, set-ups at $INFL in flight" \
		"${RATE[tunnel+rules]:-}" tunnel "${RATE[tunnel]:-}" req/s tunnel+rules
	against le 1.05 "rules absent from the host, p50" "${P50[tunnel+rules]:-}" \
		tunnel "${P50[tunnel]:-}" ms tunnel+rules
fi
if [ -n "$NO_BUDGET" ]; then
	echo "TARGET MISSED: every budget target: the budget paths were not measured ($NO_BUDGET)"
else
	for b in tunnel broker; do
		[[ " ${PATHS[*]} " == *" $b+budget "* ]] || continue
		against ge 0.95 "budgets counted, download bulk" "${BULK[$b+budget]:-}" \
			"$b" "${BULK[$b]:-}" MB/s "$b+budget"
		against ge 0.95 "budgets counted, upload bulk" "${UP[$b+budget]:-}" \
			"$b" "${UP[$b]:-}" MB/s "$b+budget"
		against ge 0.95 "budgets counted, set-ups at $INFL in flight" \
			"${RATE[$b+budget]:-}" "$b" "${RATE[$b]:-}" req/s "$b+budget"
		against le 1.05 "budgets counted, p50" "${P50[$b+budget]:-}" \
			"$b" "${P50[$b]:-}" ms "$b+budget"
	done
fi
for p in "${PATHS[@]}"; do
	[ "${NERR[$p]:-0}" = 0 ] || echo "NOTE: $p: ${NERR[$p]} latency requests failed"
	[ "${SERR[$p]:-0}" = 0 ] || echo "NOTE: $p: ${SERR[$p]} set-up requests not answered 200 (all rounds)"
done
for f in curl.err setups.err; do
	n=$(grep -c '^curl: (' "$T/$f" 2>/dev/null)
	[ "${n:-0}" = 0 ] ||
		echo "NOTE: curl reported $n errors ($f), the last: $(grep '^curl: (' "$T/$f" | tail -n 1)"
done
for p in "${PATHS[@]}"; do
	[ "${VERIFIED[$p]}" = yes ] || die "$p delivered wrong bytes in the bulk content check"
done
grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:" "$T/GKD_PID.log" &&
	die "sanitizer reports in gatekeeperd's log"
if grep -qF -- "$SECRET" "$T/GKD_PID.log" "$T/audit.log" 2>/dev/null; then
	die "the secret is in gatekeeperd's log or audit log"
fi
if [ -n "$NO_BROKER" ]; then
	echo "$BENCH_NAME: FAILED: the broker was not measured: $NO_BROKER" >&2
	exit 1
fi
if [ -n "$NO_RULES" ]; then
	echo "$BENCH_NAME: FAILED: the rules paths were not measured: $NO_RULES" >&2
	exit 1
fi
if [ -n "$NO_BUDGET" ]; then
	echo "$BENCH_NAME: FAILED: the budget paths were not measured: $NO_BUDGET" >&2
	exit 1
fi
exit 0
