# shellcheck shell=bash
# shellcheck disable=SC2016  # eval'd conditions are single-quoted on purpose
#
# e2e_net.sh: the hermetic "internet" for gatekeeper's end-to-end test
# (test_e2e.sh) and the gk-run benchmark. Source it after lib.sh, from
# inside the test namespaces (after gk_setup); it defines functions and
# variables only. Every address below is a documentation address
# (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32) or the
# cage range; nothing is sent anywhere else, and nothing can be: the
# namespaces have no link to the machine's own network.
#
# Topology (all of it lives in namespaces the script created; the machine's
# own interfaces, routes, nftables, mounts and resolv.conf are never
# touched):
#
#   machine (untouched)
#   └── test namespaces (lib.sh: unshare --net --mount --pid; the script is PID 1)
#       │
#       ├── "host" netns: stands in for the machine gatekeeperd runs on
#       │     lo      127.0.0.1   gatekeeperd metrics (127.0.0.1:9477)
#       │     up0     198.51.100.249/29, 2001:db8:ffff::1/64   (NOT "gk-*":
#       │             gatekeeperd's nftables rules match cage links by that
#       │             prefix, and the leak checks count them)
#       │             routes 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
#       │             2001:db8::/64 via the internet netns; no default route
#       │     /etc/resolv.conf  bind mount, this mount namespace only:
#       │             "nameserver 192.0.2.53" (the ISP's resolver)
#       │     host service  echo.py on 0.0.0.0:7777 and [::]:7777, TCP and UDP,
#       │             answers "host" (a cage must never reach it)
#       │     gatekeeperd  gateway 10.143.0.1 (IP_FREEBIND; on every gk-* link),
#       │             DNS :53, SOCKS5 :1080, HTTP :3128, nftables "inet gatekeeper"
#       │     gk-<id> ══ veth ══ eth0 10.143.X.Y/32   one cage netns per gk-run
#       │                       (made by gk-run, plumbed by gatekeeperd)
#       │          up0 ══ veth ══ inet0
#       │
#       └── internet netns (created with `unshare --net sleep`, entered with
#           nsenter --net=/proc/PID/ns/net: no /run/netns needed)
#             inet0  198.51.100.250/29, 2001:db8:ffff::2/64; default routes back
#             lo     192.0.2.10 + 2001:db8::10  github.com        nginx :80 :443
#                    192.0.2.11                 api.github.com    nginx
#                    192.0.2.12                 codeload.github.com nginx
#                    203.0.113.66               evil.example      nginx ("hello
#                                               from evil.example": the host
#                                               that must stay unreachable)
#                    192.0.2.53     dnsmasq, "the ISP's resolver": the host's
#                                   resolv.conf and gatekeeperd's --upstream
#                    198.51.100.53  the same dnsmasq, "another resolver" (a
#                                   stand-in for 8.8.8.8: a cage that asks it
#                                   directly must get gatekeeperd's answer)
#             echo.py on 0.0.0.0:7777, TCP and UDP, answers "internet"
#             sshd (en_sshd, not part of en_start; test_transparent.sh):
#                    OpenSSH on 192.0.2.10:22 and [2001:db8::10]:22,
#                    key-only, root login
#             fcgiwrap (unix socket) running git-http-backend for nginx:
#                    https://github.com/acme/hello.git over SMART HTTP
#                    (evil.example serves the same repository, so a leak
#                    would show as a clone that works)
#
# TLS: a test CA made here with openssl; one server certificate for
# github.com, *.github.com, evil.example, *.evil.example. Clients trust it
# through GIT_SSL_CAINFO / CURL_CA_BUNDLE / SSL_CERT_FILE (en_ca_env).
#
# Files under $EN_DIR ($GK_TMP/inet; world-readable so an unprivileged
# user and a sandbox can read them): ca.crt, blob.bin (1 MiB random; its
# sha256 in blob.sha256), git-head (the commit main points at), git-tree
# (`git ls-tree -r HEAD` of the repository), git-src/ (the work tree),
# echo.py, upstream.log (dnsmasq's query log).

