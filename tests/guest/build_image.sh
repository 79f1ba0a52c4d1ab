#!/usr/bin/env bash
# build_image.sh IMGDIR [DEB]: a Debian 12 (bookworm) system for
# run_guest.sh to boot under qemu: IMGDIR/rootfs.ext4 (made with
# `mkfs.ext4 -d`, no loop mount), IMGDIR/vmlinuz and IMGDIR/initrd.img
# (booted with -kernel/-initrd). The image holds systemd as PID 1, the
# kernel, AppArmor, the programs the guest test drives (curl, git, nginx,
# dnsmasq, nftables...) and the runtime dependencies of the gatekeeper
# package, not the package itself: the test installs it inside the booted
# system, as an operator does. With DEB, the package's Depends (from
# `dpkg-deb -f DEB Depends`) are preinstalled too.
#
# The image boots into gk-guest.service: it mounts the 9p share "gkshare"
# on /share, runs /share/tests/guest/in_guest.sh (bounded), writes its
# output, the exit status and the journal into /share/result/ and powers
# the machine off.
#
# IMGDIR/inputs.sha256 is a hash of what the image is made from (the
# package list, the mirror, this script); an image whose hash matches is
# reused as it is (GK_GUEST_PRINT_HASH=1: print that hash, build nothing).
# GK_GUEST_MIRROR: another Debian mirror. Run as root (debootstrap, chroot).
set -euo pipefail

IMGDIR=${1:?usage: build_image.sh IMGDIR [DEB]}
DEB=${2:-}

