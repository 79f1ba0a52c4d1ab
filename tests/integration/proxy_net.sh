# shellcheck shell=bash
#
# proxy_net.sh: the hermetic "internet" for gatekeeper's proxy integration
# test (test_proxy.sh). Source it after lib.sh, from inside the test
# namespaces (after gk_setup); it defines functions and variables only.
#
# Topology (everything below lives in namespaces the test created; the
# machine's own interfaces, routes, nftables and mounts are never touched):
#
#   test netns (gatekeeperd, dnsmasq, clients; lib.sh's namespace)
#     lo       127.0.0.1 (gatekeeperd), cages 127.0.0.2, 127.0.0.3, ...
#     gk-up    198.18.0.1/29, 2001:db8:ffff::1/64
#              routes 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 and
#              2001:db8::/64 via the internet netns
#              192.0.2.99 (dead.github.com): an "unreachable" route, so a
#                connect() fails at once with EHOSTUNREACH
#              192.0.2.98 (slow.github.com): routed via 198.18.0.6, a
#                neighbour with a permanent MAC nobody owns, so SYNs vanish
#                (a connect timeout); tcp_syn_retries = 2 in this netns
#                bounds the kernel's own wait to ~7 s
#   internet netns (created with `unshare --net sleep`, entered with
#   nsenter --net=/proc/PID/ns/net: no /run/netns needed)
#     gk-inet  198.18.0.2/29, 2001:db8:ffff::2/64; default routes back
#     lo       192.0.2.10 + 2001:db8::10 github.com, 192.0.2.11
#              api.github.com, 198.51.100.20 gitlab.com, 203.0.113.66
#              evil.example
#     nginx    :80 and :443 (TLS, certificate from a test CA made here),
#              one server block per name (Host NAME or its address),
#              each serving /index.html ("hello from NAME"), github.com and gitlab.com also
#              /blob.bin (5 MiB random) and github.com the bare git
#              repository /acme/hello.git ("dumb" HTTP)
#     sshd     OpenSSH on 192.0.2.10:22, key-only, throwaway host and user
#              keys (needs /run/sshd: when the machine has none, a tmpfs is
#              mounted on /run inside the test's private mount namespace)
#
# Files under $PN_DIR ($GK_TMP/inet): ca.crt (the CA for clients),
# blob.sha256, ssh/id (the user key), ssh/known_hosts (github.com's host
# key), git-head (the commit the repository's main points at).

PN_DIR=
PN_NS_PID=
PN_NGINX_PID=
PN_SSHD_PID=
PN_BLOB_SIZE=$((5 * 1024 * 1024))

# name -> address in the internet netns
declare -A PN_ADDR=(
	[github.com]=192.0.2.10
	[api.github.com]=192.0.2.11
	[gitlab.com]=198.51.100.20
	[evil.example]=203.0.113.66
)
PN_ADDR6_GITHUB=2001:db8::10
PN_DEAD_ADDR=192.0.2.99		# dead.github.com: host unreachable
PN_SLOW_ADDR=192.0.2.98		# slow.github.com: SYNs dropped

# Extra records for lib.sh's dnsmasq upstream (gk_start_upstream ... "${PN_UPSTREAM_EXTRA[@]}").
# shellcheck disable=SC2034,SC2054
PN_UPSTREAM_EXTRA=(
	--host-record=rebind.github.com,127.0.0.1
	--host-record=meta.github.com,169.254.169.254
	--host-record=priv.github.com,10.1.2.3
	"--host-record=dead.github.com,$PN_DEAD_ADDR"
	"--host-record=slow.github.com,$PN_SLOW_ADDR"
)

# pn_in CMD...: run CMD in the internet netns (our mount and PID namespace).
pn_in() {
	nsenter --net="/proc/$PN_NS_PID/ns/net" -- "$@"
}

# pn_curl_direct ARGS...: curl from the test netns straight to the internet
# (no proxy), with the test CA and every test name resolved to its address.
pn_curl_direct() {
	local n res=()
	for n in "${!PN_ADDR[@]}"; do
		res+=(--resolve "$n:443:${PN_ADDR[$n]}" --resolve "$n:80:${PN_ADDR[$n]}")
	done
	curl -sS --noproxy '*' --max-time 15 --connect-timeout 5 \
		--cacert "$PN_DIR/ca.crt" "${res[@]}" "$@"
}

