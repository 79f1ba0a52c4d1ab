#!/usr/bin/env bash
#
# test_ctl.sh: gatekeeperctl, the operator's command, against the real
# gatekeeperd, with real curl and dig in gk-run cages on e2e_net.sh's
# hermetic internet:
#
#   - list, show, denials (DNS and proxy alike), denials --follow, stats,
#     as root (every cage) and as a member of group gatekeeper (only its
#     own cages; another's is "not permitted", exit 4);
#   - allow and revoke change a running cage's allowlist: a loop in the
#     cage that kept being refused gets through, then is refused again;
#   - pending and approve answer an asking cage's question (its own
#     supervisor never answers);
#   - reload (root only) picks up a new host policy; destroy ends a cage
#     and its processes, and a follower of that cage is told;
#   - a cage that ended is still shown ("ended N s ago", why) and its
#     denials listed, to whoever could see it while it lived;
#   - a cage's life in the audit log: the create line (allowlist, command,
#     spec_sha256), the destroy line (exit 7; SIGKILL; --timeout's
#     walltime; an operator's destroy; bytes posted per host, which show
#     lists while the cage lives);
#   - exit codes: 2 usage, 3 no daemon, 1 refused, 4 not permitted.
#
#   bash tests/integration/test_ctl.sh build/gatekeeperd build/spawner/gk-run \
#       build/gatekeeper/gatekeeperctl
#   meson test -C build ctl_integration      (suite "integration")
#
# Runs as root in namespaces it creates itself (lib.sh). Prints "ok ..." /
# "FAIL ..." per check and a summary; exits 1 if any check failed or
# anything needed is missing (never a silent skip).

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_ctl.sh

[ $# -eq 3 ] || {
	echo "usage: bash $E2E_NAME GATEKEEPERD GK-RUN GATEKEEPERCTL" >&2
	exit 2
}
e2e_args 0 "$1" "$2"
GKCTL=$(readlink -f "$3")
[ -x "$GKCTL" ] || e2e_die "$3: not an executable (gatekeeperctl)"
e2e_preamble dig dnsmasq curl unshare nsenter ip mount nginx fcgiwrap \
    openssl git nft bwrap timeout mkfifo setpriv promtool "$PYTHON"
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
CURL=(curl -sS --max-time 10)
POLICY=$T/policy

# ctl_cmd WHO SECONDS: CTL_CMD runs gatekeeperctl as WHO (root, or the
# test user, in group gatekeeper: e2e_lib.sh's as_cmd), bounded.
ctl_cmd() {
	as_cmd "$1"
	CTL_CMD=(timeout -s KILL "$2" "${AS_CMD[@]}" "$GKCTL" --control "$SOCK")
}
# ctl ARGS...: gatekeeperctl as root; ctlu ARGS...: as the test user.
# Output in $T/ctl.out and $T/ctl.err, status CTL_RC.
ctl_as() {
	ctl_cmd "$1" 30
	shift
	"${CTL_CMD[@]}" "$@" >"$T/ctl.out" 2>"$T/ctl.err" </dev/null
	CTL_RC=$?
	GK_DETAIL="rc=$CTL_RC | out: $(oneline "$(head -c 700 "$T/ctl.out")") | err: $(oneline "$(head -c 400 "$T/ctl.err")")"
}
# follow_bg VAR WHO NAME ARGS...: `gatekeeperctl denials --follow ARGS`
# as WHO in the background (VAR: its pid), output in $T/NAME.out, .err.
follow_bg() {
	local var=$1 name=$3 pid
	ctl_cmd "$2" 100
	shift 3
	( exec "${CTL_CMD[@]}" denials --follow "$@" \
		>"$T/$name.out" 2>"$T/$name.err" </dev/null ) &
	pid=$!
	gk_track_pid "$pid"
	printf -v "$var" '%s' "$pid"
}
# tries_after N REGEX: how many of root's loop's tries after the first N
# match REGEX.
tries_after() { tail -n +$(($1 + 1)) "$T/work-root/tries" | grep -c "$2"; }
ctl() { ctl_as root "$@"; }
ctlu() { ctl_as user "$@"; }
# jq-less JSON: jget PATH < FILE (last line), as gkctl.py --get.
jget() { "$PYTHON" "$GK_LIB_DIR/gkctl.py" --get "$1" "$T/ctl.out"; }
# cage_id LABEL: the id of the cage with that label (gatekeeperctl --json).
cage_id() {
	"$GKCTL" --control "$SOCK" --json list 2>/dev/null | "$PYTHON" -c '
import json, sys
for c in json.loads(sys.stdin.readline()).get("cages", []):
    if c.get("label") == sys.argv[1]:
        print(c["id"])' "$1"
}
has_cage() { [ -n "$(cage_id "$1")" ]; }

