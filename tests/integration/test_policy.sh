#!/usr/bin/env bash
#
# test_policy.sh: the host policy every cage stays within (the `policy`
# key). Real curl and dig in gk-run cages against e2e_net.sh's hermetic
# internet, and gatekeeperd reloaded with SIGHUP:
#
#   - deny wins: a name the policy denies is refused whatever the cage's
#     allowlist says (403 naming the host policy; its lookup NXDOMAIN),
#     and so is a name that resolves only into a denied CIDR;
#   - the bound: a cage asking for a pattern outside it is refused at
#     create, the message naming the pattern and the bound (gk-run: 125);
#     an asking cage is never asked about a name outside it;
#   - a reload that narrows the bound narrows a live cage at once: what
#     it no longer may allow is refused from then on, with an audit line;
#   - gatekeeper_policy_info{version} and the "policy" member of audit
#     lines follow the version; a broken policy at reload keeps the
#     running one; -n and start refuse a broken one with FILE:LINE (2).
#
#   bash tests/integration/test_policy.sh build/gatekeeperd build/spawner/gk-run
#   meson test -C build policy_integration      (suite "integration")
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
E2E_NAME=test_policy.sh

e2e_args 0 "$@"
e2e_preamble dig dnsmasq curl unshare nsenter ip mount nginx fcgiwrap \
    openssl git nft bwrap timeout mkfifo promtool "$PYTHON"
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
CURL=(curl -fsS --max-time 10)
POLICY=$T/policy
detail() { GK_DETAIL=$(run_detail); }
info_version() {
	fetch_metrics "$T/m.txt"
	sed -n 's/^gatekeeper_policy_info{version="\([^"]*\)"} 1$/\1/p' "$T/m.txt"
}

# ---- the internet; a broken policy first --------------------------------------------
e2e_begin
gk_ok "the test internet is up (nginx, dnsmasq)"
mkdir -p "$T/home-root" "$T/work-root" "$SHARE" "$T/run"
chmod 755 "$T/run"
: >"$T/gk.conf"
printf 'version t0\ndeny *.github.com\nallow *.com\n' >"$POLICY"
out=$("$GKD" -n -c "$T/gk.conf" --policy "$POLICY" 2>&1)
rc=$?
GK_DETAIL="rc=$rc $out"
gk_check "gatekeeperd -n with a policy whose bound is a public suffix: exit 2, FILE:LINE" \
	eval '[ "$rc" = 2 ] && printf "%s" "$out" | grep -qF "$POLICY:3:"'
out=$(timeout 60 "$GKD" -f -c "$T/gk.conf" --policy "$T/nope" --control "$T/x.sock" \
	--metrics off 2>&1 </dev/null)
rc=$?
GK_DETAIL="rc=$rc $out"
gk_check "gatekeeperd with a policy file that is not there (named): exit 2 at start" \
	eval '[ "$rc" = 2 ] && printf "%s" "$out" | grep -qF "$T/nope"'

cat >"$POLICY" <<'EOF'
version t1
# no cage reaches these, whatever it asks for
deny api.github.com
deny 203.0.113.0/24
# cages may ask for these only
allow *.github.com
allow evil.example:443
EOF
gk_start_daemon GKD_PID "$GKD" -f -c "$T/gk.conf" --control "$SOCK" \
	--upstream "$EN_RESOLVER" --metrics "$METRICS" --audit-log "$AUDIT" \
	--policy "$POLICY"
daemon_ready "$GKD_PID" ||
	gk_abort "gatekeeperd starts with the policy" "$T/GKD_PID.log"
v=$(info_version)
GK_DETAIL="version ${v:-?}"
gk_check "gatekeeper_policy_info{version=\"t1\"} 1" test "$v" = t1

# ---- deny wins -----------------------------------------------------------------------
a0=$(gk_audit_mark "$AUDIT")
cage root --allow '*.github.com' --ro "$EN_DIR" -- sh -c "
	${CURL[*]} -o /dev/null https://github.com/index.html; echo github \$?
	${CURL[*]} -o /dev/null https://api.github.com/index.html; echo api \$?
	dig +short @$GW api.github.com A; echo dig \$?
	dig @$GW api.github.com A | grep -o 'status: [A-Z]*'"
detail
gk_check "a cage allowing *.github.com reaches github.com" grep -qx "github 0" "$T/run.out"
gk_check "... but not api.github.com, which the policy denies (refused by the proxy)" \
	eval 'grep -Eq "^api [1-9]" "$T/run.out" && grep -q "api.github.com:443" "$T/run.err"'
gk_check "... its lookup of api.github.com: NXDOMAIN" \
	grep -qx "status: NXDOMAIN" "$T/run.out"
gk_check "... the audit says host_policy, and the policy's version" \
	gk_audit_wait "$AUDIT" "$a0" 50 '"event":"proxy\.deny"' 'api\.github\.com' \
	    '"policy":"t1".*"reason":"host_policy"'

