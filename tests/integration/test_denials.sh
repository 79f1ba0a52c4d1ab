#!/usr/bin/env bash
#
# test_denials.sh: a denial is seen at once by the person who ran gk-run,
# with the --allow that fixes it. Real clients in gk-run cages (curl over
# the HTTP proxy, SOCKS5 and the transparent path, wget, git, npm, ssh,
# python's resolver) against e2e_net.sh's hermetic internet:
#
#   - each kind of denial is exactly one stderr line naming the host and
#     the --allow to add, however often the client retries, and one
#     summary line at exit; a special range says why, with no --allow;
#   - the line comes while the command still runs (the command waits
#     until the line was seen);
#   - the HTTP proxy's 403 status line names the host and the rule (what
#     curl -v and wget print);
#   - an allowed connection that fails upstream (no address, refused)
#     has the reason in the 502 status line, and gk-run says it in one
#     line however often the client retries;
#   - -q silences the lines; --events-fd N gets them as JSON lines, also
#     with -q; a bad --events-fd is a usage error (125);
#   - --preset github lets git clone https://github.com/... through;
#     --preset list shows every preset with its patterns;
#   - --learn FILE: curl, git and a lookup reach hosts no --allow named;
#     FILE lists them (host:port, or the name of a lookup); the same
#     command with --allow-file FILE works with nothing denied; special
#     ranges stay refused while learning;
#   - TCP to an address the cage never resolved fails at the SYN with
#     ECONNREFUSED, long before the client's own timeout (python
#     connect(), ssh, node fetch), with one line naming the address;
#   - a client that resolves once and connects again after the capped TTL
#     (gatekeeperd runs with --ttl-cap 2) still connects, within
#     --pin-grace; with pin-grace 0 (SIGHUP) it is refused, and told,
#     unless another connection to that address is still open;
#   - the kernel's set pins holds a cage's addresses while it runs and
#     none once it ended; with pin-grace 2 (TTL 2) a connection 8 s after
#     the lookup is refused at the SYN.
#
#   bash tests/integration/test_denials.sh build/gatekeeperd build/spawner/gk-run
#   meson test -C build denials_integration      (suite "integration")
#
# Runs as root in namespaces it creates itself (lib.sh); gk-run cages run
# as root. Prints "ok   ..." / "FAIL ..." per check and a summary; exits 1
# if any check failed or anything needed is missing (never a silent skip).
# GK_KEEP_TMP=1 keeps the temp directory (logs).

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_denials.sh

e2e_args 0 "$@"
e2e_preamble dig dnsmasq curl wget npm ssh unshare nsenter ip mount nginx fcgiwrap \
    openssl git /usr/lib/git-core/git-http-backend nft bwrap timeout "$PYTHON"
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
EVIL=evil.example
NOHTTP=(env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY)
NP=("${NOHTTP[@]}" -u ALL_PROXY -u all_proxy)
LINE_HTTP="gk-run: denied $EVIL:443 (not on the allowlist); to allow it: --allow $EVIL"

# denials: gk-run's "denied" lines of the last run (the summary aside).
# The command writes to the same stderr meanwhile, and a client's message
# may start on the line before gk-run's (curl writes its first byte alone):
# from "gk-run: " on.
denials() { grep -oE 'gk-run: denied .*' "$T/run.err"; }
ndenials() { denials | grep -c .; }
summary() { grep -oE 'gk-run: [0-9]+ denied.*' "$T/run.err"; }
detail() { GK_DETAIL=$(run_detail); }

# ---- the internet, gatekeeperd -------------------------------------------------
e2e_begin
gk_ok "the test internet is up (nginx, dnsmasq)"
mkdir -p "$T/home-root" "$T/work-root" "$SHARE" "$T/run"
: >"$T/gk.conf"
gk_start_daemon GKD_PID "$GKD" -f -c "$T/gk.conf" --control "$SOCK" \
	--upstream "$EN_RESOLVER" --metrics "$METRICS" --audit-log "$AUDIT" \
	--ttl-cap 2