# ---- no daemon; usage ------------------------------------------------------------------
e2e_begin
gk_ok "the test internet is up (nginx, dnsmasq)"
e2e_user
"$GKCTL" --control "$T/none.sock" list >"$T/ctl.out" 2>"$T/ctl.err" </dev/null
CTL_RC=$?
GK_DETAIL="rc=$CTL_RC err: $(oneline "$(cat "$T/ctl.err")")"
gk_check "no gatekeeperd: exit 3, asking whether it runs, naming the socket" \
	eval '[ "$CTL_RC" = 3 ] && grep -q "is gatekeeperd running" "$T/ctl.err" &&
	    grep -qF "$T/none.sock" "$T/ctl.err"'
ctl frobnicate
gk_check "an unknown command: exit 2, pointing at --help" \
	eval '[ "$CTL_RC" = 2 ] && grep -q -- "--help" "$T/ctl.err"'
ctl approve 12x
gk_check "approve with a question id that is not a number: exit 2" test "$CTL_RC" = 2
ctl allow
gk_check "allow without a cage id: exit 2" test "$CTL_RC" = 2
ctl --help
gk_check "--help lists the commands and the exit codes" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "revoke" "$T/ctl.out" && grep -q "pending" "$T/ctl.out" &&
	    grep -qi "exit" "$T/ctl.out"'

# ---- two cages: one root's, one the test user's ----------------------------------------
mkdir -p "$T/home-root" "$T/work-root" "$SHARE" "$T/run"
chmod 755 "$T/run"
: >"$T/gk.conf"
printf 'version c1\ndeny api.github.com\n' >"$POLICY"
gk_start_daemon GKD_PID "$GKD" -f -c "$T/gk.conf" --control "$SOCK" \
	--upstream "$EN_RESOLVER" --metrics "$METRICS" --audit-log "$AUDIT" \
	--policy "$POLICY"
daemon_ready "$GKD_PID" ||
	gk_abort "gatekeeperd starts" "$T/GKD_PID.log"

# root's cage tries codeload.github.com every 0.2 s (one line per try in
# tries) until the file stop appears (at most 90 s)
rm -f "$T/work-root/stop" "$T/work-root/tries"
cage_bg RB root --label rootjob --allow github.com --ro "$EN_DIR" -- sh -c "
	i=0
	while [ ! -e stop ] && [ \$i -lt 450 ]; do
		${CURL[*]} -o /dev/null https://codeload.github.com/index.html 2>/dev/null
		echo \$? >>tries
		sleep 0.2; i=\$((i + 1))
	done"
# the user's cage looks pypi.org up and asks for it once, then waits
# (--quiet: gk-run asks for no denial events; the operator sees them all
# the same)
cage_bg UB user --quiet --label userjob --allow github.com --ro "$EN_DIR" -- sh -c "
	dig +short @$GW pypi.org A; ${CURL[*]} -o /dev/null https://pypi.org/simple/ 2>/dev/null
	echo done >asked
	i=0; while [ ! -e stop ] && [ \$i -lt 900 ]; do sleep 0.1; i=\$((i + 1)); done"