EN_DIR=
EN_NS_PID=
EN_NGINX_PID=
EN_FCGI_PID=
EN_DNS_PID=
EN_ECHO_PID=
EN_HOST_ECHO_PID=
EN_BLOB_SIZE=$((1024 * 1024))

EN_HOST_ADDR=198.51.100.249	# up0, the host's address on the internet
EN_INET_ADDR=198.51.100.250	# inet0
EN_HOST_ADDR6=2001:db8:ffff::1
EN_RESOLVER=192.0.2.53		# the ISP's resolver (resolv.conf, --upstream)
EN_OTHER_RESOLVER=198.51.100.53	# "8.8.8.8"
EN_ECHO_PORT=7777

# name -> address of the web servers (all served by one nginx)
declare -A EN_ADDR=(
	[github.com]=192.0.2.10
	[api.github.com]=192.0.2.11
	[codeload.github.com]=192.0.2.12
	[evil.example]=203.0.113.66
)
EN_ADDR6_GITHUB=2001:db8::10

en_err() { gk_err "e2e_net: $*"; }

# en_in CMD...: run CMD in the internet netns (our mount and PID namespace).
en_in() {
	nsenter --net="/proc/$EN_NS_PID/ns/net" -- "$@"
}

# en_ca_env: the environment that makes curl, git and OpenSSL trust the
# test CA, one KEY=VAL per line.
en_ca_env() {
	printf '%s\n' "GIT_SSL_CAINFO=$EN_DIR/ca.crt" \
		"CURL_CA_BUNDLE=$EN_DIR/ca.crt" "SSL_CERT_FILE=$EN_DIR/ca.crt"
}

# en_netns: the internet netns, the veth pair, addresses and routes.
en_netns() {
	local i self ns a
	( gk_close_ctl_fds; exec unshare --net sleep 86400 ) &
	EN_NS_PID=$!
	gk_track_pid "$EN_NS_PID"
	self=$(readlink /proc/self/ns/net)
	for ((i = 0; i < 50; i++)); do
		ns=$(readlink "/proc/$EN_NS_PID/ns/net" 2>/dev/null) || ns=
		[ -n "$ns" ] && [ "$ns" != "$self" ] && break
		sleep 0.1
	done
	if [ "$i" -ge 50 ]; then
		en_err "the internet netns did not appear (unshare --net)"
		return 1
	fi
	en_in ip link set lo up || return 1
	ip link add up0 type veth peer name inet0 || return 1
	ip link set inet0 netns "$EN_NS_PID" || return 1

	ip addr add "$EN_HOST_ADDR/29" dev up0 || return 1
	ip -6 addr add "$EN_HOST_ADDR6/64" dev up0 nodad || return 1
	ip link set up0 up || return 1
	en_in ip addr add "$EN_INET_ADDR/29" dev inet0 || return 1
	en_in ip -6 addr add 2001:db8:ffff::2/64 dev inet0 nodad || return 1
	en_in ip link set inet0 up || return 1

	for a in "${EN_ADDR[@]}" "$EN_RESOLVER" "$EN_OTHER_RESOLVER"; do
		en_in ip addr add "$a/32" dev lo || return 1
	done
	en_in ip -6 addr add "$EN_ADDR6_GITHUB/128" dev lo nodad || return 1
	en_in ip route add default via "$EN_HOST_ADDR" || return 1
	en_in ip -6 route add default via "$EN_HOST_ADDR6" || return 1

	for a in 192.0.2.0/24 198.51.100.0/24 203.0.113.0/24; do
		ip route add "$a" via "$EN_INET_ADDR" || return 1
	done
	ip -6 route add 2001:db8::/64 via 2001:db8:ffff::2 || return 1
	return 0
}

