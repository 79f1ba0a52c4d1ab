#!/usr/bin/env bash
#
# test_conn_story.sh: one proxied connection tells one story. From accept
# to close it has one id (conn=N), the same in every log line about it
# (the session's state changes, the dial, the relay, the end) and in its
# audit lines; a tunnel's end is one info line with the reason, the bytes
# each way and how long it lived; an HTTP proxy request whose upstream
# refuses goes through the same failure path (counter and log line) as
# SOCKS5 and transparent ones.
#
#   bash tests/integration/test_conn_story.sh build/gatekeeperd build/spawner/gk-run
#   meson test -C build conn_story_integration      (suite "integration")
#
# Runs as root in namespaces it creates itself (lib.sh), against
# e2e_net.sh's hermetic internet (nginx serves api_x.github.com on 443;
# nothing listens on its port 81). gatekeeperd runs with its defaults and
# --log-level debug; gk-run cages run as root.
#
# Cases, each one program in one cage, so each is one connection:
#   allowed  curl https://api_x.github.com/ through SOCKS5, HTTP CONNECT
#            and the transparent path: exactly one close line for the
#            target at info level (no "debug:" prefix; action=close,
#            reason, up>0, down>0, ms), and its conn id also on the session's state change to
#            dialing, on the dial's and on the relay's debug lines; no
#            line uses another id scheme ("session N");
#   denied   the same name through SOCKS5 and HTTP with --allow
#            api.github.com: the deny line and the audit's proxy.deny
#            carry the same conn id;
#   failed   http://api_x.github.com:81/ (connection refused) through
#            the HTTP proxy and through SOCKS5: a 502 / a SOCKS5 refusal,
#            connections_total{verdict="failed"} +1 and an
#            action=fail line with its conn id, for both.
#
# Prints "ok   ..." / "FAIL ..." per check and a summary; exits 1 if any
# check failed or anything needed is missing (never a silent skip).
# GK_KEEP_TMP=1 keeps the temp directory (logs).

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_conn_story.sh

e2e_args 0 "$@"
e2e_preamble dig dnsmasq curl unshare nsenter ip mount nginx fcgiwrap openssl \
    git /usr/lib/git-core/git-http-backend nft bwrap timeout "$PYTHON"
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
UX=api_x.github.com
LOG=$T/GKD_PID.log
NOHTTP=(env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY)
NP=("${NOHTTP[@]}" -u ALL_PROXY -u all_proxy)
declare -A VIA=(
	[socks5]="${NOHTTP[*]} curl"
	[http]="curl"
	[transparent]="${NP[*]} curl --noproxy *"
)


# run_case PATH ALLOW URL: one curl in one cage; the daemon's log lines
# written meanwhile are in $T/case.log.
run_case() {
	local cmd n
	read -ra cmd <<<"${VIA[$1]}"
	n=$(wc -l <"$LOG")
	mark
	cage root --allow "$2" --ro "$EN_DIR" -- "${cmd[@]}" -fsS \
		--max-time 20 "$3"
	after
	# the connection's last line (close, deny or fail) may follow the
	# client's exit by a loop turn, longer on a slow host: waited for
	gk_wait_for 100 eval 'tail -n +"$((n + 1))" "$LOG" |
		grep -qE "action=(close|deny|fail) "'
	tail -n +"$((n + 1))" "$LOG" >"$T/case.log"
}

# conn_of PATTERN: the conn id of the one line of the case matching
# PATTERN (an ERE), or nothing when there is not exactly one.
conn_of() {
	local m
	m=$(grep -E "$1" "$T/case.log")
	[ "$(printf '%s\n' "$m" | grep -c .)" = 1 ] || return 0
	printf '%s\n' "$m" | sed -nE 's/.*conn=([0-9]+) .*/\1/p'
}
case_has() { grep -Eq "$1" "$T/case.log"; }
case_detail() {
	GK_DETAIL="$(run_detail) | log: $(oneline "$(grep -E 'conn=|session' \
		"$T/case.log" | cut -c1-200 | head -n 12)")"
}

# ---- the internet ------------------------------------------------------------
e2e_begin
gk_ok "the test internet is up (nginx, dnsmasq)"

# ---- gatekeeperd ---------------------------------------------------------------
mkdir -p "$T/home-root" "$T/work-root" "$SHARE" "$T/run"
: >"$T/empty.conf"
GKD_ARGS=(-f -c "$T/empty.conf" --control "$SOCK" --upstream "$EN_RESOLVER"
	--metrics "$METRICS" --audit-log "$AUDIT" --log-level debug)
gk_start_daemon GKD_PID "$GKD" "${GKD_ARGS[@]}"
daemon_ready "$GKD_PID" ||
	gk_abort "gatekeeperd starts (control socket, metrics)" "$T/GKD_PID.log"
gk_ok "gatekeeperd is ready with its defaults (pid $GKD_PID)"
chmod 755 "$T/run"

