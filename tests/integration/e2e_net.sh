# shellcheck shell=bash
# shellcheck disable=SC2034  # PIDs set through printf -v (inet_lib.sh); used by the sourcing scripts
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
#                    192.0.2.18                 api_x.github.com  nginx (a
#                                               name with '_': test_names.sh)
#                    192.0.2.30                 registry.npmjs.org nginx: npm's
#                                               registry (static packuments
#                                               and tarballs; test_pkg.sh)
#                    192.0.2.31                 pypi.org          nginx: PEP 503
#                                               simple index
#                    192.0.2.32                 files.pythonhosted.org nginx:
#                                               the index's files (a wheel)
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
# github.com, *.github.com, api_x.github.com (OpenSSL's wildcard match
# refuses a '_' in the label '*' stands for), evil.example,
# *.evil.example, registry.npmjs.org, pypi.org, files.pythonhosted.org.
# Clients trust it through GIT_SSL_CAINFO / CURL_CA_BUNDLE / SSL_CERT_FILE,
# node (npm, npx) through NODE_EXTRA_CA_CERTS and pip through PIP_CERT
# (en_ca_env).
#
# The registries (mkregistry.py writes them, nginx serves the files):
# registry.npmjs.org/<name> is the packument (index.json in a directory
# per package), /<name>/-/<name>-<ver>.tgz the tarball, for left-pad
# 1.3.0, gk-dep 1.0.0 and gk-hello 1.0.0 (depends on gk-dep; its bin
# gk-hello prints "hello from gk-hello"); npm's audit endpoint answers
# "{}" (no advisories). pypi.org/simple/gk-greet/ links to
# files.pythonhosted.org's gk_greet-1.0-py3-none-any.whl (#sha256=).
#
# Files under $EN_DIR ($GK_TMP/inet; world-readable so an unprivileged
# user and a sandbox can read them): ca.crt, blob.bin (1 MiB random; its
# sha256 in blob.sha256), git-head (the commit main points at), git-tree
# (`git ls-tree -r HEAD` of the repository), git-src/ (the work tree),
# echo.py, upstream.log (dnsmasq's query log), projects/npm-ci/ (a
# package.json and the package-lock.json `npm ci` installs from).

# shellcheck source=tests/integration/inet_lib.sh
. "$GK_LIB_DIR/inet_lib.sh"

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
	[api_x.github.com]=192.0.2.18
	[registry.npmjs.org]=192.0.2.30
	[pypi.org]=192.0.2.31
	[files.pythonhosted.org]=192.0.2.32
	[evil.example]=203.0.113.66
)
EN_ADDR6_GITHUB=2001:db8::10

en_err() { gk_err "e2e_net: $*"; }

# en_in CMD...: run CMD in the internet netns (our mount and PID namespace).
en_in() {
	nsenter --net="/proc/$EN_NS_PID/ns/net" -- "$@"
}

# en_ca_env: the environment that makes curl, git, OpenSSL, node (npm)
# and pip trust the test CA, one KEY=VAL per line.
en_ca_env() {
	printf '%s\n' "GIT_SSL_CAINFO=$EN_DIR/ca.crt" \
		"CURL_CA_BUNDLE=$EN_DIR/ca.crt" "SSL_CERT_FILE=$EN_DIR/ca.crt" \
		"NODE_EXTRA_CA_CERTS=$EN_DIR/ca.crt" "PIP_CERT=$EN_DIR/ca.crt"
}

# en_netns: the internet netns, the veth pair, addresses and routes.
en_netns() {
	inet_netns en_err EN_NS_PID up0 inet0 "$EN_HOST_ADDR" "$EN_INET_ADDR" \
		strict "${EN_ADDR[@]}" "$EN_RESOLVER" "$EN_OTHER_RESOLVER" \
		"$EN_ADDR6_GITHUB"
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
	local gh="DNS:github.com,DNS:*.github.com,DNS:api_x.github.com"
	local reg="DNS:registry.npmjs.org,DNS:pypi.org,DNS:files.pythonhosted.org"
	inet_pki en_err "$EN_DIR" "gatekeeper e2e test CA" \
		"$gh,DNS:evil.example,DNS:*.evil.example,$reg"
}

