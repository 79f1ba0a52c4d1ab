#!/usr/bin/env bash
#
# test_ask.sh: gk-run --ask holds a connection to a host outside the
# allowlist while someone is asked, then goes on or refuses. Real curl in
# gk-run cages against e2e_net.sh's hermetic internet; the answers come
# from a supervisor program (ask_supervisor.py on --events-fd and
# --decisions-fd) or from a person at a real terminal (tmux):
#
#   - a held HTTP CONNECT, SOCKS5 request and transparent connection
#     (curl that resolves the name itself: the cage's DNS hands out a
#     placeholder from 198.18.0.0/15) each download 1 MiB byte-exact
#     after an allow decision;
#   - after deny, and after the timeout (--ask-timeout 2), each fails
#     cleanly: refused, not ended by curl's own --max-time (40 s; exit
#     28), after a deny well before it, after the timeout not before 2 s
#     and within 5 times that; a denied host:port is refused the next
#     time, without a question;
#   - ten parallel connections to one unlisted host: one question, ten
#     downloads; a client that gives up while held leaves the question
#     to its answer;
#   - save appends host:port to --ask-save FILE, and the next run with
#     --allow-file FILE needs no question; the command cannot write FILE
#     (read-only inside), and a FILE planted as a link to a file outside
#     is refused at start (125), the link's target untouched;
#   - special names and addresses are refused without a question, and
#     their lookups get no placeholder; a name that resolves only to a
#     special address (meta.example: the cloud metadata service) is asked
#     about like any name (nothing of it leaves before the answer), then
#     refused with the address named;
#   - the terminal: the question on the tty, answered with "y" + Enter;
#   - --ask with nobody to answer is an error at start (125);
#   - no packet to a placeholder reaches the internet (counted there),
#     gatekeeper_asks_total{decision} counts each question, the audit log
#     has one proxy.ask line per question with its decision and who made
#     it.
#
#   bash tests/integration/test_ask.sh build/gatekeeperd build/spawner/gk-run
#   meson test -C build ask_integration      (suite "integration")
#
# Runs as root in namespaces it creates itself (lib.sh). Prints "ok ..." /
# "FAIL ..." per check and a summary; exits 1 if any check failed or
# anything needed is missing (never a silent skip). GK_KEEP_TMP=1 keeps the
# temp directory.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_ask.sh

e2e_args 0 "$@"
e2e_preamble dig dnsmasq curl unshare nsenter ip mount nginx fcgiwrap \
    openssl git nft bwrap timeout tmux mkfifo setsid promtool "$PYTHON"
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
NOHTTP=(env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY)
NP=("${NOHTTP[@]}" -u ALL_PROXY -u all_proxy)
# --max-time 40: what a check tells from a refusal (exit 28, and twice
# what a refusal may take, 20 s); a prompt refusal is not measured
# against a bound fitted to one machine.
CURL_MAX=40
CURL=(curl -fsS --max-time "$CURL_MAX")

# done_with: the decisions of the ask.done lines, space-separated.
done_with() {
	"$PYTHON" - "$T/sup.log" <<'EOF'
import json, sys
out = []
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "ask.done":
        out.append("%s:%s=%s/%s" % (e.get("host"), e.get("port"),
                                    e.get("decision"), e.get("by")))
print(" ".join(out))
EOF
}
detail() { GK_DETAIL="$(run_detail) | sup: $(oneline "$(head -c 600 "$T/sup.log")")"; }
# same FILE HOST: is FILE (in root's work directory) HOST's blob.bin?
same() { cmp -s "$T/work-root/$1" "$EN_DIR/www/$2/blob.bin"; }
all_ten() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		same "p$i.bin" files.pythonhosted.org || return 1
	done
}

# ---- the internet, gatekeeperd -------------------------------------------------
e2e_begin
gk_ok "the test internet is up (nginx, dnsmasq)"
# 1 MiB of its own for each host the cages will ask about
for h in api.github.com codeload.github.com pypi.org files.pythonhosted.org \
    registry.npmjs.org evil.example; do
	head -c $((1024 * 1024)) /dev/urandom >"$EN_DIR/www/$h/blob.bin"
