#!/usr/bin/env bash
#
# test_ctl_conns.sh: gatekeeperd's control-connections key against the
# real daemon: a bad value is a configuration error naming file:line; with
# the key at 4, four connections are held, the fifth gets one line naming
# the limit and the key (and the log says so once for a burst of
# refusals), a slot freed is usable again, and a reload (SIGHUP) that
# raises the key takes at once.
#
#   bash tests/integration/test_ctl_conns.sh build/gatekeeperd
#   meson test -C build ctl_conns_integration   (suite "integration")
#
# Runs as root in namespaces it creates itself (lib.sh): plumbing off, the
# resolver on 127.0.0.1:5354 (no cage, no upstream asked), metrics off.
# Prints one line per check, exits 1 if any check failed, 77 (skip) when
# not root or namespaces are unavailable.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_daemon_arg test_ctl_conns.sh "$@"
gk_require unshare ip timeout mkfifo "$PYTHON"

gk_enter_netns 77 "$GK_SELF" "$GKD"
gk_setup

T=$GK_TMP
SOCK=$T/run/control.sock
CONF=$T/gk.conf
LOG=$T/GKD_PID.log
GK_SUMMARY_LOG=$LOG
REFUSED='control connection refused'
echo "# gatekeeperd: $GKD"

# ---- bad values ------------------------------------------------------------
for v in 0 -1 1048577 lots 4x; do
	printf '# limits\ncontrol-connections = %s\n' "$v" >"$CONF"
	out=$(timeout 60 "$GKD" -n -c "$CONF" 2>&1 </dev/null)
	rc=$?
	GK_DETAIL="rc=$rc output: $out"
	gk_check "control-connections = $v: exit 2 naming file:line and the range" \
		eval '[ "$rc" = 2 ] && printf "%s" "$out" |
		grep -qF "$CONF:2: control-connections: '"'"'$v'"'"' is not a number of connections from 1 to 1048576, or auto"'
done
out=$(timeout 60 "$GKD" -n -c /dev/null --control-connections 0 2>&1 </dev/null)
rc=$?
GK_DETAIL="rc=$rc output: $out"
gk_check "--control-connections 0 on the command line: exit 2 naming it" \
	eval '[ "$rc" = 2 ] && printf "%s" "$out" | grep -q -- "--control-connections"'
printf 'control-connections = auto\n' >"$CONF"
gk_check "control-connections = auto is a valid configuration" \
	eval 'timeout 60 "$GKD" -n -c "$CONF" </dev/null | grep -qx "configuration OK"'

# ---- the limit --------------------------------------------------------------
printf 'control-connections = 4\n' >"$CONF"
gk_start_daemon GKD_PID "$GKD" -f -c "$CONF" --control "$SOCK" \
	--plumbing off --listen 127.0.0.1 --dns-port 5354 --metrics off \
	--upstream 127.0.0.1:5300 --log-level info
ready() { kill -0 "$GKD_PID" 2>/dev/null && [ -S "$SOCK" ]; }
gk_wait_for 600 ready || gk_abort "gatekeeperd did not start"
gk_check "the log names the limit at start" \
	grep -q "control connections: at most 4 at once" "$LOG"

# hold N: connections c1..cN, each answered (so each was accepted)
hold() {
	local i
	for ((i = 1; i <= $1; i++)); do
		gk_ctl_open "c$i" "$SOCK" || return 1
		gk_ctl_send "c$i" '{"op":"cage.list"}' | grep -q '"ok":true' || return 1
	done
}
gk_check "four connections are held" hold 4

out=$(gk_ctl_once '{"op":"cage.list"}' 2>&1)
GK_DETAIL="reply: $out"
gk_check "the fifth is refused with the limit and the key" \
	eval 'printf "%s" "$out" | grep -q "\"ok\":false" &&
	printf "%s" "$out" | grep -qF "4 control connections open, its limit (control-connections = 4;" &&
	printf "%s" "$out" | grep -qF "raise control-connections"'
gk_check "the log names the limit and the key" \
	eval 'grep "$REFUSED" "$LOG" | grep -qF "the limit (control-connections = 4;"'

t0=$(date +%s%N)
for ((i = 0; i < 30; i++)); do
	gk_ctl_once '{"op":"cage.list"}' >/dev/null 2>&1
done
secs=$((($(date +%s%N) - t0) / 1000000000))
n=$(grep -c "$REFUSED" "$LOG")
GK_DETAIL="$n lines: $(grep "$REFUSED" "$LOG" | tail -n 3)"
# a line a second at most: over the time the 31 refusals took (measured,
# so a slow host that takes longer may have more lines), fewer than 31
gk_check "31 refusals in $secs s make a few log lines (a second's at most), not 31" \
	eval '[ "$n" -ge 1 ] && [ "$n" -le $((secs + 3)) ] && [ "$n" -lt 31 ]'

gk_ctl_close c1
out=$(gk_ctl_once '{"op":"cage.list"}' 2>&1)
GK_DETAIL="reply: $out"
gk_check "a freed slot is usable again" eval 'printf "%s" "$out" | grep -q "\"ok\":true"'

# ---- a reload ---------------------------------------------------------------
printf 'control-connections = 6\n' >"$CONF"
kill -HUP "$GKD_PID"
gk_check "SIGHUP applies a new control-connections" \
	gk_wait_for 300 grep -q "control connections: at most 6 at once" "$LOG"
gk_ctl_open c1 "$SOCK"
gk_ctl_open c5 "$SOCK"
gk_ctl_open c6 "$SOCK"
gk_check "with 6, three more connections are held" \
	eval 'for c in c1 c5 c6; do gk_ctl_send "$c" "{\"op\":\"cage.list\"}" |
		grep -q "\"ok\":true" || exit 1; done'
out=$(gk_ctl_once '{"op":"cage.list"}' 2>&1)
GK_DETAIL="reply: $out"
gk_check "the seventh is refused, naming 6" \
	eval 'printf "%s" "$out" | grep -qF "(control-connections = 6;"'
gk_check "gatekeeperd still runs" kill -0 "$GKD_PID"

gk_finish
