#!/usr/bin/env bash
#
# test_service.sh: gatekeeperd as an operator installs and runs it.
#
#   - `meson install` into a DESTDIR puts the example config beside the
#     file gatekeeperd reads by default (its --help names it), the unit,
#     the sysusers entry, the three programs and the presets; the example
#     passes `gatekeeperd -n`; the manual pages (gk-run.1, gatekeeperd.8,
#     gatekeeperd.conf.5, gatekeeperctl.8) are installed and `mandoc
#     -Tlint -W warning` has nothing to say about them; gk-run's AppArmor
#     profile is in /etc/apparmor.d and `apparmor_parser -QT` (parse only,
#     nothing loaded) accepts it when apparmor_parser is installed;
#   - the installed bash completions offer the programs' options and the
#     values options take, and gatekeeperctl's commands (bash-completion's
#     library loaded);
#   - `gatekeeperd -n` fails (exit 2, naming it) on an audit log whose
#     directory does not exist, and passes once it does;
#   - the installed unit: `systemd-analyze verify` has nothing to say,
#     `systemd-analyze security --offline` rates it 4.0 or lower, and it
#     is Type=notify;
#   - the notify protocol, read from a real NOTIFY_SOCKET: READY=1 once
#     the control socket answers, RELOADING=1 (with MONOTONIC_USEC) and
#     READY=1 around SIGHUP, STOPPING=1 at SIGTERM; gatekeeperd running
#     under the unit's SystemCallFilter= (syscall_jail, a seccomp filter
#     of exactly the calls systemd's group holds);
#   - the installed gatekeeperctl against that gatekeeperd: list (a cage
#     held open, its id completed by the bash completion), stats, --json,
#     destroy; exit 3 and "is gatekeeperd running?" without a socket.
#
#   bash tests/integration/test_service.sh build/gatekeeperd
#   meson test -C build service_integration      (suite "integration")
#
# Runs as root in a network namespace it creates itself (lib.sh), with
# gatekeeperd on loopback ports only. Prints "ok ..." / "FAIL ..." per
# check and a summary; exits 1 if any check failed or anything needed is
# missing (never a silent skip).

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2034  # eval'd checks; GK_DETAIL: read by gk_check
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_daemon_arg test_service.sh "$@"
gk_need test_service.sh meson systemd-analyze unshare ip mandoc "$PYTHON"
gk_enter_netns 77 "$GK_SELF" "$GKD"
gk_setup

T=$GK_TMP
if [ -z "$T" ] || [ ! -d "$T" ]; then
	gk_abort "the temp directory exists (lib.sh: GK_TMP)"
fi
BUILD=$(dirname "$GKD")
echo "# gatekeeperd: $GKD"
echo "# build: $BUILD; temp $T"

# ---- meson install ----------------------------------------------------------------
DEST=$T/dest
out=$(DESTDIR=$DEST meson install -C "$BUILD" --no-rebuild --quiet 2>&1)
rc=$?
GK_DETAIL="rc=$rc $(printf '%s' "$out" | tail -3 | tr '\n' ' ')"
gk_check "meson install into a DESTDIR succeeds" test "$rc" = 0
CONFPATH=$("$GKD" --help 2>&1 | grep -oE '[^ ]*gatekeeperd\.conf\b' | head -1)
UNIT=$(find "$DEST" -name gatekeeperd.service | head -1)
IGKD=$(find "$DEST" -name gatekeeperd -type f -perm -u+x | head -1)
GK_DETAIL="default config: ${CONFPATH:-?}; installed: $(cd "$DEST" && find . -type f | tr '\n' ' ')"
gk_check "the example config is installed beside the file gatekeeperd reads ($CONFPATH)" \
	eval '[ -n "$CONFPATH" ] && [ -f "$DEST$(dirname "$CONFPATH")/gatekeeperd.conf.example" ]'