pn_err() { gk_err "proxy_net: $*"; }

# pn_netns: create the internet netns and the veth pair, addresses, routes.
pn_netns() {
	local i self
	( gk_close_ctl_fds; exec unshare --net sleep 86400 ) &
	PN_NS_PID=$!
	gk_track_pid "$PN_NS_PID"
	self=$(readlink /proc/self/ns/net)
	for ((i = 0; i < 50; i++)); do
		local ns
		ns=$(readlink "/proc/$PN_NS_PID/ns/net" 2>/dev/null) || ns=
		[ -n "$ns" ] && [ "$ns" != "$self" ] && break
		sleep 0.1
	done
	if [ "$i" -ge 50 ]; then
		pn_err "the internet netns did not appear (unshare --net)"
		return 1
	fi
	pn_in ip link set lo up || return 1
	ip link add gk-up type veth peer name gk-inet || return 1
	ip link set gk-inet netns "$PN_NS_PID" || return 1

	ip addr add 198.18.0.1/29 dev gk-up || return 1
	ip -6 addr add 2001:db8:ffff::1/64 dev gk-up nodad 2>/dev/null ||
		pn_err "no IPv6 on the veth (IPv6 checks will fail)"
	ip link set gk-up up || return 1
	pn_in ip addr add 198.18.0.2/29 dev gk-inet || return 1
	pn_in ip -6 addr add 2001:db8:ffff::2/64 dev gk-inet nodad 2>/dev/null
	pn_in ip link set gk-inet up || return 1

	local a
	for a in "${PN_ADDR[@]}"; do
		pn_in ip addr add "$a/32" dev lo || return 1
	done
	pn_in ip -6 addr add "$PN_ADDR6_GITHUB/128" dev lo nodad 2>/dev/null
	pn_in ip route add default via 198.18.0.1 || return 1
	pn_in ip -6 route add default via 2001:db8:ffff::1 2>/dev/null

	for a in 192.0.2.0/24 198.51.100.0/24 203.0.113.0/24; do
		ip route add "$a" via 198.18.0.2 || return 1
	done
	ip -6 route add 2001:db8::/64 via 2001:db8:ffff::2 2>/dev/null
	# dead.github.com: fails at once (EHOSTUNREACH).
	ip route add unreachable "$PN_DEAD_ADDR/32" || return 1
	# slow.github.com: frames to a MAC nobody owns: silently dropped.
	ip neigh replace 198.18.0.6 lladdr 02:00:00:00:00:66 dev gk-up \
		nud permanent || return 1
	ip route add "$PN_SLOW_ADDR/32" via 198.18.0.6 || return 1
	# Bound the kernel's SYN retries (per-netns sysctl: this netns only).
	echo 2 >/proc/sys/net/ipv4/tcp_syn_retries 2>/dev/null ||
		pn_err "cannot set tcp_syn_retries in the test netns"
	return 0
}

# pn_pki: a test CA and one server certificate for every name.
pn_pki() {
	local d=$PN_DIR/pki san="" n
	mkdir -p "$d" || return 1
	for n in github.com api.github.com gitlab.com evil.example; do
		san="${san:+$san,}DNS:$n"
	done
	(
		set -e
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
			-nodes -keyout "$d/ca.key" -out "$PN_DIR/ca.crt" -days 2 \
			-subj "/CN=gatekeeper test CA" \
			-addext "basicConstraints=critical,CA:TRUE" \
			-addext "keyUsage=critical,keyCertSign,cRLSign"
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
			-nodes -keyout "$d/server.key" -out "$d/server.csr" \
			-subj "/CN=github.com" -addext "subjectAltName=$san" \
			-addext "extendedKeyUsage=serverAuth"
		openssl x509 -req -in "$d/server.csr" -CA "$PN_DIR/ca.crt" \
			-CAkey "$d/ca.key" -CAcreateserial -days 2 \
			-copy_extensions copy -out "$d/server.crt"
	) >"$d/openssl.log" 2>&1 || {
		pn_err "openssl failed:"; cat "$d/openssl.log" >&2; return 1
	}
}