# en_resolv: point this mount namespace's /etc/resolv.conf at the ISP's
# resolver (a bind mount: the machine's file is untouched, and sandboxes
# started from here see the same file).
en_resolv() {
	printf 'nameserver %s\noptions timeout:1 attempts:2\n' "$EN_RESOLVER" \
		>"$EN_DIR/resolv.conf" || return 1
	chmod 644 "$EN_DIR/resolv.conf"
	mount --make-rprivate / 2>/dev/null
	if ! mount --bind "$EN_DIR/resolv.conf" /etc/resolv.conf; then
		en_err "cannot bind-mount a private /etc/resolv.conf"
		return 1
	fi
	if ! grep -q "^nameserver $EN_RESOLVER\$" /etc/resolv.conf; then
		en_err "/etc/resolv.conf does not show the test resolver"
		return 1
	fi
}

# en_pki: a test CA and one server certificate for every name.
en_pki() {
	local d=$EN_DIR/pki
	mkdir -p "$d" || return 1
	(
		set -e
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
			-nodes -keyout "$d/ca.key" -out "$EN_DIR/ca.crt" -days 2 \
			-subj "/CN=gatekeeper e2e test CA" \
			-addext "basicConstraints=critical,CA:TRUE" \
			-addext "keyUsage=critical,keyCertSign,cRLSign"
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
			-nodes -keyout "$d/server.key" -out "$d/server.csr" \
			-subj "/CN=github.com" \
			-addext "subjectAltName=DNS:github.com,DNS:*.github.com,DNS:evil.example,DNS:*.evil.example" \
			-addext "extendedKeyUsage=serverAuth"
		openssl x509 -req -in "$d/server.csr" -CA "$EN_DIR/ca.crt" \
			-CAkey "$d/ca.key" -CAcreateserial -days 2 \
			-copy_extensions copy -out "$d/server.crt"
	) >"$d/openssl.log" 2>&1 || {
		en_err "openssl failed:"; cat "$d/openssl.log" >&2; return 1
	}
	chmod 644 "$EN_DIR/ca.crt"
}

# en_content: web roots, the blob, the git repository (bare, served by
# git-http-backend: no update-server-info, so dumb HTTP would not work).
en_content() {
	local w=$EN_DIR/www n src=$EN_DIR/git-src
	for n in "${!EN_ADDR[@]}"; do
		mkdir -p "$w/$n" || return 1
		printf 'hello from %s\n' "$n" >"$w/$n/index.html"
	done
	head -c "$EN_BLOB_SIZE" /dev/urandom >"$w/github.com/blob.bin" || return 1
	cp "$w/github.com/blob.bin" "$EN_DIR/blob.bin" || return 1
	sha256sum <"$EN_DIR/blob.bin" | awk '{print $1}' >"$EN_DIR/blob.sha256"
	(
		set -e
		export HOME=$EN_DIR/home GIT_CONFIG_NOSYSTEM=1
		mkdir -p "$HOME"
		git init -q -b main "$src"
		cd "$src"
		printf 'hello, gatekeeper %s\n' "$(date +%s%N)" >README
		head -c 65536 /dev/urandom | base64 >data.txt
		mkdir -p src
		printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' \
			>src/hello.c
		git add README data.txt src/hello.c
		git -c user.name=test -c user.email=test@example.invalid \
			commit -q -m "the test repository"
		git rev-parse HEAD >"$EN_DIR/git-head"
		git ls-tree -r HEAD >"$EN_DIR/git-tree"
		mkdir -p "$EN_DIR/git/acme"
		git clone -q --bare --no-local "$src" "$EN_DIR/git/acme/hello.git"
		git -C "$EN_DIR/git/acme/hello.git" config http.receivepack false
	) >"$EN_DIR/git.log" 2>&1 || {
		en_err "building the git repository failed:"
		cat "$EN_DIR/git.log" >&2
		return 1
	}
}