daemon_ready "$GKD_PID" ||
	gk_abort "gatekeeperd starts (control socket, metrics)" "$T/GKD_PID.log"
gk_ok "gatekeeperd is ready with its defaults (pid $GKD_PID)"
chmod 755 "$T/run"

# ---- HTTP proxy (curl): one line, the summary, the 403 status line --------------
cage root --allow api.github.com -- curl -sS -v --max-time 10 "https://$EVIL/"
detail
gk_check "curl (HTTP proxy) to $EVIL: refused" test "$RUN_RC" != 0
gk_check "... exactly one line: '$LINE_HTTP'" \
	eval '[ "$(ndenials)" = 1 ] && [ "$(denials)" = "$LINE_HTTP" ]'
gk_check "... and at exit: 'gk-run: 1 denied: $EVIL:443'" \
	eval '[ "$(summary)" = "gk-run: 1 denied: $EVIL:443" ]'
gk_check "... curl -v shows the 403 status line naming the host and the rule" \
	eval 'grep -q "HTTP/1.1 403 Forbidden by gatekeeper: $EVIL:443 is not on the allowlist" "$T/run.err"'

# ---- retried: still one line ------------------------------------------------------
cage root --allow api.github.com -- sh -c \
	"for i in 1 2 3 4 5; do curl -s --max-time 20 https://$EVIL/; done; exit 7"
detail
gk_check "five tries of the same host: one line, the count of distinct denials 1" \
	eval '[ "$RUN_RC" = 7 ] && [ "$(ndenials)" = 1 ] &&
	    [ "$(summary)" = "gk-run: 1 denied: $EVIL:443" ]'

# ---- an upstream failure: the status line says why; gk-run one line -----------------
# nosuch.github.com is allowed and has no address (the internet's dnsmasq
# answers NXDOMAIN); github.com:81 is refused. Not denials: no "denied"
# line, and gk-run says each once however often the client retries.
NOADDR=nosuch.github.com
WHY_NOADDR="it has no address (the upstream DNS said NXDOMAIN)"
unreachable() { grep -oE 'gk-run: [^ ]+ could not be reached: .*' "$T/run.err"; }
cage root --allow '*.github.com' -- sh -c \
	"for i in 1 2 3 4 5; do curl -sS -v --max-time 20 https://$NOADDR/; done; exit 7"
detail
gk_check "curl -v (HTTP proxy) to $NOADDR: the 502 status line names the host and why" \
	eval '[ "$RUN_RC" = 7 ] && grep -qF "HTTP/1.1 502 Bad Gateway: $NOADDR:443 could not be reached: $WHY_NOADDR" "$T/run.err"'
gk_check "... five tries: gk-run says it in one line, and no denial" \
	eval '[ "$(unreachable)" = "gk-run: $NOADDR:443 could not be reached: $WHY_NOADDR" ] &&
	    [ "$(ndenials)" = 0 ]'
cage root --allow github.com -- "${NOHTTP[@]}" sh -c \
	"curl -sS --max-time 20 http://github.com:81/; curl -sS --max-time 20 http://github.com:81/; exit 7"
detail
gk_check "curl (SOCKS5) to github.com:81, refused twice: one line saying the address refused it" \
	eval '[ "$RUN_RC" = 7 ] && [ "$(unreachable | grep -c .)" = 1 ] &&
	    unreachable | grep -qE "^gk-run: github.com:81 could not be reached: [0-9a-f.:]+ refused the connection$"'
cage root --allow github.com -- curl -sS -v --max-time 20 http://github.com:81/
detail
gk_check "curl -v (HTTP proxy, plain GET) to github.com:81: the 502 status line says it was refused" \
	eval 'grep -qE "HTTP/1.1 502 Bad Gateway: github.com:81 could not be reached: [0-9a-f.:]+ refused the connection" "$T/run.err"'
