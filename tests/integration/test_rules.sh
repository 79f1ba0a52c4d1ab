#!/usr/bin/env bash
#
# test_rules.sh: request rules end to end. An allow pattern with methods
# and a path (`GET github.com/**`) makes gatekeeperd end that host's TLS
# with the cage's CA and check each request's method and path; what no
# rule allows gets gatekeeper's 403, before any server sees it, and is
# reported like any denial. Real clients in gk-run cages, as root and as
# an unprivileged user, against e2e_net.sh's hermetic internet (nginx
# with the test CA; git smart HTTP through git-http-backend, push enabled
# on github.com/corp/private.git behind Basic auth; npm's registry as
# static files; pypi.org's simple index):
#
#   a read-only forge: --allow 'GET github.com/**' --allow 'POST
#       github.com/**/git-upload-pack'
#     - git clone https://github.com/acme/hello.git works (the right tree),
#       and github.com's certificate is the cage CA's (TLS ended)
#     - git clone + git push of the private repository (its password in
#       the URL): the clone works, the push fails with HTTP 403, the
#       branch never lands, nginx never saw the POST .../git-receive-pack;
#       gk-run's stderr has a "denied github.com:443 (...)" line naming
#       the method and the path, the audit log a line with reason
#       request_rule, gatekeeper_denied_total{reason="request_rule"} grew
#     - curl -X POST of that URL: 403 whose body names the method and the
#       path (gatekeeper's text: nginx never saw it)
#     - the rules have no port, so they cover them all: a server-first
#       TCP service on github.com:7777 (the echo) is not tunneled opaquely
#       (its greeting never arrives), and git clone + push over SSH to
#       github.com:22 (OpenSSH, en_sshd) does not land; with the plain
#       pattern both get through
#     - a plain pattern for the same host besides the rules (`github.com`
#       too): the rules still win, the push is refused
#   a read-only registry: --allow 'GET registry.npmjs.org/**'
#     - npm install left-pad works; npm publish fails with 403 and nginx
#       never saw the PUT (denial line, audit line, metric as above);
#       curl -X PUT through HTTP CONNECT, SOCKS5 and the transparent path:
#       gatekeeper's 403 naming the method and the path
#     - plain HTTP is checked the same way: PUT http://registry.npmjs.org/
#       through the cage's HTTP proxy (absolute-form target), SOCKS5 and
#       straight (the transparent path) get 403, nginx never sees them;
#       GET over plain HTTP still works
#     - one kept-alive connection (curl --next), GET then PUT: the GET
#       works, the PUT is refused (over HTTPS a 403 on that connection)
#   plain patterns keep the opaque tunnel: --allow github.com --allow
#       registry.npmjs.org (no rules): the certificates seen are the test
#       CA's, the push lands, npm publish reaches nginx (its PUT logged);
#       in a cage with rules for registry.npmjs.org only, github.com's
#       certificate is still the test CA's
#   the presets: github-read (clone works, push refused, SSH refused:
#       port 443 only; the API's GET works and a POST to it is refused),
#       npm-read (npm install with its audit query works with nothing
#       denied, publish refused), pypi-read (pip download gk_greet works,
#       a POST to pypi.org is refused); --preset list shows them
#   gk-run and gatekeeperctl: a rule with an unknown method is a usage
#       error naming it; a running cage (as root, and as the user on its
#       own) started with --allow 'GET codeload.github.com/index.html':
#       GET /nothere.txt gets gatekeeper's 403 (HTTPS and plain HTTP);
#       `gatekeeperctl allow ID 'GET codeload.github.com/**'` is accepted
#       (the rule in the allowlist it prints, a cage.update audit line),
#       and from then on the same GETs reach nginx (404) while a POST
#       still gets the 403; a rule for a host the cage's authority does
#       not cover (api.github.com) is refused, saying why; `gatekeeperctl
#       denials` shows the request_rule denials; revoke brings the 403 back
#
#   bash tests/integration/test_rules.sh build/gatekeeperd build/spawner/gk-run \
#       build/spawner/ctl/gatekeeperctl
#   meson test -C build rules_integration      (suite "integration")
#
# Runs as root in namespaces it creates itself (lib.sh); the unprivileged
# user is e2e_lib.sh's gk-e2e. Prints "ok   ..." / "FAIL ..." per check
# and a summary; exits 1 if any check failed or anything needed is missing
# (never a silent skip: a gk-run that refuses rule patterns is a failure,
# named, and the checks that need no rules still run). GK_KEEP_TMP=1 keeps
# the temp directory (logs).

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_rules.sh

e2e_args 0 "$@"
e2e_ctl_arg "${3:-}"
e2e_preamble dig dnsmasq curl unshare nsenter ip mount nginx fcgiwrap openssl \
    git /usr/lib/git-core/git-http-backend nft bwrap setpriv useradd \
    groupadd usermod getent timeout node npm ssh ssh-keygen /usr/sbin/sshd "$PYTHON"
"$PYTHON" -m pip --version >/dev/null 2>&1 ||
	e2e_die "pip for $PYTHON is not installed (python3-pip; bash deploy/install-deps.sh)"
# The parts under test: their absence fails the checks that need them.
HAVE_UCA=0 HAVE_RULES=0
"$GKD" --help 2>&1 | grep -q -- '--upstream-ca' && HAVE_UCA=1
RULES_ERR=$(timeout 20 "$GKRUN" --allow 'GET example.com/**' --dry-run -- true 2>&1 >/dev/null) &&
	HAVE_RULES=1
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
GH=192.0.2.10			# github.com
NP=(env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY
	-u ALL_PROXY -u all_proxy)

# e2e_net.sh's services behind a secret: the private repository, whose
# push works for its user (the others are there, unused).
EN_SECRET_BEARER=$(openssl rand -hex 16)
EN_SECRET_APIKEY=$(openssl rand -hex 16)
EN_SECRET_GIT=$(openssl rand -hex 16)
EN_SECRET_NPM=$(openssl rand -hex 16)

# The rules under test
RO_GIT=(--allow 'GET github.com/**' --allow 'POST github.com/**/git-upload-pack')
RO_NPM=(--allow 'GET registry.npmjs.org/**')