wait_ms 300 has_cage rootjob
wait_ms 300 test -s "$T/work-user/asked"
wait_ms 300 eval '[ "$(grep -c . "$T/work-root/tries" 2>/dev/null)" -ge 2 ]'
RID=$(cage_id rootjob)
UID_CAGE=$(cage_id userjob)
GK_DETAIL="root cage '$RID', user cage '$UID_CAGE' | $(oneline "$(tail -c 300 "$T/RB.err") $(tail -c 300 "$T/UB.err")")"
gk_check "both cages run (root's rootjob, the user's userjob)" \
	eval '[ -n "$RID" ] && [ -n "$UID_CAGE" ]'

# ---- list, show, denials: root sees all, the user its own ------------------------------
ctl list
gk_check "list (root): both cages, with labels, uids and sources" \
	eval '[ "$CTL_RC" = 0 ] && grep "$RID" "$T/ctl.out" | grep -q rootjob &&
	    grep "$UID_CAGE" "$T/ctl.out" | grep -q "$E2E_UID" && grep -q "10.143." "$T/ctl.out"'
ctl --json list
gk_check "list --json: the daemon's reply, two cages" \
	eval '[ "$CTL_RC" = 0 ] && [ "$(jget cages.1.id)" != "" ] && ! jget cages.2.id >/dev/null'
ctlu list
gk_check "list as a member of group gatekeeper: only its own cage, and says so" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "$UID_CAGE" "$T/ctl.out" && ! grep -q "$RID" "$T/ctl.out" &&
	    grep -q "uid $E2E_UID" "$T/ctl.err"'
ctl show "$RID"
gk_check "show: the allowlist, and the recent proxy denial of codeload.github.com" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "github.com" "$T/ctl.out" &&
	    grep "codeload.github.com" "$T/ctl.out" | grep -q "not_allowlisted"'
ctlu show "$UID_CAGE"
gk_check "show (user, own cage): the DNS denial and the proxy denial of pypi.org" \
	eval '[ "$CTL_RC" = 0 ] && grep "pypi.org" "$T/ctl.out" | grep -q "dns" &&
	    grep "pypi.org:443" "$T/ctl.out" | grep -Eq "http|transparent"'
ctlu show "$RID"
gk_check "show (user, root's cage): not permitted, exit 4" \
	eval '[ "$CTL_RC" = 4 ] && grep -q "not permitted" "$T/ctl.err"'
ctl show zzzz0000
gk_check "show of a cage that does not exist: exit 1, said, naming gatekeeperctl list (not the op)" \
	eval '[ "$CTL_RC" = 1 ] && grep -q "zzzz0000" "$T/ctl.err" &&
	    grep -q "gatekeeperctl list" "$T/ctl.err" && ! grep -q "cage\.list" "$T/ctl.err"'
ctl denials
gk_check "denials (root): DNS and proxy denials of both cages, readable" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "codeload.github.com" "$T/ctl.out" &&
	    grep "pypi.org" "$T/ctl.out" | grep -q dns'
ctlu denials
gk_check "denials (user): only its own cage's" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "pypi.org" "$T/ctl.out" && ! grep -q "codeload" "$T/ctl.out"'

# ---- follow, allow, revoke --------------------------------------------------------------
follow_bg FOLLOW root follow --cage "$RID"
follow_bg UFOLLOW user ufollow
wait_ms 300 grep -q "codeload.github.com" "$T/follow.out"
GK_DETAIL="$(oneline "$(tail -c 500 "$T/follow.out") | $(cat "$T/follow.err")")"
gk_check "denials --follow --cage: the loop's new denials, live" \
	grep -q "codeload.github.com" "$T/follow.out"

a0=$(gk_audit_mark "$AUDIT")
ctl allow "$RID" codeload.github.com:443
gk_check "allow: exit 0, the new allowlist printed" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "codeload.github.com:443" "$T/ctl.out"'
n0=$(grep -c . "$T/work-root/tries")
wait_ms 300 eval '[ "$(tries_after "$n0" "^0$")" -ge 2 ]'
GK_DETAIL="after allow: $(tail -n +$((n0 + 1)) "$T/work-root/tries" | head -20 | tr '\n' ' ')"
gk_check "... the running cage reaches codeload.github.com from then on" \
	eval '[ "$(tries_after "$n0" "^0$")" -ge 2 ]'
