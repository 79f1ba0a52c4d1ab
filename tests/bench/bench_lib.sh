# shellcheck shell=bash
#
# bench_lib.sh: what the benchmark scripts share: finding the binaries,
# failing with the logs, the machine line, the open-files limit, the
# nginx target with its small and big files, and the arithmetic of the
# summaries. Source it after tests/integration/lib.sh; it defines
# functions only. BENCH_NAME (the script's name) prefixes messages.

# shellcheck disable=SC2034  # variables used by the sourcing scripts

# bench_exe VAR GIVEN REL: VAR becomes the absolute path of the executable
# GIVEN or, when GIVEN is empty, of REL under the current directory or
# else under the top of the tree; exit 1 when there is none.
bench_exe() {
	local var=$1 b=$2
	if [ -z "$b" ]; then
		b=$3
		[ -x "$b" ] || b=$GK_ROOT/$3
	fi
	if [ ! -x "$b" ]; then
		echo "$BENCH_NAME: $b: no such executable (build first, or give the paths)" >&2
		exit 1
	fi
	printf -v "$var" '%s' "$(readlink -f "$b")"
}

# die MSG: the message, the last BENCH_TAIL (15) lines of every log in
# $T, exit 1.
die() {
	local f
	echo "$BENCH_NAME: $*" >&2
	for f in "$T"/*.log "$T"/*.stderr "$T"/*.err; do
		[ -s "$f" ] || continue
		echo "---- $f" >&2
		tail -n "${BENCH_TAIL:-15}" "$f" >&2
	done
	exit 1
}

# gk_alive WHEN: gatekeeperd (GKD_PID) still runs, or die.
gk_alive() {
	kill -0 "$GKD_PID" 2>/dev/null ||
		die "gatekeeperd died ($1); its log is above. Reproduce: see $T"
}

# bench_cpus: "N CPUs (model)".
bench_cpus() {
	printf '%s CPUs (%s)' "$(nproc)" \
		"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
}

# onoff VALUE: "on" for 1, else "off".
onoff() { if [ "$1" = 1 ]; then echo on; else echo off; fi; }

# bench_nofile WANT: this netns's local port range widened, the open files
# limit raised to WANT (or the hard limit); NOFILE is the limit now.
bench_nofile() {
	sysctl -qw net.ipv4.ip_local_port_range="10000 65000" ||
		die "cannot set ip_local_port_range in the private netns"
	ulimit -n "$1" 2>/dev/null || ulimit -n "$(ulimit -Hn)" ||
		die "cannot raise the open files limit"
	NOFILE=$(ulimit -n)
}

# bench_gk_conf FILE: a gatekeeperd config for one cage at benchmark load,
# which is far beyond every per-cage default (a tool's few dozen queries
# and connections at once): the per-cage caps out of the way (0: none).
bench_gk_conf() {
	printf '%s = 0\n' cage-dns-rate cage-dns-upstream cage-dns-upstream-rate \
		cage-dns-tcp cage-handshakes cage-tunnels >"$1"
}

# bench_nginx_conf LISTEN: $T/www/small (100 bytes), $T/www/big
# (BULK_MB MiB, written by $LOAD) and $T/nginx.conf, an nginx that serves
# them on LISTEN (access log off, no keep-alive, NOFILE files).
bench_nginx_conf() {
	mkdir -p "$T/www" "$T/nginx-tmp"
	head -c 99 /dev/zero | tr '\0' 'x' >"$T/www/small"
	echo >>"$T/www/small"
	"$LOAD" mkfile "$T/www/big" $((BULK_MB * 1024 * 1024)) ||
		die "cannot write the bulk file"
	cat >"$T/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile $NOFILE;
user root;
pid $T/nginx.pid;
error_log $T/nginx-error.log warn;
events { worker_connections 16384; }
http {
	access_log off;
	client_body_temp_path $T/nginx-tmp/body;
	proxy_temp_path $T/nginx-tmp/proxy;
	fastcgi_temp_path $T/nginx-tmp/fastcgi;
	uwsgi_temp_path $T/nginx-tmp/uwsgi;
	scgi_temp_path $T/nginx-tmp/scgi;
	default_type application/octet-stream;
	sendfile on;
	tcp_nopush on;
	tcp_nodelay on;
	keepalive_timeout 0;
	server {
		listen $1 backlog=4096;
		root $T/www;
	}
}
EOF
}

# bench_build_load: $LOAD, socks_load built from its sources here (the
# parts are listed in socks_load.h).
bench_build_load() {
	local f
	local -a src=()
	for f in socks_load.c load_conn.c load_run.c floor.c; do
		src+=("$BENCH_DIR/$f")
	done
	cc -O2 -o "$LOAD" "${src[@]}" 2>"$T/cc.err" ||
		die "cannot build socks_load: $(cat "$T/cc.err")"
}

# bench_smoke PATH...: every path works before anything is measured
# (`load PATH bulk -u /small`, the script's load function), or die.
bench_smoke() {
	local p out
	for p in "$@"; do
		out=$(load "$p" bulk -u /small)
		if [ "$(kv ok "$out")" != 1 ] || [ "$(kv errors "$out")" != 0 ]; then
			die "$p: GET /small failed: $out $(tail -n 2 "$T/load.err")"
		fi
	done
}

# bench_label NAME: what a server or path is called in the output (the
# floor relays by what they are: socks_load floor copies, floor-splice
# splices, both speaking SOCKS5; floor-splice-http splices behind HTTP
# CONNECT, floor-splice-bare behind no protocol at all).
bench_label() {
	case $1 in
	floor-copy) echo "floor (copy relay)" ;;
	floor-splice) echo "floor (splice relay)" ;;
	floor-splice-http) echo "floor (splice, CONNECT)" ;;
	floor-splice-bare) echo "floor (splice, bare)" ;;
	*) echo "$1" ;;
	esac
}

# bench_tree_ticks PID: the CPU time of PID's process tree so far, in
# clock ticks: for PID and each live descendant, utime + stime (/proc/N/stat:
# every thread, exited ones included) + cutime + cstime (the children it
# has reaped). The difference of two readings is what the tree spent in
# between even when children come and go (dante forks its workers): a
# child reaped in between leaves the live sum for its parent's cutime.
bench_tree_ticks() {
	cat /proc/[0-9]*/stat 2>/dev/null | sed 's/ (.*) / /' | awk -v root="$1" '
	{
		pp[$1] = $3
		t[$1] = $13 + $14 + $15 + $16
	}
	END {
		tree[root] = 1
		do {
			more = 0
			for (p in pp)
				if (!(p in tree) && (pp[p] in tree)) {
					tree[p] = 1
					more = 1
				}
		} while (more)
		for (p in tree)
			s += t[p]
		print s + 0
	}'
}