# en_content: web roots, the blob, the package registries, the git
# repository (bare, served by git-http-backend: no update-server-info, so
# dumb HTTP would not work).
en_git_files() {
	mkdir -p src
	printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' \
		>src/hello.c
}
en_git_bare() { git -C "$1" config http.receivepack false; }
en_content() {
	inet_www "$EN_DIR" "$EN_BLOB_SIZE" "${!EN_ADDR[@]}" || return 1
	cp "$EN_DIR/www/github.com/blob.bin" "$EN_DIR/blob.bin" || return 1
	"$PYTHON" "$GK_LIB_DIR/mkregistry.py" "$EN_DIR/www" \
		"$EN_DIR/projects" || { en_err "mkregistry.py failed"; return 1; }
	inet_git_repo en_err "$EN_DIR" "$EN_DIR/git/acme/hello.git" \
		en_git_files en_git_bare
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
	inet_bg EN_ECHO_PID "$EN_NS_PID" "$EN_DIR/echo-internet.log" \
		"$PYTHON" "$EN_DIR/echo.py" internet "$EN_ECHO_PORT"
	inet_bg EN_HOST_ECHO_PID "" "$EN_DIR/echo-host.log" \
		"$PYTHON" "$EN_DIR/echo.py" host "$EN_ECHO_PORT"
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
	inet_bg EN_DNS_PID "$EN_NS_PID" "$EN_DIR/dnsmasq.stderr" \
		dnsmasq --keep-in-foreground --conf-file=/dev/null \
		--no-resolv --no-hosts --port=53 \
		--listen-address="$EN_RESOLVER" \
		--listen-address="$EN_OTHER_RESOLVER" --bind-interfaces \
		--user=root --group=root --pid-file="$EN_DIR/dnsmasq.pid" \
		--log-queries --log-facility="$EN_DIR/upstream.log" \
		--local-ttl=300 --cache-size=1000 \
		--local=/github.com/ --local=/example/ --local=/npmjs.org/ \
		--local=/pypi.org/ --local=/pythonhosted.org/ \
		"--host-record=github.com,${EN_ADDR[github.com]},$EN_ADDR6_GITHUB" \
		"--host-record=api.github.com,${EN_ADDR[api.github.com]}" \
		"--host-record=codeload.github.com,${EN_ADDR[codeload.github.com]}" \
		"--host-record=api_x.github.com,${EN_ADDR[api_x.github.com]}" \
		"--host-record=registry.npmjs.org,${EN_ADDR[registry.npmjs.org]}" \
		"--host-record=pypi.org,${EN_ADDR[pypi.org]}" \
		"--host-record=files.pythonhosted.org,${EN_ADDR[files.pythonhosted.org]}" \
		"--host-record=evil.example,${EN_ADDR[evil.example]}" \
		--host-record=x.example,203.0.113.77 \
		--host-record=meta.example,169.254.169.254
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
	inet_bg EN_FCGI_PID "$EN_NS_PID" "$EN_DIR/fcgiwrap.log" \
		fcgiwrap -c 4 -s "unix:$EN_DIR/fcgiwrap.sock"
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
# git-http-backend, registry.npmjs.org a packument for /<name>.
en_nginx_site() {	# en_nginx_site NAME: the locations of some names
	en_secret_site "$1"
	case $1 in
	github.com | evil.example) ;;
	api.github.com)
		en_upload_location
		return 0
		;;
	registry.npmjs.org)
		en_nginx_npm
		return 0
		;;
	*) return 0 ;;
	esac
	en_git_location acme "$EN_DIR/git"
}
# en_git_location DIR ROOT [DIRECTIVE...]: a location serving /DIR/*.git
# from the bare repositories under ROOT through git-http-backend
# (fcgiwrap), each DIRECTIVE (e.g. "auth_basic corp;") first inside it.
en_git_location() {
	local dir=$1 root=$2 d
	shift 2
	printf '\t\tlocation ~ ^/%s/[^/]+\\.git(/.*)?$ {\n' "$dir"
	for d in "$@"; do
		printf '\t\t\t%s\n' "$d"
	done
	cat <<EOF
			fastcgi_pass unix:$EN_DIR/fcgiwrap.sock;
			fastcgi_param SCRIPT_FILENAME /usr/lib/git-core/git-http-backend;
			fastcgi_param GIT_PROJECT_ROOT $root;
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
}
# An upload sink: PUT /upload/NAME stores the body (WebDAV), answering
# 201 only once all of it arrived.
en_upload_location() {
	cat <<'EOF'
		location /upload/ {
			dav_methods PUT;
			create_full_put_path on;
		}
EOF
}
# The npm registry: /<name> is <name>/index.json (application/json);
# the bulk audit endpoint knows no advisories.
en_nginx_npm() {
	cat <<'EOF'
		location / {
			types {
				application/json json;
				application/octet-stream tgz;
				text/html html;
			}
			try_files $uri $uri/index.json =404;
		}
		location /-/npm/v1/security/ {
			default_type application/json;
			return 200 "{}\n";
		}
EOF
}
en_nginx() {
	local n sites=()
	for n in "${!EN_ADDR[@]}"; do
		sites+=("$n=${EN_ADDR[$n]}")
	done
	inet_nginx en_err "$EN_DIR" "$EN_NS_PID" EN_NGINX_PID en_nginx_site \
		"${sites[@]}"
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
	en_secret_content || return 1
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
	inet_sshd en_err "$EN_DIR" "$EN_NS_PID" EN_SSHD_PID \
		"${EN_ADDR[github.com]}" "$EN_ADDR6_GITHUB" "$EN_SSH_PORT"
}

