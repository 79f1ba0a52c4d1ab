#!/usr/bin/env bash
#
# test_deb.sh: the Debian package as deploy/build-deb.sh builds it.
#
#   - build-deb.sh OUTDIR succeeds (dpkg-buildpackage, and lintian with no
#     E: or W: line: the script's own check), prints the .deb's path on
#     its last line, and leaves the .changes and the files it lists;
#   - `dpkg-deb -c`: gatekeeperd and gatekeeperctl (/usr/sbin), gk-run
#     (/usr/bin), the unit where Debian 12's dh_installsystemd handles it
#     (/lib/systemd/system), the sysusers entry, gk-run's AppArmor profile
#     (/etc/apparmor.d/gk-run), the four manual pages, the completions,
#     the presets, the example config; nothing in /usr/local;
#   - `dpkg-deb -I`: Depends names bubblewrap (gk-run's bwrap), procps
#     (the unit's /bin/kill), systemd-sysusers and the shared libraries;
#     the profile and the example are conffiles;
#   - the maintainer scripts: the group made (systemd-sysusers) before the
#     unit is enabled and started, restarted on upgrade and never stopped
#     for one, the profile loaded; purge removes /etc/gatekeeper,
#     /var/log/gatekeeper, /run/gatekeeper and group gatekeeper;
#   - the programs are built with Debian's hardening flags (PIE, RELRO,
#     BIND_NOW, fortified calls).
#
# Installing and purging the package is the guest test's job (a systemd
# machine); nothing here touches this machine's packages, but
# build-deb.sh installs what the build lacks (debhelper, lintian, the
# Build-Depends) when run as root.
#
#   bash tests/integration/test_deb.sh
#   meson test -C build deb_integration      (suites "integration", "slow")
#
# Prints "ok ..." / "FAIL ..." per check and a summary; exits 1 if any
# check failed, 77 (skipped) when not root and something the build
# needs is missing.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2034  # eval'd checks; GK_DETAIL: read by gk_check
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