RD=	# a run's details, for several checks

# ---------------------------------------------------------------------------
# Helpers

# rl WHO GK-RUN-ARGS... -- CASE ARGS...: cage (e2e_lib.sh) running the
# client script, with the test internet's and the script's directories.
rl() {
	local who=$1 a=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		a+=("$1")
		shift
	done
	shift
	cage "$who" "${a[@]}" --ro "$EN_DIR" --ro "$SHARE" -- sh "$SHARE/rl.sh" "$@"
}
# probe WHO GK-RUN-ARGS...: e2e_lib.sh's probe.py in a cage, no proxy
# variables: TCP to github.com's echo (resolved first: pinned), which
# speaks first ("GOT b'internet..." when its greeting came).
probe() {
	local who=$1
	shift
	cage "$who" "$@" --ro "$EN_DIR" --ro "$SHARE" -- "${NP[@]}" "$PYTHON" \
		"$SHARE/probe.py" tcp "$GH" "$EN_ECHO_PORT" github.com
}
# line LABEL: the rest of the line the cage printed as "LABEL ...".
line() { sed -n "s/^$1 //p" "$T/run.out" | head -n 1; }
# status LABEL: its HTTP status.
status() { line "$1" | cut -d' ' -f1; }

ngx_lines() { wc -l <"$EN_DIR/nginx-access.log"; }
# ngx_since N ERE: nginx's requests after its first N lines matching ERE.
ngx_since() { tail -n +"$(($1 + 1))" "$EN_DIR/nginx-access.log" | grep -Ec -- "$2"; }
ngx_new() { tail -n +"$((NGX_MARK + 1))" "$EN_DIR/nginx-access.log" | cut -c1-140 | paste -sd'|'; }

# rmark / rafter: the metrics, the audit log's and nginx's lengths before
# a case; the metrics after it (dm: the change, e2e_lib.sh).
rmark() {
	mark
	AUDIT_MARK=$(gk_audit_mark "$AUDIT")
	NGX_MARK=$(ngx_lines)
}
rafter() { after; }
nrule() { dm gatekeeper_denied_total reason=request_rule; }

# rule_audit: the audit lines since rmark whose reason is request_rule.
rule_audit() {
	tail -n +"$((${AUDIT_MARK:-0} + 1))" "$AUDIT" 2>/dev/null |
		grep -F '"reason":"request_rule"'
}
# denials: gk-run's "denied" lines of the last run.
denials() { grep -oE 'gk-run: denied .*' "$T/run.err"; }

# need_rules WHAT: 0 when gk-run takes rule patterns; else a failed check
# saying WHAT was not run, and 1.
need_rules() {
	[ "$HAVE_RULES" = 1 ] && return 0
	gk_fail "$1: not run: gk-run refuses a rule pattern (--allow 'GET example.com/**': $(oneline "$RULES_ERR"))"
	return 1
}

# reported WHO ID WHAT HOSTPORT NGINX-ERE WORD...: after a refused request
# (rmark before it): nginx saw nothing matching NGINX-ERE; gk-run's stderr
# has a "denied HOSTPORT (...)" line holding each WORD; an audit line
# with reason request_rule holds the host and each WORD; the metric grew.
reported() {
	local who=$1 id=$2 what=$3 hp=$4 nre=$5 dl al w ok
	shift 5
	gk_audit_wait "$AUDIT" "$AUDIT_MARK" 30 '"reason":"request_rule"'
	rafter
	GK_DETAIL="nginx since: $(ngx_new)"
	gk_check "$who: $id $what: nginx never saw it" \
		eval '[ "$(ngx_since "$NGX_MARK" "$nre")" = 0 ]'
	dl=$(denials | grep -F "gk-run: denied $hp (")
	ok=1
	for w in "$@"; do grep -qF -- "$w" <<<"$dl" || ok=0; done
	GK_DETAIL="denied lines: $(oneline "$(denials)") | stderr: $(oneline "$(tail -c 400 "$T/run.err")")"
	gk_check "$who: $id ... gk-run's stderr: 'denied $hp (...)' naming $*" \
		eval '[ -n "$dl" ] && [ "$ok" = 1 ]'
	al=$(rule_audit | grep -F "${hp%:*}")
	ok=1
	for w in "$@"; do grep -qF -- "$w" <<<"$al" || ok=0; done
	GK_DETAIL="request_rule lines: $(oneline "$(rule_audit)") | new audit lines: $(oneline "$(tail -n +"$((AUDIT_MARK + 1))" "$AUDIT" 2>/dev/null | cut -c1-300)")"
	gk_check "$who: $id ... an audit line with reason request_rule naming ${hp%:*} and $*" \
		eval '[ -n "$al" ] && [ "$ok" = 1 ]'
	GK_DETAIL="request_rule +$(nrule); denied +$(dm gatekeeper_denied_total)"
	gk_check "$who: $id ... gatekeeper_denied_total{reason=\"request_rule\"} grew" \
		eval '[ "$(nrule)" -ge 1 ]'
}
# gk403 LABEL METHOD PATH: the line LABEL is a 403 whose body names the
# method and the path.
gk403() {
	local l
	l=$(line "$1")
	[ "${l%% *}" = 403 ] && grep -qF -- "$2" <<<"${l#* }" &&
		grep -qF -- "$3" <<<"${l#* }"
}

# ---------------------------------------------------------------------------
# The client script cages run: rl.sh CASE ARGS...
write_rl() {
	cat >"$SHARE/rl.sh" <<'EOF'
share=$(dirname "$0")
c() { curl -sS --max-time 20 --connect-timeout 5 "$@"; }
# req LABEL METHOD URL [CURL-ARGS...]: "LABEL STATUS BODY" on one line
req() {
	l=$1 m=$2 u=$3
	shift 3
	case $m in
	GET) set -- "$@" ;;
	*) set -- -X "$m" -H 'Content-Type: text/plain' --data-binary gk-rules "$@" ;;
	esac
	code=$(c -o /tmp/rl.body -w '%{http_code}' "$@" "$u")
	printf '%s %s %s\n' "$l" "$code" "$(tr '\n' ' ' </tmp/rl.body 2>/dev/null | cut -c1-300 | sed 's/ *$//')"
	rm -f /tmp/rl.body
}
issuer() { printf '%s %s\n' "$1" "$(c -v -o /dev/null "$2" 2>&1 | sed -n 's/^\* *issuer: //p' | head -n 1)"; }
gitc() { git -c user.name=gk -c user.email=gk@example.invalid "$@"; }
case $1 in
reqs)	# reqs LABEL METHOD URL ...: each request (LABEL *-np: no proxy)
	shift
	while [ $# -ge 3 ]; do
		case $1 in
		*-np) req "$1" "$2" "$3" --noproxy '*' ;;
		*-socks) req "$1" "$2" "$3" --proxy "$ALL_PROXY" ;;
		*) req "$1" "$2" "$3" ;;
		esac
		shift 3
	done ;;