# en_ssh_keys DIR USER: the user key, one copy per identity, DIR/keys-root/id
# and DIR/keys-user/id (USER's): ssh refuses a private key that is not its
# user's own or that others can read. (Not under ~/.ssh, which gk-run
# hides.)
en_ssh_keys() {
	local who
	for who in root user; do
		mkdir -p "$1/keys-$who"
		cp "$EN_DIR/ssh/id" "$1/keys-$who/id"
		chmod 600 "$1/keys-$who/id"
		[ "$who" = user ] && chown "$2:" "$1/keys-$who/id"
		chmod 755 "$1/keys-$who"
	done
}

# en_ssh_opts KEY: the OpenSSH client options for the test internet, one
# per line: KEY as the only identity, github.com's host key from
# $EN_DIR/ssh/known_hosts only (strict), nothing from ~/.ssh or /etc/ssh
# (use with -F /dev/null), no prompts, bounded waits.
en_ssh_opts() {
	inet_ssh_opts "$EN_DIR" "$1"
}

# ---------------------------------------------------------------------------
# Services behind a secret (added for test_broker.sh, the credential
# broker's test). Nothing changes unless EN_SECRET_BEARER is set before
# en_start: the other tests' internet is as it was. The secrets are the
# test's own, of [A-Za-z0-9_-] only (they stand in nginx's configuration
# between double quotes):
#
#   EN_SECRET_BEARER  https://api.github.com/bearer (and http://): 200
#                     "bearer ok" to "Authorization: Bearer <it>", else 401
#   EN_SECRET_APIKEY  https://api.github.com/apikey: 200 "apikey ok" to
#                     "X-Api-Key: <it>", else 401
#   EN_SECRET_GIT     https://github.com/corp/private.git: git smart HTTP
#                     (git-http-backend through fcgiwrap) behind Basic
#                     auth, user $EN_GIT_USER with this password (an
#                     htpasswd line made with openssl passwd -apr1);
#                     REMOTE_USER is passed on, so push (receive-pack)
#                     works for the authenticated user
#   EN_SECRET_NPM     https://registry.npmjs.org/@corp/...: the scope's
#                     packument (GET /@corp%2fhello, npm's spelling, which
#                     nginx decodes) and tarball, only to "Authorization:
#                     Bearer <it>", else 401; @corp/hello 1.0.0's index.js
#                     exports hello() -> "hello from @corp/hello"
#
# Files: $EN_DIR/corp/ (the private repository as inet_git_repo writes
# it: git-src, git-head, git-tree), $EN_DIR/git-corp/ (GIT_PROJECT_ROOT:
# corp/private.git, bare), $EN_DIR/git-htpasswd.

