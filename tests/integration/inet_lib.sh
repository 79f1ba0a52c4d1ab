# shellcheck shell=bash
#
# inet_lib.sh: the pieces of a hermetic "internet" that proxy_net.sh (the
# proxy test's) and e2e_net.sh (the end-to-end and transparent tests', the
# demo's and the benchmarks') build the same way, parameterised by names,
# addresses and directories: the internet netns and its veth pair, the
# test CA, the web roots, the git repository, nginx and OpenSSH. Sourced by
# those two files (after lib.sh); it defines functions only.
#
# Every function takes ERR first: the function that reports a failure
# (pn_err, en_err), so messages name the internet they belong to.

# inet_bg VAR NSPID LOG CMD...: start CMD in the background in the network
# namespace of NSPID (this one when NSPID is empty), stdout and stderr
# appended to LOG; VAR gets its pid, tracked for the cleanup.
inet_bg() {
	local var=$1 ns=$2 log=$3 pid
	shift 3
	if [ -n "$ns" ]; then
		( gk_close_ctl_fds; exec nsenter --net="/proc/$ns/ns/net" -- "$@" \
			>>"$log" 2>&1 ) &
	else
		( gk_close_ctl_fds; exec "$@" >>"$log" 2>&1 ) &
	fi
	pid=$!
	gk_track_pid "$pid"
	printf -v "$var" '%s' "$pid"
}

# inet_v6 V6 CMD...: an IPv6 set-up step: with V6 "strict" its failure is
# returned, with "loose" ignored.
inet_v6() {
	local v6=$1
	shift
	"$@" && return 0
	[ "$v6" != strict ]
}

# inet_netns ERR VAR HOSTIF INETIF HOST4 INET4 V6 LO-ADDR...: the internet
# netns (VAR gets the pid of the `sleep` that holds it), the veth pair
# HOSTIF (here: HOST4/29, 2001:db8:ffff::1/64) -- INETIF (there: INET4/29,
# 2001:db8:ffff::2/64), every LO-ADDR on its lo (/32, IPv6 ones /128),
# default routes back, and routes to the documentation ranges through it.
# V6 "strict": any IPv6 step that fails fails the whole; "loose": a warning
# (the IPv6 checks will fail instead).
inet_netns() {
	local err=$1 var=$2 hif=$3 iif=$4 h4=$5 i4=$6 v6=$7 i self ns a pid
	local in=()
	shift 7
	( gk_close_ctl_fds; exec unshare --net sleep 86400 ) &
	pid=$!
	gk_track_pid "$pid"
	printf -v "$var" '%s' "$pid"
	self=$(readlink /proc/self/ns/net)
	for ((i = 0; i < 50; i++)); do
		ns=$(readlink "/proc/$pid/ns/net" 2>/dev/null) || ns=
		[ -n "$ns" ] && [ "$ns" != "$self" ] && break
		sleep 0.1
	done
	if [ "$i" -ge 50 ]; then
		"$err" "the internet netns did not appear (unshare --net)"
		return 1
	fi
	in=(nsenter --net="/proc/$pid/ns/net" --)
	"${in[@]}" ip link set lo up || return 1
	ip link add "$hif" type veth peer name "$iif" || return 1
	ip link set "$iif" netns "$pid" || return 1

	ip addr add "$h4/29" dev "$hif" || return 1
	if ! ip -6 addr add 2001:db8:ffff::1/64 dev "$hif" nodad; then
		[ "$v6" = strict ] && return 1
		"$err" "no IPv6 on the veth (IPv6 checks will fail)"
	fi
	ip link set "$hif" up || return 1
	"${in[@]}" ip addr add "$i4/29" dev "$iif" || return 1
	inet_v6 "$v6" "${in[@]}" ip -6 addr add 2001:db8:ffff::2/64 dev "$iif" \
		nodad || return 1
	"${in[@]}" ip link set "$iif" up || return 1

	for a in "$@"; do
		case $a in
		*:*) inet_v6 "$v6" "${in[@]}" ip -6 addr add "$a/128" dev lo nodad ;;
		*) "${in[@]}" ip addr add "$a/32" dev lo ;;
		esac || return 1
	done
	"${in[@]}" ip route add default via "$h4" || return 1
	inet_v6 "$v6" "${in[@]}" ip -6 route add default via 2001:db8:ffff::1 ||
		return 1

	for a in 192.0.2.0/24 198.51.100.0/24 203.0.113.0/24; do
		ip route add "$a" via "$i4" || return 1
	done
	inet_v6 "$v6" ip -6 route add 2001:db8::/64 via 2001:db8:ffff::2 ||
		return 1
	return 0
}