# ---------------------------------------------------------------------------
# The summaries' arithmetic (awk: the figures are decimals)

# kv KEY LINE: the value of KEY=... in a socks_load result line.
kv() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }
# (a figure that is missing, "nan" or "-" makes "nan", or fails le)
sub() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a ~ /^-?[0-9.]+$/ && b ~ /^-?[0-9.]+$/)
			print a - b
		else
			print "nan"
	}'
}
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a ~ /^-?[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0)
			printf "%.2f", a / b
		else
			print "nan"
	}'
}
ge() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a != "" && a != "nan" && a >= b)}'; }
le() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		exit !(a ~ /^-?[0-9.]+$/ && b ~ /^-?[0-9.]+$/ && a <= b)
	}'
}
verdict() { if "$@"; then echo "TARGET MET"; else echo "TARGET MISSED"; fi; }
# median V...: the median of the numbers given, as words of one or more
# arguments (the mean of the middle two for an even count); empty when
# none.
median() {
	printf '%s\n' "$@" | tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1}
	END {
		if (NR % 2)
			printf "%.10g\n", v[(NR + 1) / 2]
		else if (NR > 0)
			printf "%.10g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
	}'
}

# bench_danted IP PORT EXTERNAL: dante-server listening on IP:PORT,
# connecting out from EXTERNAL, no authentication, errors only in
# $T/danted.log; BENCH_DANTE_PID gets its pid (tracked for clean-up).
bench_danted() {
	cat >"$T/danted.conf" <<DANTE
logoutput: $T/danted.log
internal: $1 port = $2
external: $3
socksmethod: none
clientmethod: none
user.privileged: root
user.unprivileged: nobody
client pass { from: 0.0.0.0/0 to: 0.0.0.0/0 log: error }
socks pass { from: 0.0.0.0/0 to: 0.0.0.0/0 log: error }
DANTE
	( gk_close_ctl_fds; exec danted -f "$T/danted.conf" -N 1 -p "$T/danted.pid" \
		>"$T/danted.stderr" 2>&1 ) &
	BENCH_DANTE_PID=$!
	gk_track_pid "$BENCH_DANTE_PID"
}

# bench_setup_rounds WIDTH NAME...: the set-up runs, ROUNDS rounds of
# every in-flight level ($INFLIGHT) of every NAME in turn, through the
# caller's `load NAME setup ...`, each result line also in $T/setup.txt.
# The caller declares the associative arrays RATES P50S P99S (each
# round's figures, space-separated), ERRS (failed connections, summed)
# and RATE P50 P99 (the rounds' medians, filled here), and may define
# bench_setup_done NAME IN-FLIGHT ROUND RESULT-LINE, called after each
# run. WIDTH: of the names' column.
# shellcheck disable=SC2004  # the arrays are associative (the caller's)
bench_setup_rounds() {
	local w=$1 r c s out rate e
	shift
	for ((r = 1; r <= ROUNDS; r++)); do
		for c in $INFLIGHT; do
			for s in "$@"; do
				out=$(load "$s" setup -c "$c" -d "$SECS" -w 1 -u /small)
				echo "$r $s $out" >>"$T/setup.txt"
				rate=$(kv rate "$out")
				[ -n "$rate" ] || die "socks_load setup failed for $s: $out" \
					"$(tail -n 2 "$T/load.err")"
				RATES[$s,$c]+=" $rate"
				P50S[$s,$c]+=" $(kv p50_us "$out")"
				P99S[$s,$c]+=" $(kv p99_us "$out")"
				e=$(kv errors "$out")
				ERRS[$s,$c]=$((${ERRS[$s,$c]:-0} + ${e:-0}))
				printf "  round %d %-${w}s %4d in flight %9.1f conn/s  p50 %6s us  p99 %7s us  errors %s\n" \
					"$r" "$(bench_label "$s")" "$c" "$rate" "$(kv p50_us "$out")" \
					"$(kv p99_us "$out")" "$e"
				if [ "$e" != 0 ]; then
					echo "    errors: $(printf '%s\n' "$out" | tr ' ' '\n' |
						grep '^err_' | grep -v '=0$' | paste -sd' ' -);" \
						"$(tail -n 1 "$T/load.err")"
				fi
				if declare -F bench_setup_done >/dev/null; then
					bench_setup_done "$s" "$c" "$r" "$out"
				fi
			done
		done
	done
	for c in $INFLIGHT; do
		for s in "$@"; do
			RATE[$s,$c]=$(median "${RATES[$s,$c]}")
			P50[$s,$c]=$(median "${P50S[$s,$c]}")
			P99[$s,$c]=$(median "${P99S[$s,$c]}")
		done
	done
}