ICTL=$(find "$DEST" -path "*/sbin/gatekeeperctl" -type f -perm -u+x | head -1)
gk_check "... and the unit, the sysusers entry, gatekeeperd, gk-run, gatekeeperctl and the presets" \
	eval '[ -f "$UNIT" ] && [ -n "$IGKD" ] && [ -n "$(find "$DEST" -path "*sysusers.d/gatekeeper.conf")" ] &&
	    [ -n "$(find "$DEST" -name gk-run -type f)" ] && [ -n "$ICTL" ] &&
	    [ -n "$(find "$DEST" -name npm.allow)" ]'
out=$("$IGKD" -n -c "$DEST$(dirname "$CONFPATH")/gatekeeperd.conf.example" 2>&1)
rc=$?
GK_DETAIL="rc=$rc $out"
gk_check "the installed example passes gatekeeperd -n" \
	eval '[ "$rc" = 0 ] && [ "$out" = "configuration OK" ]'
MAN1=$(find "$DEST" -path "*/man1/gk-run.1" -type f | head -1)
MAN5=$(find "$DEST" -path "*/man5/gatekeeperd.conf.5" -type f | head -1)
MAN8=$(find "$DEST" -path "*/man8/gatekeeperd.8" -type f | head -1)
MANC=$(find "$DEST" -path "*/man8/gatekeeperctl.8" -type f | head -1)
lint=
for m in "$MAN1" "$MAN5" "$MAN8" "$MANC"; do
	[ -n "$m" ] || continue
	out=$(mandoc -Tlint -W warning "$m" 2>&1) || out="$out (rc=$?)"
	[ -z "$out" ] || lint+="$out"$'\n'
done
GK_DETAIL="gk-run.1: ${MAN1:-missing}; gatekeeperd.conf.5: ${MAN5:-missing}; gatekeeperd.8: ${MAN8:-missing}; gatekeeperctl.8: ${MANC:-missing}; lint: $(printf '%s' "$lint" | head -3 | tr '\n' ' ')"
gk_check "the manual pages are installed (man1, man5, man8) and mandoc -Tlint -W warning has nothing to say" \
	eval '[ -n "$MAN1" ] && [ -n "$MAN5" ] && [ -n "$MAN8" ] && [ -n "$MANC" ] && [ -z "$lint" ]'

# ---- gk-run's AppArmor profile, as installed -----------------------------------------
# Parsed only (-Q: nothing is loaded into the kernel; -T -K: no cache read
# or written), with the host's apparmor_parser when there is one.
AAPROF=$(find "$DEST" -path "*/apparmor.d/gk-run" -type f | head -1)
IGKRUN=$(find "$DEST" -path "*/bin/gk-run" -type f | head -1)
IGKRUN=${IGKRUN#"$DEST"}
if command -v apparmor_parser >/dev/null 2>&1; then
	out=$(apparmor_parser -QT -K "$AAPROF" 2>&1)
	rc=$?
	GK_DETAIL="rc=$rc profile ${AAPROF:-missing}: $(printf '%s' "$out" | grep -v 'Cache read/write disabled' | head -3 | tr '\n' ' ')"
	gk_check "gk-run's AppArmor profile is installed in /etc/apparmor.d and apparmor_parser accepts it (parse only)" \
		eval '[ "$AAPROF" = "$DEST/etc/apparmor.d/gk-run" ] && [ "$rc" = 0 ]'
else
	gk_check "gk-run's AppArmor profile is installed in /etc/apparmor.d" \
		test "$AAPROF" = "$DEST/etc/apparmor.d/gk-run"
	gk_info "apparmor_parser is missing: the profile was not parsed"
fi
case $IGKRUN in
/usr/bin/gk-run | /usr/local/bin/gk-run) ;;
*) gk_info "gk-run is installed as $IGKRUN: the AppArmor profile attaches to /usr/bin/gk-run and /usr/local/bin/gk-run only" ;;
esac