done
# A route to the placeholder range through the internet, where nftables
# counts what arrives for it: a placeholder that leaked would get there.
ip route add 198.18.0.0/15 via "$EN_INET_ADDR" dev up0
en_in nft -f - <<'EOF'
table inet gkask {
	counter leaked { }
	chain pre {
		type filter hook prerouting priority -300; policy accept;
		ip daddr 198.18.0.0/15 counter name leaked
	}
}
EOF
leaked() {
	en_in nft list counter inet gkask leaked | awk '/packets/ { print $2 }'
}
mkdir -p "$T/home-root" "$T/work-root" "$SHARE" "$T/run"
: >"$T/gk.conf"
gk_start_daemon GKD_PID "$GKD" -f -c "$T/gk.conf" --control "$SOCK" \
	--upstream "$EN_RESOLVER" --metrics "$METRICS" --audit-log "$AUDIT"
daemon_ready "$GKD_PID" ||
	gk_abort "gatekeeperd starts (control socket, metrics)" "$T/GKD_PID.log"
gk_ok "gatekeeperd is ready (pid $GKD_PID)"
chmod 755 "$T/run"
mark

# ---- allowed after the question: CONNECT, SOCKS5, transparent ---------------------
ask_run once 0.3 --allow github.com -- "${CURL[@]}" -o connect.bin \
	https://api.github.com/blob.bin
detail
gk_check "HTTP CONNECT to api.github.com held, 'once': 1 MiB byte-exact" \
	eval '[ "$RUN_RC" = 0 ] && same connect.bin api.github.com'
gk_check "... one question (kind http), ended 'once' by the supervisor" \
	eval '[ "$(nevents ask)" = 1 ] && grep -q "\"kind\":\"http\"" "$T/sup.log" &&
	    [ "$(done_with)" = "api.github.com:443=once/supervisor" ]'

ask_run run 0.3 --allow github.com -- sh -c \
	"${NOHTTP[*]} ${CURL[*]} -o socks.bin https://codeload.github.com/blob.bin &&
	 ${NOHTTP[*]} ${CURL[*]} -o socks2.bin https://codeload.github.com/blob.bin"
detail
gk_check "SOCKS5 to codeload.github.com held, 'run': 1 MiB byte-exact, twice" \
	eval '[ "$RUN_RC" = 0 ] && same socks.bin codeload.github.com &&
	    same socks2.bin codeload.github.com'
gk_check "... one question for both (kind socks5): 'run' let the second through" \
	eval '[ "$(nevents ask)" = 1 ] && grep -q "\"kind\":\"socks5\"" "$T/sup.log" &&
	    [ "$(done_with)" = "codeload.github.com:443=run/supervisor" ]'

ask_run once 0.3 --allow github.com -- sh -c \
	"getent ahostsv4 pypi.org | head -1 >addr.txt;
	 ${NP[*]} ${CURL[*]} --noproxy '*' -o tp.bin https://pypi.org/blob.bin"
detail
read -r ph _ <"$T/work-root/addr.txt"
gk_check "the cage resolves pypi.org (not allowed) to a placeholder: ${ph:-?} in 198.18.0.0/15" \
	eval '[[ "$ph" == 198.1[89].* ]]'
gk_check "transparent connection to pypi.org (curl without a proxy) held, 'once': 1 MiB byte-exact" \
	eval '[ "$RUN_RC" = 0 ] && same tp.bin pypi.org'
gk_check "... one question (kind transparent) naming pypi.org:443" \
	eval '[ "$(nevents ask)" = 1 ] && grep -q "\"kind\":\"transparent\"" "$T/sup.log" &&
	    [ "$(done_with)" = "pypi.org:443=once/supervisor" ]'

# ---- denied, and remembered -----------------------------------------------------
ask_run deny 0.3 --allow github.com -- sh -c "
	for kind in http socks tp tp-again; do
		t0=\$(date +%s%N)
		case \$kind in
		http) ${CURL[*]} -o /dev/null https://evil.example/blob.bin ;;
		socks) ${NOHTTP[*]} ${CURL[*]} -o /dev/null https://evil.example:8443/blob.bin ;;
		tp*) ${NP[*]} ${CURL[*]} --noproxy '*' -o /dev/null http://evil.example/blob.bin ;;
		esac
		echo \$kind \$? \$(( (\$(date +%s%N) - t0) / 1000000 ))
	done >denied.txt"