# ---- default labels: runs that differ only in their URL count apart ----------------
for u in "https://$EVIL/a" "https://$EVIL/b" "https://$EVIL/a"; do
	cage root --allow api.github.com -- curl -sS -o /dev/null \
		-w '%{http_code}' --max-time 10 "$u"
done
fetch_metrics "$T/labels.txt"
# the curl runs' series with a denial: label="gk-run: curl -sS -o /dev/null
# -w ... evil.example [HASH]"; the third run is the first again
curl_series() {
	grep '^gatekeeper_label_denied_total{label="gk-run: curl -sS -o /dev/null -w \.\.\. ' \
		"$T/labels.txt" | grep -v ' 0$'
}
GK_DETAIL="$(curl_series | tr '\n' '|')"
gk_check "three curl runs, two commands differing only in their URL: two label series in gatekeeper_label_denied_total (2 and 1 denials)" \
	eval '[ "$(curl_series | grep -c "evil\.example \[[0-9a-f]\{6\}\]\",kind=\"http\"}")" = 2 ] &&
	    [ "$(curl_series | sed "s/.* //" | sort | tr "\n" " ")" = "1 2 " ]'

# ---- wget: the status line it prints names the host --------------------------------
cage root --allow api.github.com -- wget -O /dev/null --timeout=10 --tries=1 \
	"https://$EVIL/"
detail
gk_check "wget to $EVIL: refused, one line" \
	eval '[ "$RUN_RC" != 0 ] && [ "$(ndenials)" = 1 ] &&
	    [ "$(denials)" = "$LINE_HTTP" ]'
gk_check "... wget's own error names $EVIL and the rule" \
	eval 'grep -q "Forbidden by gatekeeper: $EVIL:443 is not on the allowlist" "$T/run.err"'

# ---- SOCKS5 (curl through ALL_PROXY) ----------------------------------------------
cage root --allow api.github.com -- "${NOHTTP[@]}" curl -sS --max-time 10 \
	"https://$EVIL/"
detail
gk_check "curl (SOCKS5) to $EVIL: refused, one line naming it and the --allow" \
	eval '[ "$RUN_RC" != 0 ] && [ "$(ndenials)" = 1 ] &&
	    [ "$(denials)" = "$LINE_HTTP" ]'

# ---- a DNS lookup (python's resolver, no proxy) ---------------------------------------
cage root --allow api.github.com -- "$PYTHON" -c "
import socket, sys
try:
    socket.getaddrinfo('$EVIL', 443)
except socket.gaierror as e:
    sys.exit(3)
"
detail
gk_check "python resolves $EVIL: fails; one line for the lookup with the --allow" \
	eval '[ "$RUN_RC" = 3 ] && [ "$(ndenials)" = 1 ] &&
	    [ "$(denials)" = "gk-run: denied $EVIL (a DNS lookup: not on the allowlist); to allow it: --allow $EVIL" ]'
gk_check "... and the summary marks it as a lookup" \
	eval '[ "$(summary)" = "gk-run: 1 denied: $EVIL (DNS)" ]'

# ---- git: one line for the host it could not reach ---------------------------------
cage root --allow github.com -- git clone -q "https://$EVIL/acme/hello.git" x
detail
gk_check "git clone from $EVIL: fails, one line naming it and the --allow" \
	eval '[ "$RUN_RC" != 0 ] && [ "$(ndenials)" = 1 ] &&
	    [ "$(denials)" = "$LINE_HTTP" ]'

# ---- npm (HTTP proxy) and ssh (a lookup): one line each ---------------------------
cage root --allow registry.npmjs.org --ro "$EN_DIR" -- npm view left-pad \
	--registry "https://$EVIL/" --fetch-retries 0
detail
gk_check "npm with a registry not allowed: fails, one line naming it and the --allow" \
	eval '[ "$RUN_RC" != 0 ] && [ "$(ndenials)" = 1 ] &&
	    [ "$(denials)" = "$LINE_HTTP" ]'
gk_check "... npm's own error shows the 403 that names the host" \
	eval 'grep -qi "403" "$T/run.err" && grep -q "$EVIL" "$T/run.err"'
cage root --allow github.com -- ssh -o BatchMode=yes -o ConnectTimeout=20 \
	-o StrictHostKeyChecking=no "git@$EVIL" true
detail
gk_check "ssh to a host not allowed: fails, one line for its lookup with the --allow" \
	eval '[ "$RUN_RC" != 0 ] && [ "$(ndenials)" = 1 ] &&
	    denials | grep -q "^gk-run: denied $EVIL (a DNS lookup: not on the allowlist); to allow it: --allow $EVIL$"'

# ---- a special range: why, and no --allow ---------------------------------------------
cage root --allow api.github.com -- "${NP[@]}" curl -sS --noproxy '*' \
	--max-time 10 http://169.254.169.254/latest/meta-data/
detail
gk_check "curl to the cloud metadata address (transparent path): refused" \
	test "$RUN_RC" != 0
gk_check "... one line saying it is the cloud metadata service, without a plain --allow" \
	eval '[ "$(ndenials)" = 1 ] &&
	    denials | grep -q "^gk-run: denied 169.254.169.254:80 (169.254.169.254 is the cloud metadata service" &&
	    ! denials | grep -q "to allow it"'

# ---- refused at the SYN (transparent path) ------------------------------------------
# An address no DNS answer gave the cage: connect() fails with ECONNREFUSED
# at once (the kernel refuses the SYN; nothing was accepted), and gk-run
# says so. EVIL_IP is evil.example's address; the cage never resolved it.
# What came back tells a refusal from a dropped SYN (the client's own
# timeout, 30 s: "timeout"); the refusal must also come well before it.
EVIL_IP=203.0.113.66
cage root --allow api.github.com -- "${NP[@]}" "$PYTHON" -c "
import errno, socket, time
s = socket.socket()
s.settimeout(30)
t = time.monotonic()
try:
    s.connect(('$EVIL_IP', 443))
    print('connected', int((time.monotonic() - t) * 1000))
except socket.timeout:
    print('timeout', int((time.monotonic() - t) * 1000))
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno), int((time.monotonic() - t) * 1000))
"
detail
read -r what ms <"$T/run.out"
gk_check "connect() to $EVIL_IP:443, never resolved: ${what:-?} in ${ms:-?} ms (ECONNREFUSED, well before the client's 30 s timeout)" \
	eval '[ "$what" = ECONNREFUSED ] && [ "${ms:-30000}" -lt 15000 ]'