ctl revoke "$RID" codeload.github.com:443
gk_check "revoke: exit 0, the allowlist without it" \
	eval '[ "$CTL_RC" = 0 ] && ! grep -q "codeload" "$T/ctl.out" && grep -q "github.com" "$T/ctl.out"'
n1=$(grep -c . "$T/work-root/tries")
wait_ms 300 eval '[ "$(tries_after $((n1 + 1)) "^[1-9]")" -ge 2 ]'
GK_DETAIL="after revoke: $(tail -n +$((n1 + 1)) "$T/work-root/tries" | head -20 | tr '\n' ' ')"
gk_check "... and is refused again (the next tries fail)" \
	eval '[ "$(tries_after $((n1 + 1)) "^[1-9]")" -ge 2 ] &&
	    [ "$(tries_after $((n1 + 2)) "^0$")" = 0 ]'
ctl revoke "$RID" nothere.example
gk_check "revoke of a pattern the cage does not have: exit 1, naming it and the allowlist" \
	eval '[ "$CTL_RC" = 1 ] && grep -q "nothere.example" "$T/ctl.err" && grep -q "github.com" "$T/ctl.err"'
ctl allow "$RID" '*.com'
gk_check "allow of a wildcard over a public suffix: a usage error (2) before any request, the pattern's error" \
	eval '[ "$CTL_RC" = 2 ] && grep -q "public suffix" "$T/ctl.err"'
ctlu allow "$RID" pypi.org
gk_check "allow (user) on root's cage: not permitted, exit 4" \
	eval '[ "$CTL_RC" = 4 ] && grep -q "not permitted" "$T/ctl.err"'
ctlu allow "$UID_CAGE" pypi.org:443
gk_check "allow (user) on its own cage: exit 0" test "$CTL_RC" = 0
gk_check "the audit log has the changes as cage.update, with the caller's uid" \
	eval 'gk_audit_wait "$AUDIT" "$a0" 50 "\"event\":\"cage.update\"" codeload.github.com &&
	    gk_audit_wait "$AUDIT" "$a0" 50 "\"event\":\"cage.update\"" "\"uid\":$E2E_UID[,}]"'
GK_DETAIL="$(oneline "$(tail -c 500 "$T/ufollow.out")")"
gk_check "the user's follower saw its own cage's denials only (none of root's loop)" \
	eval '! grep -q "codeload" "$T/ufollow.out"'

# ---- stats, reload -----------------------------------------------------------------------
ctl stats
gk_check "stats: exit 0, readable counters (cages, denials)" \
	eval '[ "$CTL_RC" = 0 ] && grep -qi "cages" "$T/ctl.out" && grep -qi "denied\|denials" "$T/ctl.out"'
ctl --json stats
gk_check "stats --json: the daemon's counters" \
	eval '[ "$CTL_RC" = 0 ] && [ "$(jget stats.cages)" -ge 2 ]'
printf 'version c2\ndeny api.github.com\ndeny pypi.org\n' >"$POLICY"
ctlu reload
gk_check "reload as a group member: not permitted, exit 4" \
	eval '[ "$CTL_RC" = 4 ] && grep -q "root" "$T/ctl.err"'
ctl reload
gk_check "reload as root: exit 0, the new policy version c2 said" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "c2" "$T/ctl.out"'
printf 'version c3\nallow nonsense here\n' >"$POLICY"
ctl reload
gk_check "reload of a broken policy: exit 1, FILE:LINE, c2 kept" \
	eval '[ "$CTL_RC" = 1 ] && grep -qF "$POLICY:2" "$T/ctl.err" && grep -q "c2" "$T/ctl.err"'

