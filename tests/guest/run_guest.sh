#!/usr/bin/env bash
# run_guest.sh: gatekeeper on a real Debian 12 host. Builds (or reuses) a
# bookworm image (build_image.sh), builds the gatekeeper package
# (deploy/build-deb.sh), boots the image under qemu (TCG: systemd 252 as
# PID 1, pure cgroup v2, Debian's 6.1 kernel with AppArmor) with a 9p
# share holding the package and in_guest.sh, which installs the package
# with dpkg -i, runs gk-run as a user in a login session against an
# internet of its own, restarts, reloads and stops the daemon under live
# cages, and purges the package. Prints the guest's results; on failure
# the guest's journal and the serial console's end too.
#
# Then, in the same guest, the suite's scripts that depend most on the
# kernel and the cgroup layout (nft, nft_transparent, contain,
# cage_limits) run against the package's gatekeeperd and gk-run, with the
# test programs given here:
#
#   bash tests/guest/run_guest.sh [path/to/plumb_drive path/to/cage_flood]
#
# (meson passes both; without them those scripts are not run, and the
# guest says so as a failure).
#
# Exit: 0 when every check in the guest passed, 1 otherwise, 77 when not
# root. Environment: GK_GUEST_IMGDIR (the image cache, default
# /var/tmp/gk-guest-image), GK_GUEST_KEEP=1 keeps the work directory,
# GK_GUEST_PARTS="suite" (for work on those scripts) runs only the install
# and the suite's scripts in the guest.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
IMGDIR=${GK_GUEST_IMGDIR:-/var/tmp/gk-guest-image}
BOUND=${GK_GUEST_BOUND:-2700}		# boot + test, seconds, then killed
GUEST_LIMIT=$((BOUND - 180))		# in_guest.sh's own bound in the guest