keepalive)	# keepalive GET-URL PUT-URL [np]: both on one connection (curl --next)
	s=; n=
	if [ "${4:-}" = np ]; then s=-np; n='*'; fi
	c --noproxy "$n" -o /dev/null -w "ka-get$s %{http_code} %{num_connects}\n" "$2" \
		--next -sS --max-time 20 --noproxy "$n" -X PUT --data-binary gk-rules \
		-o /dev/null -w "ka-put$s %{http_code} %{num_connects}\n" "$3" ;;
issuers)	# issuers LABEL URL ...
	shift
	while [ $# -ge 2 ]; do issuer "$1" "$2"; shift 2; done ;;
clone)	# clone URL DIR
	git clone -q "$2" "$3" && echo cloned ;;
learnreqs)	# learnreqs DIR: github.com's requests for --learn: a clone, a POST with a query
	git clone -q https://github.com/acme/hello.git "$2" && echo cloned
	req post POST 'https://github.com/acme/hello/issues?page=2' ;;
push)	# push DIR BRANCH PASSWORD: the private repository, cloned, a commit pushed
	gitc clone -q "https://x-access-token:$4@github.com/corp/private.git" "$2" || exit 3
	echo cloned
	cd "$2" && echo "$3" >"$3.txt" && git add "$3.txt" &&
		gitc commit -q -m "push $3" || exit 4
	gitc push origin "HEAD:refs/heads/$3" 2>&1
	echo "push-rc $?" ;;
sshpush)	# sshpush DIR BRANCH REPO SSH-COMMAND: clone over SSH, commit, push
	gitc -c core.sshCommand="$5" clone -q "root@github.com:$4" "$2" || exit 3
	echo cloned
	cd "$2" && echo "$3" >"$3.txt" && git add "$3.txt" &&
		gitc commit -q -m "push $3" || exit 4
	gitc -c core.sshCommand="$5" push -q origin "HEAD:refs/heads/$3" 2>&1
	echo "push-rc $?" ;;
npm-install)	# npm-install DIR [AUDIT]: left-pad, then used
	cd "$2" || exit 3
	if [ "${3:-}" = audit ]; then
		npm install --no-fund left-pad 2>&1
	else
		npm install --no-audit --no-fund left-pad 2>&1
	fi
	echo "left-pad $(node -e 'console.log(require("left-pad")("x", 3, "."))' 2>&1)" ;;
npm-publish)	# npm-publish DIR
	cd "$2" && npm publish 2>&1
	echo "publish-rc $?" ;;
pip)	# pip DIR: pip download gk_greet into DIR
	python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check \
		-d "$2" gk_greet 2>&1
	echo "pip-rc $?" ;;
*) echo "rl.sh: unknown case $1" >&2; exit 2 ;;
esac
EOF
	chmod -R a+rX "$SHARE"
}

# npm_pub WHO NAME: a package to publish (its .npmrc holds a token: npm
# asks for one before it sends anything); prints its directory.
npm_pub() {
	local d=$T/work-$1/$2
	rm -rf "$d"
	mkdir -p "$d"
	printf '{"name":"gk-mine-%s","version":"1.0.0","description":"x","license":"MIT"}\n' \
		"$1" >"$d/package.json"
	echo 'module.exports = 1;' >"$d/index.js"
	printf '%s\n' 'registry=https://registry.npmjs.org/' \
		'//registry.npmjs.org/:_authToken=gk-rules-test-token' >"$d/.npmrc"
	[ "$1" = user ] && chown -R "$E2E_USER:" "$d"
	printf '%s\n' "$d"
}
# npm_dir WHO NAME: an empty project; prints its directory.
npm_dir() {
	local d=$T/work-$1/$2
	rm -rf "$d"
	mkdir -p "$d"
	printf '{"name":"p-%s","version":"1.0.0","private":true}\n' "$2" >"$d/package.json"
	[ "$1" = user ] && chown -R "$E2E_USER:" "$d"
	printf '%s\n' "$d"
}
# sshpush WHO DIR BRANCH GK-RUN-ARGS...: the private repository cloned
# and pushed to over SSH (github.com:22, OpenSSH with WHO's key copy).
sshpush() {
	local who=$1 dir=$2 branch=$3 o
	shift 3
	mapfile -t o < <(en_ssh_opts "$T/keys-$who/id")
	rm -rf "${T:?}/work-$who/$dir"
	rl "$who" "$@" --ro "$T/keys-$who" --rw "$T/work-$who" --cwd "$T/work-$who" -- \
		sshpush "$dir" "$branch" "$CORP_BARE" "ssh ${o[*]}"
}
# landed BRANCH: the private repository has it.
landed() { [ "$(tgit -C "$CORP_BARE" log -1 --format=%s "$1" 2>/dev/null)" = "push $1" ]; }

# ---- the internet ----------------------------------------------------------------
e2e_begin
CA=$EN_DIR/ca.crt
GIT_HEAD=$(cat "$EN_DIR/git-head")
CORP_BARE=$EN_DIR/git-corp/$EN_CORP_REPO
PW=$EN_SECRET_GIT
gk_ok "the test internet is up, the private repository's push on"
en_sshd || gk_abort "OpenSSH starts on github.com:22 in the test internet" \
	"$EN_DIR/ssh/sshd.log"
mkdir -p "$T/home-root" "$T/host"

