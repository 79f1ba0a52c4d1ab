# shellcheck shell=bash
# shellcheck disable=SC2034  # PIDs set through printf -v (inet_lib.sh); used by the sourcing scripts
#
# proxy_net.sh: the hermetic "internet" for gatekeeper's proxy integration
# tests (test_proxy.sh, test_proxy_peek.sh). Source it after lib.sh, from
# inside the test namespaces (after gk_setup); it defines functions and
# variables only.
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

# shellcheck source=tests/integration/inet_lib.sh
. "$GK_LIB_DIR/inet_lib.sh"

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
	inet_netns pn_err PN_NS_PID gk-up gk-inet 198.18.0.1 198.18.0.2 loose \
		"${PN_ADDR[@]}" "$PN_ADDR6_GITHUB" || return 1
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
	local san="" n
	for n in github.com api.github.com gitlab.com evil.example; do
		san="${san:+$san,}DNS:$n"
	done
	inet_pki pn_err "$PN_DIR" "gatekeeper test CA" "$san"
}

# pn_content: the web roots, the random blob and the git repository
# (served as files: "dumb" HTTP, hence update-server-info).
pn_git_bare() { git -C "$1" update-server-info; }
pn_content() {
	inet_www "$PN_DIR" "$PN_BLOB_SIZE" "${!PN_ADDR[@]}" || return 1
	cp "$PN_DIR/www/github.com/blob.bin" "$PN_DIR/www/gitlab.com/blob.bin" ||
		return 1
	inet_git_repo pn_err "$PN_DIR" "$PN_DIR/www/github.com/acme/hello.git" \
		: pn_git_bare
}

# pn_nginx: nginx in the internet netns, :80 and :443 for every name.
pn_nginx() {
	local n sites=()
	for n in "${!PN_ADDR[@]}"; do
		sites+=("$n=${PN_ADDR[$n]}")
	done
	inet_nginx pn_err "$PN_DIR" "$PN_NS_PID" PN_NGINX_PID : "${sites[@]}"
}

# pn_sshd: OpenSSH on 192.0.2.10:22 (and [2001:db8::10]:22), key-only.
pn_sshd() {
	inet_sshd pn_err "$PN_DIR" "$PN_NS_PID" PN_SSHD_PID \
		"${PN_ADDR[github.com]}" "$PN_ADDR6_GITHUB" 22
}

# pn_ssh ARGS...: the OpenSSH client with the test key and known_hosts
# (github.com's host key only), nothing from ~/.ssh or /etc/ssh.
pn_ssh() {
	local o
	mapfile -t o < <(inet_ssh_opts "$PN_DIR" "$PN_DIR/ssh/id")
	# shellcheck disable=SC2029  # the remote command is meant as given
	HOME=$PN_DIR/home ssh "${o[@]}" "$@"
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
