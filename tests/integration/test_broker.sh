#!/usr/bin/env bash
#
# test_broker.sh: the credential broker end to end. A secret lives in
# gk-run's environment only; `gk-run --credential NAME@HOST` gives the
# cage a placeholder in NAME, and gatekeeperd puts the secret on the wire
# for HOST only, in requests real clients make inside the cage, as root
# and as an unprivileged user:
#
#   curl (the cage's https_proxy: HTTP CONNECT; and ALL_PROXY: SOCKS5)
#       with "Authorization: Bearer $GH_TOKEN"   -> 200 from the API host
#       with "X-Api-Key: $SVC_API_KEY"           -> 200
#   Python urllib (https_proxy) with the Bearer header          -> 200
#   Node's fetch (undici ignores the proxy variables: the
#       transparent path, the cage's default --transparent on)  -> 200
#   git clone with the placeholder as the password in the URL, and
#       git clone + push with a credential helper that prints $GIT_TOKEN
#       (Basic auth, the secret put inside the base64)          -> work
#   npm install @corp/hello, the project's .npmrc saying
#       //registry.npmjs.org/:_authToken=${NPM_TOKEN}           -> works
#   npm install @corp/hello with no NPM_TOKEN and no --credential, the
#       cage user's ~/.npmrc holding the token itself: gk-run binds the
#       file's secret to registry.npmjs.org (--file-credentials, on by
#       default)                                                -> works;
#       `cat ~/.npmrc` inside shows a placeholder (npm_...), and with
#       --file-credentials off the same install gets 401
#
# against e2e_net.sh's hermetic internet with its services behind a
# secret (EN_SECRET_*: api.github.com/bearer and /apikey, the git
# repository github.com/corp/private.git behind Basic auth, the npm scope
# @corp on registry.npmjs.org), gatekeeperd verifying those servers
# against the test CA (--upstream-ca). The secrets are made here, random
# per run. Checked besides:
#   - inside, `env` shows each NAME as a placeholder of the secret's
#     length with its known prefix (ghp_, ghs_, npm_, sk-ant-), the rest
#     [A-Za-z0-9], never the secret; another run gets another one;
#   - a bound host's certificate comes from the cage's CA (TLS
#     terminated), an unbound one's from the test CA (the opaque tunnel);
#   - what the cage wrote (the clone's .git/config) holds the placeholder;
#   - the same requests without --credential (the secret in gk-run's
#     environment, which gk-run keeps out; or a placeholder-shaped value
#     given with --env) get 401 from the servers: the servers do check;
#   - leaks are refused and reported: a placeholder in a plain-HTTP
#     request head to an allowed host it is not bound to, and to its own
#     host over plain HTTP; its mark (the last 16 bytes) in a DNS name
#     under an allowed domain, in an HTTP CONNECT target name and in a TLS
#     server name (the transparent path); a placeholder sent over TLS to
#     a host brokered for another credential only; a placeholder as a
#     Basic password over plain HTTP (inside the base64). Each: the request never
#     reaches a server (nginx's log, the upstream resolver's log), one
#     audit line with "reason":"credential_leak" and "credential":"NAME"
#     (and not the placeholder's mark), gatekeeper_denied_total
#     {reason="credential_leak"} grows, and `gatekeeperctl denials` shows
#     it for a cage that still runs;
#   - no secret in the audit log, gatekeeperd's log, gk-run's stderr or
#     anything the cages printed; promtool accepts /metrics.
#
#   bash tests/integration/test_broker.sh build/gatekeeperd build/spawner/gk-run \
#       build/spawner/ctl/gatekeeperctl
#   meson test -C build broker_integration      (suite "integration")
#
# Runs as root in namespaces it creates itself (lib.sh); the unprivileged
# user is e2e_lib.sh's gk-e2e. Prints "ok   ..." / "FAIL ..." per check
# and a summary; exits 1 if any check failed or anything needed is missing
# (never a silent skip: a gatekeeperd without --upstream-ca or a gk-run
# without --credential is a failure, named, and the checks that need no
# broker still run). GK_KEEP_TMP=1 keeps the temp directory (logs).

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_broker.sh

e2e_args 0 "$@"
e2e_ctl_arg "${3:-}"
e2e_preamble dig dnsmasq curl unshare nsenter ip mount nginx fcgiwrap openssl \
    git /usr/lib/git-core/git-http-backend nft bwrap setpriv useradd \
    groupadd usermod getent timeout node npm promtool "$PYTHON"
node -e 'process.exit(typeof fetch === "function" ? 0 : 1)' 2>/dev/null ||
	e2e_die "node has no fetch (node >= 18 needed: $(node --version 2>&1))"
# The broker's parts: their absence fails the broker's checks, by name.
HAVE_UCA=0 HAVE_CRED=0
"$GKD" --help 2>&1 | grep -q -- '--upstream-ca' && HAVE_UCA=1
"$GKRUN" --help 2>&1 | grep -q -- '--credential' && HAVE_CRED=1
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
GH=192.0.2.10			# github.com
NP=(env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY
	-u ALL_PROXY -u all_proxy)

# ---------------------------------------------------------------------------
# The secrets: NAME -> prefix, value, the host it is bound to

# alnum N: N random [A-Za-z0-9]
alnum() {
	local s=
	while [ "${#s}" -lt "$1" ]; do
		s+=$(openssl rand -base64 96 | tr -dc 'A-Za-z0-9')
	done
	printf '%s\n' "${s:0:$1}"
}
CREDS=(GH_TOKEN SVC_API_KEY GIT_TOKEN NPM_TOKEN)
declare -A PREFIX=([GH_TOKEN]=ghp_ [SVC_API_KEY]=sk-ant- [GIT_TOKEN]=ghs_
	[NPM_TOKEN]=npm_)
declare -A SECRET BOUND=([GH_TOKEN]=api.github.com [SVC_API_KEY]=api.github.com
	[GIT_TOKEN]=github.com [NPM_TOKEN]=registry.npmjs.org)
SECRET[GH_TOKEN]=ghp_$(alnum 36)
SECRET[SVC_API_KEY]=sk-ant-$(alnum 48)
SECRET[GIT_TOKEN]=ghs_$(alnum 36)
SECRET[NPM_TOKEN]=npm_$(alnum 36)
EN_SECRET_BEARER=${SECRET[GH_TOKEN]}
EN_SECRET_APIKEY=${SECRET[SVC_API_KEY]}
EN_SECRET_GIT=${SECRET[GIT_TOKEN]}
EN_SECRET_NPM=${SECRET[NPM_TOKEN]}
# every --credential, and each alone
CRED_ALL=()
declare -A CRED_ARG
for n in "${CREDS[@]}"; do
	CRED_ARG[$n]="$n@${BOUND[$n]}"
	CRED_ALL+=(--credential "${CRED_ARG[$n]}")
done
ALLOW=(--allow '*.github.com' --allow registry.npmjs.org)