gk_check "... one line naming the address, why, and the --allow" \
	eval '[ "$(ndenials)" = 1 ] &&
	    [ "$(denials)" = "gk-run: denied $EVIL_IP:443 (an address no allowed name resolved to); to allow it: --allow $EVIL_IP/32, or allow the name it belongs to" ]'
cage root --allow api.github.com -- ssh -o BatchMode=yes -o ConnectTimeout=20 \
	-o StrictHostKeyChecking=no "git@$EVIL_IP" true
detail
gk_check "ssh to $EVIL_IP: 'Connection refused' (not a server that hangs up), one line" \
	eval '[ "$RUN_RC" != 0 ] && grep -q "port 22: Connection refused" "$T/run.err" &&
	    [ "$(ndenials)" = 1 ] && denials | grep -q "^gk-run: denied $EVIL_IP:22 (an address no allowed name resolved to)"'
# node's fetch ignores the proxy variables: the transparent path.
if node -e 'process.exit(typeof fetch === "function" ? 0 : 1)' 2>/dev/null; then
	cage root --allow api.github.com -- node -e "
fetch('http://$EVIL_IP/').then(() => process.exit(0),
    e => { console.log(e.cause && e.cause.code); process.exit(3); });"
	detail
	gk_check "node fetch('http://$EVIL_IP/'): ECONNREFUSED, one line" \
		eval '[ "$RUN_RC" = 3 ] && grep -qx ECONNREFUSED "$T/run.out" &&
		    [ "$(ndenials)" = 1 ] && denials | grep -q "^gk-run: denied $EVIL_IP:80 (an address no allowed name resolved to)"'
	cage root --allow api.github.com --ro "$EN_DIR" -- env \
		NODE_EXTRA_CA_CERTS="$EN_DIR/ca.crt" node -e "