detail
GK_DETAIL="$GK_DETAIL | $(oneline "$(cat "$T/work-root/denied.txt")")"
gk_check "denied: CONNECT, SOCKS5 and transparent to evil.example all fail" \
	eval '[ "$(grep -Ec "^(http|socks|tp|tp-again) [1-9][0-9]* [0-9]+$" "$T/work-root/denied.txt")" = 4 ]'
gk_check "... each refused, not timed out: no curl timeout (28), each in under half of curl's --max-time (the supervisor answers after 0.3 s)" \
	eval 'awk -v max=$((CURL_MAX * 1000 / 2)) "\$2 == 28 || \$3 >= max { bad = 1 } END { exit bad }" "$T/work-root/denied.txt"'
gk_check "... three questions (443, 8443, 80); the denied port 80 is not asked again" \
	eval '[ "$(nevents ask)" = 3 ] &&
	    [ "$(done_with)" = "evil.example:443=deny/supervisor evil.example:8443=deny/supervisor evil.example:80=deny/supervisor" ]'
gk_check "... the second transparent try was refused, not held ($(awk '/^tp-again/ { print $3 }' "$T/work-root/denied.txt") ms; no question, above)" \
	eval 'awk -v max=$((CURL_MAX * 1000 / 2)) "/^tp-again/ && \$2 != 28 && \$3 < max { ok = 1 } END { exit !ok }" "$T/work-root/denied.txt"'
gk_check "... and gk-run said each denial, with the --allow" \
	eval 'grep -q "gk-run: denied evil.example:443 (not on the allowlist); to allow it: --allow evil.example" "$T/run.err"'

# ---- the timeout ---------------------------------------------------------------------
ask_run none 0 --allow github.com --ask-timeout 2 -- sh -c "
	for kind in http socks tp; do
		t0=\$(date +%s%N)
		case \$kind in
		http) ${CURL[*]} -o /dev/null https://api.github.com/blob.bin ;;
		socks) ${NOHTTP[*]} ${CURL[*]} -o /dev/null https://codeload.github.com/blob.bin ;;
		tp) ${NP[*]} ${CURL[*]} --noproxy '*' -o /dev/null https://pypi.org/blob.bin ;;
		esac
		echo \$kind \$? \$(( (\$(date +%s%N) - t0) / 1000000 ))
	done >timeout.txt"
detail
GK_DETAIL="$GK_DETAIL | $(oneline "$(cat "$T/work-root/timeout.txt")")"
gk_check "nobody answers (--ask-timeout 2): CONNECT, SOCKS5 and transparent fail" \
	eval '[ "$(grep -Ec "^(http|socks|tp) [1-9][0-9]* [0-9]+$" "$T/work-root/timeout.txt")" = 3 ]'
gk_check "... each ended by the ask timeout: not before 2 s, within 5 times it (10 s), not by curl's own (28)" \
	eval 'awk "\$2 == 28 || \$3 < 1900 || \$3 >= 10000 { bad = 1 } END { exit bad }" "$T/work-root/timeout.txt"'
gk_check "... three questions, each ended 'timeout' by gatekeeperd" \
	eval '[ "$(nevents ask)" = 3 ] &&
	    [ "$(done_with)" = "api.github.com:443=timeout/gatekeeperd codeload.github.com:443=timeout/gatekeeperd pypi.org:443=timeout/gatekeeperd" ]'

# ---- ten at once: one question ---------------------------------------------------------
ask_run once 1 --allow github.com -- sh -c '
	for i in 1 2 3 4 5 6 7 8 9 10; do
		curl -fsS --max-time 60 -o "p$i.bin" https://files.pythonhosted.org/blob.bin &
	done
	wait'
detail
gk_check "ten parallel connections to files.pythonhosted.org: one question" \
	eval '[ "$(nevents ask)" = 1 ] && [ "$(nevents ask.done)" = 1 ]'
gk_check "... and all ten downloads byte-exact after 'once'" \
	all_ten

# ---- a client that gives up while held ---------------------------------------------------
ask_run once 2 --allow github.com -- sh -c "
	${CURL[*]} --max-time 1 -o /dev/null https://api.github.com/blob.bin; echo gave-up \$?
	sleep 6"
detail
gk_check "a client that gives up while held (curl --max-time 1): its own timeout (28)" \
	grep -qx "gave-up 28" "$T/run.out"