say() { printf 'build_image: %s\n' "$*"; }
die() { printf 'build_image: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, chroot)"
for t in debootstrap mkfs.ext4 sha256sum; do
	command -v "$t" >/dev/null 2>&1 ||
		die "$t is not installed (bash deploy/install-deps.sh)"
done

# The Debian mirror apt uses here (debootstrap does not read apt's
# configuration): the first deb822 URIs: of a stanza whose Suites: names
# bookworm, else the first one-line "deb URL bookworm ..." entry.
mirror_of_apt() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
			/^[ \t]*$/ { if (u != "" && s ~ /(^| )bookworm( |$)/) { print u; exit }
				     u = ""; s = ""; next }
			/^URIs:/ { u = $2 }
			/^Suites:/ { $1 = ""; s = $0 " " }
			END { if (u != "" && s ~ /(^| )bookworm( |$)/) print u }
		' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1 == "deb" && $0 !~ /\[/ && $3 == "bookworm" { print $2 }
		     $1 == "deb" && $0 ~ /\[/ { for (i = 2; i <= NF; i++)
			if ($i ~ /\]$/) { if ($(i + 2) == "bookworm") print $(i + 1); break } }' "$f"
	done
}
MIRROR=${GK_GUEST_MIRROR:-$(mirror_of_apt | head -n 1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

PKGS=(
	# the system: kernel, systemd as PID 1 with logind sessions, udev
	# (loads the virtio and 9p modules), AppArmor
	linux-image-amd64 systemd systemd-sysv dbus libpam-systemd udev kmod
	apparmor adduser passwd login
	# what the package runs with and what the guest test drives
	bubblewrap curl git nginx-light dnsmasq-base openssl ca-certificates
	iproute2 nftables procps util-linux python3
	# what the suite's scripts run in the guest use besides
	bind9-dnsutils socat netcat-openbsd iputils-ping
	# /etc/protocols and /etc/services, as on any installed Debian host
	# (nft prints "tcp" where it would print 6 without them)
	netbase
	# the package's shared libraries
	libevent-2.1-7 libevent-core-2.1-7 libc-ares2 libpsl5 libjson-c5
	libnftnl11 libmnl0 libnl-3-200 libnl-route-3-200 libssl3 libseccomp2
	libsystemd0 libcap2 libc6
)
if [ -n "$DEB" ]; then
	[ -f "$DEB" ] || die "$DEB: no such package"
	# "a (>= 1), b | c, ${x}" -> a b: the first of each alternative,
	# without versions or architecture qualifiers.
	while read -r p; do
		[ -n "$p" ] && PKGS+=("$p")
	done < <(dpkg-deb -f "$DEB" Depends Pre-Depends | tr ',' '\n' |
		sed 's/^ *//; s/|.*//; s/(.*//; s/:any//; s/ *$//' |
		grep -E '^[a-z0-9][a-z0-9.+-]+$' || true)
fi
mapfile -t PKGS < <(printf '%s\n' "${PKGS[@]}" | sort -u)

# --- what goes into the image besides the packages (hashed) -----------
# gk-guest.service's program: mount the share, run the guest test, keep
# its output and the journal in the share, power off.
GUEST_RUN=$(cat <<'EOF'
#!/bin/bash
# gk-guest.service: mount the share, run the guest test, keep its output
# and the journal in the share, power off.
set -u
mkdir -p /share
if ! mountpoint -q /share; then
	modprobe 9pnet_virtio 2>/dev/null
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 gkshare /share ||
		{ echo "gk-guest: cannot mount the share" >/dev/console; systemctl poweroff; exit 1; }
fi
R=/share/result
mkdir -p "$R"
limit=$(cat /share/time-limit 2>/dev/null || echo 1000)
echo "gk-guest: running in_guest.sh (bound ${limit} s)" >/dev/console
start=$(date +%s)
timeout -k 10 "$limit" bash /share/tests/guest/in_guest.sh >"$R/in_guest.log" 2>&1
rc=$?
echo "$rc" >"$R/rc"
echo "$(( $(date +%s) - start ))" >"$R/seconds"
echo "gk-guest: in_guest.sh exit $rc after $(cat "$R/seconds") s" >/dev/console
journalctl -b --no-pager >"$R/journal.txt" 2>&1
journalctl -b -u gatekeeperd --no-pager >"$R/journal-gatekeeperd.txt" 2>&1
sync
umount /share 2>/dev/null
systemctl poweroff
EOF
)
GUEST_RUN+=$'\n'
GUEST_UNIT=$(cat <<'EOF'
[Unit]
Description=gatekeeper guest test
After=systemd-logind.service systemd-user-sessions.service dbus.service systemd-modules-load.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/gk-guest-run
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
)
GUEST_UNIT+=$'\n'
# The rest of the configuration below (hostname, fstab, modules, apt's
# sources): a new revision when it changes.
IMAGE_REV=1
# masked: what would only slow the boot down or start servers the test
# starts itself (nginx, in the test's own netns), timers, gettys
MASKED="nginx.service apt-daily.timer apt-daily-upgrade.timer
	e2scrub_all.timer fstrim.timer dpkg-db-backup.timer
	getty@tty1.service serial-getty@ttyS0.service systemd-timesyncd.service"

# What the image is made from: its hash names the cached image.
hash=$( {
	echo "mirror $MIRROR"
	printf 'pkg %s\n' "${PKGS[@]}"
	printf '%s\n' "$GUEST_RUN" "$GUEST_UNIT" "$MASKED" "$IMAGE_REV"
} | sha256sum | cut -d' ' -f1)

if [ "${GK_GUEST_PRINT_HASH:-}" = 1 ]; then
	echo "$hash"
	exit 0
fi
mkdir -p "$IMGDIR"
IMGDIR=$(cd "$IMGDIR" && pwd)
if [ -f "$IMGDIR/inputs.sha256" ] && [ -f "$IMGDIR/rootfs.ext4" ] &&
    [ -f "$IMGDIR/vmlinuz" ] && [ -f "$IMGDIR/initrd.img" ] &&
    [ "$(cat "$IMGDIR/inputs.sha256")" = "$hash" ]; then
	say "reusing $IMGDIR/rootfs.ext4 (inputs ${hash:0:12})"
	exit 0
fi

say "building from $MIRROR: ${#PKGS[@]} packages (inputs ${hash:0:12})"
rm -f "$IMGDIR/inputs.sha256" "$IMGDIR/rootfs.ext4" "$IMGDIR/vmlinuz" \
	"$IMGDIR/initrd.img"
ROOT="$IMGDIR/root"
rm -rf "$ROOT"
mkdir -p "$ROOT"
cleanup() {
	local m
	# anything debootstrap left mounted in the root (it unmounts its
	# own on success), deepest first
	for m in $(awk -v r="$ROOT" '$2 ~ "^" r "/" { print $2 }' /proc/mounts |
	    sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$ROOT"
}
trap cleanup EXIT

incl=$(IFS=,; echo "${PKGS[*]}")
start=$SECONDS
if ! timeout 1500 debootstrap --variant=minbase --include="$incl" \
    bookworm "$ROOT" "$MIRROR" >"$IMGDIR/debootstrap.log" 2>&1; then
	tail -n 30 "$IMGDIR/debootstrap.log" >&2
	[ -f "$ROOT/debootstrap/debootstrap.log" ] &&
		tail -n 30 "$ROOT/debootstrap/debootstrap.log" >&2
	die "debootstrap failed (log: $IMGDIR/debootstrap.log)"
fi
say "debootstrap: $((SECONDS - start)) s"

# --- the system's configuration ---------------------------------------
echo gkguest >"$ROOT/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 gkguest\n::1 localhost\n' \
	>"$ROOT/etc/hosts"
printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' >"$ROOT/etc/fstab"
# an empty resolv.conf: the guest has no network but the one the test
# makes for itself
: >"$ROOT/etc/resolv.conf"
# the modules the share needs, loaded early
printf '9p\n9pnet_virtio\n' >"$ROOT/etc/modules-load.d/gk-guest.conf"

printf '%s' "$GUEST_RUN" >"$ROOT/usr/local/sbin/gk-guest-run"
chmod 755 "$ROOT/usr/local/sbin/gk-guest-run"

printf '%s' "$GUEST_UNIT" >"$ROOT/etc/systemd/system/gk-guest.service"
mkdir -p "$ROOT/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/gk-guest.service \
	"$ROOT/etc/systemd/system/multi-user.target.wants/gk-guest.service"
for u in $MASKED; do
	ln -sf /dev/null "$ROOT/etc/systemd/system/$u"
done
# apt must not go looking for a network that is not there
rm -f "$ROOT"/etc/apt/sources.list.d/*
echo "deb $MIRROR bookworm main" >"$ROOT/etc/apt/sources.list"
chroot "$ROOT" apt-get clean >/dev/null 2>&1 || true

cp -L "$ROOT/boot/vmlinuz" "$IMGDIR/vmlinuz" 2>/dev/null ||
	cp "$(ls "$ROOT"/boot/vmlinuz-* | sort -V | tail -n 1)" "$IMGDIR/vmlinuz"
cp -L "$ROOT/boot/initrd.img" "$IMGDIR/initrd.img" 2>/dev/null ||
	cp "$(ls "$ROOT"/boot/initrd.img-* | sort -V | tail -n 1)" "$IMGDIR/initrd.img"
chmod 644 "$IMGDIR/vmlinuz" "$IMGDIR/initrd.img"

start=$SECONDS
timeout 600 mkfs.ext4 -q -F -L gkguest -d "$ROOT" "$IMGDIR/rootfs.ext4" 4G ||
	die "mkfs.ext4 -d failed"
say "mkfs.ext4: $((SECONDS - start)) s, $(du -sh --apparent-size "$ROOT" | cut -f1) of files"
echo "$hash" >"$IMGDIR/inputs.sha256"
say "image ready: $IMGDIR/rootfs.ext4"