# gk-run's environment holds the secrets while WITH_SECRETS=1: base_env
# (e2e_lib.sh), which as_cmd and so cage use, prints them too.
eval "e2e_$(declare -f base_env)"
WITH_SECRETS=0
base_env() {
	local n
	e2e_base_env "$@"
	if [ "$WITH_SECRETS" = 1 ]; then
		for n in "${CREDS[@]}"; do
			printf '%s=%s\n' "$n" "${SECRET[$n]}"
		done
	fi
	return 0
}

# ---------------------------------------------------------------------------
# Helpers

# run_in WHO GK-RUN-ARGS... -- COMMAND...: cage (e2e_lib.sh) with the
# secrets in gk-run's environment; what the cage printed is kept in
# $T/all-runs.out too (the final search for the secrets).
run_in() {
	WITH_SECRETS=1
	cage "$@"
	WITH_SECRETS=0
	{ echo "== $*"; cat "$T/run.out"; } >>"$T/all-runs.out"
}
# bk WHO GK-RUN-ARGS... -- CASE ARGS...: run_in with the client script.
bk() {
	local who=$1 a=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		a+=("$1")
		shift
	done
	shift
	run_in "$who" "${a[@]}" --ro "$EN_DIR" --ro "$SHARE" -- sh "$SHARE/bk.sh" "$@"
}
# out1: the last line the cage printed (a client's "STATUS BODY").
out1() { grep -v '^PH=' "$T/run.out" | tail -n 1; }
# ph: the placeholder a leak case printed first ("PH=...").
ph() { sed -n 's/^PH=//p' "$T/run.out" | head -n 1; }

ngx_lines() { wc -l <"$EN_DIR/nginx-access.log"; }
# ngx_since N ERE: nginx's requests after its first N lines matching ERE.
ngx_since() { tail -n +"$(($1 + 1))" "$EN_DIR/nginx-access.log" | grep -Ec -- "$2"; }

# bmark / bafter: the metrics, the audit log's and nginx's lengths before
# a case; the metrics after it (dm: the change, e2e_lib.sh).
bmark() {
	mark
	AUDIT_MARK=$(gk_audit_mark "$AUDIT")
	NGX_MARK=$(ngx_lines)
}
bafter() { after; }

# leak_audit MARK: the audit lines since bmark whose reason is
# credential_leak, one per line: "event|proto|credential|M" where M is 1
# when the line holds MARK (any case), else 0.
leak_audit() {
	"$PYTHON" - "$AUDIT" "${AUDIT_MARK:-0}" "$1" <<'EOF'
import json, sys
try:
    lines = open(sys.argv[1], errors="replace").read().splitlines()
except OSError:
    sys.exit(0)
mark = sys.argv[3].lower()
for l in lines[int(sys.argv[2]):]:
    try:
        o = json.loads(l)
    except ValueError:
        continue
    if o.get("reason") != "credential_leak":
        continue
    print("%s|%s|%s|%d" % (o.get("event", ""), o.get("proto", o.get("kind", "")),
                           o.get("credential", ""),
                           bool(mark) and mark in l.lower()))
EOF
}
# audit_new_lines: the audit log's lines since bmark (failure details).
audit_new_lines() {
	tail -n +"$((${AUDIT_MARK:-0} + 1))" "$AUDIT" 2>/dev/null | cut -c1-300
}
nleaks() { dm gatekeeper_denied_total reason=credential_leak; }

# need_broker WHAT: 0 when gk-run has --credential; else a failed check
# saying WHAT was not run, and 1.
need_broker() {
	[ "$HAVE_CRED" = 1 ] && return 0
	gk_fail "$1: not run: $GKRUN has no --credential option (the broker's gk-run part is missing)"
	return 1
}

# ---------------------------------------------------------------------------
# The client script cages run: bk.sh CASE ARGS..., one request each,
# printing "STATUS BODY" (HTTP) or what the tool said; leak cases print
# the placeholder first ("PH=...").
write_bk() {
	cat >"$SHARE/bk.sh" <<'EOF'
share=$(dirname "$0")
c() { curl -sS --max-time 20 --connect-timeout 5 "$@"; }
# get ARGS...: curl, then "STATUS BODY" on one line
get() {
	code=$(c -o /tmp/bk.body -w '%{http_code}' "$@")
	rc=$?
	printf '%s %s\n' "$code" "$(tr '\n' ' ' </tmp/bk.body 2>/dev/null | sed 's/ *$//')"
	return $rc
}
# mark VALUE: its last 16 bytes
mark() { printf '%s' "$1" | tail -c 16; }
api=https://api.github.com
repo=github.com/corp/private.git
gitc() { git -c user.name=gk -c user.email=gk@example.invalid \
	-c credential.helper= -c "credential.helper=$share/git-cred.sh" "$@"; }
case $1 in
env) env ;;
curl-bearer) get -H "Authorization: Bearer $GH_TOKEN" "$api/bearer" ;;
budget)	# budget URL OTHER: 1 MiB put to URL (the budget cuts it; the
	# server answers once it has all), a GET of OTHER (another host), URL
	# again (a new connection): "A|B|C STATUS"
	head -c 1048576 /dev/zero >/tmp/bk.up
	printf 'A '; get -H 'Expect:' -T /tmp/bk.up "$2"
	printf 'B '; get "$3"
	printf 'C '; get -T /tmp/bk.up "$2" ;;
upload)	# 1 MiB sent to the bound host: what the cage's record says it
	# sent (a PUT to the upload sink, which answers once it has all of
	# it: /bearer answers at once, and curl may stop sending then)
	head -c 1048576 /dev/zero >/tmp/bk.up
	get -H 'Expect:' -H "Authorization: Bearer $GH_TOKEN" -T /tmp/bk.up \
		"$api/upload/t1-$$" ;;
curl-socks) get --proxy "$ALL_PROXY" -H "Authorization: Bearer $GH_TOKEN" "$api/bearer" ;;
curl-apikey) get -H "X-Api-Key: $SVC_API_KEY" "$api/apikey" ;;
issuer) c -v -o /dev/null "$2" 2>&1 | sed -n 's/^\* *issuer: //p' | head -n 1 ;;
py-bearer) python3 "$share/bearer.py" ;;
node-bearer) node "$share/bearer.js" ;;
git-url) git clone -q "https://x-access-token:$GIT_TOKEN@$repo" "$2" && echo cloned ;;
git-push)
	gitc clone -q "https://$repo" "$2" && cd "$2" && echo "$3" >"$3.txt" &&
	git add "$3.txt" && gitc commit -q -m "push $3" &&
	gitc push -q origin "HEAD:refs/heads/$3" && echo pushed ;;
npm)
	cd "$2" && npm install --no-audit --no-fund @corp/hello &&
	node -e 'console.log(require("@corp/hello").hello())' ;;
leak-http)	# leak-http URL [NAME]: NAME's placeholder in a header
	eval "v=\${${3:-GH_TOKEN}}"
	echo "PH=$v"
	get -H "Authorization: Bearer $v" "$2" ;;
leak-dns)	# the mark in a name under an allowed domain
	echo "PH=$GH_TOKEN"
	dig +time=2 +tries=1 "$(mark "$GH_TOKEN").github.com" A | grep -E 'status:|^[^;].*IN' ;;