# ---- pending and approve --------------------------------------------------------------------
rm -f "$T/ev.fifo" "$T/dec.fifo"
: >"$T/sup.log"
mkfifo "$T/ev.fifo" "$T/dec.fifo"
timeout -s KILL 100 "$PYTHON" "$GK_LIB_DIR/ask_supervisor.py" "$T/ev.fifo" "$T/dec.fifo" \
	"$T/sup.log" none &
SUP=$!
gk_track_pid "$SUP"
cage_bg AB root --label askjob --ask --ask-timeout 60 --events-fd 3 --decisions-fd 4 \
	--allow github.com --ro "$EN_DIR" -- sh -c "
	${CURL[*]} --max-time 50 -o /dev/null https://codeload.github.com/index.html; echo got \$? >asked" \
	3>"$T/ev.fifo" 4<"$T/dec.fifo"
qid=
wait_ms 300 eval 'grep -q "\"event\": *\"ask\"" "$T/sup.log"'
ctl --json pending
qid=$(jget questions.0.id 2>/dev/null)
ctl pending
gk_check "pending: the asking cage's question (codeload.github.com:443, askjob)" \
	eval '[ "$CTL_RC" = 0 ] && [ -n "$qid" ] && grep "$qid" "$T/ctl.out" |
	    grep "codeload.github.com" | grep -q askjob'
ctlu pending
gk_check "pending as the user: root's question is not shown" \
	eval '[ "$CTL_RC" = 0 ] && ! grep -q "codeload" "$T/ctl.out"'
ctlu approve "$qid"
gk_check "approve (user) of root's question: refused (1 or 4), not answered" \
	eval '[ "$CTL_RC" = 1 ] || [ "$CTL_RC" = 4 ]'
ctl approve "$qid"
gk_check "approve (root): exit 0" test "$CTL_RC" = 0
gk_wait_exit "$AB" 300
GK_DETAIL="$(cat "$T/work-root/asked" 2>&1) | $(oneline "$(tail -c 400 "$T/AB.err")")"
gk_check "... the held connection went on: the download worked" grep -qx "got 0" "$T/work-root/asked"
gk_check "... gk-run's supervisor saw ask.done, by operator" \
	grep -q '"by": *"operator"' "$T/sup.log"
gk_wait_exit "$SUP" 50 2>/dev/null || kill -KILL "$SUP" 2>/dev/null
ctl approve 999999
gk_check "approve of a question that is not pending: exit 1, said" \
	eval '[ "$CTL_RC" = 1 ] && grep -q "999999" "$T/ctl.err"'

# ---- a cage's life in the audit log --------------------------------------------------------
# life_line EVENT LABEL: the last audit line of EVENT for the cage
# labelled LABEL (empty while it is not written: the log is buffered).
life_line() {
	grep -F "\"event\":\"$1\"" "$AUDIT" 2>/dev/null | grep -F "\"label\":\"$2\"" | tail -n 1
}
# life_wait EVENT LABEL PATTERN...: wait (bounded) until that line is
# written, holding every PATTERN (gk_audit_wait's).
life_wait() {
	gk_audit_wait "$AUDIT" 0 50 "\"event\":\"$1\"" "\"label\":\"$2\"" "${@:3}"
}
# life_has EVENT LABEL STRING...: that line holds every STRING.
life_has() {
	local l s
	l=$(life_line "$1" "$2")
	[ -n "$l" ] || return 1
	shift 2
	for s in "$@"; do
		grep -qF -- "$s" <<<"$l" || return 1
	done
}
# life_traffic LABEL HOST PORT: "UP DOWN CONNECTIONS" of HOST:PORT in the
# cage's destroy line.
life_traffic() {
	life_line cage.destroy "$1" | "$PYTHON" -c '
import json, sys
for l in sys.stdin:
    for h in json.loads(l).get("traffic", {}).get("hosts", []):
        if h.get("host") == sys.argv[1] and h.get("port") == int(sys.argv[2]):
            print("%d %d %d" % (h["up"], h["down"], h["connections"]))' "$2" "$3"
}
cage root --label life-exit --allow github.com -- sh -c 'exit 7'
life_wait cage.destroy life-exit '"exit":7'
GK_DETAIL="$(run_detail) | create: $(life_line cage.create life-exit) | destroy: $(life_line cage.destroy life-exit)"
gk_check "a cage's create line: its allowlist, the number of patterns, its command, the spec's SHA-256" \
	eval '[ "$RUN_RC" = 7 ] && life_has cage.create life-exit "\"allow\":[\"github.com\"]" \
	    "\"patterns\":1" "\"command\":[\"sh\",\"-c\",\"exit 7\"]" "\"netns\":true" &&
	    life_line cage.create life-exit | grep -Eq "\"spec_sha256\":\"[0-9a-f]{64}\""'
