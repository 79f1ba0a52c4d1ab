#!/usr/bin/env bash
# Build gatekeeper's Debian package into OUTDIR:
#
#   bash deploy/build-deb.sh OUTDIR
#
# The source tree (the files git knows of and the untracked ones it does
# not ignore; without git, the tree minus build directories) is copied to
# a temporary directory with deploy/debian as debian/, built with
# `dpkg-buildpackage -b -us -uc`, and checked with lintian: any E: or W:
# line fails the build. The .deb, its -dbgsym .deb, the .changes and the
# .buildinfo are left in OUTDIR; the last line printed is the .deb's path. Packages the build
# needs (debhelper, dh-apparmor, lintian, the Build-Depends) are
# installed with apt-get when missing, which needs root. At most
# GK_DEB_TIMEOUT seconds (default 1800) for the build, 600 for lintian.
set -euo pipefail

if [ "$#" -ne 1 ] || [ -z "$1" ]; then
	echo "usage: build-deb.sh OUTDIR" >&2
	exit 2
fi
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
LIMIT=${GK_DEB_TIMEOUT:-1800}

say() { printf 'build-deb.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

export DEBIAN_FRONTEND=noninteractive
# apt_install PKG...: install those not installed yet (root only).
apt_install() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		    grep -q "ok installed" || missing+=("$p")
	done
	[ "${#missing[@]}" -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] ||
	    die "missing ${missing[*]}: run as root, or install them"
	say "installing ${missing[*]}"
	apt-get install -y -q --no-install-recommends "${missing[@]}" \
	    </dev/null >&2 || {
		apt-get update -q >&2
		apt-get install -y -q --no-install-recommends "${missing[@]}" \
		    </dev/null >&2
	}
}
apt_install debhelper dh-apparmor lintian dpkg-dev fakeroot

TMP=$(mktemp -d /tmp/gk-deb.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

VERSION=$(dpkg-parsechangelog -l "$SRC/deploy/debian/changelog" -S Version)
TREE=$TMP/gatekeeper-$VERSION
mkdir "$TREE"
if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# tracked and untracked files, not what .gitignore names (build*/);
	# tracked files deleted in the work tree are left out
	(cd "$SRC" && git ls-files -z --cached --others --exclude-standard |
	    while IFS= read -r -d '' f; do
		if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
	    done | tar --null -T - -cf -) | tar -C "$TREE" -xf -
else
	tar -C "$SRC" --exclude='./build*' --exclude=./debian \
	    --exclude=./.cache -cf - . | tar -C "$TREE" -xf -
fi
[ ! -e "$TREE/debian" ] || die "the source tree has a debian/ of its own"
cp -a "$SRC/deploy/debian" "$TREE/debian"

# the Build-Depends of debian/control
if ! (cd "$TREE" && dpkg-checkbuilddeps >/dev/null 2>&1); then
	[ "$(id -u)" -eq 0 ] || {
		(cd "$TREE" && dpkg-checkbuilddeps) || true
		die "unmet build dependencies: run as root, or install them"
	}
	say "installing the build dependencies"
	apt-get build-dep -y -q --no-install-recommends "$TREE" \
	    </dev/null >&2 || {
		apt-get update -q >&2
		apt-get build-dep -y -q --no-install-recommends "$TREE" \
		    </dev/null >&2
	}
fi

say "dpkg-buildpackage in $TREE"
start=$SECONDS
DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}"
export DEB_BUILD_OPTIONS
if ! (cd "$TREE" && timeout "$LIMIT" dpkg-buildpackage -b -us -uc \
    >"$TMP/build.log" 2>&1); then
	tail -n 40 "$TMP/build.log" >&2
	die "dpkg-buildpackage failed (the last 40 lines of its log above)"
fi
say "built in $((SECONDS - start)) s"

CHANGES=$(find "$TMP" -maxdepth 1 -name "gatekeeper_${VERSION}_*.changes")
DEB=$(find "$TMP" -maxdepth 1 -name "gatekeeper_${VERSION}_*.deb")
if [ -z "$CHANGES" ] || [ -z "$DEB" ]; then
	die "dpkg-buildpackage made no .deb and .changes in $TMP"
fi

# lintian on the .changes: the .deb and the .buildinfo
lint=$(timeout 600 lintian --tag-display-limit 0 "$CHANGES" 2>&1) ||
    [ $? -lt 124 ] || die "lintian did not finish: $lint"
if [ -n "$lint" ]; then
	printf '%s\n' "$lint" | sed 's/^/lintian: /' >&2
fi
if printf '%s\n' "$lint" | grep -qE '^[EW]: '; then
	die "lintian has errors or warnings (above)"
fi
say "lintian: no errors, no warnings"

# the .changes and the files it lists: the .deb, its -dbgsym .deb, the
# .buildinfo
cp "$CHANGES" "$OUT/"
awk '/^Files:/ { f = 1; next } /^[^ ]/ { f = 0 } f && NF == 5 { print $5 }' \
    "$CHANGES" | while IFS= read -r f; do
	cp "$TMP/$f" "$OUT/"
done
echo "$OUT/$(basename "$DEB")"