# ---- allowed: one id from accept to close ------------------------------------
for via in socks5 http transparent; do
	run_case "$via" "$UX" "https://$UX/index.html"
	case_detail
	gk_check "$via: curl https://$UX/ gets its page" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(cat "$T/run.out")" = "hello from $UX" ]'
	id=$(conn_of "^[^:]*: conn=[0-9]+ .*proto=$via host=$UX port=443 action=close ")
	case_detail
	gk_check "$via: one info line at the tunnel's end (conn=${id:-?})" \
		test -n "$id"
	line=$(grep -E "conn=$id .*action=close" "$T/case.log")
	GK_DETAIL="line: $line"
	gk_check "$via: it says why it ended, the bytes each way and how long it lived" \
		eval '[[ "$line" =~ reason=[a-z_]+\ up=[1-9][0-9]*\ down=[1-9][0-9]*\ ms=[0-9]+ ]]'
	case_detail
	gk_check "$via: conn=$id on the connection's way to dialing" \
		case_has "conn=$id $via: [a-z]+ -> (resolve_a|connect)"
	gk_check "$via: conn=$id on the way from dialing to its tunnel" \
		case_has "conn=$id $via: connect -> tunnel"
	gk_check "$via: conn=$id on the relay's lines" \
		case_has "conn=$id relay client=[0-9]+ server=[0-9]+ reason="
	gk_check "$via: no other id scheme in the log (\"session N\")" \
		eval '! case_has "session [0-9]+"'
done

# ---- denied: the same id in the log and the audit ------------------------------
for via in socks5 http; do
	a0=$(gk_audit_mark "$AUDIT")
	run_case "$via" api.github.com "https://$UX/index.html"
	id=$(conn_of "conn=[0-9]+ .*proto=$via .*host=$UX port=443 action=deny reason=not_allowlisted")
	case_detail
	gk_check "$via, --allow api.github.com: refused, one deny line (conn=${id:-?})" \
		eval '[ "$RUN_RC" != 0 ] && [ -n "$id" ]'
	gk_check "$via: the audit's proxy.deny has \"conn\": $id" \
		eval '[ -n "$id" ] && gk_audit_wait "$AUDIT" "$a0" 30 "\"proxy\\.deny\"" \
		    "\"conn\": ?$id[,}]" "\"host\".*$UX"'
done

# ---- failed: HTTP goes the same way as SOCKS5 ---------------------------------------
for via in http socks5; do
	run_case "$via" "$UX" "http://$UX:81/"
	id=$(conn_of "conn=[0-9]+ .*proto=$via host=$UX port=81 action=fail reason=refused")
	case_detail
	GK_DETAIL="$GK_DETAIL | failed +$(dm gatekeeper_connections_total proto="$via" verdict=failed)"
	gk_check "$via: port 81 refused upstream: the client is told, one fail line (conn=${id:-?})" \
		eval '[ "$RUN_RC" != 0 ] && [ -n "$id" ]'
	gk_check "$via: connections_total{verdict=failed} +1" \
		test "$(dm gatekeeper_connections_total proto="$via" verdict=failed)" = 1
done

# ---- a tunnel whose cage ends -------------------------------------------------
# An HTTP CONNECT tunnel held open (TLS handshake done, nothing asked)
# while its cage is destroyed (cage.destroy, as root): the tunnel's end
# is the same one line as any other, with reason=cage_ended and the
# bytes. (Killing gk-run would race: its keeper ends the client too.)
n=$(wc -l <"$LOG")
as_cmd root
( cd "$T/work-root" && exec timeout -s KILL 60 "${AS_CMD[@]}" "$GKRUN" \
	--control "$SOCK" --allow "$UX" --ro "$EN_DIR" -- sh -c \
	'p=${https_proxy#http://}; (sleep 30; echo) | openssl s_client -quiet \
	    -proxy "${p%/}" -connect "$1:443" -servername "$1" -CAfile "$2" \
	    >/dev/null 2>&1' sh "$UX" "$EN_DIR/ca.crt" >/dev/null 2>&1 \
	</dev/null ) &
bg=$!
gk_wait_for 100 eval 'tail -n +"$((n + 1))" "$LOG" | grep -q "host=$UX port=443"'
sleep 1
cid=$(tail -n +"$((n + 1))" "$LOG" | sed -nE 's/.*cage=([a-z0-9]+) .*action=create.*/\1/p' | tail -1)
gk_ctl_once "{\"op\":\"cage.destroy\",\"id\":\"$cid\"}" >"$T/destroy.out" 2>&1
gk_wait_for 50 eval 'tail -n +"$((n + 1))" "$LOG" | grep -q "action=close reason=cage_ended"'
wait "$bg" 2>/dev/null
tail -n +"$((n + 1))" "$LOG" >"$T/case.log"
line=$(grep -E "action=close reason=cage_ended" "$T/case.log")
GK_DETAIL="cage $cid: $(oneline "$(cat "$T/destroy.out")") | $(oneline "$line") | $(oneline "$(grep -E 'action=close' "$T/case.log" | cut -c1-200 | head -n 4)")"
gk_check "a tunnel whose cage ends: one close line, reason=cage_ended, with the bytes each way and ms" \
	eval '[ "$(printf "%s\n" "$line" | grep -c .)" = 1 ] &&
	    [[ "$line" == *"host=$UX port=443 action=close reason=cage_ended up="*" down="*" ms="* ]]'

# ---- stop --------------------------------------------------------------------------
e2e_stop_daemon

# shellcheck disable=SC2119  # no note for the summary
gk_finish