fetch('https://api.github.com/index.html').then(r => r.text()).then(
    t => { process.stdout.write(t); return fetch('https://$EVIL/'); }).then(
    () => process.exit(0), e => { console.log(e.cause && e.cause.code); process.exit(3); });"
	detail
	gk_check "node fetch: an allowed name works; a denied one says ENOTFOUND and gk-run names it" \
		eval '[ "$RUN_RC" = 3 ] && grep -q "hello from api.github.com" "$T/run.out" &&
		    grep -qx ENOTFOUND "$T/run.out" && [ "$(ndenials)" = 1 ] &&
		    denials | grep -q "^gk-run: denied $EVIL (a DNS lookup: not on the allowlist); to allow it: --allow $EVIL$"'
else
	gk_ok "node has no fetch here ($(node --version 2>&1)): its checks are not run"
fi

# ---- while the command runs ----------------------------------------------------------
# The command, once refused, waits (up to 60 s) until the test saw the
# line; so the line can be seen while it runs only if gk-run says it then,
# not at the end (the test looks for 30 s), on any host.
rm -f "$T/work-root/tried" "$T/work-root/seen"
cage_bg BG root --allow api.github.com -- sh -c \
	"curl -s --max-time 20 https://$EVIL/ >/dev/null; date +%s%N >tried
	 i=0; while [ ! -e seen ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done"
gk_wait_for 600 test -s "$T/work-root/tried"
seen=
for ((i = 0; i < 300; i++)); do
	if grep -q "^gk-run: denied $EVIL:443" "$T/BG.err" 2>/dev/null; then
		seen=$(date +%s%N)
		break
	fi
	sleep 0.1
done
running=no
kill -0 "$BG" 2>/dev/null && [ ! -e "$T/work-root/seen" ] && running=yes
: >"$T/work-root/seen"
ms=
[ -n "$seen" ] && ms=$(((seen - $(cat "$T/work-root/tried")) / 1000000))
GK_DETAIL="err: $(oneline "$(cat "$T/BG.err")"); ${ms:-never} ms after curl's end; command still running: $running"
gk_check "the line is on stderr while the command still runs (${ms:-never} ms after the refusal)" \
	eval '[ -n "$ms" ] && [ "$running" = yes ]'
gk_wait_exit "$BG" 600
gk_untrack_pid "$BG"

# ---- -q and --events-fd ---------------------------------------------------------------
cage root -q --allow api.github.com -- curl -s --max-time 10 "https://$EVIL/"
detail
gk_check "-q: refused, and no denial or summary line" \
	eval '[ "$RUN_RC" != 0 ] && ! grep -q "denied" "$T/run.err"'
exec 3>"$T/ev.json"
cage root -q --events-fd 3 --allow api.github.com -- sh -c \
	"curl -s --max-time 20 https://$EVIL/; curl -s --max-time 20 https://$EVIL/; \
	 ${NP[*]} curl -s --noproxy '*' --max-time 20 http://169.254.169.254/"
exec 3>&-
GK_DETAIL="events: $(oneline "$(cat "$T/ev.json")") | $(run_detail)"
gk_check "--events-fd 3 (with -q): one JSON object per distinct denial, nothing on stderr" \
	"$PYTHON" - "$T/ev.json" "$T/run.err" <<'EOF'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
err = open(sys.argv[2]).read()
assert "denied" not in err, err
assert len(evs) == 2, evs
want = [("evil.example", 443, "not_allowlisted", "http"),
        ("169.254.169.254", 80, "special_range", "transparent")]
for e, (h, p, r, k) in zip(evs, want):
    assert (e["host"], e["port"], e["reason"], e["kind"]) == (h, p, r, k), e
    assert e["time"].endswith("Z"), e
EOF
# A reader that does not read while the command runs: more lines than a
# pipe holds wait in gk-run, which ends with its command all the same,
# says how many lines the reader did not get, and gives it whole lines.
mkfifo "$T/go.fifo"
exec 3> >(read -r _ <"$T/go.fifo"; exec cat >"$T/slow.json")
SLOW_READER=$!
cage root -q --events-fd 3 --allow api.github.com -- sh -c \
	'i=0; while [ $i -lt 900 ]; do getent hosts "n$i.evil.example" >/dev/null; i=$((i + 1)); done'
exec 3>&-
detail
gk_check "--events-fd whose reader does not read: gk-run ends with its command (exit 0, not the bound's kill), saying what was not delivered (${RUN_MS} ms)" \
	eval '[ "$RUN_RC" = 0 ] && grep -q "event line(s) not delivered" "$T/run.err"'
timeout 60 sh -c 'echo go >"$1"' sh "$T/go.fifo"
gk_wait_for 600 eval '! kill -0 "$SLOW_READER" 2>/dev/null'
GK_DETAIL="$(wc -lc <"$T/slow.json") lines/bytes; $(grep -o 'gk-run: --events-fd.*' "$T/run.err")"
gk_check "... and the reader, reading late, gets only whole JSON lines (more than 100)" \
	"$PYTHON" - "$T/slow.json" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "", "a partial last line"
evs = [json.loads(l) for l in lines[:-1]]
assert len(evs) > 100, len(evs)
assert all(e["kind"] == "dns" and e["host"].endswith(".evil.example") for e in evs)
EOF
cage root --events-fd 9 --allow api.github.com -- true
detail
gk_check "--events-fd 9 (not open): exit 125, saying so" \
	eval '[ "$RUN_RC" = 125 ] && grep -q "events-fd 9: not a descriptor open for writing" "$T/run.err"'
cage root --events-fd x -- true
detail
gk_check "--events-fd x: exit 125, a usage message" \
	eval '[ "$RUN_RC" = 125 ] && grep -q "is not a descriptor number" "$T/run.err"'

# ---- presets ---------------------------------------------------------------------
cage root --preset github --ro "$EN_DIR" -- git clone -q \
	https://github.com/acme/hello.git hello
detail
gk_check "--preset github: git clone https://github.com/acme/hello.git works, nothing denied" \
	eval '[ "$RUN_RC" = 0 ] && [ -f "$T/work-root/hello/README.md" -o -d "$T/work-root/hello/.git" ] &&
	    [ "$(ndenials)" = 0 ]'
out=$("$GKRUN" --preset list 2>&1)
GK_DETAIL=$out
gk_check "--preset list: each preset with its patterns (npm, pypi, github, ...)" \
	eval 'grep -Eq "^  npm +registry.npmjs.org registry.yarnpkg.com$" <<<"$out" &&
	    grep -Eq "^  github +github.com api.github.com" <<<"$out" &&
	    [ "$(grep -c "^  [a-z]" <<<"$out")" -ge 9 ]'
rm -rf "$T/work-root/hello"

# ---- learning an allowlist -------------------------------------------------------
LEARN_CMD='curl -sS --max-time 10 https://api.github.com/index.html >/dev/null &&
git clone -q https://github.com/acme/hello.git h && rm -rf h &&
getent hosts pypi.org >/dev/null'
rm -f "$T/work-root/learned.allow"
a0=$(gk_audit_mark "$AUDIT")
cage root --learn learned.allow --ro "$EN_DIR" -- sh -c "$LEARN_CMD"
detail
gk_check "--learn: the command reaches hosts no --allow named, and says so loudly at start" \
	eval '[ "$RUN_RC" = 0 ] && grep -q "WARNING: --learn: sh may reach ANY public host" "$T/run.err"'
GK_DETAIL="file: $(oneline "$(cat "$T/work-root/learned.allow" 2>&1)") | $(run_detail)"
gk_check "... the file lists them, sorted, under a header: api.github.com:443, github.com:443, pypi.org" \
	eval '[ "$(grep -v "^#" "$T/work-root/learned.allow")" = "$(printf "api.github.com:443\ngithub.com:443\npypi.org")" ] &&
	    head -n 1 "$T/work-root/learned.allow" | grep -q "^# learned by gk-run --learn on .* for: sh -c"'
gk_check "... and gk-run says how many entries it wrote" \
	grep -q "gk-run: --learn: 3 entries written to learned.allow" "$T/run.err"
# its last line: the command to run next (the rest of stderr: the
# command's own newlines are quoted in it)
NEXT=$(awk 'f { print; next }
	sub(/^gk-run: --learn: 3 entries written to learned\.allow; run next: /, "") { f = 1; print }' "$T/run.err")
GK_DETAIL="next: $(oneline "$NEXT")"
gk_check "... and the command to run next: the same options, with --allow-file learned.allow for --learn" \
	eval '[ "${NEXT%%sh -c *}" = "$GKRUN --control $SOCK --allow-file learned.allow --ro $EN_DIR -- " ]'
gk_audit_wait "$AUDIT" "$a0" 100 '"event":"cage\.destroy"' '"learned":[1-9]'
GK_DETAIL="audit: $(oneline "$(grep '"event":"cage.destroy"' "$AUDIT" | tail -n 2)")"
gk_check "... and its cage.destroy audit line says how often learning let something through" \
	test "$GK_AUDIT_N" -ge 1
# that command, as typed (as cage() runs gk-run: as root, bounded)
as_cmd root
( cd "$T/work-root" &&
  eval "exec timeout -s KILL 300 ${AS_CMD[*]@Q} $NEXT" >"$T/run.out" 2>"$T/run.err" </dev/null )
RUN_RC=$?
RUN_MS=0
detail
gk_check "gk-run's next command (--allow-file learned.allow): works, nothing denied" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(ndenials)" = 0 ]'
cage root --learn learned2.allow --allow api.github.com --ro "$EN_DIR" -- \
	sh -c "$LEARN_CMD; ${NP[*]} curl -s --noproxy '*' --max-time 20 http://169.254.169.254/; true"
detail
GK_DETAIL="file: $(oneline "$(cat "$T/work-root/learned2.allow" 2>&1)") | $(run_detail)"
gk_check "--learn with --allow api.github.com: only the others are written; the metadata address stays refused" \
	eval '[ "$(grep -v "^#" "$T/work-root/learned2.allow")" = "$(printf "github.com:443\npypi.org")" ] &&
	    denials | grep -q "^gk-run: denied 169.254.169.254:80"'

# ---- an answer kept past its TTL (transparent path) ------------------------------
# getent resolves through the gateway (TTL 2); curl connects 4 s later to
# that address, named by --resolve (no lookup of its own), no proxy.
late() {
	cage root --allow api.github.com --ro "$EN_DIR" -- "${NP[@]}" sh -c '
ip=$(getent hosts api.github.com | cut -d" " -f1)
[ -n "$ip" ] || exit 9
sleep 4
exec curl -sS --noproxy "*" --max-time 10 --resolve "api.github.com:443:$ip" \
	https://api.github.com/index.html'
	detail
}
late
gk_check "resolved once, connected 4 s later (TTL 2, within --pin-grace): it works" \
	eval '[ "$RUN_RC" = 0 ] && grep -q "hello from api.github.com" "$T/run.out"'

# ---- the kernel's pins: gone with their cage, and bounded by --pin-grace ----------
# npins: elements of set pins (link . address) in the kernel now (nft
# names a live link, and numbers one that is gone).
npins() { nft list set inet gatekeeper pins 2>/dev/null | grep -oE '[^ {,]+ \. [0-9]+(\.[0-9]+){3}' | grep -c .; }
rm -f "$T/work-root/resolved"
cage_bg PB root --allow api.github.com --ro "$EN_DIR" -- "${NP[@]}" sh -c '
getent hosts api.github.com >/dev/null && : >resolved
i=0; while [ $i -lt 600 ] && [ ! -e stop ]; do sleep 0.1; i=$((i + 1)); done'
wait_ms 600 test -e "$T/work-root/resolved"
n_live=$(npins)
: >"$T/work-root/stop"
gk_wait_exit "$PB" 600
gk_wait_for 300 eval '[ "$(npins)" = 0 ]'
GK_DETAIL="while the cage ran: $n_live element(s); after: $(oneline "$(nft list set inet gatekeeper pins 2>&1)")"
gk_check "set pins: the cage's address is there while it runs, and no element is left once it ended (pin-grace 600)" \
	eval '[ "${n_live:-0}" -ge 1 ] && [ "$(npins)" = 0 ]'
rm -f "$T/work-root/stop"
# --pin-grace 2 with TTL 2: 8 s after the lookup the address is no longer
# the cage's; the kernel refuses the SYN (not accepted, then reset)
echo 'pin-grace = 2' >"$T/gk.conf"
kill -HUP "$GKD_PID"
gk_wait_for 300 eval '[ "$(grep -c reloaded "$T/GKD_PID.log")" -ge 1 ]'
cage root --allow api.github.com --ro "$EN_DIR" -- "${NP[@]}" "$PYTHON" -c "
import errno, socket, time
ip = socket.gethostbyname('api.github.com')
time.sleep(8)
s = socket.socket()
s.settimeout(5)
try:
    s.connect((ip, 443))
    s.sendall(b'x')
    print('connected')
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
"
detail
gk_check "with --pin-grace 2 and TTL 2, a connection 8 s after the lookup is refused at the SYN (ECONNREFUSED)" \
	eval 'grep -qx ECONNREFUSED "$T/run.out"'
echo 'pin-grace = 0' >"$T/gk.conf"
kill -HUP "$GKD_PID"
gk_wait_for 300 eval '[ "$(grep -c reloaded "$T/GKD_PID.log")" -ge 2 ]'
late
gk_check "with pin-grace 0 (SIGHUP): refused, and the line says the address was not pinned" \
	eval '[ "$RUN_RC" != 0 ] && [ "$RUN_RC" != 9 ] && [ "$RUN_RC" != 77 ] &&
	    denials | grep -q "(an address no allowed name resolved to)"'

# A pin lasts while a connection of the cage uses its address: with
# pin-grace 0 and TTL 2, a second connection 7 s after the lookup works
# while the first is still open.
cage root --allow api.github.com --ro "$EN_DIR" -- "${NP[@]}" "$PYTHON" -c "
import os, socket, ssl, time
ip = socket.gethostbyname('api.github.com')
ctx = ssl.create_default_context(cafile=os.environ.get('SSL_CERT_FILE'))
def get():
    s = ctx.wrap_socket(socket.create_connection((ip, 443), timeout=10),
        server_hostname='api.github.com')
    s.sendall(b'GET /index.html HTTP/1.1\\r\\nHost: api.github.com\\r\\n\\r\\n')
    return s, s.recv(4096).split(b'\\r\\n')[0].decode()
a, r1 = get()
time.sleep(7)
b, r2 = get()
print(r1, '|', r2)
"
detail
gk_check "with pin-grace 0: a connection 7 s after the lookup works while another to that address is open" \
	eval '[ "$RUN_RC" = 0 ] && grep -q "^HTTP/1.1 200 OK | HTTP/1.1 200 OK$" "$T/run.out" &&
	    [ "$(ndenials)" = 0 ]'

# ---- stop ---------------------------------------------------------------------------
e2e_stop_daemon

# shellcheck disable=SC2119  # no note for the summary
gk_finish