rm -rf "$T/host/corp"
r=$(cd "$T/host" && as root timeout 120 sh -c 'git clone -q "$1" corp &&
	cd corp && echo host >host.txt && git add host.txt &&
	git -c user.name=gk -c user.email=gk@example.invalid commit -q -m "push host" &&
	git push -q origin HEAD:refs/heads/host' sh \
	"https://$EN_GIT_USER:$PW@github.com/$EN_CORP_REPO" 2>&1)
GK_DETAIL="git: $(oneline "$r")"
gk_check "internet: git clone + push of https://github.com/$EN_CORP_REPO from the host (the server takes pushes)" \
	landed host
n=$(ngx_lines)
r=$(as root curl -sS --noproxy '*' --max-time 20 -o /dev/null -w '%{http_code}' \
	-X PUT --data-binary x https://registry.npmjs.org/gk-mine-host 2>&1)
GK_DETAIL="got $r | nginx: $(tail -n +$((n + 1)) "$EN_DIR/nginx-access.log" | cut -c1-140)"
gk_check "internet: a PUT to https://registry.npmjs.org/ reaches nginx (logged; answered $r, not 2xx)" \
	eval '[ "$(ngx_since "$n" "\"PUT /gk-mine-host ")" = 1 ] && [[ "$r" != 2* ]]'

# ---- the user, gatekeeperd ---------------------------------------------------------
e2e_user
en_ssh_keys "$T" "$E2E_USER"
: >"$T/empty.conf"
GKD_ARGS=(-f -c "$T/empty.conf" --control "$SOCK" --upstream "$EN_RESOLVER"
	--metrics "$METRICS" --audit-log "$AUDIT" --log-level debug)
GK_DETAIL="$GKD --help has no --upstream-ca"
gk_check "gatekeeperd has --upstream-ca (it verifies the servers of the hosts it inspects)" \
	test "$HAVE_UCA" = 1
[ "$HAVE_UCA" = 1 ] && GKD_ARGS+=(--upstream-ca "$CA")
GK_DETAIL="gk-run --allow 'GET example.com/**' --dry-run -- true: $(oneline "$RULES_ERR")"
gk_check "gk-run takes a rule pattern (--allow 'GET example.com/**' --dry-run)" \
	test "$HAVE_RULES" = 1
gk_start_daemon GKD_PID "$GKD" "${GKD_ARGS[@]}"
daemon_ready "$GKD_PID" || gk_abort "gatekeeperd starts (control socket, metrics)" "$T/GKD_PID.log"
gk_ok "gatekeeperd is ready (pid $GKD_PID)"
chmod 755 "$T/run"
e2e_probe_script
write_rl

# ---- plain patterns: the opaque tunnel, as before ---------------------------------
plain() {
	local who=$1 w=$T/work-$1 d
	rl "$who" --allow github.com --allow registry.npmjs.org --rw "$w" --cwd "$w" -- \
		issuers gh https://github.com/index.html npm https://registry.npmjs.org/left-pad
	GK_DETAIL=$(run_detail)
	gk_check "$who: plain patterns: github.com's and registry.npmjs.org's certificates are the test CA's (the opaque tunnel)" \
		eval '[[ "$(line gh)" == *"gatekeeper e2e test CA"* ]] &&
		      [[ "$(line npm)" == *"gatekeeper e2e test CA"* ]]'
	rm -rf "$w/p-push"
	rl "$who" --allow github.com --rw "$w" --cwd "$w" -- push p-push "plain-$who" "$PW"
	GK_DETAIL=$(run_detail)
	gk_check "$who: --allow github.com: git clone + push of the private repository: the push lands" \
		eval 'grep -qx cloned "$T/run.out" && [ "$(line push-rc)" = 0 ] && landed "plain-$who"'
	d=$(npm_pub "$who" p-pub)
	rmark
	rl "$who" --allow registry.npmjs.org --rw "$d" --cwd "$d" -- npm-publish "$d"
	GK_DETAIL="$(run_detail) | nginx: $(ngx_new)"
	gk_check "$who: --allow registry.npmjs.org: npm publish reaches nginx (its PUT logged; nginx refuses it)" \
		eval '[ "$(ngx_since "$NGX_MARK" "\"PUT /gk-mine-$who ")" -ge 1 ]'
	probe "$who" --allow github.com
	GK_DETAIL=$(run_detail)
	gk_check "$who: --allow github.com: a server-first TCP service on github.com:$EN_ECHO_PORT answers (the echo's greeting)" \
		grep -q "^GOT b.internet" "$T/run.out"
	sshpush "$who" p-ssh "plain-ssh-$who" --allow github.com
	GK_DETAIL=$(run_detail)
	gk_check "$who: --allow github.com: git clone + push over SSH (github.com:22): the push lands" \
		eval '[ "$(line push-rc)" = 0 ] && landed "plain-ssh-$who"'
}

# ---- a read-only forge -------------------------------------------------------------
forge() {
	local who=$1 w=$T/work-$1 u
	need_rules "$who: the read-only forge" || return 0
	rm -rf "$w/hello"
	rl "$who" "${RO_GIT[@]}" --rw "$w" --cwd "$w" -- clone https://github.com/acme/hello.git hello
	tree_check "$w/hello"
	GK_DETAIL="$(run_detail) | $TREE_WHY"
	gk_check "$who: ${RO_GIT[*]}: git clone https://github.com/acme/hello.git works (the right tree)" \
		eval '[ "$RUN_RC" = 0 ] && [ "$TREE_WHY" = ok ]'
	rl "$who" "${RO_GIT[@]}" --rw "$w" --cwd "$w" -- issuers gh https://github.com/index.html
	GK_DETAIL=$(run_detail)
	gk_check "$who: ... github.com's TLS is ended by gatekeeperd: its certificate is not the test CA's ($(line gh))" \
		eval '[ "$RUN_RC" = 0 ] && [ -n "$(line gh)" ] && [[ "$(line gh)" != *"gatekeeper e2e test CA"* ]]'

	rm -rf "$w/ro-push"
	rmark
	rl "$who" "${RO_GIT[@]}" --rw "$w" --cwd "$w" -- push ro-push "ro-$who" "$PW"
	GK_DETAIL=$(run_detail)
	gk_check "$who: ... git clone of the private repository (password in the URL) works; git push fails with HTTP 403" \
		eval 'grep -qx cloned "$T/run.out" && [ "$(line push-rc)" != 0 ] &&
		      grep -q "403" "$T/run.out"'
	gk_check "$who: ... the branch never landed" eval '! landed "ro-$who"'
	GK_DETAIL="git said: $(oneline "$(grep -v '^cloned' "$T/run.out")")"
	if grep -qiE 'request.rule|gatekeeper|git-receive-pack' "$T/run.out"; then
		gk_ok "$who: ... git's error shows gatekeeper's reason"
	else
		gk_info "$who: git's error shows the 403 only, not the body (git prints no body of a failed RPC POST): $(oneline "$(grep -v '^cloned' "$T/run.out")")"
	fi
	reported "$who" R1 "git push (POST .../git-receive-pack)" github.com:443 \
		'POST [^ ]*git-receive-pack' POST /corp/private.git/git-receive-pack

	u=https://github.com/corp/private.git/git-receive-pack
	rmark
	rl "$who" "${RO_GIT[@]}" -- reqs post POST "$u" get GET https://github.com/index.html
	GK_DETAIL="$(run_detail) | nginx: $(ngx_new)"
	gk_check "$who: ... curl -X POST $u: 403 naming POST and the path; nginx never saw it; GET / still 200" \
		eval 'gk403 post POST /corp/private.git/git-receive-pack &&
		      [ "$(ngx_since "$NGX_MARK" "\"POST ")" = 0 ] && [ "$(status get)" = 200 ]'

	probe "$who" "${RO_GIT[@]}"
	GK_DETAIL=$(run_detail)
	gk_check "$who: ... the rules have no port, so github.com:$EN_ECHO_PORT is inspected too: the server-first echo is not tunneled opaquely (no greeting)" \
		eval '! grep -q "^GOT b.internet" "$T/run.out"'
	sshpush "$who" ro-ssh "ro-ssh-$who" "${RO_GIT[@]}"
	GK_DETAIL=$(run_detail)
	gk_check "$who: ... and github.com:22 too: git push over SSH does not get through (the branch never lands)" \
		eval '! landed "ro-ssh-$who" && [ "$(line push-rc)" != 0 ]'

	rm -rf "$w/win-push"
	rmark
	rl "$who" --allow github.com "${RO_GIT[@]}" --rw "$w" --cwd "$w" -- push win-push "win-$who" "$PW"
	rafter
	GK_DETAIL="$(run_detail) | nginx: $(ngx_new)"
	gk_check "$who: --allow github.com besides the rules: the rules win, the push is refused (403) and never reaches nginx" \
		eval 'grep -qx cloned "$T/run.out" && [ "$(line push-rc)" != 0 ] && ! landed "win-$who" &&
		      [ "$(ngx_since "$NGX_MARK" "POST [^ ]*git-receive-pack")" = 0 ] && [ "$(nrule)" -ge 1 ]'
}

# ---- a read-only registry ----------------------------------------------------------
registry() {
	local who=$1 w=$T/work-$1 d
	need_rules "$who: the read-only registry" || return 0
	d=$(npm_dir "$who" ro-npm)
	rl "$who" "${RO_NPM[@]}" --rw "$d" --cwd "$d" -- npm-install "$d"
	GK_DETAIL=$(run_detail)
	gk_check "$who: ${RO_NPM[*]}: npm install left-pad works (and it runs)" \
		eval '[ "$(line left-pad)" = "..x" ]'

	d=$(npm_pub "$who" ro-pub)
	rmark
	rl "$who" "${RO_NPM[@]}" --rw "$d" --cwd "$d" -- npm-publish "$d"
	GK_DETAIL=$(run_detail)
	gk_check "$who: ... npm publish fails with 403" \
		eval '[ "$(line publish-rc)" != 0 ] && grep -q "403" "$T/run.out"'
	reported "$who" R2 "npm publish (PUT /gk-mine-$who)" registry.npmjs.org:443 \
		"PUT /gk-mine-$who" PUT "/gk-mine-$who"

	rmark
	rl "$who" "${RO_NPM[@]}" -- reqs \
		put PUT "https://registry.npmjs.org/gk-mine-$who" \
		put-socks PUT "https://registry.npmjs.org/gk-mine-$who" \
		put-np PUT "https://registry.npmjs.org/gk-mine-$who" \
		http-put PUT "http://registry.npmjs.org/gk-mine-$who" \
		http-put-socks PUT "http://registry.npmjs.org/gk-mine-$who" \
		http-put-np PUT "http://registry.npmjs.org/gk-mine-$who" \
		http-del-np DELETE "http://registry.npmjs.org/left-pad" \
		http-get GET http://registry.npmjs.org/left-pad \
		http-get-socks GET http://registry.npmjs.org/left-pad \
		http-get-np GET http://registry.npmjs.org/left-pad
	rafter
	RD="$(run_detail) | nginx: $(ngx_new)"
	GK_DETAIL=$RD
	gk_check "$who: ... curl -X PUT https://registry.npmjs.org/gk-mine-$who through HTTP CONNECT, SOCKS5 and the transparent path: 403 naming PUT and the path" \
		eval 'gk403 put PUT "/gk-mine-$who" && gk403 put-socks PUT "/gk-mine-$who" &&
		      gk403 put-np PUT "/gk-mine-$who"'
	GK_DETAIL=$RD
	gk_check "$who: ... plain HTTP through the cage's HTTP proxy (absolute-form target): PUT gets 403 naming PUT and the path" \
		gk403 http-put PUT "/gk-mine-$who"
	GK_DETAIL=$RD
	gk_check "$who: ... plain HTTP through SOCKS5: PUT gets 403 naming PUT and the path" \
		gk403 http-put-socks PUT "/gk-mine-$who"
	GK_DETAIL=$RD
	gk_check "$who: ... plain HTTP straight to the server (the transparent path): PUT and DELETE get 403 naming the method and the path" \
		eval 'gk403 http-put-np PUT "/gk-mine-$who" && gk403 http-del-np DELETE /left-pad'
	GK_DETAIL=$RD
	gk_check "$who: ... nginx saw none of the PUTs and DELETEs" \
		eval '[ "$(ngx_since "$NGX_MARK" "\"(PUT|DELETE) ")" = 0 ]'
	GK_DETAIL=$RD
	gk_check "$who: ... GET over plain HTTP works all three ways (200), and reached nginx" \
		eval '[ "$(status http-get)" = 200 ] && [ "$(status http-get-np)" = 200 ] &&
		      [ "$(status http-get-socks)" = 200 ] &&
		      [ "$(ngx_since "$NGX_MARK" "\"GET [^ ]*/left-pad HTTP/1.1\" 200 ")" -ge 3 ]'
	gk_audit_wait "$AUDIT" "$AUDIT_MARK" 30 '"reason":"request_rule"' \
	    'registry\.npmjs\.org' DELETE
	GK_DETAIL="request_rule lines: $(oneline "$(rule_audit)")"
	gk_check "$who: ... the plain-HTTP refusals are audited too (a request_rule line naming the DELETE)" \
		test "$GK_AUDIT_N" -ge 1
	rmark
	: >"$T/ka.out"
	rl "$who" "${RO_NPM[@]}" -- keepalive https://registry.npmjs.org/left-pad \
		"https://registry.npmjs.org/gk-mine-$who"
	cat "$T/run.out" >>"$T/ka.out"
	rl "$who" "${RO_NPM[@]}" -- keepalive http://registry.npmjs.org/left-pad \
		"http://registry.npmjs.org/gk-mine-$who" np
	cat "$T/run.out" >>"$T/ka.out"
	GK_DETAIL="$(run_detail) | nginx: $(ngx_new)"
	GK_DETAIL="$GK_DETAIL | both: $(oneline "$(cat "$T/ka.out")")"
	gk_check "$who: ... one connection, GET then PUT (curl --next; HTTPS, and plain HTTP on the transparent path): GET 200, the PUT refused (HTTPS: 403 on the same connection), never reaching nginx" \
		eval 'grep -qx "ka-get 200 1" "$T/ka.out" && grep -qx "ka-put 403 0" "$T/ka.out" &&
		      grep -qx "ka-get-np 200 1" "$T/ka.out" && grep -q "^ka-put-np " "$T/ka.out" &&
		      [ "$(ngx_since "$NGX_MARK" "\"PUT ")" = 0 ]'

	rl "$who" "${RO_NPM[@]}" --allow github.com -- \
		issuers npm https://registry.npmjs.org/left-pad gh https://github.com/index.html
	GK_DETAIL=$(run_detail)
	gk_check "$who: rules for registry.npmjs.org only: its certificate is the cage CA's, github.com's (a plain pattern) the test CA's" \
		eval '[ -n "$(line npm)" ] && [[ "$(line npm)" != *"gatekeeper e2e test CA"* ]] &&
		      [[ "$(line gh)" == *"gatekeeper e2e test CA"* ]]'
}

# ---- the presets -------------------------------------------------------------------
presets() {
	local who=$1 w=$T/work-$1 d
	need_rules "$who: the read-only presets" || return 0
	rm -rf "$w/pr-push"
	rmark
	rl "$who" --preset github-read --rw "$w" --cwd "$w" -- push pr-push "preset-$who" "$PW"
	rafter
	GK_DETAIL="$(run_detail) | nginx: $(ngx_new)"
	gk_check "$who: --preset github-read: git clone works, git push fails with 403, the branch never lands, nginx never saw the POST" \
		eval 'grep -qx cloned "$T/run.out" && [ "$(line push-rc)" != 0 ] && grep -q 403 "$T/run.out" &&
		      ! landed "preset-$who" && [ "$(ngx_since "$NGX_MARK" "POST [^ ]*git-receive-pack")" = 0 ] &&
		      [ "$(nrule)" -ge 1 ]'
	sshpush "$who" pr-ssh "preset-ssh-$who" --preset github-read
	GK_DETAIL="$(run_detail) | denied: $(oneline "$(denials)")"
	gk_check "$who: --preset github-read (port 443 only): git clone and push over SSH are refused (github.com:22 not on the allowlist)" \
		eval '! grep -qx cloned "$T/run.out" && ! landed "preset-ssh-$who" &&
		      denials | grep -q "denied github.com:22 (not on the allowlist)"'
	rl "$who" --preset github-read -- reqs get GET https://api.github.com/index.html \
		post POST https://api.github.com/repos/acme/hello/issues \
		code GET https://codeload.github.com/index.html
	GK_DETAIL=$(run_detail)
	gk_check "$who: --preset github-read: GET of api.github.com and codeload.github.com works; POST to the API gets 403" \
		eval '[ "$(status get)" = 200 ] && [ "$(status code)" = 200 ] &&
		      gk403 post POST /repos/acme/hello/issues'

	d=$(npm_dir "$who" pr-npm)
	rmark
	rl "$who" --preset npm-read --rw "$d" --cwd "$d" -- npm-install "$d" audit
	rafter
	GK_DETAIL="$(run_detail) | nginx: $(ngx_new)"
	gk_check "$who: --preset npm-read: npm install left-pad (audit on) works, its audit query answered, nothing denied" \
		eval '[ "$(line left-pad)" = "..x" ] && [ -z "$(denials)" ] &&
		      [ "$(ngx_since "$NGX_MARK" "\"POST /-/npm/v1/security/")" -ge 1 ] &&
		      [ "$(dm gatekeeper_denied_total)" = 0 ]'
	d=$(npm_pub "$who" pr-pub)
	rmark
	rl "$who" --preset npm-read --rw "$d" --cwd "$d" -- npm-publish "$d"
	rafter
	GK_DETAIL="$(run_detail) | nginx: $(ngx_new)"
	gk_check "$who: --preset npm-read: npm publish fails with 403, nginx never saw the PUT" \
		eval '[ "$(line publish-rc)" != 0 ] && grep -q 403 "$T/run.out" &&
		      [ "$(ngx_since "$NGX_MARK" "\"PUT ")" = 0 ] && [ "$(nrule)" -ge 1 ]'

	rm -rf "$w/pip-dl"
	rl "$who" --preset pypi-read --rw "$w" --cwd "$w" -- pip "$w/pip-dl"
	GK_DETAIL=$(run_detail)
	gk_check "$who: --preset pypi-read: pip download gk_greet works (the wheel from files.pythonhosted.org)" \
		eval '[ "$(line pip-rc)" = 0 ] && ls "$w/pip-dl"/gk_greet-*.whl >/dev/null 2>&1'
	rmark
	rl "$who" --preset pypi-read -- reqs post POST https://pypi.org/legacy/ \
		get GET https://pypi.org/simple/gk-greet/
	GK_DETAIL="$(run_detail) | nginx: $(ngx_new)"
	gk_check "$who: --preset pypi-read: a POST to https://pypi.org/legacy/ gets 403 (nginx never saw it); GET of the index works" \
		eval 'gk403 post POST /legacy/ && [ "$(ngx_since "$NGX_MARK" "\"POST ")" = 0 ] &&
		      [ "$(status get)" = 200 ]'
}

for who in root user; do
	plain "$who"
	forge "$who"
	registry "$who"
	presets "$who"
done

# ---- --learn on an inspected host: request rules ----------------------------------
# learn_rules: a learning cage with a rule for github.com (any request:
# inspected) learns the requests' methods and paths as rules, which parse
# back and allow the same run again, and nothing else.
learn_rules() {
	local w=$T/work-root f=$T/work-root/learned-rules.allow rl2 p2
	need_rules "root: --learn with a rule" || return 0
	rm -rf "$w/learn-1" "$w/learn-2" "$f"
	rl root --learn learned-rules.allow --allow 'github.com/**' --rw "$w" --cwd "$w" -- \
		learnreqs "$w/learn-1"
	GK_DETAIL="file: $(oneline "$(cat "$f" 2>&1)") | $(run_detail)"
	gk_check "root: --learn with --allow 'github.com/**': git clone and a POST work; the file has the requests as rules (methods, paths cut of their query)" \
		eval 'grep -qx cloned "$T/run.out" && [ -n "$(status post)" ] && [ "$(status post)" != 403 ] &&
		      grep -qx "GET github.com:443/acme/hello.git/info/refs" "$f" &&
		      grep -qx "POST github.com:443/acme/hello.git/git-upload-pack" "$f" &&
		      grep -qx "POST github.com:443/acme/hello/issues" "$f" &&
		      ! grep -q "page=" "$f" && ! grep -qx "github.com:443" "$f"'
	rmark
	rl root --allow-file learned-rules.allow --rw "$w" --cwd "$w" -- learnreqs "$w/learn-2"
	rl2=$(run_detail)
	p2=$(status post)
	tree_check "$w/learn-2"
	rl root --allow-file learned-rules.allow -- reqs del DELETE https://github.com/acme/hello/issues \
		get GET https://github.com/index.html
	GK_DETAIL="with the file: $rl2 | $TREE_WHY | then: $(run_detail)"
	gk_check "root: ... --allow-file of it: the same clone (the right tree) and POST work; a DELETE or another path gets gatekeeper's 403" \
		eval '[ "$TREE_WHY" = ok ] && [ -n "$p2" ] && [ "$p2" != 403 ] &&
		      gk403 del DELETE /acme/hello/issues &&
		      gk403 get GET /index.html'
}
learn_rules

# ---- gk-run's side: a bad rule, the preset list -----------------------------------
cage root --allow 'FROB github.com/**' -- true
GK_DETAIL=$(run_detail)
gk_check "gk-run --allow 'FROB github.com/**': a usage error (125) naming the method" \
	eval '[ "$RUN_RC" = 125 ] && grep -q FROB "$T/run.err"'
out=$("$GKRUN" --preset list 2>&1)
GK_DETAIL=$out
gk_check "gk-run --preset list: github-read, npm-read and pypi-read with their rules, the others as they were" \
	eval 'grep -q "^  github-read .*GET,HEAD github.com:443/\*\*" <<<"$out" &&
	      grep -q "POST github.com:443/\*\*/git-upload-pack" <<<"$out" &&
	      grep -q "^  npm-read .*GET,HEAD registry.npmjs.org:443/\*\*" <<<"$out" &&
	      grep -q "^  pypi-read .*GET,HEAD pypi.org:443/\*\*" <<<"$out" &&
	      grep -Eq "^  npm +registry.npmjs.org registry.yarnpkg.com$" <<<"$out" &&
	      grep -Eq "^  github +github.com api.github.com" <<<"$out"'

# ---- gatekeeperctl allow / revoke of a rule on a running cage ------------------------
# ctl WHO ARGS...: gatekeeperctl as WHO; output in $T/ctl.out, .err, CTL_RC.
ctl() {
	local who=$1
	shift
	as_cmd "$who"
	timeout -s KILL 30 "${AS_CMD[@]}" "$GKCTL_BIN" --control "$SOCK" "$@" \
		>"$T/ctl.out" 2>"$T/ctl.err" </dev/null
	CTL_RC=$?
	GK_DETAIL="rc=$CTL_RC | out: $(oneline "$(head -c 700 "$T/ctl.out")") | err: $(oneline "$(head -c 400 "$T/ctl.err")")"
}
cage_id() {
	"$GKCTL_BIN" --control "$SOCK" --json list 2>/dev/null | "$PYTHON" -c '
import json, sys
for c in json.loads(sys.stdin.readline()).get("cages", []):
    if c.get("label") == sys.argv[1]:
        print(c["id"])' "$1"
}
# The running cage does step N when the file go-N appears (at most 60 s
# each), its requests' lines in out-N.
write_steps() {
	cat >"$SHARE/steps.sh" <<'EOF'
cd "$1" || exit 1
n=1
while [ $n -le 3 ]; do
	i=0
	while [ ! -e "go-$n" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "go-$n" ] || exit 1
	sh "$2/rl.sh" reqs index GET https://codeload.github.com/index.html \
		other GET https://codeload.github.com/nothere.txt \
		post POST https://codeload.github.com/x.tgz \
		http-other GET http://codeload.github.com/nothere.txt >"out-$n.tmp" 2>&1
	mv "out-$n.tmp" "out-$n"
	n=$((n + 1))
done
EOF
	chmod a+r "$SHARE/steps.sh"
}
# step WHO N: let the cage do step N; copy its lines to $T/run.out.
step() {
	local d=$T/work-$1/steps
	: >"$d/go-$2"
	gk_wait_for 300 test -e "$d/out-$2"
	cp "$d/out-$2" "$T/run.out" 2>/dev/null || : >"$T/run.out"
}
# others403: step's GETs of /nothere.txt got gatekeeper's 403 (HTTPS and
# plain HTTP) and never reached nginx.
others403() {
	gk403 other GET /nothere.txt && gk403 http-other GET /nothere.txt &&
		[ "$(ngx_since "$NGX_MARK" "/nothere.txt ")" = 0 ]
}
# ctl_rules WHO: a running cage with one rule for codeload.github.com (GET
# /index.html), another added and taken back with gatekeeperctl.
ctl_rules() {
	local who=$1 d=$T/work-$1/steps id pid a0 rule='GET codeload.github.com/**'
	need_rules "$who: gatekeeperctl allow of a rule" || return 0
	rm -rf "$d"
	mkdir -p "$d"
	[ "$who" = user ] && chown "$E2E_USER:" "$d"
	cage_bg CTLCAGE "$who" --label "rules-$who" \
		--allow 'GET codeload.github.com/index.html' --ro "$EN_DIR" --ro "$SHARE" \
		--rw "$d" --cwd "$d" -- sh "$SHARE/steps.sh" "$d" "$SHARE"
	pid=$CTLCAGE
	wait_ms 300 eval '[ -n "$(cage_id "rules-$who")" ]'
	id=$(cage_id "rules-$who")
	GK_DETAIL="stderr: $(oneline "$(tail -c 500 "$T/CTLCAGE.err" 2>/dev/null)")"
	gk_check "$who: a running cage, --allow 'GET codeload.github.com/index.html' ($id)" \
		test -n "$id"
	[ -n "$id" ] || { kill9 "$pid"; return 0; }

	rmark
	step "$who" 1
	GK_DETAIL="cage: $(oneline "$(cat "$T/run.out")") | nginx: $(ngx_new)"
	gk_check "$who: ... GET /index.html works; GET /nothere.txt (HTTPS and plain HTTP) and POST get gatekeeper's 403, never reaching nginx" \
		eval '[ "$(status index)" = 200 ] && others403 && gk403 post POST /x.tgz &&
		      [ "$(ngx_since "$NGX_MARK" "\"POST ")" = 0 ]'

	a0=$(gk_audit_mark "$AUDIT")
	ctl "$who" allow "$id" "$rule"
	gk_check "$who: gatekeeperctl allow $id '$rule': exit 0, the allowlist printed holds the rule" \
		eval '[ "$CTL_RC" = 0 ] && grep -qF "$rule" "$T/ctl.out"'
	gk_audit_wait -F "$AUDIT" "$a0" 30 '"event":"cage.update"' "$rule"
	GK_DETAIL="cage.update lines: $(oneline "$(grep '"cage.update"' "$AUDIT" 2>/dev/null | tail -n 3)")"
	gk_check "$who: ... the audit log has the change as cage.update, with the rule" \
		test "$GK_AUDIT_N" -ge 1
	ctl "$who" allow "$id" 'FETCH codeload.github.com/**'
	gk_check "$who: gatekeeperctl allow of 'FETCH codeload.github.com/**': a usage error (2) naming the method" \
		eval '[ "$CTL_RC" = 2 ] && grep -q FETCH "$T/ctl.err"'
	ctl "$who" allow "$id" 'GET api.github.com/**'
	gk_check "$who: gatekeeperctl allow of 'GET api.github.com/**' (a host the cage's authority, made at its start, does not cover): refused (1), saying why" \
		eval '[ "$CTL_RC" = 1 ] && grep -q "api.github.com" "$T/ctl.err"'

	rmark
	step "$who" 2
	GK_DETAIL="cage: $(oneline "$(cat "$T/run.out")") | nginx: $(ngx_new) | stderr: $(oneline "$(tail -c 400 "$T/CTLCAGE.err")")"
	gk_check "$who: ... from then on GET /nothere.txt reaches nginx (404, HTTPS and plain HTTP); POST still gets gatekeeper's 403" \
		eval '[ "$(status index)" = 200 ] && [ "$(status other)" = 404 ] &&
		      [ "$(status http-other)" = 404 ] && [ "$(ngx_since "$NGX_MARK" "/nothere.txt ")" = 2 ] &&
		      gk403 post POST /x.tgz && [ "$(ngx_since "$NGX_MARK" "\"POST ")" = 0 ]'
	GK_DETAIL="denied lines: $(oneline "$(grep -oE 'gk-run: denied .*' "$T/CTLCAGE.err")")"
	gk_check "$who: ... gk-run's stderr: 'denied codeload.github.com:443 (...)'" \
		eval 'grep -q "gk-run: denied codeload.github.com:443 (" "$T/CTLCAGE.err"'
	ctl "$who" denials
	gk_check "$who: gatekeeperctl denials shows the cage's request_rule denials" \
		eval '[ "$CTL_RC" = 0 ] && grep "codeload.github.com" "$T/ctl.out" | grep -q request_rule'

	ctl "$who" revoke "$id" "$rule"
	gk_check "$who: gatekeeperctl revoke $id '$rule': exit 0, the allowlist without it" \
		eval '[ "$CTL_RC" = 0 ] && ! grep -qF "$rule" "$T/ctl.out" &&
		      grep -qF "GET codeload.github.com/index.html" "$T/ctl.out"'
	rmark
	step "$who" 3
	GK_DETAIL="cage: $(oneline "$(cat "$T/run.out")") | nginx: $(ngx_new)"
	gk_check "$who: ... and GET /nothere.txt gets gatekeeper's 403 again" \
		eval '[ "$(status index)" = 200 ] && others403'
	gk_wait_exit "$pid" 100 || kill9 "$pid"
	cat "$T/CTLCAGE.err" >>"$T/all-runs.err" 2>/dev/null
	rm -f "$T/CTLCAGE.err" "$T/CTLCAGE.out"
}
write_steps
for who in root user; do
	ctl_rules "$who"
done

e2e_stop_daemon
# shellcheck disable=SC2119  # no note for the summary
gk_finish
