#!/usr/bin/env bash
# Install every Debian 12 package gatekeeper needs to build, test and
# benchmark. Idempotent; safe to re-run. Must run as root.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: run as root (apt-get needs it)" >&2
	exit 2
fi

PKGS=(
	# build
	build-essential pkg-config meson ninja-build clang
	libfuzzer-14-dev libclang-rt-14-dev
	# libraries (the whole design, not only today's modules)
	libevent-dev libc-ares-dev libpsl-dev publicsuffix libjson-c-dev
	libnftnl-dev libmnl-dev libnl-3-dev libnl-route-3-dev libssl-dev
	libseccomp-dev libcmocka-dev libsystemd-dev
	# runtime pieces of the sandbox
	bubblewrap nftables iproute2
	# the unit's checks (systemd-analyze), the bash completions and the
	# manual pages' lint (test_service.sh)
	systemd bash-completion mandoc
	# gk-run's AppArmor profile parses (apparmor_parser -QT, test_service.sh;
	# nothing is loaded)
	apparmor
	# real peers for tests and benchmarks
	bind9-dnsutils dnsmasq-base dnsperf prometheus curl git openssl
	nginx-light openssh-client openssh-server python3 procps
	dante-server microsocks
	# nft plumbing integration test (cage-side probes)
	socat netcat-openbsd iputils-ping
	# end-to-end test (git smart HTTP behind nginx) and the gk-run benchmark
	fcgiwrap hyperfine
	# gk-run's local test: setpriv (run as nobody), strace (ptrace denied)
	util-linux strace
	# a real terminal for gk-run --ask's question (test_ask.sh)
	tmux
	# package managers in cages (test_pkg.sh)
	nodejs python3-pip python3-venv cargo
	# a Debian 12 guest booted under qemu with the package installed in it
	# (tests/guest/: debootstrap, mkfs.ext4 -d, TCG, a 9p share)
	debootstrap qemu-system-x86 qemu-utils e2fsprogs
	# the Debian package: deploy/build-deb.sh and test_deb.sh
	debhelper dh-apparmor lintian dpkg-dev fakeroot
)
# npm: Debian's, unless npm is there already (NodeSource's nodejs carries
# its own and conflicts with Debian's npm package).
command -v npm >/dev/null 2>&1 || PKGS+=(npm)

export DEBIAN_FRONTEND=noninteractive
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi
# The prometheus package starts a server we do not want; promtool is all we use.
if command -v systemctl >/dev/null 2>&1; then
	systemctl disable --now prometheus prometheus-node-exporter nginx danted \
		>/dev/null 2>&1 || true
fi