# en_echo_script: echo.py NAME PORT [READYFILE]: TCP (IPv4 and IPv6) sends
# "NAME\n" and closes; UDP answers "NAME:<datagram>". With READYFILE, writes
# "ready ADDR" there once listening (ADDR: the source address this host
# uses towards 10.143.0.1, i.e. a cage's own address).
en_echo_script() {
	cat >"$EN_DIR/echo.py" <<'EOF'
import os, selectors, socket, struct, sys
name, port = sys.argv[1].encode(), int(sys.argv[2])
# UDP replies leave from the address the datagram was sent to (IP_PKTINFO /
# IPV6_PKTINFO): a host with several addresses would otherwise answer from
# the route's source address, and a connected client would drop the reply.
IP_PKTINFO = getattr(socket, "IP_PKTINFO", 8)
sel = selectors.DefaultSelector()
for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
    for typ in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        try:
            s = socket.socket(fam, typ)
        except OSError:
            continue
        if fam == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((addr, port))
        except OSError:
            if fam == socket.AF_INET:
                raise
            s.close()
            continue
        if typ == socket.SOCK_STREAM:
            s.listen(64)
        elif fam == socket.AF_INET:
            s.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
        else:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVPKTINFO, 1)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, typ)
if len(sys.argv) > 3:
    me = "unknown"
    try:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.connect(("10.143.0.1", 9))
        me = u.getsockname()[0]
        u.close()
    except OSError:
        pass
    tmp = sys.argv[3] + ".tmp"
    with open(tmp, "w") as f:
        f.write("ready %s\n" % me)
    os.rename(tmp, sys.argv[3])

def udp(s):
    data, anc, _, peer = s.recvmsg(2048, socket.CMSG_SPACE(64))
    out = []
    for level, typ, d in anc:
        if level == socket.IPPROTO_IP and typ == IP_PKTINFO and len(d) >= 12:
            _, _, dst = struct.unpack("I4s4s", d[:12])
            out = [(socket.IPPROTO_IP, IP_PKTINFO,
                    struct.pack("I4s4s", 0, dst, bytes(4)))]
        elif level == socket.IPPROTO_IPV6 and typ == socket.IPV6_PKTINFO:
            out = [(socket.IPPROTO_IPV6, socket.IPV6_PKTINFO,
                    d[:16] + struct.pack("I", 0))]
    s.sendmsg([name + b":" + data], out, 0, peer)

while True:
    for key, _ in sel.select():
        s = key.fileobj
        try:
            if key.data == socket.SOCK_STREAM:
                c, _ = s.accept()
                c.settimeout(1)
                c.sendall(name + b"\n")
                c.close()
            else:
                udp(s)
        except OSError:
            pass
EOF
	chmod 644 "$EN_DIR/echo.py"
}

# en_echo_probe KIND HOST PORT: does an echo.py answer? Prints what came back.
en_echo_probe() {
	"$PYTHON" - "$@" <<'EOF'
import socket, sys
kind, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
try:
    if kind == "tcp":
        s = socket.create_connection((host, port), timeout=2)
        s.settimeout(2)
        print(s.recv(100).decode(errors="replace").strip())
    else:
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.settimeout(2)
        s.connect((host, port))
        s.send(b"ping")
        print(s.recv(100).decode(errors="replace").strip())
except OSError as e:
    print("error: %s" % e)
    sys.exit(1)
EOF
}

en_echo() {
	en_echo_script || return 1
	( gk_close_ctl_fds; exec nsenter --net="/proc/$EN_NS_PID/ns/net" -- \
		"$PYTHON" "$EN_DIR/echo.py" internet "$EN_ECHO_PORT" \
		>>"$EN_DIR/echo-internet.log" 2>&1 ) &
	EN_ECHO_PID=$!
	gk_track_pid "$EN_ECHO_PID"
	( gk_close_ctl_fds; exec "$PYTHON" "$EN_DIR/echo.py" host \
		"$EN_ECHO_PORT" >>"$EN_DIR/echo-host.log" 2>&1 ) &
	EN_HOST_ECHO_PID=$!
	gk_track_pid "$EN_HOST_ECHO_PID"
	if ! gk_wait_for 50 eval \
	    '[ "$(en_echo_probe tcp 192.0.2.10 "$EN_ECHO_PORT" 2>/dev/null)" = internet ] &&
	     [ "$(en_echo_probe tcp 127.0.0.1 "$EN_ECHO_PORT" 2>/dev/null)" = host ]'; then
		en_err "the echo services did not start:"
		cat "$EN_DIR/echo-internet.log" "$EN_DIR/echo-host.log" >&2
		return 1
	fi
}