gk_check "... the answer after it left ends the question; gatekeeperd runs on" \
	eval '[ "$(done_with)" = "api.github.com:443=once/supervisor" ] && kill -0 "$GKD_PID"'

# ---- save, then no question -------------------------------------------------------------
rm -f "$T/work-root/saved.allow"
ask_run save 0.3 --allow github.com --ask-save "$T/work-root/saved.allow" -- \
	sh -c "echo evil.example >>saved.allow && echo appended
	    ${CURL[*]} -o save.bin https://registry.npmjs.org/blob.bin"
detail
gk_check "'save': the download works, the question ended 'save'" \
	eval '[ "$RUN_RC" = 0 ] && same save.bin registry.npmjs.org &&
	    [ "$(done_with)" = "registry.npmjs.org:443=save/supervisor" ]'
GK_DETAIL=$(oneline "$(cat "$T/work-root/saved.allow" 2>&1)")
gk_check "... and --ask-save's file holds registry.npmjs.org:443 alone (the command could not append)" \
	eval '[ "$(cat "$T/work-root/saved.allow")" = registry.npmjs.org:443 ] &&
	    ! grep -q appended "$T/run.out"'
echo victim.example >"$T/victim"
ln -sfn "$T/victim" "$T/work-root/link.allow"
ask_run save 0.3 --allow github.com --ask-save "$T/work-root/link.allow" -- \
	"${CURL[@]}" -o /dev/null https://registry.npmjs.org/blob.bin
detail
gk_check "--ask-save FILE planted as a link to a file outside: refused at start (125), its target untouched" \
	eval '[ "$RUN_RC" = 125 ] && grep -q "a symbolic link" "$T/run.err" &&
	    [ "$(cat "$T/victim")" = victim.example ]'
rm -f "$T/work-root/link.allow"
rm -f "$T/work-root/save.bin"
ask_run deny 0 --allow github.com --allow-file "$T/work-root/saved.allow" -- \
	"${CURL[@]}" -o save.bin https://registry.npmjs.org/blob.bin
detail
gk_check "the next run with --allow-file that file: the download works, no question" \
	eval '[ "$RUN_RC" = 0 ] && same save.bin registry.npmjs.org &&
	    [ "$(nevents ask)" = 0 ]'

# ---- special names and addresses: never asked ---------------------------------------------
ask_run once 0 --allow github.com -- sh -c "{
	${CURL[*]} --max-time 20 -o /dev/null http://metadata.google.internal/ ; echo http \$?
	${CURL[*]} --max-time 20 --socks5-hostname $GW:1080 -o /dev/null http://localhost:8080/ ; echo socks \$?
	${CURL[*]} --max-time 20 -o /dev/null http://169.254.169.254/ ; echo addr \$?
	dig +short @$GW metadata.google.internal A; echo dig-internal
	dig +short @$GW printer.local A; echo dig-local
	dig +short @$GW pypi.org AAAA; echo dig-aaaa
	} >special.txt 2>&1"
detail
GK_DETAIL="$GK_DETAIL | $(oneline "$(cat "$T/work-root/special.txt")")"
gk_check "metadata.google.internal, localhost and 169.254.169.254: refused without a question" \
	eval 'grep -q "^http [1-9]" "$T/work-root/special.txt" &&
	    grep -q "^socks [1-9]" "$T/work-root/special.txt" &&
	    grep -q "^addr [1-9]" "$T/work-root/special.txt" && [ "$(nevents ask)" = 0 ]'
gk_check "... their lookups get no placeholder; an AAAA lookup gets no address" \
	eval 'grep -qx dig-aaaa "$T/work-root/special.txt" &&
	    ! grep -q "^198\.1[89]\." "$T/work-root/special.txt"'
# meta.example resolves only to 169.254.169.254: asked about (its name is
# not looked up before the answer), then refused, the address named.
ask_run once 0 --allow github.com -- "${CURL[@]}" --max-time 10 -o /dev/null http://meta.example/
detail
gk_check "meta.example (-> 169.254.169.254): asked about once, then refused" \
	eval '[ "$(nevents ask)" = 1 ] && [ "$RUN_RC" != 0 ]'
gk_check "... the denial names the address and says it is the cloud metadata service" \
	grep -q "gk-run: denied meta.example:80 (meta.example resolves only to special addresses: 169.254.169.254 is the cloud metadata service" "$T/run.err"