# ---- bash completions, as installed -----------------------------------------------------
# complete_with FILE FUNC LINE: what FUNC offers for the command line LINE
# (the last word is the one being completed), with bash-completion's
# library loaded as an interactive shell would.
complete_with() {
	local file=$1 fn=$2 line=$3
	PATH="$(dirname "$GKD")/spawner:$(dirname "$GKD"):$(dirname "${ICTL:-/}"):$PATH" bash -c '
		. /usr/share/bash-completion/bash_completion
		. "$1"
		read -ra COMP_WORDS <<<"$3"
		[[ $3 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$3
		COMP_POINT=${#COMP_LINE}
		"$2" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" \
		    "${COMP_WORDS[COMP_CWORD - 1]}"
		echo "${COMPREPLY[*]}"' _ "$file" "$fn" "$line" 2>&1
}
CGK=$(find "$DEST" -path "*bash-completion/completions/gk-run" | head -1)
CGD=$(find "$DEST" -path "*bash-completion/completions/gatekeeperd" | head -1)
a=$(complete_with "$CGK" _gk_run "gk-run --as")
b=$(complete_with "$CGK" _gk_run "gk-run --net ")
c=$(complete_with "$CGK" _gk_run "gk-run --preset np")
d=$(complete_with "$CGD" _gatekeeperd "gatekeeperd --log-level ")
e=$(complete_with "$CGD" _gatekeeperd "gatekeeperd --ttl-c")
CCTL=$(find "$DEST" -path "*bash-completion/completions/gatekeeperctl" | head -1)
f=$(complete_with "$CCTL" _gatekeeperctl "gatekeeperctl de")
g=$(complete_with "$CCTL" _gatekeeperctl "gatekeeperctl denials --f")
h=$(complete_with "$CCTL" _gatekeeperctl "gatekeeperctl --js")
GK_DETAIL="--as: [$a] --net: [$b] --preset np: [$c] --log-level: [$d] --ttl-c: [$e] gatekeeperctl de: [$f] denials --f: [$g] --js: [$h]"
gk_check "the installed bash completions offer gk-run's, gatekeeperd's and gatekeeperctl's options, values and commands" \
	eval '[ -f /usr/share/bash-completion/bash_completion ] &&
	    [ "$a" = "--ask --ask-save --ask-timeout" ] && [ "$b" = "gated none host" ] &&
	    [ "$c" = "npm npm-read" ] && [ "$d" = "error warn info debug" ] && [ "$e" = "--ttl-cap" ] &&
	    [ "$f" = "denials destroy deny" ] && [ "$g" = "--follow" ] && [ "$h" = "--json" ]'

# ---- -n and the audit log's directory --------------------------------------------------
printf 'audit-log = %s\n' "$T/logs/audit.log" >"$T/audit.conf"
out=$("$GKD" -n -c "$T/audit.conf" 2>&1)
rc=$?
GK_DETAIL="rc=$rc $out"
gk_check "gatekeeperd -n: an audit-log whose directory does not exist: exit 2, naming it" \
	eval '[ "$rc" = 2 ] && printf "%s" "$out" | grep -qF "its directory $T/logs"'
mkdir "$T/logs"
out=$("$GKD" -n -c "$T/audit.conf" 2>&1)
rc=$?
GK_DETAIL="rc=$rc $out"
gk_check "... and once it exists: configuration OK" \
	eval '[ "$rc" = 0 ] && [ "$out" = "configuration OK" ]'

# ---- the unit --------------------------------------------------------------------------
# verify wants ExecStart's binary where the unit says: the installed one.
ABS=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$UNIT")
sed "s|^ExecStart=$ABS|ExecStart=$IGKD|" "$UNIT" >"$T/gatekeeperd.service"
# (what it says of the machine's own units is not the test's business;
# its Documentation= pages are looked up among the ones installed here)
MANDIR=$(find "$DEST" -type d -name man8 -path '*/man/man8' | head -1)
out=$(MANPATH=${MANDIR%/man8} systemd-analyze verify "$T/gatekeeperd.service" 2>&1)
rc=$?
out=$(printf '%s\n' "$out" | grep gatekeeperd)
GK_DETAIL="rc=$rc $(printf '%s' "$out" | head -3 | tr '\n' ' ')"
gk_check "systemd-analyze verify: nothing to say about the installed unit" \
	eval '[ "$rc" = 0 ] && [ -z "$out" ]'
score=$(systemd-analyze security --offline=true "$T/gatekeeperd.service" 2>&1 |
	sed -n 's/.*Overall exposure level for gatekeeperd.service: \([0-9.]*\).*/\1/p')
GK_DETAIL="exposure ${score:-?}"
gk_check "systemd-analyze security --offline: exposure ${score:-?}, 4.0 or lower" \
	eval '[ -n "$score" ] && awk -v s="$score" "BEGIN { exit !(s <= 4.0) }"'
gk_check "... Type=notify, with the logs and configuration directories" \
	eval 'grep -qx "Type=notify" "$UNIT" && grep -qx "LogsDirectory=gatekeeper" "$UNIT" &&
	    grep -qx "ConfigurationDirectory=gatekeeper" "$UNIT"'

# ---- the notify protocol, under the unit's system call filter -----------------------------
# gatekeeperd runs through syscall_jail with exactly the calls the unit's
# SystemCallFilter=@system-service allows (groups expanded as systemd
# has them): a call it needs outside them fails here as it would there.
expand() {	# expand @GROUP: its system calls, nested groups expanded
	systemd-analyze syscall-filter "$1" | awk '/^    /{ print $1 }' |
	while read -r n; do
		case $n in
		@*) expand "$n" ;;
		*) echo "$n" ;;
		esac
	done
}
GROUP=$(sed -n 's/^SystemCallFilter=//p' "$UNIT")
expand "$GROUP" | sort -u >"$T/syscalls.list"
JAIL=$BUILD/tests/syscall_jail
GK_DETAIL="SystemCallFilter=$GROUP: $(grep -c . "$T/syscalls.list") calls"
gk_check "the unit's SystemCallFilter= ($GROUP) expands to a list of calls" \
	eval '[ -x "$JAIL" ] && [ "$(grep -c . "$T/syscalls.list")" -gt 100 ]'
ip link set lo up
NS=$T/notify.sock
"$PYTHON" - "$NS" "$T/notify.log" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.5)
end = time.monotonic() + 60
with open(sys.argv[2], "a") as out:
    while time.monotonic() < end:
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            continue
        out.write(msg.replace("\n", " ") + "\n")
        out.flush()
        if "STOPPING=1" in msg:
            break