EN_SECRET_BEARER=${EN_SECRET_BEARER:-}
EN_SECRET_APIKEY=${EN_SECRET_APIKEY:-}
EN_SECRET_GIT=${EN_SECRET_GIT:-}
EN_SECRET_NPM=${EN_SECRET_NPM:-}
EN_GIT_USER=x-access-token
EN_CORP_REPO=corp/private.git

# en_secret_site NAME: the secret-guarded locations of NAME, if any.
en_secret_site() {
	[ -n "$EN_SECRET_BEARER" ] || return 0
	case $1 in
	api.github.com)
		cat <<EOF
		location = /bearer {
			default_type text/plain;
			if (\$http_authorization != "Bearer $EN_SECRET_BEARER") {
				return 401 "unauthorized\n";
			}
			return 200 "bearer ok\n";
		}
		location = /apikey {
			default_type text/plain;
			if (\$http_x_api_key != "$EN_SECRET_APIKEY") {
				return 401 "unauthorized\n";
			}
			return 200 "apikey ok\n";
		}
EOF
		;;
	github.com)
		en_git_location corp "$EN_DIR/git-corp" 'auth_basic "corp";' \
			"auth_basic_user_file $EN_DIR/git-htpasswd;" \
			"fastcgi_param REMOTE_USER \$remote_user;"
		;;
	registry.npmjs.org)
		cat <<EOF
		location ^~ /@corp/ {
			types { application/json json; application/octet-stream tgz; }
			if (\$http_authorization != "Bearer $EN_SECRET_NPM") {
				return 401 "{\"error\":\"unauthorized\"}\n";
			}
			try_files \$uri \$uri/index.json =404;
		}
EOF
		;;
	esac
}

en_corp_files() { printf 'corp: private\n' >CORP.md; }
en_corp_bare() { git -C "$1" config http.receivepack true; }

# en_secret_content: the htpasswd file, the private repository and the
# @corp scope's files (after en_content, before en_nginx).
en_secret_content() {
	local h
	[ -n "$EN_SECRET_BEARER" ] || return 0
	h=$(printf '%s\n' "$EN_SECRET_GIT" | openssl passwd -apr1 -stdin) || {
		en_err "openssl passwd -apr1 failed"; return 1
	}
	printf '%s:%s\n' "$EN_GIT_USER" "$h" >"$EN_DIR/git-htpasswd" || return 1
	chmod 644 "$EN_DIR/git-htpasswd"
	mkdir -p "$EN_DIR/corp" || return 1
	inet_git_repo en_err "$EN_DIR/corp" "$EN_DIR/git-corp/$EN_CORP_REPO" \
		en_corp_files en_corp_bare || return 1
	PYTHONDONTWRITEBYTECODE=1 "$PYTHON" - "$GK_LIB_DIR" \
	    "$EN_DIR/www/registry.npmjs.org" <<'EOF' || { en_err "the @corp scope's files"; return 1; }
import base64, hashlib, json, os, sys
sys.path.insert(0, sys.argv[1])
import mkregistry as m
www, name, ver = sys.argv[2], "@corp/hello", "1.0.0"
manifest = {"name": name, "version": ver, "main": "index.js",
            "description": "gatekeeper test package " + name, "license": "MIT"}
tgz = m.npm_tarball(manifest, {"index.js": "'use strict';\nexports.hello = "
                               "function hello() { return 'hello from " + name +
                               "'; };\n"})
fname = "hello-%s.tgz" % ver
url = "https://%s/%s/-/%s" % (m.NPM_HOST, name, fname)
m.write(os.path.join(www, name, "-", fname), tgz)
dist = {"tarball": url, "shasum": hashlib.sha1(tgz).hexdigest(),
        "integrity": "sha512-" + base64.b64encode(
            hashlib.sha512(tgz).digest()).decode()}
version = dict(manifest, _id="%s@%s" % (name, ver), dist=dist)
m.write(os.path.join(www, name, "index.json"), json.dumps(
    {"_id": name, "name": name, "dist-tags": {"latest": ver},
     "versions": {ver: version}, "time": {ver: "1985-10-26T08:15:00.000Z"}},
    indent=2) + "\n")
EOF
}