say() { printf '%s\n' "$*"; }
die() { printf 'run_guest: %s\n' "$*" >&2; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
	say "SKIP: needs root (debootstrap, chroot)"
	exit 77
fi
for t in debootstrap qemu-system-x86_64 qemu-img mkfs.ext4 meson ninja; do
	command -v "$t" >/dev/null 2>&1 ||
		die "$t is not installed (bash deploy/install-deps.sh)"
done

WORK=$(mktemp -d /var/tmp/gk-guest-run.XXXXXX)
QPID=
cleanup() {
	local rc=$?
	[ -n "$QPID" ] && kill -KILL "$QPID" 2>/dev/null
	if [ -n "${GK_GUEST_KEEP:-}" ]; then
		say "keeping $WORK"
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
SHARE="$WORK/share"
mkdir -p "$SHARE/result" "$SHARE/tests/guest" "$SHARE/tests/integration"

# --- the package -------------------------------------------------------
t0=$SECONDS
deb=
if [ -f "$SRC/deploy/build-deb.sh" ]; then
	say "== building the package (deploy/build-deb.sh)"
	if timeout 1500 bash "$SRC/deploy/build-deb.sh" "$WORK/deb" \
	    >"$WORK/build-deb.log" 2>&1; then
		deb=$(ls "$WORK"/deb/gatekeeper_*.deb 2>/dev/null | head -n 1)
		[ -n "$deb" ] ||
			say "deploy/build-deb.sh made no gatekeeper_*.deb in $WORK/deb"
	else
		tail -n 30 "$WORK/build-deb.log"
		say "deploy/build-deb.sh failed"
	fi
else
	say "no deploy/build-deb.sh in this tree"
fi
if [ -n "$deb" ]; then
	cp "$deb" "$SHARE/"
	say "package: $(basename "$deb") (Depends: $(dpkg-deb -f "$deb" Depends))"
else
	# No package: the files of `meson install`, unpacked over / in the
	# guest instead, so that the rest can run; the guest's check for
	# the package fails.
	say "== no package: a meson install tree instead (the guest test will fail)"
	timeout 900 meson setup "$WORK/build" "$SRC" -Dtests=disabled \
		--prefix=/usr --sysconfdir=/etc --localstatedir=/var \
		>"$WORK/build.log" 2>&1 &&
	timeout 900 ninja -C "$WORK/build" >>"$WORK/build.log" 2>&1 &&
	DESTDIR="$WORK/destdir" timeout 300 meson install -C "$WORK/build" \
		--no-rebuild >>"$WORK/build.log" 2>&1 ||
		{ tail -n 40 "$WORK/build.log"; die "the build failed"; }
	tar -C "$WORK/destdir" -czf "$SHARE/gatekeeper-install.tar.gz" .
fi
t_pkg=$((SECONDS - t0))

# --- the image ---------------------------------------------------------
t0=$SECONDS
say "== the image ($IMGDIR)"
timeout 1800 bash "$HERE/build_image.sh" "$IMGDIR" ${deb:+"$deb"} ||
	die "build_image.sh failed"
t_img=$((SECONDS - t0))

# --- the share: the guest test, the suite's scripts, their programs ----
cp "$HERE/in_guest.sh" "$HERE/in_guest_suite.sh" "$SHARE/tests/guest/"
cp "$SRC"/tests/integration/*.sh "$SRC"/tests/integration/*.py \
	"$SHARE/tests/integration/"
mkdir -p "$SHARE/bin"
for b in "$@"; do
	[ -x "$b" ] || die "$b: not an executable"
	cp "$b" "$SHARE/bin/"
done
echo "$GUEST_LIMIT" >"$SHARE/time-limit"
echo "${GK_GUEST_PARTS:-all}" >"$SHARE/parts"

# --- boot --------------------------------------------------------------
qemu-img create -q -f qcow2 -F raw -b "$IMGDIR/rootfs.ext4" \
	"$WORK/overlay.qcow2" || die "qemu-img create failed"
SERIAL="$WORK/serial.log"
say "== booting the guest (TCG, bound ${BOUND} s)"
t0=$SECONDS
timeout -k 10 "$BOUND" qemu-system-x86_64 \
	-machine q35 -accel tcg,thread=multi -smp 2 -m 3072 \
	-kernel "$IMGDIR/vmlinuz" -initrd "$IMGDIR/initrd.img" \
	-append 'root=/dev/vda rw console=ttyS0 panic=-1 systemd.show_status=1 net.ifnames=0' \
	-drive if=virtio,file="$WORK/overlay.qcow2",format=qcow2 \
	-virtfs local,path="$SHARE",mount_tag=gkshare,security_model=none \
	-nic none -display none -monitor none -serial file:"$SERIAL" \
	-no-reboot </dev/null >"$WORK/qemu.log" 2>&1 &
QPID=$!
qrc=0
wait "$QPID" || qrc=$?
QPID=
t_vm=$((SECONDS - t0))

# --- the results -------------------------------------------------------
R="$SHARE/result"
rc=$(cat "$R/rc" 2>/dev/null || echo none)
t_test=$(cat "$R/seconds" 2>/dev/null || echo "?")
say "== the guest's results"
if [ -f "$R/in_guest.log" ]; then
	cat "$R/in_guest.log"
else
	say "FAIL the guest wrote no results (qemu exit $qrc)"
fi
say "== times: package ${t_pkg} s, image ${t_img} s, guest ${t_vm} s" \
	"(boot $(cat "$R/boot-seconds" 2>/dev/null || echo '?') s," \
	"in_guest.sh ${t_test} s)"
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	say "FAIL the guest did not power off within ${BOUND} s: killed"
fi
if [ "$rc" != 0 ]; then
	if [ -f "$R/journal.txt" ]; then
		say "== the guest's journal (last 300 lines)"
		tail -n 300 "$R/journal.txt"
	fi
	if [ -f "$R/journal-gatekeeperd.txt" ]; then
		say "== journalctl -u gatekeeperd"
		cat "$R/journal-gatekeeperd.txt"
	fi
	say "== serial console (last 80 lines)"
	tail -n 80 "$SERIAL" 2>/dev/null | tr -d '\r'
	[ -s "$WORK/qemu.log" ] && { say "== qemu"; cat "$WORK/qemu.log"; }
	say "guest test FAILED (in_guest.sh exit $rc)"
	exit 1
fi
say "guest test passed"
exit 0
