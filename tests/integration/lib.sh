# shellcheck shell=bash
#
# lib.sh: shared helpers for gatekeeper's integration test, offline demo and
# DNS benchmark. Source it; it defines functions and a few variables only.
#
# Everything runs inside namespaces the script creates for itself:
# gk_enter_netns re-executes the calling script under
#   unshare --net --mount --pid --fork --kill-child --mount-proc
# so the script is PID 1 of a fresh PID namespace with a private network
# namespace (only `lo`, brought up here). When the script exits, for any
# reason, the kernel kills every process left in the PID namespace and the
# network namespace goes with them: nothing can leak onto the host, and no
# traffic leaves loopback. The EXIT trap additionally stops what we started
# (politely first) and removes the temporary directory.

# shellcheck disable=SC2034  # variables used by the sourcing scripts

GK_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GKCTL="$GK_LIB_DIR/gkctl.py"
# Debian's python3 (install-deps.sh installs it): only the standard library
# is used, and a version manager's shim in PATH (pyenv) costs ~0.3 s a call.
if [ -z "${PYTHON:-}" ]; then
	PYTHON=python3
	[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
fi

# Writing to a fifo whose reader died must fail, not kill the script.
trap '' PIPE

GK_NPASS=0
GK_NFAIL=0
GK_FAILED=()
GK_PIDS=()			# processes to stop on exit (daemons, dnsmasq)
declare -A GK_CTL_FD=()		# control clients: name -> write fd of its fifo
declare -A GK_CTL_PID=()	#                  name -> pid
GK_TMP=

gk_say() { printf '%s\n' "$*"; }
gk_err() { printf '%s\n' "$*" >&2; }

# ---------------------------------------------------------------------------
# Namespaces

# gk_enter_netns SKIPCODE SCRIPT [ARGS...]
# Unless already inside, re-exec SCRIPT in fresh namespaces (does not
# return). SKIPCODE is the exit status when that is impossible (77 for the
# test: "skipped"; 1 for the demo and the benchmark).
gk_enter_netns() {
	local skip=$1 what=SKIP
	shift
	if [ "${GK_IN_NETNS:-}" = 1 ] && [ "$$" = 1 ]; then
		return 0
	fi
	[ "$skip" = 77 ] || what="$(basename "$1"): error"
	if [ "$(id -u)" -ne 0 ]; then
		gk_say "$what: needs root (network namespaces, port 53)"
		exit "$skip"
	fi
	if ! command -v unshare >/dev/null 2>&1 ||
	    ! unshare --net --mount --pid --fork --kill-child --mount-proc \
	    true >/dev/null 2>&1; then
		gk_say "$what: cannot create network/PID namespaces with unshare"
		exit "$skip"
	fi
	exec unshare --net --mount --pid --fork --kill-child --mount-proc \
		env GK_IN_NETNS=1 bash "$@"
}

# gk_setup: inside the namespaces: lo up, temp dir, traps.
gk_setup() {
	if [ "${GK_IN_NETNS:-}" != 1 ] || [ "$$" != 1 ]; then
		gk_err "gk_setup: not inside the test namespaces (call gk_enter_netns)"
		exit 1
	fi
	if ! ip link set lo up; then
		gk_say "SKIP: cannot bring up lo in the new network namespace"
		exit "${GK_SKIP_CODE:-77}"
	fi
	# The namespace starts with only lo: make sure that is really so
	# before sending anything anywhere.
	if [ "$(ip -o link show | grep -vc ': lo:')" -ne 0 ]; then
		gk_err "gk_setup: unexpected interfaces in the new netns; refusing"
		exit 1
	fi
	GK_TMP=$(mktemp -d /tmp/gk-int.XXXXXX) || exit 1
	chmod 755 "$GK_TMP"
	trap gk_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
}

gk_cleanup() {
	local rc=$? name p i
	trap - EXIT
	set +e
	for name in "${!GK_CTL_FD[@]}"; do
		gk_ctl_close "$name" >/dev/null 2>&1
	done
	for p in "${GK_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${GK_PIDS[@]}"; do
		for ((i = 0; i < 30; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	# What is left was started by us, but not tracked (fcgiwrap's
	# workers outlive their master and are reparented to us, PID 1 of
	# the namespace): `wait` would block on them for ever. kill -1 from
	# the namespace's init reaches every other process in it, no other.
	{
		if [ "${GK_IN_NETNS:-}" = 1 ] && [ "$$" = 1 ]; then
			kill -KILL -1
		fi
		wait
	} 2>/dev/null
	if [ -n "$GK_TMP" ] && [ -d "$GK_TMP" ]; then
		if [ -n "${GK_KEEP_TMP:-}" ]; then
			# Outside the namespaces the files are still there.
			gk_err "keeping $GK_TMP"
		else
			rm -rf "$GK_TMP"
		fi
	fi
	exit "$rc"
}

gk_track_pid() { GK_PIDS+=("$1"); }

# gk_untrack_pid PID: it exited (we waited for it).
gk_untrack_pid() {
	local p keep=()
	for p in "${GK_PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	GK_PIDS=("${keep[@]}")
}

# gk_wait_exit PID TENTHS: wait up to TENTHS/10 s for PID (a child of this
# shell) to exit. Sets GK_RC to its exit status, or "timeout". Returns 0 if
# it exited. Never call it in $(...): only this shell can wait for its
# children.
gk_wait_exit() {
	local pid=$1 max=${2:-50} i
	GK_RC=timeout
	for ((i = 0; i < max; i++)); do
		# bash reaps exited children at once (keeping the status for
		# `wait`), so kill -0 fails as soon as the process is gone.
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid" 2>/dev/null
			GK_RC=$?
			gk_untrack_pid "$pid"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# ---------------------------------------------------------------------------
# Results

gk_ok() {
	GK_NPASS=$((GK_NPASS + 1))
	printf 'ok   %s\n' "$1"
}

# gk_fail MSG [DETAIL...]
gk_fail() {
	GK_NFAIL=$((GK_NFAIL + 1))
	GK_FAILED+=("$1")
	printf 'FAIL %s\n' "$1"
	shift
	local d
	for d in "$@"; do
		[ -n "$d" ] && printf '%s\n' "$d" | head -n 8 | sed 's/^/       /'
	done
	return 0
}

# gk_check MSG COMMAND...: ok if COMMAND succeeds.
gk_check() {
	local msg=$1
	shift
	if "$@"; then
		gk_ok "$msg"
	else
		gk_fail "$msg" "${GK_DETAIL:-}"
	fi
	GK_DETAIL=
}

gk_info() { printf 'info %s\n' "$*"; }

# ---------------------------------------------------------------------------
# The hermetic upstream: dnsmasq with its own records, nothing forwarded.
# Documentation addresses only (192.0.2.0/24, 198.51.100.0/24,
# 203.0.113.0/24, 2001:db8::/32), TTL 3600 so capping is visible.

# shellcheck disable=SC2054  # commas are dnsmasq's, inside one argument
GK_UPSTREAM_RECORDS=(
	--local=/github.com/ --local=/gitlab.com/ --local=/example/
	--local=/notgithub.com/
	--host-record=github.com,192.0.2.10,2001:db8::10
	--host-record=api.github.com,192.0.2.11
	--host-record=codeload.github.com,192.0.2.12
	--host-record=objects.github.com,192.0.2.13
	--host-record=gist.github.com,192.0.2.14
	--host-record=raw.github.com,192.0.2.15
	--host-record=uploads.github.com,192.0.2.16
	--host-record=status.github.com,192.0.2.17
	# A CNAME chain inside the allowed zone:
	# www.github.com -> web.github.com -> objects.github.com (A)
	--cname=www.github.com,web.github.com,3600
	--cname=web.github.com,objects.github.com,3600
	--host-record=gitlab.com,198.51.100.20
	--host-record=www.gitlab.com,198.51.100.21
	--host-record=evil.example,203.0.113.66
	--host-record=www.evil.example,203.0.113.67
	--host-record=github.com.evil.example,203.0.113.68
	--host-record=exfil.evil.example,203.0.113.69
	--host-record=notgithub.com,203.0.113.70
)

# gk_start_upstream PORT LOGFILE [EXTRA dnsmasq ARGS...]
# Sets GK_UPSTREAM_PID. Every query is logged to LOGFILE unless
# GK_UPSTREAM_QUIET=1 (the benchmark).
gk_start_upstream() {
	local port=$1 log=$2 i lq=(--log-queries)
	shift 2
	[ "${GK_UPSTREAM_QUIET:-0}" = 1 ] && lq=()
	: >"$log"
	(
		gk_close_ctl_fds
		exec dnsmasq --keep-in-foreground --conf-file=/dev/null \
			--no-resolv --no-hosts --port="$port" \
			--listen-address=127.0.0.1 --bind-interfaces \
			--user=root --group=root \
			--pid-file="$GK_TMP/dnsmasq-$port.pid" \
			"${lq[@]}" --log-facility="$log" --local-ttl=3600 \
			--cache-size=1000 "${GK_UPSTREAM_RECORDS[@]}" "$@" \
			>>"$GK_TMP/dnsmasq-$port.stderr" 2>&1
	) &
	GK_UPSTREAM_PID=$!
	gk_track_pid "$GK_UPSTREAM_PID"
	for ((i = 0; i < 300; i++)); do
		if ! kill -0 "$GK_UPSTREAM_PID" 2>/dev/null; then
			gk_err "dnsmasq (upstream, port $port) exited:"
			cat "$GK_TMP/dnsmasq-$port.stderr" "$log" >&2
			return 1
		fi
		if dig @127.0.0.1 -p "$port" github.com A +time=1 +tries=1 \
		    +short 2>/dev/null | grep -qx 192.0.2.10; then
			return 0
		fi
		sleep 0.1
	done
	gk_err "dnsmasq (upstream, port $port) did not answer within 30 s"
	return 1
}

# gk_upstream_saw LOG NAME: did the upstream get a query for exactly NAME?
gk_upstream_saw() {
	grep -Eq "query\[[A-Z0-9=]+\] ${2//./\\.} from " "$1"
}

# gk_upstream_wait LOG NAME: wait (up to 30 s) until the upstream logged a
# query for NAME; used as a "the log is flushed" marker.
gk_upstream_wait() {
	local i
	for ((i = 0; i < 300; i++)); do
		gk_upstream_saw "$1" "$2" && return 0
		sleep 0.1
	done
	return 1
}

# ---------------------------------------------------------------------------
# gatekeeperd

# gk_start_daemon VAR BINARY ARGS...
# Starts gatekeeperd in the background; its stdout/stderr go to
# $GK_TMP/VAR.log unless GK_DAEMON_LOG is set ("-": inherit, i.e. visible).
# Sets the variable named VAR to its pid.
gk_start_daemon() {
	local var=$1 bin=$2 pid log
	shift 2
	log=${GK_DAEMON_LOG:-$GK_TMP/$var.log}
	if [ "$log" = - ]; then
		( gk_close_ctl_fds; exec "$bin" "$@" ) &
	else
		( gk_close_ctl_fds; exec "$bin" "$@" >>"$log" 2>&1 ) &
	fi
	pid=$!
	gk_track_pid "$pid"
	printf -v "$var" '%s' "$pid"
}

# gk_wait_ready PID SOCKET DNSPORT [LISTEN]
# Ready = the control socket exists and a query from an address that names
# no cage (127.0.0.254) is answered REFUSED. Bounded: 60 s (generous: a
# slow host, a qemu guest under emulation, starts it slowly).
gk_wait_ready() {
	local pid=$1 sock=$2 port=$3 listen=${4:-127.0.0.1} i st
	for ((i = 0; i < 600; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			gk_err "gatekeeperd (pid $pid) exited before it was ready"
			return 1
		fi
		if [ -S "$sock" ]; then
			st=$(dig -b 127.0.0.254 @"$listen" -p "$port" ready.probe A \
				+time=1 +tries=1 2>/dev/null |
				sed -n 's/.*status: \([A-Z]*\),.*/\1/p')
			[ "$st" = REFUSED ] && return 0
		fi
		sleep 0.1
	done
	gk_err "gatekeeperd (pid $pid) not ready within 60 s" \
		"(socket $sock, DNS $listen:$port)"
	return 1
}

# gk_stop_daemon PID [SIGNAL]: signal it, wait up to 30 s. Sets GK_RC to
# the exit status ("timeout" if it did not exit; it is then killed).
gk_stop_daemon() {
	local pid=$1 sig=${2:-TERM}
	kill -"$sig" "$pid" 2>/dev/null
	gk_wait_exit "$pid" 300 && return 0
	kill -KILL "$pid" 2>/dev/null
	gk_wait_exit "$pid" 20
	GK_RC=timeout
	return 1
}

# gk_hup PID LOG: SIGHUP gatekeeperd and wait (up to 30 s) until LOG says
# the reload is done, whether it took ("reloaded: ") or failed ("reload
# failed"): what follows meets the new configuration on any host, where a
# fixed sleep may not be long enough on a slow one.
gk_hup() {
	local pid=$1 log=$2 n
	n=$(gk_hup_count "$log")
	kill -HUP "$pid" 2>/dev/null || return 1
	gk_wait_for 300 eval '[ "$(gk_hup_count "$log")" -gt "$n" ]'
}
gk_hup_count() { grep -cE 'reloaded: |reload failed' "$1" 2>/dev/null; }

# ---------------------------------------------------------------------------
# Control connections. Each is a gkctl.py --hold process reading requests
# from a fifo we hold open; closing our end closes the connection.

# gk_close_ctl_fds: in a child, close our ends of every control fifo.
gk_close_ctl_fds() {
	local fd
	for fd in "${GK_CTL_FD[@]}"; do
		eval "exec $fd>&-"
	done
}

# gk_ctl_once REQUEST...: one control connection to $SOCK (bounded), a
# reply line per request.
gk_ctl_once() {
	timeout -s KILL 60 "$PYTHON" "$GKCTL" "$SOCK" --timeout 30 "$@"
}

# gk_ctl_answers: gatekeeperd (GKD_PID) runs and answers on $SOCK.
gk_ctl_answers() {
	kill -0 "$GKD_PID" 2>/dev/null && [ -S "$SOCK" ] &&
		gk_ctl_once '{"op":"cage.list"}' 2>/dev/null | grep -q '"ok":true'
}

# gk_users_locked CMD...: run CMD holding the lock every test takes to
# create users and groups (tests run two at a time; useradd and groupadd
# refuse to run while another holds /etc/passwd's lock). Bounded: 60 s.
gk_users_locked() {
	local rc
	exec {GK_USERS_FD}>>/tmp/gk-tests-users.lock || return 1
	if ! flock -w 60 "$GK_USERS_FD"; then
		exec {GK_USERS_FD}>&-
		return 1
	fi
	"$@"
	rc=$?
	exec {GK_USERS_FD}>&-
	return "$rc"
}
# gk_group_exists NAME: the system group NAME, created if missing.
gk_group_exists() {
	getent group "$1" >/dev/null || groupadd --system "$1"
}

# gk_start_local_daemon: the group GK_GROUP, then gatekeeperd (GKD_PID)
# with its defaults, its control socket at $SOCK, upstream 127.0.0.1:5353,
# log level debug; ready once the control socket answers (gk_wait_ready
# probes DNS on the listen address, which nothing routes to before the
# first cage). 0, or a failed check and 1.
gk_start_local_daemon() {
	if ! gk_users_locked gk_group_exists "$GK_GROUP"; then
		gk_fail "create the group $GK_GROUP (groupadd --system)"
		return 1
	fi
	: >"$GK_TMP/empty.conf"
	gk_start_daemon GKD_PID "$GKD" -f -c "$GK_TMP/empty.conf" \
		--control "$SOCK" --metrics off --upstream 127.0.0.1:5353 \
		--log-level debug
	if ! gk_wait_for 600 gk_ctl_answers; then
		gk_fail "gatekeeperd starts and answers on its control socket" \
			"$(gk_tail "$GK_TMP/GKD_PID.log")"
		return 1
	fi
}

# gk_ctl_open NAME SOCKET
gk_ctl_open() {
	local name=$1 sock=$2 fifo fd
	fifo="$GK_TMP/ctl-$name.in"
	rm -f "$fifo" "$GK_TMP/ctl-$name.out" "$GK_TMP/ctl-$name.err"
	mkfifo "$fifo" || return 1
	: >"$GK_TMP/ctl-$name.out"	# exists before the first gk_ctl_send
	# The child must not inherit our ends of the other fifos, or closing
	# one of them would not be an EOF for its client.
	(
		gk_close_ctl_fds
		exec "$PYTHON" "$GKCTL" "$sock" --hold <"$fifo" \
			>"$GK_TMP/ctl-$name.out" 2>"$GK_TMP/ctl-$name.err"
	) &
	GK_CTL_PID[$name]=$!
	exec {fd}>"$fifo"
	GK_CTL_FD[$name]=$fd
}

# gk_ctl_send NAME JSON: send one request; print the reply line. Returns 1
# when no reply comes within 30 s or the client died. Requests are
# synchronous (one in flight), so the reply is the line after those already
# in the client's output; that also works from $(...) subshells.
gk_ctl_send() {
	local name=$1 req=$2 fd n i out
	fd=${GK_CTL_FD[$name]:-}
	[ -n "$fd" ] || { gk_err "gk_ctl_send: no connection $name"; return 1; }
	out="$GK_TMP/ctl-$name.out"
	n=$(($(wc -l <"$out") + 1))
	printf '%s\n' "$req" 1>&"$fd" 2>/dev/null || {
		gk_err "gk_ctl_send $name: client gone: $(cat "$GK_TMP/ctl-$name.err")"
		return 1
	}
	for ((i = 0; i < 300; i++)); do
		if [ "$(wc -l <"$out")" -ge "$n" ]; then
			sed -n "${n}p" "$out"
			return 0
		fi
		if ! kill -0 "${GK_CTL_PID[$name]}" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	gk_err "gk_ctl_send $name: no reply: $(cat "$GK_TMP/ctl-$name.err" 2>/dev/null)"
	return 1
}

# gk_ctl_close NAME: close the connection (EOF), wait for the client.
gk_ctl_close() {
	local name=$1 fd pid
	fd=${GK_CTL_FD[$name]:-}
	pid=${GK_CTL_PID[$name]:-}
	[ -n "$fd" ] && eval "exec $fd>&-"
	if [ -n "$pid" ] && ! gk_wait_exit "$pid" 300; then
		kill -KILL "$pid" 2>/dev/null
		gk_wait_exit "$pid" 20
	fi
	unset "GK_CTL_FD[$name]" "GK_CTL_PID[$name]"
}

# gk_ctl_kill NAME: kill -9 the client (a crash), then drop our fifo end.
gk_ctl_kill() {
	local name=$1 fd pid
	fd=${GK_CTL_FD[$name]:-}
	pid=${GK_CTL_PID[$name]:-}
	# (stderr off: bash would report the job as "Killed")
	if [ -n "$pid" ]; then
		{
			kill -KILL "$pid"
			gk_wait_exit "$pid" 20
		} 2>/dev/null
	fi
	[ -n "$fd" ] && eval "exec $fd>&-"
	unset "GK_CTL_FD[$name]" "GK_CTL_PID[$name]"
}

# gk_json_get PATH JSONTEXT: print a field (see gkctl.py --get).
gk_json_get() {
	printf '%s\n' "$2" | "$PYTHON" "$GKCTL" --get "$1"
}

# ---------------------------------------------------------------------------
# dig

GK_DNS_SERVER=127.0.0.1
GK_DNS_PORT=53

# gk_dig SRC NAME [TYPE] [DIG OPTIONS...]
# Query GK_DNS_SERVER:GK_DNS_PORT from SRC. The full output is kept in
# $GK_TMP/dig.out; sets DIG_STATUS (NOERROR, NXDOMAIN, ..., or TIMEOUT),
# DIG_MS (wall time in ms). +time=10 +tries=1 unless overridden (dig takes
# the last option): generous, so that only a query never answered times
# out on a slow host.
gk_dig() {
	local src=$1 name=$2 type=${3:-A} t0 t1
	shift 2
	[ $# -gt 0 ] && shift
	t0=$(date +%s%N)
	dig -b "$src" @"$GK_DNS_SERVER" -p "$GK_DNS_PORT" "$name" "$type" \
		+time=10 +tries=1 "$@" >"$GK_TMP/dig.out" 2>&1
	t1=$(date +%s%N)
	DIG_MS=$(((t1 - t0) / 1000000))
	DIG_STATUS=$(sed -n 's/.*->>HEADER<<-.*status: \([A-Z0-9]*\),.*/\1/p' \
		"$GK_TMP/dig.out" | head -1)
	[ -n "$DIG_STATUS" ] || DIG_STATUS=TIMEOUT
}

# The answer section of the last gk_dig, one RR per line.
dig_answers() {
	awk '/^;; ANSWER SECTION:/ {a = 1; next} a && /^$/ {a = 0} a' \
		"$GK_TMP/dig.out"
}
# The records of TYPE in the answer: "TTL RDATA" per line.
dig_rr() {
	dig_answers | awk -v t="$1" '$4 == t {r = $5; for (i = 6; i <= NF; i++) r = r " " $i; print $2, r}'
}
dig_answer_count() {
	sed -n 's/.*ANSWER: \([0-9]*\),.*/\1/p' "$GK_TMP/dig.out" | head -1
}
dig_max_ttl() {
	dig_answers | awk 'BEGIN {m = -1} $2 + 0 > m {m = $2 + 0} END {print m}'
}
dig_has_opt() { grep -q 'OPT PSEUDOSECTION' "$GK_TMP/dig.out"; }
dig_flags() {
	sed -n 's/^;; flags: \([a-z ]*\);.*/\1/p' "$GK_TMP/dig.out" | head -1
}
# One-line summary for failure details.
dig_summary() {
	printf 'status=%s answers=[%s] %sms' "$DIG_STATUS" \
		"$(dig_answers | awk '{print $4, $5}' | paste -sd, -)" "$DIG_MS"
}

# ---------------------------------------------------------------------------
# Metrics

# gk_metrics_fetch ADDR:PORT FILE
gk_metrics_fetch() {
	curl -sf --max-time 20 "http://$1/metrics" -o "$2"
}

# gk_num X: a metric value as an integer (1e+06 -> 1000000); empty -> -1.
gk_num() {
	if [ -z "$1" ]; then
		echo -1
	else
		awk -v x="$1" 'BEGIN {printf "%d\n", x + 0}'
	fi
}

# gk_metric FILE NAME [LABEL=VALUE ...]: print the value of the series with
# exactly these labels (in any order); print nothing and return 1 if absent.
gk_metric() { gk_metrics_query exact "$@"; }

# gk_metric_sum FILE NAME [LABEL=VALUE | LABEL!=VALUE ...]: the sum of
# every series of NAME whose labels satisfy all filters (0 when none).
# Exit 1 if no series matched.
gk_metric_sum() { gk_metrics_query sum "$@"; }

# gk_metrics_query exact|sum FILE NAME FILTERS...: gk_metric and
# gk_metric_sum, in awk (checks call them many times; no interpreter
# start-up per call). Label values are matched as written in the file.
gk_metrics_query() {
	local mode=$1 path=$2 name=$3
	shift 3
	[ -r "$path" ] || { [ "$mode" = sum ] && echo 0; return 1; }
	local IFS=$'\034'
	awk -v mode="$mode" -v name="$name" -v conds="$*" '
	BEGIN {
		n = split(conds, cs, "\034")
		for (i = 1; i <= n; i++) {
			c = cs[i]
			if (c == "") continue
			if (mode == "sum" && index(c, "!=")) {
				k = substr(c, 1, index(c, "!=") - 1)
				v = substr(c, index(c, "!=") + 2); eq = 0
			} else {
				k = substr(c, 1, index(c, "=") - 1)
				v = substr(c, index(c, "=") + 1); eq = 1
			}
			nc++; ck[nc] = k; cv[nc] = v; ce[nc] = eq
		}
	}
	/^#/ || NF < 2 { next }
	{
		series = $1; val = $2
		if ((p = index(series, "{")) > 0) {
			metric = substr(series, 1, p - 1)
			rest = substr($0, p + 1)
			sub(/}[ \t].*$/, "", rest)
		} else {
			metric = series; rest = ""
		}
		if (metric != name)
			next
		if (p > 0)
			val = substr($0, index($0, "} ") + 2)
		sub(/[ \t].*$/, "", val)
		delete lab; nl = 0
		while (match(rest, /^[ \t]*[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*"[ \t]*,?/)) {
			kv = substr(rest, RSTART, RLENGTH)
			rest = substr(rest, RSTART + RLENGTH)
			sub(/^[ \t]*/, "", kv); sub(/[ \t]*,?$/, "", kv)
			eqp = index(kv, "=")
			lk = substr(kv, 1, eqp - 1)
			lv = substr(kv, eqp + 2); lv = substr(lv, 1, length(lv) - 1)
			lab[lk] = lv; nl++
		}
		if (mode == "exact") {
			if (nl != nc) next
			for (i = 1; i <= nc; i++)
				if (!(ck[i] in lab) || lab[ck[i]] != cv[i]) next
			print val; found = 1; exit
		}
		for (i = 1; i <= nc; i++) {
			has = (ck[i] in lab) && lab[ck[i]] == cv[i]
			if (has != ce[i]) next
		}
		total += val; hits++
	}
	END {
		if (mode == "sum") { printf "%d\n", total; exit (hits ? 0 : 1) }
		exit (found ? 0 : 1)
	}' "$path"
}

# ---------------------------------------------------------------------------
# Misc

# gk_wait_for TENTHS COMMAND...: poll COMMAND every 0.1 s, bounded.
gk_wait_for() {
	local max=$1 i
	shift
	for ((i = 0; i < max; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# ---------------------------------------------------------------------------
# The audit log. gatekeeperd writes it from a buffer every 100 ms, so the
# line an action causes lands some time after the action returns (longer
# on a loaded machine): read it only through gk_audit_wait.

# gk_audit_mark FILE: its number of lines now (0 when it is missing), the
# SINCE of a gk_audit_wait for what the next action writes.
gk_audit_mark() {
	if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi
}

# gk_audit_wait [-n COUNT] [-F] FILE SINCE TENTHS PATTERN...: wait, polling
# every 0.1 s for at most TENTHS/10 s, until COUNT (default 1) lines after
# line SINCE of FILE (0: all of it) each match every PATTERN: awk extended
# regular expressions (put \ before [ { ( . * + ? | ^ $ meant literally),
# with -F fixed strings. Sets GK_AUDIT_N to the number of such lines and
# GK_AUDIT_LINE to the last one, also when it gives up. 0 once they are
# there; 1, and GK_DETAIL (if empty) says what was missing, when they did
# not come in time.
gk_audit_wait() {
	local want=1 fixed=0 file since max i r
	while [ $# -gt 0 ]; do
		case $1 in
		-n) want=$2; shift 2 ;;
		-F) fixed=1; shift ;;
		*) break ;;
		esac
	done
	file=$1 since=$2 max=$3
	shift 3
	for ((i = 0; ; i++)); do
		r=$(gk_audit_scan "$fixed" "$file" "$since" "$@")
		GK_AUDIT_N=${r%%$'\t'*}
		GK_AUDIT_LINE=${r#*$'\t'}
		[ "$GK_AUDIT_N" -ge "$want" ] && return 0
		[ "$i" -lt "$max" ] || break
		sleep 0.1
	done
	[ -n "${GK_DETAIL:-}" ] || GK_DETAIL="$GK_AUDIT_N of $want audit line(s) after line $since of $file in $((max / 10)).$((max % 10)) s matching: $*; the last line: $(tail -n 1 "$file" 2>/dev/null | cut -c1-300)"
	return 1
}

# gk_audit_scan FIXED FILE SINCE PATTERN...: "N<tab>LAST": how many lines
# after line SINCE match every PATTERN (FIXED 1: fixed strings), and the
# last of them.
gk_audit_scan() {
	local fixed=$1 file=$2 since=$3
	shift 3
	if [ ! -f "$file" ]; then
		printf '0\t\n'
		return 0
	fi
	# The patterns come as operands (taken out before any file is
	# read): -v would interpret their backslashes.
	awk -v fixed="$fixed" -v since="$since" '
	BEGIN {
		for (i = 2; i < ARGC; i++) {
			p[++n] = ARGV[i]
			ARGV[i] = ""
		}
	}
	FNR > since {
		for (i = 1; i <= n; i++)
			if (fixed == 1 ? !index($0, p[i]) : $0 !~ p[i])
				next
		c++
		last = $0
	}
	END { printf "%d\t%s\n", c, last }' "$file" "$@"
}

# gk_tail FILE [N]: the last lines of a log, indented, for failure reports.
gk_tail() {
	[ -f "$1" ] || return 0
	tail -n "${2:-20}" "$1" | sed 's/^/       | /'
}

# gk_exe_args SCRIPT-NAME VAR=WHAT... -- ARGS...: the test scripts'
# arguments, the executables to test, in order: sets each VAR to the
# absolute path of its argument, or exits 2 (usage: one is missing) / 1
# (one is not an executable).
gk_exe_args() {
	local name=$1 vars=() whats=() i a
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vars+=("${1%%=*}")
		whats+=("${1#*=}")
		shift
	done
	[ $# -gt 0 ] && shift
	if [ $# -lt ${#vars[@]} ]; then
		echo "usage: bash $name$(printf ' /path/to/%s' "${whats[@]}")" >&2
		exit 2
	fi
	for ((i = 0; i < ${#vars[@]}; i++)); do
		a=${*:i+1:1}
		printf -v "${vars[i]}" '%s' "$(readlink -f "$a")"
		if [ ! -x "${!vars[i]}" ]; then
			echo "$name: $a: not an executable" >&2
			exit 1
		fi
	done
}

# gk_daemon_arg SCRIPT-NAME "$@": the test scripts' one argument, the
# gatekeeperd to test; sets GKD (absolute) or exits 2 (usage) / 1.
gk_daemon_arg() {
	gk_exe_args "$1" GKD=gatekeeperd -- "${@:2}"
}

# gk_require TOOL...: skip (exit 77) naming the first one missing.
gk_require() {
	local t
	for t in "$@"; do
		if ! command -v "$t" >/dev/null 2>&1; then
			echo "SKIP: $t not installed (deploy/install-deps.sh installs it)"
			exit 77
		fi
	done
}

# gk_need SCRIPT-NAME TOOL...: exit 1 naming the first one missing (the
# demo and the benchmarks: never a skip).
gk_need() {
	local name=$1 t
	shift
	for t in "$@"; do
		if ! command -v "$t" >/dev/null 2>&1; then
			echo "$name: $t is not installed (bash deploy/install-deps.sh)" >&2
			exit 1
		fi
	done
}

# gk_unset_client_env: hermetic clients: no proxy, CA, git or ssh settings
# (nor a control socket) from the caller's environment.
gk_unset_client_env() {
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY \
		no_proxy NO_PROXY GIT_SSL_CAINFO GIT_SSL_CAPATH GIT_SSL_NO_VERIFY \
		CURL_CA_BUNDLE SSL_CERT_FILE SSL_CERT_DIR GIT_PROXY_COMMAND \
		GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT GIT_SSH GIT_SSH_COMMAND \
		SSH_AUTH_SOCK GK_CONTROL
}

# gk_cpu_ticks PID: utime + stime of every thread, in clock ticks (the
# fields after the ") " that ends the command name: 1 is the state, 12
# utime, 13 stime; 14 and 15 of the whole line).
gk_cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}

# gk_summary [NOTE]: "---- N passed, M failed (NOTE) ----", the failed
# checks, and when any failed the last 30 lines of GK_SUMMARY_LOG (the
# daemon's log; none when unset or absent).
gk_summary() {
	echo "---- $GK_NPASS passed, $GK_NFAIL failed${1:+ ($1)} ----"
	local f
	for f in "${GK_FAILED[@]}"; do
		echo "FAILED: $f"
	done
	if [ "$GK_NFAIL" -gt 0 ] && [ -n "${GK_SUMMARY_LOG:-}" ] &&
	    [ -f "$GK_SUMMARY_LOG" ]; then
		echo "---- gatekeeperd log (last 30 lines) ----"
		gk_tail "$GK_SUMMARY_LOG" 30
	fi
}

# gk_finish [NOTE]: the summary, then exit 1 if any check failed, else 0.
gk_finish() {
	gk_summary "$@"
	[ "$GK_NFAIL" -eq 0 ] || exit 1
	exit 0
}

# gk_abort MSG [LOG]: a failed check MSG, the last 30 lines of LOG, the
# summary ("aborted"), exit 1.
gk_abort() {
	gk_fail "$1"
	[ -n "${2:-}" ] && gk_tail "$2" 30
	gk_summary aborted
	exit 1
}