EOF
LISTENER=$!
gk_track_pid "$LISTENER"
for ((i = 0; i < 300; i++)); do [ -S "$NS" ] && break; sleep 0.1; done
: >"$T/notify.log"
: >"$T/gk.conf"
# A sanitizer build's leak check at exit needs ptrace, which the filter
# refuses as the unit would: off for this run only (the other tests run
# the daemon with it).
if [ -n "${ASAN_OPTIONS:-}" ]; then
	export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
fi
NOTIFY_SOCKET=$NS gk_start_daemon GKD_PID "$JAIL" "$T/syscalls.list" -- \
	"$GKD" -f -c "$T/gk.conf" \
	--control "$T/control.sock" --listen 127.0.0.1 --dns-port 5353 \
	--socks-port 11080 --http-port 13128 --transparent-port off \
	--metrics off --plumbing off --cgroup off
waitfor() {	# waitfor PATTERN: a notify line matching it (bounded: 30 s)
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "$1" "$T/notify.log" && return 0
		sleep 0.05
	done
	return 1
}
waitfor 'READY=1'
GK_DETAIL="notify: $(tr '\n' '|' <"$T/notify.log")"
gk_check "READY=1 on NOTIFY_SOCKET, with the control socket there by then" \
	eval 'grep -q "READY=1" "$T/notify.log" && [ -S "$T/control.sock" ]'
out=$("$PYTHON" "$GK_LIB_DIR/gkctl.py" "$T/control.sock" \
	'{"op":"cage.create","source":"127.0.0.2","allow":["example.org"],"ask":true}' \
	'{"op":"stats"}' 2>&1)