# pn_content: the web roots, the random blob and the git repository.
pn_content() {
	local w=$PN_DIR/www n src=$PN_DIR/git-src
	for n in "${!PN_ADDR[@]}"; do
		mkdir -p "$w/$n" || return 1
		printf 'hello from %s\n' "$n" >"$w/$n/index.html"
	done
	head -c "$PN_BLOB_SIZE" /dev/urandom >"$w/github.com/blob.bin" || return 1
	cp "$w/github.com/blob.bin" "$w/gitlab.com/blob.bin" || return 1
	sha256sum <"$w/github.com/blob.bin" | awk '{print $1}' >"$PN_DIR/blob.sha256"
	(
		set -e
		export HOME=$PN_DIR/home GIT_CONFIG_NOSYSTEM=1
		mkdir -p "$HOME"
		git init -q -b main "$src"
		cd "$src"
		printf 'hello, gatekeeper %s\n' "$(date +%s%N)" >README
		head -c 65536 /dev/urandom | base64 >data.txt
		git add README data.txt
		git -c user.name=test -c user.email=test@example.invalid \
			commit -q -m "the test repository"
		git rev-parse HEAD >"$PN_DIR/git-head"
		mkdir -p "$w/github.com/acme"
		git clone -q --bare --no-local "$src" "$w/github.com/acme/hello.git"
		git -C "$w/github.com/acme/hello.git" update-server-info
	) >"$PN_DIR/git.log" 2>&1 || {
		pn_err "building the git repository failed:"
		cat "$PN_DIR/git.log" >&2
		return 1
	}
}