leak-connect)	# the mark, lower-cased, in the CONNECT target name
	echo "PH=$GH_TOKEN"
	get "https://$(mark "$GH_TOKEN" | tr A-Z a-z).github.com/$2" ;;
leak-sni)	# the mark in the TLS server name, no proxy variables
	echo "PH=$GH_TOKEN"
	getent ahostsv4 github.com >/dev/null
	h=$(mark "$GH_TOKEN").github.com
	get --noproxy '*' --resolve "$h:443:192.0.2.10" "https://$h/$2" ;;
leak-basic)	# GIT_TOKEN's placeholder in Basic auth over plain HTTP
	echo "PH=$GIT_TOKEN"
	get -u "x-access-token:$GIT_TOKEN" "http://$repo/info/refs?service=git-upload-pack&$2" ;;
*) echo "bk.sh: unknown case $1" >&2; exit 2 ;;
esac
EOF
	cat >"$SHARE/git-cred.sh" <<'EOF'
#!/bin/sh
# a git credential helper: x-access-token and $GIT_TOKEN
[ "$1" = get ] || exit 0
printf 'username=x-access-token\npassword=%s\n' "$GIT_TOKEN"
EOF
	cat >"$SHARE/bearer.py" <<'EOF'
import os, urllib.error, urllib.request
req = urllib.request.Request("https://api.github.com/bearer", headers={
    "Authorization": "Bearer " + os.environ.get("GH_TOKEN", "")})
try:
    r = urllib.request.urlopen(req, timeout=20)
    print(r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
except OSError as e:
    print("ERR", e)
EOF
	cat >"$SHARE/bearer.js" <<'EOF'
fetch("https://api.github.com/bearer", {
	headers: { Authorization: "Bearer " + (process.env.GH_TOKEN || "") },
	signal: AbortSignal.timeout(20000),
}).then(async (r) => console.log(r.status, (await r.text()).trim()))
	.catch((e) => { console.log("ERR", e.cause ? (e.cause.code || e.cause.message) : e.message); process.exit(1); });
EOF
	chmod 755 "$SHARE/git-cred.sh"
	chmod -R a+rX "$SHARE"
}

# npm_project WHO NAME [bare]: a project directory with package.json and
# the .npmrc that names the scope's registry and takes the token from
# $NPM_TOKEN (bare: no .npmrc, the user's ~/.npmrc says it all); prints
# it.
npm_project() {
	local d=$T/work-$1/$2
	rm -rf "$d"
	mkdir -p "$d"
	printf '{"name":"p-%s","version":"1.0.0","private":true}\n' "$2" >"$d/package.json"
	[ "${3:-}" = bare ] ||
		printf '%s\n' '@corp:registry=https://registry.npmjs.org/' \
			'//registry.npmjs.org/:_authToken=${NPM_TOKEN}' >"$d/.npmrc"
	[ "$1" = user ] && chown -R "$E2E_USER:" "$d"
	printf '%s\n' "$d"
}

# ---- the internet ----------------------------------------------------------------
e2e_begin
CA=$EN_DIR/ca.crt
GIT_HEAD=$(cat "$EN_DIR/git-head")
CORP_HEAD=$(cat "$EN_DIR/corp/git-head" 2>/dev/null)
CORP_BARE=$EN_DIR/git-corp/$EN_CORP_REPO
gk_ok "the test internet is up, with the services behind the test's secrets"
mkdir -p "$T/home-root" "$T/host"