# ---- a person at a terminal ----------------------------------------------------------------
as_cmd root
printf '%q ' "${AS_CMD[@]}" "$GKRUN" --control "$SOCK" --ask --allow github.com \
	--ro "$EN_DIR" \
	-- "${CURL[@]}" -o tty.bin https://api.github.com/blob.bin >"$T/tty.cmd"
rm -f "$T/tty.rc" "$T/work-root/tty.bin"
tmux -S "$T/tmux.sock" new-session -d -x 220 -y 40 \
	"cd $T/work-root && $(cat "$T/tty.cmd") 2>$T/tty.err; echo \$? >$T/tty.rc; sleep 30"
prompt() { tmux -S "$T/tmux.sock" capture-pane -p | grep -q "wants api.github.com:443"; }
wait_ms 600 prompt
GK_DETAIL=$(oneline "$(tmux -S "$T/tmux.sock" capture-pane -p | grep . | tail -3)")
gk_check "the terminal shows the question ('... wants api.github.com:443 - [y] once ...')" \
	eval 'tmux -S "$T/tmux.sock" capture-pane -p | grep -q "wants api.github.com:443 - \[y\] once"'
tmux -S "$T/tmux.sock" send-keys y Enter
wait_ms 600 test -s "$T/tty.rc"
GK_DETAIL="rc=$(cat "$T/tty.rc" 2>/dev/null) err: $(oneline "$(cat "$T/tty.err" 2>/dev/null)")"
gk_check "... answered 'y' + Enter: the download completes byte-exact" \
	eval '[ "$(cat "$T/tty.rc" 2>/dev/null)" = 0 ] && same tty.bin api.github.com'
tmux -S "$T/tmux.sock" kill-server 2>/dev/null

# ---- nobody to answer ------------------------------------------------------------------
as_cmd root
( cd "$T/work-root" && exec setsid -w timeout -s KILL 120 "${AS_CMD[@]}" "$GKRUN" \
	--control "$SOCK" --ask --allow github.com -- true \
	>"$T/run.out" 2>"$T/run.err" </dev/null )
RUN_RC=$?
GK_DETAIL="rc=$RUN_RC $(oneline "$(cat "$T/run.err")")"
gk_check "--ask with no terminal and no --decisions-fd: exit 125, saying what is missing" \
	eval '[ "$RUN_RC" = 125 ] && grep -q -- "--ask needs" "$T/run.err"'

# ---- what gatekeeperd counted, audited and let out ------------------------------------------
after
n=$(leaked)
GK_DETAIL="packets: ${n:-?}"
gk_check "no packet to a placeholder address reached the internet" test "${n:-1}" = 0
GK_DETAIL="$(grep asks_total "$T/m1.txt" | oneline "$(cat)")"
gk_check "gatekeeper_asks_total: once 6, run 1, save 1, deny 3, timeout 3" \
	eval '[ "$(dm gatekeeper_asks_total decision=once)" = 6 ] &&
	    [ "$(dm gatekeeper_asks_total decision=run)" = 1 ] &&
	    [ "$(dm gatekeeper_asks_total decision=save)" = 1 ] &&
	    [ "$(dm gatekeeper_asks_total decision=deny)" = 3 ] &&
	    [ "$(dm gatekeeper_asks_total decision=timeout)" = 3 ]'
GK_DETAIL=$(promtool check metrics <"$T/m1.txt" 2>&1 | head -3)
gk_check "promtool check metrics accepts the output" \
	eval 'promtool check metrics <"$T/m1.txt" >/dev/null 2>&1'
gk_audit_wait -n 14 "$AUDIT" 0 300 '"event":"proxy\.ask"'
GK_DETAIL="$GK_AUDIT_N proxy.ask lines"
gk_check "the audit log: one proxy.ask line per question (14), with decision and who" \
	eval '[ "$GK_AUDIT_N" = 14 ] &&
	    gk_audit_wait "$AUDIT" 0 0 "\"event\":\"proxy.ask\"" "\"decision\":\"once\",\"by\":\"tty\"" &&
	    gk_audit_wait "$AUDIT" 0 0 "\"event\":\"proxy.ask\"" "\"decision\":\"timeout\",\"by\":\"gatekeeperd\""'

e2e_stop_daemon
# shellcheck disable=SC2119  # no note for the summary
gk_finish