# en_dns: dnsmasq in the internet netns on both resolver addresses.
en_dns() {
	local i
	: >"$EN_DIR/upstream.log"
	# shellcheck disable=SC2054  # commas are dnsmasq's
	( gk_close_ctl_fds; exec nsenter --net="/proc/$EN_NS_PID/ns/net" -- \
		dnsmasq --keep-in-foreground --conf-file=/dev/null \
		--no-resolv --no-hosts --port=53 \
		--listen-address="$EN_RESOLVER" \
		--listen-address="$EN_OTHER_RESOLVER" --bind-interfaces \
		--user=root --group=root --pid-file="$EN_DIR/dnsmasq.pid" \
		--log-queries --log-facility="$EN_DIR/upstream.log" \
		--local-ttl=300 --cache-size=1000 \
		--local=/github.com/ --local=/example/ \
		"--host-record=github.com,${EN_ADDR[github.com]},$EN_ADDR6_GITHUB" \
		"--host-record=api.github.com,${EN_ADDR[api.github.com]}" \
		"--host-record=codeload.github.com,${EN_ADDR[codeload.github.com]}" \
		"--host-record=evil.example,${EN_ADDR[evil.example]}" \
		--host-record=x.example,203.0.113.77 \
		>>"$EN_DIR/dnsmasq.stderr" 2>&1 ) &
	EN_DNS_PID=$!
	gk_track_pid "$EN_DNS_PID"
	for ((i = 0; i < 50; i++)); do
		if ! kill -0 "$EN_DNS_PID" 2>/dev/null; then
			en_err "dnsmasq exited:"
			cat "$EN_DIR/dnsmasq.stderr" >&2
			return 1
		fi
		if dig @"$EN_RESOLVER" github.com A +time=1 +tries=1 +short \
		    2>/dev/null | grep -qx "${EN_ADDR[github.com]}"; then
			return 0
		fi
		sleep 0.1
	done
	en_err "dnsmasq did not answer on $EN_RESOLVER within 5 s"
	return 1
}

# en_fcgiwrap: git-http-backend behind fcgiwrap, on a unix socket.
en_fcgiwrap() {
	local i
	rm -f "$EN_DIR/fcgiwrap.sock"
	( gk_close_ctl_fds; exec nsenter --net="/proc/$EN_NS_PID/ns/net" -- \
		fcgiwrap -c 4 -s "unix:$EN_DIR/fcgiwrap.sock" \
		>>"$EN_DIR/fcgiwrap.log" 2>&1 ) &
	EN_FCGI_PID=$!
	gk_track_pid "$EN_FCGI_PID"
	for ((i = 0; i < 50; i++)); do
		[ -S "$EN_DIR/fcgiwrap.sock" ] && return 0
		if ! kill -0 "$EN_FCGI_PID" 2>/dev/null; then
			en_err "fcgiwrap exited:"
			cat "$EN_DIR/fcgiwrap.log" >&2
			return 1
		fi
		sleep 0.1
	done
	en_err "fcgiwrap did not create its socket within 5 s"
	return 1
}