SRC=$(cd "$(dirname "$GK_SELF")/../.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
	for p in debhelper dh-apparmor lintian dpkg-dev fakeroot; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		    grep -q "ok installed" || {
			echo "SKIP: $p is not installed (as root, build-deb.sh installs it)"
			exit 77
		}
	done
	(cd "$SRC/deploy" && dpkg-checkbuilddeps debian/control) >/dev/null 2>&1 || {
		echo "SKIP: build dependencies missing (as root, build-deb.sh installs them)"
		exit 77
	}
fi
gk_need test_deb.sh dpkg-deb readelf

T=$(mktemp -d /tmp/gk-deb-test.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
echo "# source: $SRC; temp $T"

# ---- build-deb.sh ---------------------------------------------------------------
start=$SECONDS
bash "$SRC/deploy/build-deb.sh" "$T/out" >"$T/stdout" 2>"$T/stderr"
rc=$?
echo "# build-deb.sh: rc=$rc in $((SECONDS - start)) s"
DEB=$(tail -n 1 "$T/stdout")
GK_DETAIL="rc=$rc last line: $DEB; $(tail -n 8 "$T/stderr")"
gk_check "build-deb.sh builds the package, lintian clean, and prints the .deb's path last" \
	eval '[ "$rc" = 0 ] && [ -f "$DEB" ] && [ "$(dirname "$DEB")" = "$T/out" ] &&
	    grep -qx "build-deb.sh: lintian: no errors, no warnings" "$T/stderr" &&
	    ! grep -qE "^lintian: [EW]: " "$T/stderr"'
[ -f "$DEB" ] || gk_abort "no .deb to look at"
CHANGES=$(find "$T/out" -name 'gatekeeper_*.changes')
missing=
while read -r f; do
	[ -f "$T/out/$f" ] || missing+=" $f"
done < <(awk '/^Files:/ { f = 1; next } /^[^ ]/ { f = 0 } f && NF == 5 { print $5 }' \
	"${CHANGES:-/dev/null}")
GK_DETAIL="in $T/out: $(cd "$T/out" && echo *) missing:${missing:- none}"
gk_check "... and leaves the .changes, the .buildinfo and the .debs it lists beside it" \
	eval '[ -n "$CHANGES" ] && [ -z "$missing" ] && ls "$T/out"/gatekeeper_*.buildinfo >/dev/null'

# ---- contents ---------------------------------------------------------------------
dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./|/|' >"$T/files"
want=(/usr/sbin/gatekeeperd /usr/sbin/gatekeeperctl /usr/bin/gk-run
	/lib/systemd/system/gatekeeperd.service
	/usr/lib/sysusers.d/gatekeeper.conf /etc/apparmor.d/gk-run
	/usr/share/man/man1/gk-run.1.gz /usr/share/man/man5/gatekeeperd.conf.5.gz
	/usr/share/man/man8/gatekeeperd.8.gz /usr/share/man/man8/gatekeeperctl.8.gz
	/usr/share/bash-completion/completions/gk-run
	/usr/share/bash-completion/completions/gatekeeperd
	/usr/share/bash-completion/completions/gatekeeperctl
	/usr/share/gatekeeper/presets/npm.allow
	/etc/gatekeeper/gatekeeperd.conf.example
	/usr/share/doc/gatekeeper/copyright)
missing=
for f in "${want[@]}"; do
	grep -qxF "$f" "$T/files" || missing+=" $f"
done
GK_DETAIL="missing:$missing"
gk_check "dpkg-deb -c: the programs, the unit, the sysusers entry, the AppArmor profile, manual pages, completions, presets, example" \
	test -z "$missing"
GK_DETAIL=$(grep -E '^/usr/local|^/usr/lib/systemd|^/tmp|^/build' "$T/files")
gk_check "... nothing under /usr/local, /usr/lib/systemd or a build path" \
	eval '! grep -qE "^/usr/local|^/usr/lib/systemd|^/tmp|^/build" "$T/files"'

# ---- control fields -----------------------------------------------------------------
dep=$(dpkg-deb -f "$DEB" Depends)
GK_DETAIL="Depends: $dep"
gk_check "dpkg-deb -I: Depends bubblewrap, procps, systemd-sysusers and the libraries" \
	eval 'printf "%s\n" "$dep" | tr "," "\n" | sed "s/^ *//" >"$T/deps" &&
	    grep -qx bubblewrap "$T/deps" && grep -qx procps "$T/deps" &&
	    grep -q "systemd-sysusers" "$T/deps" && grep -q "^libsystemd0" "$T/deps" &&
	    grep -q "^libnftnl" "$T/deps" && grep -q "^libevent" "$T/deps" &&
	    grep -q "^libpsl5" "$T/deps"'
info=$(dpkg-deb -I "$DEB")
GK_DETAIL=$(printf '%s\n' "$info" | head -12)
gk_check "... package gatekeeper, version 0.1.0, the Depends above shown by -I" \
	eval '[ "$(dpkg-deb -f "$DEB" Package)" = gatekeeper ] &&
	    [ "$(dpkg-deb -f "$DEB" Version)" = 0.1.0 ] &&
	    printf "%s\n" "$info" | grep -q "^ Depends: .*bubblewrap"'
mkdir "$T/ctl"
dpkg-deb -e "$DEB" "$T/ctl"
GK_DETAIL="conffiles: $(tr '\n' ' ' <"$T/ctl/conffiles" 2>&1)"
gk_check "... the AppArmor profile and the example config are conffiles" \
	eval 'grep -qx /etc/apparmor.d/gk-run "$T/ctl/conffiles" &&
	    grep -qx /etc/gatekeeper/gatekeeperd.conf.example "$T/ctl/conffiles"'

# ---- maintainer scripts ---------------------------------------------------------------
PI=$T/ctl/postinst
GK_DETAIL=$(grep -nE 'systemd-sysusers|deb-systemd|_dh_action|apparmor_parser' "$PI" 2>&1)
gk_check "postinst: group gatekeeper (systemd-sysusers) before the unit is enabled and started; restart on upgrade; the profile loaded" \
	eval 'u=$(grep -n "systemd-sysusers .*gatekeeper.conf" "$PI" | cut -d: -f1) &&
	    e=$(grep -n "deb-systemd-helper enable .gatekeeperd.service" "$PI" | cut -d: -f1) &&
	    [ -n "$u" ] && [ -n "$e" ] && [ "$u" -lt "$e" ] &&
	    grep -q "_dh_action=restart" "$PI" &&
	    grep -q "deb-systemd-invoke \$_dh_action .gatekeeperd.service" "$PI" &&
	    grep -q "apparmor_parser -r .*APP_PROFILE" "$PI"'
GK_DETAIL=$(grep -v '^#' "$T/ctl/prerm" 2>&1)
gk_check "prerm: gatekeeperd is stopped on remove only (an upgrade restarts it)" \
	eval 'grep -q "\"\$1\" = remove" "$T/ctl/prerm" &&
	    grep -q "deb-systemd-invoke stop .gatekeeperd.service" "$T/ctl/prerm" &&
	    ! grep -q "upgrade" "$T/ctl/prerm"'
PR=$T/ctl/postrm
GK_DETAIL=$(grep -v '^#' "$PR" 2>&1 | head -20)
gk_check "postrm purge: /etc/gatekeeper, /var/log/gatekeeper, /run/gatekeeper and group gatekeeper go, never failing" \
	eval 'grep -q "rm -rf /etc/gatekeeper /var/log/gatekeeper /run/gatekeeper" "$PR" &&
	    grep -q "groupdel gatekeeper .*|| true" "$PR" &&
	    grep -q "deb-systemd-helper purge .gatekeeperd.service" "$PR" &&
	    sh -n "$PR"'

# ---- hardening ------------------------------------------------------------------------
mkdir "$T/root"
dpkg-deb -x "$DEB" "$T/root"
bad=
for b in usr/sbin/gatekeeperd usr/sbin/gatekeeperctl usr/bin/gk-run; do
	f=$T/root/$b
	readelf -h "$f" 2>/dev/null | grep -q "Type: *DYN" || bad+=" $b:pie"
	readelf -lW "$f" 2>/dev/null | grep -q GNU_RELRO || bad+=" $b:relro"
	readelf -dW "$f" 2>/dev/null | grep -qE "BIND_NOW|FLAGS.*NOW" || bad+=" $b:bindnow"
	readelf --dyn-syms -W "$f" 2>/dev/null | grep -q "__[a-z_]*_chk" || bad+=" $b:fortify"
done
GK_DETAIL="lacking:$bad"
gk_check "gatekeeperd, gatekeeperctl, gk-run: PIE, RELRO, BIND_NOW, fortified calls" \
	test -z "$bad"

# shellcheck disable=SC2119  # no note for the summary
gk_finish
