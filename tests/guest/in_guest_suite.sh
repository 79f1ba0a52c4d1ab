# shellcheck shell=bash
# shellcheck disable=SC2034  # GK_DETAIL: read by gk_check (lib.sh)
# in_guest_suite.sh: sourced by in_guest.sh once the package is
# installed. The suite's scripts that depend most on the kernel and the
# cgroup layout, run on this host as a person runs the suite: as root from
# a login session (su -l: user.slice/user-0.slice/session-N.scope), each
# script in namespaces of its own (lib.sh), against the package's
# gatekeeperd and gk-run and the test programs run_guest.sh put in
# $SHARE/bin:
#
#   nft_integration             tests/integration/test_plumb.sh
#   nft_transparent_integration tests/integration/test_plumb_transparent.sh
#   contain_integration         tests/integration/test_contain.sh
#   cage_limits_integration     tests/integration/test_cage_limits.sh
#
# One check per script (its exit status 0: every check of it passed; 77,
# a skip, is a failure here); a failed script's own FAIL lines and the end
# of its output follow it. Each is bounded (SUITE_BOUND seconds).

SUITE_DIR=$SHARE/tests/integration
SUITE_BIN=$SHARE/bin
SUITE_BOUND=${SUITE_BOUND:-900}

# suite_run NAME SCRIPT ARGS...: one script, as root in a login session.
suite_run() {
	local name=$1 script=$2 rc=0 t0=$SECONDS a cmd
	shift 2
	cmd="exec bash $SUITE_DIR/$script"
	for a in "$@"; do
		if [ ! -x "$a" ]; then
			gk_fail "$name: $a is missing (run_guest.sh was not given it)"
			return
		fi
		cmd+=" $a"
	done
	timeout -k 10 "$SUITE_BOUND" su -l root -s /bin/bash -c "$cmd" \
		>"$T/suite-$name.log" 2>&1 </dev/null || rc=$?
	GK_DETAIL="exit $rc after $((SECONDS - t0)) s: $(grep -c '^ok' \
		"$T/suite-$name.log") ok, $(grep -c '^FAIL' "$T/suite-$name.log") FAIL"
	gk_check "$name on this host: every check passed" test "$rc" = 0
	if [ "$rc" = 0 ]; then
		grep -E '^(info|note)' "$T/suite-$name.log" | sed 's/^/       /' |
			head -n 40
		return
	fi
	# its FAIL lines, each with its detail (the indented lines after it)
	awk '/^FAIL/ { p = 1; print; next } /^       / { if (p) print; next }
		{ p = 0 }' "$T/suite-$name.log" | sed 's/^/       /' | head -n 80
	echo "       ---- the end of its output"
	tail -n 40 "$T/suite-$name.log" | sed 's/^/       /'
}

info "the suite's scripts on $(uname -r), $(stat -fc %T /sys/fs/cgroup)" \
	"at /sys/fs/cgroup, systemd $(systemctl --version | sed -n '1s/[^0-9]*\([0-9]*\).*/\1/p')"
suite_run nft_integration test_plumb.sh "$SUITE_BIN/plumb_drive"
suite_run nft_transparent_integration test_plumb_transparent.sh \
	"$SUITE_BIN/plumb_drive"
suite_run contain_integration test_contain.sh /usr/bin/gk-run \
	/usr/sbin/gatekeeperd
suite_run cage_limits_integration test_cage_limits.sh /usr/sbin/gatekeeperd \
	"$SUITE_BIN/cage_flood"