# inet_pki ERR DIR CA-NAME SAN: a test CA (DIR/ca.crt, world-readable) and
# one server certificate (DIR/pki/server.crt and .key) for SAN
# ("DNS:a,DNS:b,...").
inet_pki() {
	local err=$1 dir=$2 cn=$3 san=$4 d=$2/pki
	mkdir -p "$d" || return 1
	(
		set -e
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
			-nodes -keyout "$d/ca.key" -out "$dir/ca.crt" -days 2 \
			-subj "/CN=$cn" \
			-addext "basicConstraints=critical,CA:TRUE" \
			-addext "keyUsage=critical,keyCertSign,cRLSign"
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
			-nodes -keyout "$d/server.key" -out "$d/server.csr" \
			-subj "/CN=github.com" -addext "subjectAltName=$san" \
			-addext "extendedKeyUsage=serverAuth"
		openssl x509 -req -in "$d/server.csr" -CA "$dir/ca.crt" \
			-CAkey "$d/ca.key" -CAcreateserial -days 2 \
			-copy_extensions copy -out "$d/server.crt"
	) >"$d/openssl.log" 2>&1 || {
		"$err" "openssl failed:"; cat "$d/openssl.log" >&2; return 1
	}
	chmod 644 "$dir/ca.crt"
}

# inet_www DIR SIZE NAME...: the web roots DIR/www/NAME with an index.html
# ("hello from NAME"), and SIZE random bytes as github.com's /blob.bin
# (its sha256 in DIR/blob.sha256).
inet_www() {
	local dir=$1 size=$2 w=$1/www n
	shift 2
	for n in "$@"; do
		mkdir -p "$w/$n" || return 1
		printf 'hello from %s\n' "$n" >"$w/$n/index.html"
	done
	head -c "$size" /dev/urandom >"$w/github.com/blob.bin" || return 1
	sha256sum <"$w/github.com/blob.bin" | awk '{print $1}' >"$dir/blob.sha256"
}

# inet_git_repo ERR DIR BARE FILES-FN BARE-FN: the test repository: a work
# tree DIR/git-src with README, data.txt and what FILES-FN writes there,
# one commit on main (its id in DIR/git-head, `git ls-tree -r HEAD` in
# DIR/git-tree), cloned bare to BARE; then BARE-FN BARE. Git runs with
# HOME=DIR/home and no system config; its output goes to DIR/git.log.
inet_git_repo() {
	local err=$1 dir=$2 bare=$3 files=$4 barefn=$5 src=$2/git-src
	(
		set -e
		export HOME=$dir/home GIT_CONFIG_NOSYSTEM=1
		mkdir -p "$HOME"
		git init -q -b main "$src"
		cd "$src"
		printf 'hello, gatekeeper %s\n' "$(date +%s%N)" >README
		head -c 65536 /dev/urandom | base64 >data.txt
		"$files"
		git add -A
		git -c user.name=test -c user.email=test@example.invalid \
			commit -q -m "the test repository"
		git rev-parse HEAD >"$dir/git-head"
		git ls-tree -r HEAD >"$dir/git-tree"
		mkdir -p "$(dirname "$bare")"
		git clone -q --bare --no-local "$src" "$bare"
		"$barefn" "$bare"
	) >"$dir/git.log" 2>&1 || {
		"$err" "building the git repository failed:"
		cat "$dir/git.log" >&2
		return 1
	}
}