GK_DETAIL=$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300)
gk_check "... and, under the filter, it makes a cage and answers stats" \
	eval '[ "$(printf "%s\n" "$out" | grep -c "\"ok\":true")" = 2 ]'

# ---- gatekeeperctl, as installed, against it ---------------------------------------
SOCK=$T/control.sock
gk_ctl_open held "$SOCK"
r=$(gk_ctl_send held '{"op":"cage.create","source":"127.0.0.3","allow":["example.org"],"label":"held"}')
CID=$(gk_json_get cage.id "$r")
out=$("$ICTL" --control "$SOCK" list 2>&1)
rc=$?
GK_DETAIL="cage ${CID:-?}; rc=$rc $(printf '%s' "$out" | tr '\n' '|')"
gk_check "gatekeeperctl list: a header, and the held cage with its label and uid" \
	eval '[ "$rc" = 0 ] && [ -n "$CID" ] && printf "%s\n" "$out" | head -1 | grep -q "^ID  *LABEL  *UID" &&
	    printf "%s\n" "$out" | grep -qE "^$CID  +held  +0  +127\.0\.0\.3  "'
i=$(complete_with "$CCTL" _gatekeeperctl "gatekeeperctl --control $SOCK show ")
j=$("$ICTL" -C "$SOCK" --json list 2>&1)
k=$("$ICTL" -C "$SOCK" stats 2>&1)
rc=$?
GK_DETAIL="show: [$i] --json: $(printf '%s' "$j" | cut -c1-200) stats: rc=$rc $(printf '%s' "$k" | tr '\n' '|' | cut -c1-300)"
gk_check "... its id completed after show, list --json as gatekeeperd said it, stats readable" \
	eval '[ "$i" = "$CID" ] && [ "$(gk_json_get cages.0.id "$j")" = "$CID" ] && [ "$rc" = 0 ] &&
	    printf "%s\n" "$k" | grep -qE "^cages: [0-9]+$" && printf "%s\n" "$k" | grep -q "^connections:"'
out=$("$ICTL" -C "$SOCK" destroy "$CID" 2>&1)
rc=$?
l=$("$ICTL" -C "$SOCK" list 2>&1)
GK_DETAIL="rc=$rc $out; then: $(printf '%s' "$l" | tr '\n' '|')"
gk_check "gatekeeperctl destroy ends the cage" \
	eval '[ "$rc" = 0 ] && [ "$out" = "destroyed $CID" ] && [ "$l" = "no cages" ]'
gk_ctl_close held
out=$("$ICTL" -C "$T/nothing.sock" list 2>&1)
rc=$?
GK_DETAIL="rc=$rc $out"
gk_check "gatekeeperctl without gatekeeperd: exit 3, is gatekeeperd running?" \
	eval '[ "$rc" = 3 ] && case $out in "gatekeeperctl: cannot reach gatekeeperd at $T/nothing.sock (No such file or directory): is gatekeeperd running? "*) true ;; *) false ;; esac'
: >"$T/notify.log"
kill -HUP "$GKD_PID"
waitfor 'READY=1'
GK_DETAIL="notify: $(tr '\n' '|' <"$T/notify.log")"
gk_check "SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1" \
	eval 'head -1 "$T/notify.log" | grep -q "RELOADING=1 MONOTONIC_USEC=[0-9]" &&
	    sed -n 2p "$T/notify.log" | grep -q "READY=1"'
: >"$T/notify.log"
gk_stop_daemon "$GKD_PID" TERM
waitfor 'STOPPING=1'
GK_DETAIL="rc=$GK_RC notify: $(tr '\n' '|' <"$T/notify.log")"
gk_check "SIGTERM: STOPPING=1, and exit 0" \
	eval 'grep -q "STOPPING=1" "$T/notify.log" && [ "$GK_RC" = 0 ]'

# shellcheck disable=SC2119  # no note for the summary
gk_finish