# en_nginx: nginx in the internet netns, :80 and :443 for every name;
# github.com and evil.example also serve /acme/*.git through
# git-http-backend.
en_nginx() {
	local c=$EN_DIR/nginx.conf n i
	mkdir -p "$EN_DIR/nginx-tmp" || return 1
	{
		cat <<EOF
daemon off;
master_process on;
worker_processes 1;
user root;
pid $EN_DIR/nginx.pid;
error_log $EN_DIR/nginx-error.log info;
events { worker_connections 512; }
http {
	access_log $EN_DIR/nginx-access.log;
	client_body_temp_path $EN_DIR/nginx-tmp/body;
	proxy_temp_path $EN_DIR/nginx-tmp/proxy;
	fastcgi_temp_path $EN_DIR/nginx-tmp/fastcgi;
	uwsgi_temp_path $EN_DIR/nginx-tmp/uwsgi;
	scgi_temp_path $EN_DIR/nginx-tmp/scgi;
	types { text/html html; text/plain txt; }
	default_type application/octet-stream;
	sendfile on;
	keepalive_timeout 30;
	client_max_body_size 64m;
	ssl_certificate $EN_DIR/pki/server.crt;
	ssl_certificate_key $EN_DIR/pki/server.key;
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
		for n in "${!EN_ADDR[@]}"; do
			cat <<EOF
	server {
		listen 80;
		listen [::]:80;
		listen 443 ssl;
		listen [::]:443 ssl;
		server_name $n ${EN_ADDR[$n]};
		root $EN_DIR/www/$n;
EOF
			case $n in github.com | evil.example) ;; *) false ;; esac && cat <<EOF
		location ~ ^/acme/[^/]+\.git(/.*)?\$ {
			fastcgi_pass unix:$EN_DIR/fcgiwrap.sock;
			fastcgi_param SCRIPT_FILENAME /usr/lib/git-core/git-http-backend;
			fastcgi_param GIT_PROJECT_ROOT $EN_DIR/git;
			fastcgi_param GIT_HTTP_EXPORT_ALL "";
			fastcgi_param PATH_INFO \$uri;
			fastcgi_param QUERY_STRING \$query_string;
			fastcgi_param REQUEST_METHOD \$request_method;
			fastcgi_param CONTENT_TYPE \$content_type;
			fastcgi_param CONTENT_LENGTH \$content_length;
			fastcgi_param REMOTE_ADDR \$remote_addr;
			fastcgi_param SERVER_PROTOCOL \$server_protocol;
			fastcgi_param GATEWAY_INTERFACE CGI/1.1;
			fastcgi_param HTTP_GIT_PROTOCOL \$http_git_protocol;
			fastcgi_read_timeout 60;
		}
EOF
			echo "	}"
		done
		echo "}"
	} >"$c"
	( gk_close_ctl_fds; exec nsenter --net="/proc/$EN_NS_PID/ns/net" -- \
		nginx -p "$EN_DIR/" -c "$c" -e "$EN_DIR/nginx-error.log" \
		>>"$EN_DIR/nginx.stderr" 2>&1 ) &
	EN_NGINX_PID=$!
	gk_track_pid "$EN_NGINX_PID"
	for ((i = 0; i < 100; i++)); do
		if ! kill -0 "$EN_NGINX_PID" 2>/dev/null; then
			en_err "nginx exited:"
			tail -n 20 "$EN_DIR/nginx.stderr" "$EN_DIR/nginx-error.log" >&2
			return 1
		fi
		if curl -sf --noproxy '*' --max-time 2 --cacert "$EN_DIR/ca.crt" \
		    --resolve "github.com:443:${EN_ADDR[github.com]}" \
		    -o /dev/null https://github.com/index.html 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	en_err "nginx did not answer https://github.com/ within 10 s"
	tail -n 20 "$EN_DIR/nginx-error.log" >&2
	return 1
}

# en_start: the whole internet. Returns non-zero (with a message) if any
# part fails.
en_start() {
	EN_DIR=$GK_TMP/inet
	mkdir -p "$EN_DIR/home" || return 1
	chmod 755 "$EN_DIR"
	en_netns || { en_err "netns/veth setup failed"; return 1; }
	en_resolv || return 1
	en_pki || return 1
	en_content || return 1
	en_dns || return 1
	en_echo || return 1
	en_fcgiwrap || return 1
	en_nginx || return 1
}