# inet_nginx ERR DIR NSPID VAR SITE-FN NAME=ADDR...: nginx in the netns of
# NSPID (VAR gets its pid), :80 and :443 (TLS, DIR/pki's certificate) for
# every NAME (Host NAME or ADDR), root DIR/www/NAME; `SITE-FN NAME` prints
# more lines for NAME's server block. Ready when https://github.com/
# answers (bounded: 10 s).
inet_nginx() {
	local err=$1 dir=$2 nspid=$3 var=$4 site=$5 c=$2/nginx.conf nv i gh=
	shift 5
	mkdir -p "$dir/nginx-tmp" || return 1
	{
		cat <<EOF
daemon off;
master_process on;
worker_processes 1;
user root;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log info;
events { worker_connections 512; }
http {
	access_log $dir/nginx-access.log;
	client_body_temp_path $dir/nginx-tmp/body;
	proxy_temp_path $dir/nginx-tmp/proxy;
	fastcgi_temp_path $dir/nginx-tmp/fastcgi;
	uwsgi_temp_path $dir/nginx-tmp/uwsgi;
	scgi_temp_path $dir/nginx-tmp/scgi;
	types { text/html html; text/plain txt; }
	default_type application/octet-stream;
	sendfile on;
	keepalive_timeout 30;
	client_max_body_size 64m;
	ssl_certificate $dir/pki/server.crt;
	ssl_certificate_key $dir/pki/server.key;
	ssl_protocols TLSv1.2 TLSv1.3;
	server {
		listen 80 default_server;
		listen [::]:80 default_server;
		listen 443 ssl default_server;
		listen [::]:443 ssl default_server;
		server_name _;
		return 421 "no such site\n";
	}
EOF
		for nv in "$@"; do
			cat <<EOF
	server {
		listen 80;
		listen [::]:80;
		listen 443 ssl;
		listen [::]:443 ssl;
		server_name ${nv%%=*} ${nv#*=};
		root $dir/www/${nv%%=*};
EOF
			"$site" "${nv%%=*}"
			echo "	}"
		done
		echo "}"
	} >"$c"
	for nv in "$@"; do
		[ "${nv%%=*}" = github.com ] && gh=${nv#*=}
	done
	inet_bg "$var" "$nspid" "$dir/nginx.stderr" \
		nginx -p "$dir/" -c "$c" -e "$dir/nginx-error.log"
	for ((i = 0; i < 100; i++)); do
		if ! kill -0 "${!var}" 2>/dev/null; then
			"$err" "nginx exited:"
			tail -n 20 "$dir/nginx.stderr" "$dir/nginx-error.log" >&2
			return 1
		fi
		if curl -sf --noproxy '*' --max-time 2 --cacert "$dir/ca.crt" \
		    --resolve "github.com:443:$gh" \
		    -o /dev/null https://github.com/index.html 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	"$err" "nginx did not answer https://github.com/ within 10 s"
	tail -n 20 "$dir/nginx-error.log" >&2
	return 1
}

# inet_sshd ERR DIR NSPID VAR ADDR ADDR6 PORT: OpenSSH in the netns of
# NSPID (VAR gets its pid) on ADDR:PORT and [ADDR6]:PORT, key-only (no
# passwords, no PAM, no keyboard-interactive), root login, a throwaway
# ed25519 host key and user key. Files under DIR/ssh (a world-readable
# directory): id and id.pub (the user key; id is mode 0600 and root's),
# authorized_keys, known_hosts ("github.com <host key>"), sshd_config,
# sshd.log, the host key. sshd insists on /run/sshd: when the machine has
# none, a tmpfs is mounted on /run in the test's private mount namespace
# (the machine's /run is untouched). Ready when the banner comes (5 s).
inet_sshd() {
	local err=$1 s=$2/ssh nspid=$3 var=$4 addr=$5 addr6=$6 port=$7 i
	mkdir -p "$s" || return 1
	chmod 755 "$s"
	command -v /usr/sbin/sshd >/dev/null 2>&1 || {
		"$err" "/usr/sbin/sshd is not installed (openssh-server; bash deploy/install-deps.sh)"
		return 1
	}
	if [ ! -d /run/sshd ]; then
		# Our mount namespace is private (lib.sh: unshare --mount; made
		# rprivate again here to be sure): the tmpfs is seen by this
		# test only.
		mount --make-rprivate / 2>/dev/null
		if ! mount -t tmpfs -o mode=755 gk-test-run /run; then
			"$err" "cannot mount a private tmpfs on /run for /run/sshd"
			return 1
		fi
		mkdir -p /run/sshd /run/lock && chmod 755 /run/sshd
	fi
	rm -f "$s/host_key" "$s/host_key.pub" "$s/id" "$s/id.pub"
	ssh-keygen -q -t ed25519 -N '' -C gk-test-host -f "$s/host_key" ||
		return 1
	ssh-keygen -q -t ed25519 -N '' -C gk-test-user -f "$s/id" || return 1
	cp "$s/id.pub" "$s/authorized_keys"
	chmod 644 "$s/authorized_keys" "$s/id.pub" "$s/host_key.pub"
	printf 'github.com %s\n' "$(cut -d' ' -f1,2 "$s/host_key.pub")" \
		>"$s/known_hosts"
	chmod 644 "$s/known_hosts"
	cat >"$s/sshd_config" <<EOF
Port $port
ListenAddress $addr
ListenAddress [$addr6]
HostKey $s/host_key
PidFile $s/sshd.pid
AuthorizedKeysFile $s/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
UseDNS no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
MaxStartups 100:30:200
LogLevel VERBOSE
EOF
	inet_bg "$var" "$nspid" "$s/sshd.log" \
		/usr/sbin/sshd -f "$s/sshd_config" -D -e
	for ((i = 0; i < 50; i++)); do
		if ! kill -0 "${!var}" 2>/dev/null; then
			"$err" "sshd exited:"
			tail -n 20 "$s/sshd.log" >&2
			return 1
		fi
		if "$PYTHON" - "$addr" "$port" <<'EOF' 2>/dev/null
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1)
s.settimeout(2)
sys.exit(0 if s.recv(64).startswith(b"SSH-2.0-") else 1)
EOF
		then
			return 0
		fi
		sleep 0.1
	done
	"$err" "sshd did not send its banner within 5 s"
	tail -n 20 "$s/sshd.log" >&2
	return 1
}

# inet_ssh_opts DIR KEY: the OpenSSH client options for a test internet,
# one per line: KEY as the only identity, github.com's host key from
# DIR/ssh/known_hosts only (strict), nothing from ~/.ssh or /etc/ssh, no
# prompts, bounded waits.
inet_ssh_opts() {
	printf '%s\n' -F /dev/null -i "$2" -o IdentitiesOnly=yes \
		-o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o "UserKnownHostsFile=$1/ssh/known_hosts" \
		-o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=30 \
		-o ServerAliveInterval=5 -o ServerAliveCountMax=2 \
		-o LogLevel=ERROR
}