gk_check "... its destroy line: exit 7, reason exited, its command, its life in seconds" \
	life_has cage.destroy life-exit '"reason":"exited"' '"exit":7' \
	    '"command":["sh","-c","exit 7"]' '"seconds":'
cage root --label life-kill --allow github.com -- sh -c 'kill -KILL $$'
life_wait cage.destroy life-kill '"signal"'
GK_DETAIL="$(run_detail) | destroy: $(life_line cage.destroy life-kill)"
gk_check "a command killed by a signal: 137, and its destroy line says SIGKILL (reason killed), no exit" \
	eval '[ "$RUN_RC" = 137 ] && life_has cage.destroy life-kill "\"signal\":\"SIGKILL\"" \
	    "\"reason\":\"killed\"" && ! life_has cage.destroy life-kill "\"exit\":"'
cage root --label life-walltime --timeout 1 --allow github.com -- sleep 30
life_wait cage.destroy life-walltime '"signal"'
GK_DETAIL="$(run_detail) | destroy: $(life_line cage.destroy life-walltime)"
gk_check "a command over its --timeout: 124, and its destroy line says reason walltime and the signal" \
	eval '[ "$RUN_RC" = 124 ] && life_has cage.destroy life-walltime "\"reason\":\"walltime\"" \
	    "\"signal\":\"SIG"'