# ---------------------------------------------------------------------------
# OpenSSH on github.com (added for test_transparent.sh; not part of
# en_start, so test_e2e.sh's internet is unchanged). Call en_sshd after
# en_start.
#
#   sshd   OpenSSH on github.com's addresses (192.0.2.10:22 and
#          [2001:db8::10]:22), key-only (no passwords, no PAM, no
#          keyboard-interactive), a throwaway ed25519 host key and user
#          key; it runs as root in the internet netns, so `root@github.com`
#          is the login and the command runs there (it can read $EN_DIR).
#          sshd insists on /run/sshd: when the machine has none, a tmpfs is
#          mounted on /run in the test's private mount namespace (the
#          machine's /run is untouched; run this after en_resolv, which
#          bind-mounts /etc/resolv.conf, a regular file here).
#
# Files under $EN_DIR/ssh (world-readable directory): id and id.pub (the
# user key; id is mode 0600 and root's: copy it, chowned, for another
# user, since ssh refuses a private key that others can read),
# known_hosts ("github.com <host key>"), sshd_config, sshd.log, and the
# host key (0600).

EN_SSHD_PID=
EN_SSH_PORT=22

en_sshd() {
	local s=$EN_DIR/ssh i
	mkdir -p "$s" || return 1
	chmod 755 "$s"
	command -v /usr/sbin/sshd >/dev/null 2>&1 || {
		en_err "/usr/sbin/sshd is not installed (openssh-server; bash deploy/install-deps.sh)"
		return 1
	}
	if [ ! -d /run/sshd ]; then
		# Our mount namespace is private (lib.sh: unshare --mount; made
		# rprivate again here to be sure): the tmpfs is seen by this
		# test only.
		mount --make-rprivate / 2>/dev/null
		if ! mount -t tmpfs -o mode=755 gk-test-run /run; then
			en_err "cannot mount a private tmpfs on /run for /run/sshd"
			return 1
		fi
		mkdir -p /run/sshd /run/lock && chmod 755 /run/sshd
	fi
	rm -f "$s/host_key" "$s/host_key.pub" "$s/id" "$s/id.pub"
	ssh-keygen -q -t ed25519 -N '' -C gk-e2e-host -f "$s/host_key" ||
		return 1
	ssh-keygen -q -t ed25519 -N '' -C gk-e2e-user -f "$s/id" || return 1
	cp "$s/id.pub" "$s/authorized_keys"
	chmod 644 "$s/authorized_keys" "$s/id.pub" "$s/host_key.pub"
	printf 'github.com %s\n' "$(cut -d' ' -f1,2 "$s/host_key.pub")" \
		>"$s/known_hosts"
	chmod 644 "$s/known_hosts"
	cat >"$s/sshd_config" <<EOF
Port $EN_SSH_PORT
ListenAddress ${EN_ADDR[github.com]}
ListenAddress [$EN_ADDR6_GITHUB]
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
	( gk_close_ctl_fds; exec nsenter --net="/proc/$EN_NS_PID/ns/net" -- \
		/usr/sbin/sshd -f "$s/sshd_config" -D -e \
		>>"$s/sshd.log" 2>&1 ) &
	EN_SSHD_PID=$!
	gk_track_pid "$EN_SSHD_PID"
	for ((i = 0; i < 50; i++)); do
		if ! kill -0 "$EN_SSHD_PID" 2>/dev/null; then
			en_err "sshd exited:"
			tail -n 20 "$s/sshd.log" >&2
			return 1
		fi
		if "$PYTHON" - "${EN_ADDR[github.com]}" "$EN_SSH_PORT" <<'EOF' 2>/dev/null
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
	en_err "sshd did not send its banner within 5 s"
	tail -n 20 "$s/sshd.log" >&2
	return 1
}

# en_ssh_opts KEY: the OpenSSH client options for the test internet, one
# per line: KEY as the only identity, github.com's host key from
# $EN_DIR/ssh/known_hosts only (strict), nothing from ~/.ssh or /etc/ssh
# (use with -F /dev/null), no prompts, bounded waits.
en_ssh_opts() {
	printf '%s\n' -F /dev/null -i "$1" -o IdentitiesOnly=yes \
		-o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o "UserKnownHostsFile=$EN_DIR/ssh/known_hosts" \
		-o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=10 \
		-o ServerAliveInterval=5 -o ServerAliveCountMax=2 \
		-o LogLevel=ERROR
}