a0=$(gk_audit_mark "$AUDIT")
cage root --allow evil.example:443 --ro "$EN_DIR" -- \
	"${CURL[@]}" -o /dev/null https://evil.example/index.html
detail
gk_check "evil.example (allowed, within the bound) resolves only into a denied CIDR: refused" \
	eval '[ "$RUN_RC" != 0 ] && gk_audit_wait "$AUDIT" "$a0" 50 "\"event\":\"proxy.deny\"" \
	    evil.example "\"reason\":\"host_policy\""'

# ---- the bound -------------------------------------------------------------------------
cage root --allow github.com --allow pypi.org --ro "$EN_DIR" -- true
detail
gk_check "a cage asking for pypi.org, outside the bound: refused at create (125)" \
	eval '[ "$RUN_RC" = 125 ] && grep -q "pypi.org" "$T/run.err" &&
	    grep -q "host policy (version t1)" "$T/run.err" &&
	    grep -qF "*.github.com, evil.example:443" "$T/run.err"'
cage root --allow 'evil.example' --ro "$EN_DIR" -- true
detail
gk_check "... evil.example on every port is outside 'evil.example:443': refused too" \
	eval '[ "$RUN_RC" = 125 ] && grep -q "evil.example" "$T/run.err"'

# ---- a narrowing reload ------------------------------------------------------------------
rm -f "$T/work-root/go"
a0=$(gk_audit_mark "$AUDIT")
cage_bg BG root --allow github.com --allow codeload.github.com --ro "$EN_DIR" -- sh -c "
	${CURL[*]} -o /dev/null https://codeload.github.com/index.html; echo before \$? >r1
	i=0
	while [ ! -e go ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
	${CURL[*]} -o /dev/null https://github.com/index.html; echo github \$? >r2
	${CURL[*]} -o /dev/null https://codeload.github.com/index.html; echo after \$? >r3"
wait_ms 300 test -s "$T/work-root/r1"
cat >"$POLICY" <<'EOF'
version t2
deny api.github.com
allow github.com
EOF
kill -HUP "$GKD_PID"
wait_ms 300 grep -q "version t2" "$T/GKD_PID.log"
touch "$T/work-root/go"
gk_wait_exit "$BG" 300
GK_DETAIL="$(cat "$T/work-root/r1" "$T/work-root/r2" "$T/work-root/r3" 2>&1 | tr '\n' ' ') | $(oneline "$(tail -c 600 "$T/BG.err")")"
gk_check "a live cage with github.com and codeload.github.com reached codeload before the reload" \
	grep -qx "before 0" "$T/work-root/r1"
gk_check "... the reload narrowed the bound to github.com: codeload is refused, github.com works" \
	eval 'grep -qx "github 0" "$T/work-root/r2" && grep -Eq "^after [1-9]" "$T/work-root/r3"'
gk_check "... an audit line cage.update, reason policy, removed codeload.github.com" \
	gk_audit_wait "$AUDIT" "$a0" 50 '"event":"cage\.update"' '"reason":"policy"' \
	    'codeload\.github\.com'
v=$(info_version)
GK_DETAIL="version ${v:-?}"
gk_check "gatekeeper_policy_info{version=\"t2\"} after the reload; audit lines say t2" \
	eval '[ "$v" = t2 ] && gk_audit_wait "$AUDIT" "$a0" 50 "\"policy\":\"t2\""'

# ---- an asking cage is not asked outside the bound ---------------------------------------
a0=$(gk_audit_mark "$AUDIT")
ask_run once 0 --allow github.com -- sh -c "
	${CURL[*]} -o /dev/null https://codeload.github.com/index.html; echo codeload \$?"
detail
gk_check "an asking cage (bound: github.com) is refused codeload.github.com without a question" \
	eval 'grep -Eq "^codeload [1-9]" "$T/run.out" && [ "$(nevents ask)" = 0 ] &&
	    gk_audit_wait "$AUDIT" "$a0" 50 "outside the host policy"'

# ---- a broken policy at reload ---------------------------------------------------------------
printf 'version t3\nallow nonsense pattern here\n' >"$POLICY"
kill -HUP "$GKD_PID"
wait_ms 300 grep -q "the running host policy (t2) is kept" "$T/GKD_PID.log"
v=$(info_version)
GK_DETAIL="version ${v:-?}; log: $(grep -m1 "host policy" "$T/GKD_PID.log" | tail -c 300)"
gk_check "a broken policy at reload: said, with FILE:LINE; t2 keeps running" \
	eval '[ "$v" = t2 ] && grep -q "$POLICY:2:.*the running host policy (t2) is kept" "$T/GKD_PID.log"'
fetch_metrics "$T/m.txt"
GK_DETAIL=$(promtool check metrics <"$T/m.txt" 2>&1 | head -3)
gk_check "promtool check metrics accepts the output" \
	eval 'promtool check metrics <"$T/m.txt" >/dev/null 2>&1'

e2e_stop_daemon
# shellcheck disable=SC2119  # no note for the summary
gk_finish