# pn_nginx: nginx in the internet netns, :80 and :443 for every name.
pn_nginx() {
	local c=$PN_DIR/nginx.conf n i
	mkdir -p "$PN_DIR/nginx-tmp" || return 1
	{
		cat <<EOF
daemon off;
master_process on;
worker_processes 1;
user root;
pid $PN_DIR/nginx.pid;
error_log $PN_DIR/nginx-error.log info;
events { worker_connections 512; }
http {
	access_log $PN_DIR/nginx-access.log;
	client_body_temp_path $PN_DIR/nginx-tmp/body;
	proxy_temp_path $PN_DIR/nginx-tmp/proxy;
	fastcgi_temp_path $PN_DIR/nginx-tmp/fastcgi;
	uwsgi_temp_path $PN_DIR/nginx-tmp/uwsgi;
	scgi_temp_path $PN_DIR/nginx-tmp/scgi;
	types { text/html html; text/plain txt; }
	default_type application/octet-stream;
	sendfile on;
	keepalive_timeout 30;
	ssl_certificate $PN_DIR/pki/server.crt;
	ssl_certificate_key $PN_DIR/pki/server.key;
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
		for n in "${!PN_ADDR[@]}"; do
			cat <<EOF
	server {
		listen 80;
		listen [::]:80;
		listen 443 ssl;
		listen [::]:443 ssl;
		server_name $n ${PN_ADDR[$n]};
		root $PN_DIR/www/$n;
	}
EOF
		done
		echo "}"
	} >"$c"
	( gk_close_ctl_fds; exec nsenter --net="/proc/$PN_NS_PID/ns/net" -- \
		nginx -p "$PN_DIR/" -c "$c" -e "$PN_DIR/nginx-error.log" \
		>>"$PN_DIR/nginx.stderr" 2>&1 ) &
	PN_NGINX_PID=$!
	gk_track_pid "$PN_NGINX_PID"
	for ((i = 0; i < 100; i++)); do
		if ! kill -0 "$PN_NGINX_PID" 2>/dev/null; then
			pn_err "nginx exited:"
			tail -n 20 "$PN_DIR/nginx.stderr" "$PN_DIR/nginx-error.log" >&2
			return 1
		fi
		if pn_curl_direct -o /dev/null --max-time 2 \
		    https://github.com/index.html 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	pn_err "nginx did not answer https://github.com/ within 10 s"
	tail -n 20 "$PN_DIR/nginx-error.log" >&2
	return 1
}

# pn_sshd: OpenSSH on 192.0.2.10:22 (and [2001:db8::10]:22), key-only.
pn_sshd() {
	local s=$PN_DIR/ssh i
	mkdir -p "$s" || return 1
	chmod 700 "$s"
	if [ ! -d /run/sshd ]; then
		# sshd insists on its privilege separation directory. Our mount
		# namespace is private (unshare --mount; made rprivate again
		# here to be sure), so a tmpfs on /run is seen by this test
		# only.
		mount --make-rprivate / 2>/dev/null
		if ! mount -t tmpfs -o mode=755 gk-test-run /run; then
			pn_err "cannot mount a private tmpfs on /run for /run/sshd"
			return 1
		fi
		mkdir -p /run/sshd /run/lock && chmod 755 /run/sshd
	fi
	ssh-keygen -q -t ed25519 -N '' -C gk-test-host -f "$s/host_key" ||
		return 1
	ssh-keygen -q -t ed25519 -N '' -C gk-test-user -f "$s/id" || return 1
	cp "$s/id.pub" "$s/authorized_keys"
	printf 'github.com %s\n' "$(cut -d' ' -f1,2 "$s/host_key.pub")" \
		>"$s/known_hosts"
	cat >"$s/sshd_config" <<EOF
Port 22
ListenAddress ${PN_ADDR[github.com]}
ListenAddress [$PN_ADDR6_GITHUB]
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
UseDNS no
X11Forwarding no
LogLevel VERBOSE
EOF
	( gk_close_ctl_fds; exec nsenter --net="/proc/$PN_NS_PID/ns/net" -- \
		/usr/sbin/sshd -f "$s/sshd_config" -D -e \
		>>"$s/sshd.log" 2>&1 ) &
	PN_SSHD_PID=$!
	gk_track_pid "$PN_SSHD_PID"
	for ((i = 0; i < 50; i++)); do
		if ! kill -0 "$PN_SSHD_PID" 2>/dev/null; then
			pn_err "sshd exited:"
			tail -n 20 "$s/sshd.log" >&2
			return 1
		fi
		if "$PYTHON" - "${PN_ADDR[github.com]}" <<'EOF' 2>/dev/null
import socket, sys
s = socket.create_connection((sys.argv[1], 22), timeout=1)
s.settimeout(2)
sys.exit(0 if s.recv(64).startswith(b"SSH-2.0-") else 1)
EOF
		then
			return 0
		fi
		sleep 0.1
	done
	pn_err "sshd did not send its banner within 5 s"
	tail -n 20 "$s/sshd.log" >&2
	return 1
}

# pn_ssh ARGS...: the OpenSSH client with the test key and known_hosts
# (github.com's host key only), nothing from ~/.ssh or /etc/ssh.
pn_ssh() {
	HOME=$PN_DIR/home ssh -F /dev/null -i "$PN_DIR/ssh/id" \
		-o IdentitiesOnly=yes -o BatchMode=yes \
		-o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$PN_DIR/ssh/known_hosts" \
		-o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=10 \
		-o ServerAliveInterval=5 -o ServerAliveCountMax=2 \
		-o LogLevel=ERROR "$@"
}

# pn_git ARGS...: git with a private HOME and no system config.
pn_git() {
	HOME=$PN_DIR/home GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 \
		GIT_HTTP_LOW_SPEED_LIMIT=1000 GIT_HTTP_LOW_SPEED_TIME=15 \
		timeout 60 git "$@"
}

# pn_start: the whole internet. Returns non-zero (with a message) if any
# part fails.
pn_start() {
	PN_DIR=$GK_TMP/inet
	mkdir -p "$PN_DIR/home" || return 1
	pn_netns || { pn_err "netns/veth setup failed"; return 1; }
	pn_pki || return 1
	pn_content || return 1
	pn_nginx || return 1
	pn_sshd || return 1
}