hc() {	# curl from the host, the test CA trusted through the environment
	as root curl -sS --noproxy '*' --max-time 20 --connect-timeout 5 \
		-o "$T/hc.body" -w '%{http_code}' "$@" 2>&1
}
r=$(hc -H "Authorization: Bearer ${SECRET[GH_TOKEN]}" https://api.github.com/bearer)
GK_DETAIL="got: $r $(cat "$T/hc.body")"
gk_check "internet: https://api.github.com/bearer with the secret: 200 bearer ok" \
	eval '[ "$r" = 200 ] && [ "$(cat "$T/hc.body")" = "bearer ok" ]'
for h in "" "Authorization: Bearer ghp_$(alnum 36)" "Authorization: bearer ${SECRET[GH_TOKEN]}x"; do
	r=$(hc ${h:+-H "$h"} https://api.github.com/bearer)
	GK_DETAIL="got: $r"
	gk_check "internet: .../bearer with ${h:-no header}: 401" test "$r" = 401
done
r=$(hc -H "Authorization: Bearer ${SECRET[GH_TOKEN]}" http://api.github.com/bearer)
GK_DETAIL="got: $r"
gk_check "internet: http://api.github.com/bearer (plain HTTP) takes the secret too: 200 (a leak there would work)" \
	test "$r" = 200
r=$(hc -H "X-Api-Key: ${SECRET[SVC_API_KEY]}" https://api.github.com/apikey)
GK_DETAIL="got: $r"
gk_check "internet: https://api.github.com/apikey with X-Api-Key: the secret: 200" test "$r" = 200
r=$(hc -H "X-Api-Key: sk-ant-$(alnum 48)" https://api.github.com/apikey)
GK_DETAIL="got: $r"
gk_check "internet: .../apikey with another key: 401" test "$r" = 401
r=$(hc https://api.github.com/index.html)
GK_DETAIL="got: $r"
gk_check "internet: api.github.com's other pages are as before" test "$r" = 200

r=$(hc -H "Authorization: Bearer ${SECRET[NPM_TOKEN]}" "https://registry.npmjs.org/@corp%2fhello")
GK_DETAIL="got: $r $(head -c 300 "$T/hc.body")"
gk_check "internet: https://registry.npmjs.org/@corp%2fhello with the npm secret: the packument" \
	eval '[ "$r" = 200 ] && grep -q "\"tarball\": \"https://registry.npmjs.org/@corp/hello/-/hello-1.0.0.tgz\"" "$T/hc.body"'
r=$(hc "https://registry.npmjs.org/@corp%2fhello")
GK_DETAIL="got: $r"
gk_check "internet: ... without it: 401" test "$r" = 401
r=$(hc https://registry.npmjs.org/@corp/hello/-/hello-1.0.0.tgz)
GK_DETAIL="got: $r"
gk_check "internet: the @corp tarball without the secret: 401" test "$r" = 401
r=$(hc https://registry.npmjs.org/left-pad)
GK_DETAIL="got: $r"
gk_check "internet: the registry's other packages need no token (left-pad: 200)" test "$r" = 200

rm -rf "$T/host/corp" "$T/host/corp2"
r=$(cd "$T/host" && as root timeout 60 git clone -q \
	"https://$EN_GIT_USER:${SECRET[GIT_TOKEN]}@github.com/$EN_CORP_REPO" corp 2>&1)
h=$(tgit -C "$T/host/corp" rev-parse HEAD 2>&1)
GK_DETAIL="git: $(oneline "$r") | HEAD $h, want $CORP_HEAD"
gk_check "internet: git clone https://github.com/$EN_CORP_REPO with the secret as the password" \
	eval '[ -n "$CORP_HEAD" ] && [ "$h" = "$CORP_HEAD" ]'
r=$(cd "$T/host/corp" && as root sh -c 'echo host >host.txt && git add host.txt &&
	git -c user.name=gk -c user.email=gk@example.invalid commit -q -m "push host" &&
	timeout 60 git push -q origin HEAD:refs/heads/host' 2>&1)
h=$(tgit -C "$CORP_BARE" log -1 --format=%s host 2>&1)
GK_DETAIL="git: $(oneline "$r") | the branch host: $(oneline "$h")"
gk_check "internet: git push with the secret works (REMOTE_USER: receive-pack)" test "$h" = "push host"
r=$(cd "$T/host" && as root timeout 60 git clone -q "https://github.com/$EN_CORP_REPO" corp2 2>&1)
GK_DETAIL="git: $(oneline "$r")"
gk_check "internet: git clone without credentials fails (401, no prompt)" \
	eval '[ ! -d "$T/host/corp2/.git" ] && [[ "$r" == *"uthentication"* || "$r" == *401* || "$r" == *"could not read Username"* ]]'
r=$(cd "$T/host" && as root timeout 60 git clone -q \
	"https://$EN_GIT_USER:ghs_$(alnum 36)@github.com/$EN_CORP_REPO" corp2 2>&1)
GK_DETAIL="git: $(oneline "$r")"
gk_check "internet: git clone with another password fails" \
	eval '[ ! -d "$T/host/corp2/.git" ]'

d=$(npm_project root host-npm)
r=$(cd "$d" && as root env "NPM_TOKEN=${SECRET[NPM_TOKEN]}" timeout 90 npm install \
	--no-audit --no-fund --cache "$T/host/npm-cache" @corp/hello 2>&1)
GK_DETAIL="npm: $(oneline "$r")"
gk_check "internet: npm install @corp/hello on the host, .npmrc's _authToken=\${NPM_TOKEN} holding the secret" \
	eval '[ "$(cd "$d" && node -e "console.log(require(\"@corp/hello\").hello())" 2>&1)" = "hello from @corp/hello" ]'
rm -rf "$T/host/npm-cache"

# ---- the user, gatekeeperd ---------------------------------------------------------
e2e_user
: >"$T/empty.conf"
GKD_ARGS=(-f -c "$T/empty.conf" --control "$SOCK" --upstream "$EN_RESOLVER"
	--metrics "$METRICS" --audit-log "$AUDIT" --log-level debug)
GK_DETAIL="$GKD --help has no --upstream-ca"
gk_check "gatekeeperd has --upstream-ca (the broker's daemon part)" test "$HAVE_UCA" = 1
[ "$HAVE_UCA" = 1 ] && GKD_ARGS+=(--upstream-ca "$CA")
GK_DETAIL="$GKRUN --help has no --credential"
gk_check "gk-run has --credential (the broker's gk-run part)" test "$HAVE_CRED" = 1
gk_start_daemon GKD_PID "$GKD" "${GKD_ARGS[@]}"
daemon_ready "$GKD_PID" || gk_abort "gatekeeperd starts (control socket, metrics)" "$T/GKD_PID.log"
gk_ok "gatekeeperd is ready (pid $GKD_PID$([ "$HAVE_UCA" = 1 ] && echo ", --upstream-ca the test CA"))"
chmod 755 "$T/run"
write_bk
: >"$T/all-runs.out"

# ---- without --credential: the servers refuse --------------------------------------
# nocred WHO HOW ENV-ARGS...: the requests with NAME unset (the secret in
# gk-run's environment only: kept out) or placeholder-shaped (--env).
nocred() {
	local who=$1 how=$2 d n
	shift 2
	bmark
	bk "$who" "${ALLOW[@]}" "$@" -- env
	GK_DETAIL=$(run_detail)
	if [ "$how" = unset ]; then
		gk_check "$who, no --credential: the secrets in gk-run's environment stay out (no GH_TOKEN ... NPM_TOKEN inside)" \
			eval '[ "$RUN_RC" = 0 ] && ! grep -Eq "^(GH_TOKEN|SVC_API_KEY|GIT_TOKEN|NPM_TOKEN)=" "$T/run.out"'
	else
		gk_check "$who, --env placeholders: GH_TOKEN inside is the value given" \
			eval '[ "$RUN_RC" = 0 ] && grep -qx "GH_TOKEN=$FAKE_GH" "$T/run.out"'
	fi
	for c in curl-bearer curl-socks py-bearer node-bearer; do
		bk "$who" "${ALLOW[@]}" "$@" -- "$c"
		GK_DETAIL=$(run_detail)
		gk_check "$who, $how: $c gets 401 from https://api.github.com/bearer" \
			eval '[ "$(out1 | cut -d" " -f1)" = 401 ]'
	done
	after
	GK_DETAIL="transparent allowed +$(dm gatekeeper_connections_total proto=transparent verdict=allowed)"
	gk_check "$who, $how: node's fetch took the transparent path (one transparent connection)" \
		eval '[ "$(dm gatekeeper_connections_total proto=transparent verdict=allowed)" = 1 ]'
	bk "$who" "${ALLOW[@]}" "$@" -- curl-apikey
	GK_DETAIL=$(run_detail)
	gk_check "$who, $how: curl with X-Api-Key gets 401" eval '[ "$(out1 | cut -d" " -f1)" = 401 ]'
	bafter
	GK_DETAIL="nginx: $(tail -n +$((NGX_MARK + 1)) "$EN_DIR/nginx-access.log" | grep -E '/(bearer|apikey)' | cut -c1-120 | paste -sd'|')"
	gk_check "$who, $how: nginx answered those 5 requests 401 (they reached it), and nothing was denied" \
		eval '[ "$(ngx_since "$NGX_MARK" "\"GET /(bearer|apikey) HTTP/1.1\" 401 ")" = 5 ] &&
		      [ "$(dm gatekeeper_denied_total)" = 0 ]'
	rm -rf "$T/work-$who/nc-clone"
	n=$(ngx_lines)
	bk "$who" "${ALLOW[@]}" "$@" --rw "$T/work-$who" --cwd "$T/work-$who" -- git-url nc-clone
	GK_DETAIL=$(run_detail)
	gk_check "$who, $how: git clone with \$GIT_TOKEN in the URL fails: 401 from nginx" \
		eval '[ "$RUN_RC" != 0 ] && [ ! -d "$T/work-$who/nc-clone/.git" ] &&
		      [ "$(ngx_since "$n" "GET /corp/private.git/info/refs[^ ]* HTTP/1.1\" 401 ")" -ge 1 ]'
	d=$(npm_project "$who" "nc-npm")
	n=$(ngx_lines)
	bk "$who" "${ALLOW[@]}" "$@" --rw "$d" --cwd "$d" -- npm "$d"
	GK_DETAIL=$(run_detail)
	gk_check "$who, $how: npm install @corp/hello fails: 401 from nginx" \
		eval '[ "$RUN_RC" != 0 ] && [ ! -d "$d/node_modules/@corp/hello" ] &&
		      [ "$(ngx_since "$n" "GET /@corp%2fhello HTTP/1.1\" 401 ")" -ge 1 ]'
}
FAKE_GH=ghp_$(alnum 36)
FAKES=(--env "GH_TOKEN=$FAKE_GH" --env "SVC_API_KEY=sk-ant-$(alnum 48)"
	--env "GIT_TOKEN=ghs_$(alnum 36)" --env "NPM_TOKEN=npm_$(alnum 36)")
for who in root user; do
	nocred "$who" unset
	nocred "$who" "placeholder-shaped --env" "${FAKES[@]}"
done

# ---- with --credential: the broker ---------------------------------------------------
# placeholder_ok NAME VALUE: VALUE is a placeholder for NAME's secret.
placeholder_ok() {
	local n=$1 v=$2 p=${PREFIX[$1]}
	[ "${#v}" = "${#SECRET[$n]}" ] && [ "$v" != "${SECRET[$n]}" ] &&
		[ "${v:0:${#p}}" = "$p" ] && [[ "${v:${#p}}" =~ ^[A-Za-z0-9]+$ ]]
}
declare -A PH_SEEN
broker() {
	local who=$1 n v w=$T/work-$1 d h
	need_broker "$who: the broker's cases" || return 0
	bk "$who" "${ALLOW[@]}" "${CRED_ALL[@]}" -- env
	for n in "${CREDS[@]}"; do
		v=$(sed -n "s/^$n=//p" "$T/run.out")
		GK_DETAIL="$(run_detail) | $n=$v"
		gk_check "$who: inside, $n is a placeholder: ${#SECRET[$n]} bytes, prefix ${PREFIX[$n]}, the rest [A-Za-z0-9], not the secret" \
			eval '[ "$RUN_RC" = 0 ] && placeholder_ok "$n" "$v"'
		if [ -n "${PH_SEEN[$n]:-}" ]; then
			GK_DETAIL="this run $v, an earlier one ${PH_SEEN[$n]}"
			gk_check "$who: $n's placeholder is new in this run" test "$v" != "${PH_SEEN[$n]}"
		fi
		PH_SEEN[$n]=$v
	done
	GK_DETAIL=$(run_detail)
	gk_check "$who: no secret anywhere in the cage's environment" \
		eval '! grep -qF -e "${SECRET[GH_TOKEN]}" -e "${SECRET[SVC_API_KEY]}" -e "${SECRET[GIT_TOKEN]}" -e "${SECRET[NPM_TOKEN]}" "$T/run.out"'

	bk "$who" "${ALLOW[@]}" "${CRED_ALL[@]}" -- issuer https://api.github.com/index.html
	h=$(out1)
	GK_DETAIL="$(run_detail)"
	gk_check "$who: api.github.com (bound) is terminated: its certificate is not the test CA's (issuer: $h)" \
		eval '[ "$RUN_RC" = 0 ] && [ -n "$h" ] && [[ "$h" != *"gatekeeper e2e test CA"* ]]'
	bk "$who" "${ALLOW[@]}" "${CRED_ALL[@]}" -- issuer https://codeload.github.com/index.html
	GK_DETAIL="$(run_detail)"
	gk_check "$who: codeload.github.com (not bound) keeps the opaque tunnel: the test CA's certificate" \
		eval '[[ "$(out1)" == *"gatekeeper e2e test CA"* ]]'

	for c in curl-bearer curl-socks py-bearer; do
		bmark
		bk "$who" "${ALLOW[@]}" "${CRED_ALL[@]}" -- "$c"
		bafter
		GK_DETAIL="$(run_detail) | http +$(dm gatekeeper_connections_total proto=http verdict=allowed) socks5 +$(dm gatekeeper_connections_total proto=socks5 verdict=allowed)"
		gk_check "$who: $c with the placeholder: 200 bearer ok (through the cage's proxy)" \
			eval '[ "$(out1)" = "200 bearer ok" ] &&
			      [ "$(($(dm gatekeeper_connections_total proto=http verdict=allowed) + $(dm gatekeeper_connections_total proto=socks5 verdict=allowed)))" -ge 1 ]'
	done
	bk "$who" "${ALLOW[@]}" "${CRED_ALL[@]}" -- curl-apikey
	GK_DETAIL=$(run_detail)
	gk_check "$who: curl with X-Api-Key: \$SVC_API_KEY (a second credential on the host): 200 apikey ok" \
		eval '[ "$(out1)" = "200 apikey ok" ]'
	bmark
	bk "$who" "${ALLOW[@]}" "${CRED_ALL[@]}" -- node-bearer
	bafter
	GK_DETAIL="$(run_detail) | transparent allowed +$(dm gatekeeper_connections_total proto=transparent verdict=allowed)"
	gk_check "$who: node fetch (no proxy: the transparent path) with the placeholder: 200 bearer ok" \
		eval '[ "$(out1)" = "200 bearer ok" ] &&
		      [ "$(dm gatekeeper_connections_total proto=transparent verdict=allowed)" -ge 1 ]'

	rm -rf "$w/clone" "$w/push"
	bk "$who" "${ALLOW[@]}" "${CRED_ALL[@]}" --rw "$w" --cwd "$w" -- git-url clone
	h=$(tgit -C "$w/clone" rev-parse HEAD 2>&1)
	GK_DETAIL="$(run_detail) | HEAD $h, want $CORP_HEAD"
	gk_check "$who: git clone https://x-access-token:\$GIT_TOKEN@github.com/$EN_CORP_REPO: the repository" \
		eval '[ "$RUN_RC" = 0 ] && [ "$h" = "$CORP_HEAD" ]'
	GK_DETAIL="$(grep url "$w/clone/.git/config" 2>&1 | head -n 2)"
	gk_check "$who: ... the clone's .git/config holds the placeholder, not the secret" \
		eval 'grep -q "url = https://x-access-token:ghs_" "$w/clone/.git/config" &&
		      ! grep -qF "${SECRET[GIT_TOKEN]}" "$w/clone/.git/config"'
	bk "$who" "${ALLOW[@]}" "${CRED_ALL[@]}" --rw "$w" --cwd "$w" -- git-push push "from-$who"
	h=$(tgit -C "$CORP_BARE" log -1 --format=%s "from-$who" 2>&1)
	GK_DETAIL="$(run_detail) | the branch from-$who: $(oneline "$h")"
	gk_check "$who: git clone + push through a credential helper printing \$GIT_TOKEN (Basic): the push landed" \
		eval '[ "$RUN_RC" = 0 ] && [ "$h" = "push from-$who" ]'

	d=$(npm_project "$who" npm)
	bk "$who" "${ALLOW[@]}" "${CRED_ALL[@]}" --rw "$d" --cwd "$d" -- npm "$d"
	GK_DETAIL=$(run_detail)
	gk_check "$who: npm install @corp/hello (.npmrc: _authToken=\${NPM_TOKEN}) installs it, and it runs" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(out1)" = "hello from @corp/hello" ]'
	GK_DETAIL="$(find "$d" -maxdepth 1 -printf '%f ' 2>&1)"
	gk_check "$who: ... nothing the cage wrote in the project holds the npm secret" \
		eval '! grep -rqF "${SECRET[NPM_TOKEN]}" "$d"'
}
for who in root user; do
	broker "$who"
done

# ---- the settings files' secrets: ~/.npmrc's token bound to its host ---------------
# run_plain WHO GK-RUN-ARGS... -- COMMAND...: cage (as bk, with the test
# internet's and the client script's directories) without the secrets in
# gk-run's environment (no NPM_TOKEN, no --credential); what it printed
# joins the final search for the secrets.
run_plain() {
	local who=$1
	shift
	cage "$who" --ro "$EN_DIR" --ro "$SHARE" "$@"
	{ echo "== $who $*"; cat "$T/run.out"; } >>"$T/all-runs.out"
}
# npmrc_line: the _authToken line of the ~/.npmrc the cage printed.
npmrc_line() { sed -n 's|^//registry.npmjs.org/:_authToken=||p' "$T/run.out"; }
filecreds() {
	local who=$1 h=$T/home-$1 d n v want
	need_broker "$who: ~/.npmrc's token bound to its host" || return 0
	printf '%s\n' '@corp:registry=https://registry.npmjs.org/' \
		"//registry.npmjs.org/:_authToken=${SECRET[NPM_TOKEN]}" >"$h/.npmrc"
	chmod 600 "$h/.npmrc"
	[ "$who" = user ] && chown "$E2E_USER:" "$h/.npmrc"

	d=$(npm_project "$who" fc-npm bare)
	n=$(ngx_lines)
	run_plain "$who" "${ALLOW[@]}" --rw "$d" --cwd "$d" -- sh "$SHARE/bk.sh" npm "$d"
	GK_DETAIL="$(run_detail) | nginx: $(tail -n +$((n + 1)) "$EN_DIR/nginx-access.log" | grep corp | cut -c1-120 | paste -sd'|')"
	gk_check "$who: npm install @corp/hello, ~/.npmrc holding the token (no NPM_TOKEN, no --credential): installs it, and it runs" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(out1)" = "hello from @corp/hello" ] &&
		      [ "$(ngx_since "$n" "GET /@corp%2fhello HTTP/1.1\" 200 ")" -ge 1 ]'
	want="gk-run: credentials from ~/.npmrc (registry.npmjs.org) go on the wire for their hosts only"
	GK_DETAIL="stderr: $(oneline "$(cat "$T/run.err")")"
	gk_check "$who: ... gk-run said which file's secret it bound, and for which host, never the value" \
		eval 'grep -qxF "$want" "$T/run.err" && ! grep -qF "${SECRET[NPM_TOKEN]}" "$T/run.err"'
	GK_DETAIL="$(find "$d" -maxdepth 1 -printf '%f ' 2>&1)"
	gk_check "$who: ... nothing the cage wrote in the project holds the npm secret" \
		eval '! grep -rqF "${SECRET[NPM_TOKEN]}" "$d"'

	run_plain "$who" "${ALLOW[@]}" -- sh -c 'cat "$HOME/.npmrc"'
	v=$(npmrc_line)
	GK_DETAIL="$(run_detail)"
	gk_check "$who: inside, ~/.npmrc's token is a placeholder: ${#SECRET[NPM_TOKEN]} bytes, prefix npm_, the rest [A-Za-z0-9], not the secret; the scope's line kept" \
		eval '[ "$RUN_RC" = 0 ] && placeholder_ok NPM_TOKEN "$v" &&
		      grep -qx "@corp:registry=https://registry.npmjs.org/" "$T/run.out" &&
		      ! grep -qF "${SECRET[NPM_TOKEN]}" "$T/run.out"'
	run_plain "$who" "${ALLOW[@]}" -- sh -c 'cat "$HOME/.npmrc"'
	GK_DETAIL="this run $(npmrc_line), the one before $v"
	gk_check "$who: ... another run, another placeholder" \
		eval '[ -n "$v" ] && [ "$(npmrc_line)" != "$v" ]'

	d=$(npm_project "$who" fc-off bare)
	n=$(ngx_lines)
	run_plain "$who" "${ALLOW[@]}" --file-credentials off --rw "$d" --cwd "$d" -- sh "$SHARE/bk.sh" npm "$d"
	GK_DETAIL="$(run_detail)"
	gk_check "$who: --file-credentials off: the same npm install fails: 401 from nginx, and gk-run binds nothing" \
		eval '[ "$RUN_RC" != 0 ] && [ ! -d "$d/node_modules/@corp/hello" ] &&
		      [ "$(ngx_since "$n" "GET /@corp%2fhello HTTP/1.1\" 401 ")" -ge 1 ] &&
		      ! grep -qF "credentials from" "$T/run.err"'
	run_plain "$who" "${ALLOW[@]}" --file-credentials off -- sh -c 'cat "$HOME/.npmrc"'
	v=$(npmrc_line)
	GK_DETAIL="$(run_detail)"
	gk_check "$who: ... inside, ~/.npmrc's token is the fixed placeholder (npm_gkplaceholder...)" \
		eval '[ "${#v}" = "${#SECRET[NPM_TOKEN]}" ] && [[ "$v" == npm_gkplaceholder* ]]'
	rm -f "$h/.npmrc"
}
for who in root user; do
	filecreds "$who"
done

# ---- the record of what passed -----------------------------------------------------
# destroy_pick traffic HOST PORT | upload BUDGET: from the last cage.destroy
# line since the mark, HOST:PORT's "UP DOWN CONNECTIONS" in its traffic,
# or BUDGET's "SENT REFUSED" in its upload budgets.
destroy_pick() {
	"$PYTHON" - "$AUDIT" "${AUDIT_MARK:-0}" "$@" <<'EOF'
import json, sys
try:
    lines = open(sys.argv[1], errors="replace").read().splitlines()
except OSError:
    sys.exit(0)
out = ""
for ln in lines[int(sys.argv[2]):]:
    try:
        e = json.loads(ln)
    except ValueError:
        continue
    if e.get("event") != "cage.destroy":
        continue
    if sys.argv[3] == "traffic":
        for h in e.get("traffic", {}).get("hosts", []):
            if h.get("host") == sys.argv[4] and h.get("port") == int(sys.argv[5]):
                out = "%d %d %d" % (h["up"], h["down"], h["connections"])
    for b in e.get("upload", []) if sys.argv[3] == "upload" else []:
        if b.get("budget") == sys.argv[4]:
            out = "%d %d" % (b["sent"], b["refused"])
print(out)
EOF
}
destroy_traffic() { destroy_pick traffic "$@"; }
destroy_upload() { destroy_pick upload "$@"; }
traffic() {
	local who=$1 t up
	need_broker "$who: the record of what passed" || return 0
	bmark
	bk "$who" "${ALLOW[@]}" "${CRED_ALL[@]}" -- upload
	# this run's line (another cage's end may come first)
	gk_audit_wait "$AUDIT" "$AUDIT_MARK" 30 '"event":"cage\.destroy"' \
		'"bk\.sh","upload"\]' '"host":"api\.github\.com","port":443'
	t=$(destroy_traffic api.github.com 443)
	up=${t%% *}
	GK_DETAIL="$(run_detail) | traffic: $t | $(oneline "$(audit_new_lines | grep cage.destroy)")"
	gk_check "$who: T1 1 MiB put to api.github.com through the broker: 201 or 204" \
		eval '[ "$RUN_RC" = 0 ] && [[ "$(out1)" == 20[14]* ]]'
	GK_DETAIL="traffic: $t"
	gk_check "$who: T1 ... its cage.destroy line's traffic: api.github.com:443 up 1 MiB (to within the request head), one connection" \
		eval '[ -n "$up" ] && [ "$up" -ge 1048576 ] && [ "$up" -le $((1048576 + 16384)) ] &&
		      [ "${t##* }" = 1 ]'
}
for who in root user; do
	traffic "$who"
done

# ---- upload budgets ----------------------------------------------------------------
nbudget() { dm gatekeeper_denied_total reason=upload_budget; }
# budget WHO PATH GK-RUN-ARGS...: --max-upload 256K@api.github.com; the
# cage puts 1 MiB there (cut at 256 KiB: no answer), GETs
# codeload.github.com (another host: works), then tries api.github.com
# again (refused).
budget() {
	local who=$1 path=$2 u t lines
	shift 2
	bmark
	bk "$who" "${ALLOW[@]}" "$@" --max-upload 256K@api.github.com -- budget \
		"https://api.github.com/upload/$who-$RANDOM" https://codeload.github.com/index.html
	gk_audit_wait "$AUDIT" "$AUDIT_MARK" 30 '"event":"cage\.destroy"' \
	    '"budget":"256K@api\.github\.com"'
	bafter
	u=$(destroy_upload 256K@api.github.com)
	t=$(destroy_traffic api.github.com 443)
	lines=$(audit_new_lines | grep -F '"reason":"upload_budget"')
	GK_DETAIL="$(run_detail) | upload: $u | traffic: $t"
	gk_check "$who: U1 ($path) 1 MiB put to api.github.com past --max-upload 256K@api.github.com: cut (no 2xx)" \
		eval 'grep -q "^A " "$T/run.out" && ! grep -Eq "^A 2[0-9][0-9]" "$T/run.out"'
	gk_check "$who: U1 ... codeload.github.com (another host) still works: 200" \
		grep -q "^B 200" "$T/run.out"
	gk_check "$who: U1 ... a new request to api.github.com is refused (no 2xx)" \
		eval 'grep -q "^C " "$T/run.out" && ! grep -Eq "^C 2[0-9][0-9]" "$T/run.out"'
	gk_check "$who: U1 ... gk-run said so with the figures: denied api.github.com:443 (the upload budget 256K@api.github.com is spent: 262144 of 262144 bytes sent" \
		grep -qF "denied api.github.com:443 (the upload budget 256K@api.github.com is spent: 262144 of 262144 bytes sent" "$T/run.err"
	GK_DETAIL="upload_budget lines: $(oneline "$lines" | cut -c1-600)"
	gk_check "$who: U1 ... audit lines with reason upload_budget for api.github.com (the cut, the refusal)" \
		eval '[ "$(grep -c "\"host\":\"api.github.com\"" <<<"$lines")" -ge 2 ]'
	GK_DETAIL="upload: $u | traffic: $t | $(oneline "$(audit_new_lines | grep cage.destroy | cut -c1-600)")"
	gk_check "$who: U1 ... the cage.destroy line: the budget's 262144 bytes sent, refused at least once; api.github.com:443 up at most that" \
		eval '[ "${u%% *}" = 262144 ] && [ "${u##* }" -ge 1 ] && [ -n "$t" ] &&
		      [ "${t%% *}" -le 262144 ] && [ "${t%% *}" -ge 200000 ]'
	GK_DETAIL="upload_budget +$(nbudget)"
	gk_check "$who: U1 ... gatekeeper_denied_total{reason=\"upload_budget\"} grew" \
		eval '[ "$(nbudget)" -ge 1 ]'
}
budget root "opaque tunnel"
if need_broker "user: the upload budget through the broker"; then
	budget user broker "${CRED_ALL[@]}"
fi
# A bad budget is a usage error that names it.
cage root "${ALLOW[@]}" --max-upload 1M@10.0.0.0/8 -- true
GK_DETAIL=$(run_detail)
gk_check "gk-run --max-upload 1M@10.0.0.0/8: exit 125, the error names the address range" \
	eval '[ "$RUN_RC" = 125 ] && grep -q "max-upload.*address range" "$T/run.err"'

# ---- leaks: refused and reported ---------------------------------------------------
# leak WHO ID NAME WHAT NOTSEEN-ERE GK-RUN-ARGS... -- bk.sh CASE ARGS...: a
# leak of NAME's placeholder: refused (nothing in NOTSEEN-ERE reached
# nginx's log since, nor the mark the upstream resolver's), one audit line
# with reason credential_leak and "credential":NAME but not the mark, the
# metric grown.
leak() {
	local who=$1 id=$2 n=$3 what=$4 nre=$5 p m lines
	shift 5
	bmark
	bk "$who" "$@"
	gk_audit_wait "$AUDIT" "$AUDIT_MARK" 30 '"reason":"credential_leak"'
	bafter
	p=$(ph)
	m=${p: -16}
	lines=$(leak_audit "$m")
	[ -n "$m" ] && LEAK_MARKS+=("$m")
	GK_DETAIL="$(run_detail) | nginx: $(tail -n +$((NGX_MARK + 1)) "$EN_DIR/nginx-access.log" | cut -c1-150 | paste -sd'|')"
	gk_check "$who: $id $what: refused (nothing reached the server)" \
		eval '[ -n "$p" ] && [ "$(ngx_since "$NGX_MARK" "$nre")" = 0 ] &&
		      ! grep -qiF -- "$m" "$EN_DIR/upstream.log" && ! grep -Eq "^2[0-9][0-9] " <(out1)'
	GK_DETAIL="credential_leak lines: $(oneline "$lines") | new audit lines: $(oneline "$(audit_new_lines)")"
	gk_check "$who: $id ... an audit line: reason credential_leak, \"credential\":\"$n\"" \
		eval '[ "$(grep -c . <<<"$lines")" -ge 1 ] && grep -q "^[^|]*|[^|]*|$n|" <<<"$lines"'
	gk_check "$who: $id ... the audit line does not hold the placeholder's mark" \
		eval '[ -n "$lines" ] && ! grep -q "|1$" <<<"$lines"'
	GK_DETAIL="gatekeeper_denied_total{reason=credential_leak} +$(nleaks); denied +$(dm gatekeeper_denied_total)"
	gk_check "$who: $id ... gatekeeper_denied_total{reason=\"credential_leak\"} grew" \
		eval '[ "$(nleaks)" -ge 1 ]'
}
LEAK_MARKS=()
leaks() {
	local who=$1 t=leak-$1-$RANDOM
	need_broker "$who: the leak cases" || return 0
	leak "$who" L1 GH_TOKEN "GH_TOKEN's placeholder in a plain-HTTP header to codeload.github.com (allowed, not bound)" \
		"/$t-1" "${ALLOW[@]}" "${CRED_ALL[@]}" -- leak-http "http://codeload.github.com/$t-1"
	leak "$who" L2 GH_TOKEN "GH_TOKEN's placeholder over plain HTTP to its own host (http://api.github.com/bearer)" \
		"$t-2" "${ALLOW[@]}" "${CRED_ALL[@]}" -- leak-http "http://api.github.com/bearer?$t-2"
	leak "$who" L3 GH_TOKEN "the mark in a DNS name (dig MARK.github.com, *.github.com allowed)" \
		"^$" "${ALLOW[@]}" "${CRED_ALL[@]}" -- leak-dns
	leak "$who" L4 GH_TOKEN "the mark, lower-cased, in the HTTP CONNECT target (https://mark.github.com/ through https_proxy)" \
		"/$t-4" "${ALLOW[@]}" "${CRED_ALL[@]}" -- leak-connect "$t-4"
	leak "$who" L5 GH_TOKEN "the mark in the TLS server name (transparent path, github.com's pinned address)" \
		"/$t-5" "${ALLOW[@]}" "${CRED_ALL[@]}" -- leak-sni "$t-5"
	leak "$who" L6 GH_TOKEN "GH_TOKEN's placeholder over TLS to registry.npmjs.org (brokered for NPM_TOKEN only)" \
		"/$t-6" "${ALLOW[@]}" "${CRED_ALL[@]}" -- leak-http "https://registry.npmjs.org/$t-6"
	leak "$who" L7 GIT_TOKEN "GIT_TOKEN's placeholder as a Basic password over plain HTTP (inside the base64)" \
		"$t-7" "${ALLOW[@]}" "${CRED_ALL[@]}" -- leak-basic "$t-7"
}
for who in root user; do
	leaks "$who"
done

# gatekeeperctl denials lists a leak of a cage that still runs.
ctl_denials() {
	local pid i t=leak-ctl-$RANDOM
	need_broker "gatekeeperctl denials shows a credential_leak" || return 0
	rm -f "$T/work-root/ctl-done" "$T/work-root/ctl-stop"
	WITH_SECRETS=1
	cage_bg CTLCAGE root "${ALLOW[@]}" "${CRED_ALL[@]}" --ro "$EN_DIR" --ro "$SHARE" \
		--rw "$T/work-root" --cwd "$T/work-root" -- sh -c \
		"sh '$SHARE/bk.sh' leak-http http://codeload.github.com/$t >ctl-out; echo done >ctl-done
		 i=0; while [ ! -e ctl-stop ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done"
	WITH_SECRETS=0
	gk_wait_for 150 test -e "$T/work-root/ctl-done"
	sleep 0.3
	timeout -s KILL 20 "$GKCTL_BIN" --control "$SOCK" denials >"$T/ctl.out" 2>"$T/ctl.err" </dev/null
	GK_DETAIL="rc=$? | out: $(oneline "$(head -c 800 "$T/ctl.out")") | err: $(oneline "$(cat "$T/ctl.err")") | cage: $(oneline "$(cat "$T/work-root/ctl-out" "$T/CTLCAGE.err" 2>&1)")"
	gk_check "gatekeeperctl denials: the running cage's leak, reason credential_leak" \
		grep -q credential_leak "$T/ctl.out"
	cat "$T/work-root/ctl-out" >>"$T/all-runs.out" 2>/dev/null
	cat "$T/CTLCAGE.err" >>"$T/all-runs.err" 2>/dev/null
	AUDIT_MARK=$(gk_audit_mark "$AUDIT")
	: >"$T/work-root/ctl-stop"
	gk_wait_exit "$CTLCAGE" 100 || kill9 "$CTLCAGE"
	# the last cage: its end is the audit log's last line
	gk_audit_wait "$AUDIT" "$AUDIT_MARK" 30 '"event":"cage\.destroy"'
}
ctl_denials

# ---- no secret anywhere ---------------------------------------------------------------
# (each case above waited for its audit lines)
cat "$T/CTLCAGE.out" >>"$T/all-runs.out" 2>/dev/null
for f in "$AUDIT:the audit log" "$T/GKD_PID.log:gatekeeperd's log" \
    "$T/all-runs.err:gk-run's stderr (every run)" "$T/all-runs.out:what the cages printed"; do
	file=${f%%:*}
	hits=
	for n in "${CREDS[@]}"; do
		grep -qF -- "${SECRET[$n]}" "$file" 2>/dev/null && hits+=" $n"
	done
	GK_DETAIL="secrets found:$hits"
	gk_check "no secret in ${f#*:} ($(wc -l <"$file" 2>/dev/null || echo 0) lines)" \
		eval '[ -f "$file" ] && [ -z "$hits" ]'
done
GK_DETAIL="marks: ${LEAK_MARKS[*]}"
gk_check "the upstream resolver never saw a placeholder's mark" \
	eval '! grep -qiF -f <(printf "%s\n" "${LEAK_MARKS[@]:-no-mark-at-all}") "$EN_DIR/upstream.log"'
# The leak cases' placeholders are named, never written (any case; the
# log at debug level).
if [ "$HAVE_CRED" = 1 ]; then
	printf '%s\n' "${LEAK_MARKS[@]:-no-mark-at-all}" >"$T/marks"
	GK_DETAIL=$(grep -hiF -f "$T/marks" "$T/GKD_PID.log" "$AUDIT" 2>/dev/null |
		cut -c1-200 | head -n 4)
	gk_check "no leak case's placeholder mark in gatekeeperd's log (debug) or the audit log (${#LEAK_MARKS[@]} marks)" \
		eval '[ "${#LEAK_MARKS[@]}" -gt 0 ] && [ -z "$GK_DETAIL" ]'
	GK_DETAIL=$(grep -oE 'gk-run: .*' "$T/all-runs.err" | grep -iF -f "$T/marks" |
		cut -c1-200 | head -n 4)
	gk_check "... nor in gk-run's own lines on stderr" eval '[ -z "$GK_DETAIL" ]'
fi
fetch_metrics "$T/m-all.txt"
GK_DETAIL="$(promtool check metrics <"$T/m-all.txt" 2>&1 | head -n 5) | $(grep credential_leak "$T/m-all.txt" | head -n 4 | paste -sd' ')"
gk_check "promtool check metrics accepts /metrics, with gatekeeper_denied_total{reason=\"credential_leak\"} series" \
	eval 'promtool check metrics <"$T/m-all.txt" >/dev/null 2>&1 &&
	      grep -q "^gatekeeper_denied_total{.*reason=\"credential_leak\"" "$T/m-all.txt"'

e2e_stop_daemon
# shellcheck disable=SC2119  # no note for the summary
gk_finish