# 200000 bytes posted to the npm registry's audit endpoint (nginx answers
# 200 and reads the body), then the cage waits for life-stop (at most 60 s):
# gatekeeperctl show has them per host while it lives; then its destroy line
head -c 200000 /dev/zero >"$SHARE/life.bin"
chmod 644 "$SHARE/life.bin"
rm -f "$T/work-root/life-stop" "$T/work-root/posted"
cage_bg LB root --label life-up --allow registry.npmjs.org --ro "$SHARE" --ro "$EN_DIR" -- sh -c "
	${CURL[*]} -o /dev/null -H 'Expect:' -H 'Content-Type: application/octet-stream' \
	    --data-binary @$SHARE/life.bin https://registry.npmjs.org/-/npm/v1/security/advisories/bulk
	echo \$? >posted
	i=0; while [ ! -e life-stop ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done"
wait_ms 300 test -s "$T/work-root/posted"
LID=$(cage_id life-up)
ctl show "$LID"
GK_DETAIL="$GK_DETAIL | posted: $(cat "$T/work-root/posted" 2>/dev/null)"
gk_check "show: what passed, per host: registry.npmjs.org:443, up ~195 KiB, one connection" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "^traffic: up 19[0-9]\.[0-9] KiB" "$T/ctl.out" &&
	    grep -q "^  registry.npmjs.org:443 up 19[0-9]\.[0-9] KiB, down .*, 1 connection$" "$T/ctl.out"'
: >"$T/work-root/life-stop"
gk_wait_exit "$LB" 100
life_wait cage.destroy life-up '"exit":0'
t=$(life_traffic life-up registry.npmjs.org 443)
up=${t%% *}
GK_DETAIL="traffic: $t | destroy: $(life_line cage.destroy life-up)"
gk_check "... its destroy line: exit 0, registry.npmjs.org:443 up 200000 bytes (to within TLS and the request head), one connection" \
	eval '[ -n "$up" ] && [ "$up" -ge 200000 ] && [ "$up" -le $((200000 + 16384)) ] &&
	    [ "${t##* }" = 1 ] && life_has cage.destroy life-up "\"exit\":0"'

# ---- destroy -------------------------------------------------------------------------------
ctlu destroy "$RID"
gk_check "destroy (user) of root's cage: not permitted, exit 4" test "$CTL_RC" = 4
ctlu destroy "$UID_CAGE"
gk_check "destroy (user) of its own cage: exit 0" test "$CTL_RC" = 0
gk_wait_exit "$UB" 100
GK_DETAIL="gk-run rc=$GK_RC | $(oneline "$(tail -c 400 "$T/UB.err")")"
gk_check "... its gk-run ends at once (the cage's processes are gone), and says why" \
	eval '! kill -0 "$UB" 2>/dev/null &&
	    grep -q "gatekeeperd ended the cage (destroyed by uid $E2E_UID)" "$T/UB.err"'
life_wait cage.destroy userjob '"reason":"destroyed by uid'
GK_DETAIL="destroy: $(life_line cage.destroy userjob)"
gk_check "... its destroy line says who: destroyed by uid $E2E_UID, no exit status" \
	eval 'life_has cage.destroy userjob "\"reason\":\"destroyed by uid $E2E_UID\"" &&
	    ! life_has cage.destroy userjob "\"exit\":"'
ctl destroy "$RID"
gk_check "destroy (root) of root's loop cage: exit 0" test "$CTL_RC" = 0
gk_wait_exit "$RB" 100
gk_wait_exit "$FOLLOW" 100
fr=$GK_RC
GK_DETAIL="follow rc=$fr | $(oneline "$(tail -c 300 "$T/follow.out") $(cat "$T/follow.err")")"
gk_check "the follower of that cage is told it ended and exits 0" \
	eval '[ "$fr" = 0 ] && grep -q "$RID" "$T/follow.out" && grep -qi "ended" "$T/follow.out" "$T/follow.err"'
kill9 "$UFOLLOW"

# ---- ended cages: what they did, for a while ----------------------------------------------
ctl show "$UID_CAGE"
gk_check "show of a cage that ended: 'ended N s ago' and why, and its denials" \
	eval '[ "$CTL_RC" = 0 ] &&
	    grep -Eq "^state: ended [0-9]+ s ago \(destroyed by uid $E2E_UID\)$" "$T/ctl.out" &&
	    grep "pypi.org" "$T/ctl.out" | grep -q "dns"'
ctl show "$RID"
gk_check "show of root's ended loop cage: its codeload.github.com denial" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "^state: ended " "$T/ctl.out" &&
	    grep "codeload.github.com" "$T/ctl.out" | grep -q "not_allowlisted"'
ctlu show "$RID"
gk_check "show (user) of root's ended cage: not permitted, exit 4" \
	eval '[ "$CTL_RC" = 4 ] && grep -q "not permitted" "$T/ctl.err"'
ctlu show "$UID_CAGE"
gk_check "show (user) of its own ended cage: exit 0, ended" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "^state: ended " "$T/ctl.out"'
ctl denials
gk_check "denials (root) after both ended: still both cages' DNS and proxy denials" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "codeload.github.com" "$T/ctl.out" &&
	    grep "pypi.org" "$T/ctl.out" | grep -q dns'
ctlu denials
gk_check "denials (user) after both ended: its own ended cage's only" \
	eval '[ "$CTL_RC" = 0 ] && grep -q "pypi.org" "$T/ctl.out" && ! grep -q "codeload" "$T/ctl.out"'
ctl list
gk_check "list: no cages left" eval '[ "$CTL_RC" = 0 ] && ! grep -q "$RID" "$T/ctl.out"'
ctl --json list
gk_check "... and the JSON says so too" eval '[ "$(jget cages)" = "[]" ] || [ "$(jget cages)" = "[ ]" ]'

e2e_stop_daemon
# shellcheck disable=SC2119  # no note for the summary
gk_finish
