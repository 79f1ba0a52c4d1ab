#!/usr/bin/env bash
#
# test_pkg.sh: package managers in gk-run cages. The real npm, npx, pip,
# venv, cargo and git do what a developer does in a fresh project, against
# package registries in e2e_net.sh's hermetic internet, each in a cage
# with gk-run's defaults that may reach only its registry, as root and as
# an unprivileged user; what they write lands in the project, and the
# user's own caches on the host stay as they were.
#
#   bash tests/integration/test_pkg.sh build/gatekeeperd build/spawner/gk-run
#   meson test -C build pkg_integration      (suite "integration")
#
# Runs as root in namespaces it creates itself (lib.sh), against
# e2e_net.sh's internet: registry.npmjs.org (npm's registry protocol as
# static files: left-pad 1.3.0, gk-dep 1.0.0, gk-hello 1.0.0 with a bin),
# pypi.org (PEP 503 simple index) and files.pythonhosted.org (the wheel
# gk_greet 1.0), written by mkregistry.py, served by nginx with the test
# CA, named by dnsmasq. gatekeeperd runs with its defaults.
#
# Homes: a tmpfs on /home in the test's own mount namespace (the machine's
# /home is untouched) holds a fresh home for each: /home/gk-root (root's
# HOME here) and /home/gk-e2e (the test user's, e2e_lib.sh's gk-e2e),
# mode 0700, empty like a new user's. Each case runs in a new project
# directory under ~/proj, the cage's working directory (gk-run is started
# there, no --cwd). A cage gets --allow for its registry's names and
# --ro for the directory of the test CA (under /tmp, which a cage does not
# see), nothing else; the CA reaches node through NODE_EXTRA_CA_CERTS and
# pip through PIP_CERT (en_ca_env), the machine's npmrc and pip.conf are
# left out (base_env), the proxies are gk-run's http_proxy/https_proxy.
#
# Cases, as root and as the user:
#   npm install left-pad        (cold cache) node_modules/left-pad works
#   npm ci                      a package-lock.json (gk-hello -> gk-dep,
#                               left-pad), the cache emptied first (npm
#                               cache clean --force): every tarball fetched
#   npx gk-hello                prints "hello from gk-hello"
#   pip install --user gk_greet then `import gk_greet` in the same cage
#                               (--break-system-packages: Debian's python
#                               is marked externally managed, PEP 668)
#   python3 -m venv v && v/bin/pip install gk_greet
#   cargo build                 in a member of a two-member workspace
#                               (target/ at the workspace root); only when
#                               cargo is installed (Debian's cargo)
#   git commit                  in a worktree (`git worktree add` on the
#                               host): the commit is in the repository
# Each must exit 0 and do its job, and, in a cage, its connections go
# through gatekeeperd (some allowed, none denied). After all of a user's
# cases, ~/.npm, ~/.cache, ~/.local and ~/.cargo on the host are byte for
# byte what they were (absent stays absent): a cage's caches are its own.
#
# GK_PKG_EXTRA_ARGS: more gk-run options, split on blanks, each '$HOME'
#   in them replaced by the home of the cage's user, e.g.
#   GK_PKG_EXTRA_ARGS='--rw $HOME' (the home writable: the registries, the
#   CA and the proxies on their own, without the caches' checks holding).
# GK_PKG_HOST=1: the same commands outside any cage, with HOME a scratch
#   directory (the test's own check: the registries and the commands).
# GK_PKG_TIMEOUT: the bound on each command in seconds (default 90).
#
# Prints "ok   ..." / "FAIL ..." per check and a summary; exits 1 if any
# check failed or anything needed is missing (never a silent skip).
# GK_KEEP_TMP=1 keeps the temp directory (logs; the homes are gone with
# the mount namespace).

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_pkg.sh

e2e_args 0 "$@"
e2e_preamble dig dnsmasq curl unshare nsenter ip mount nginx fcgiwrap openssl \
    git /usr/lib/git-core/git-http-backend nft bwrap setpriv useradd \
    groupadd usermod getent sha256sum find timeout node npm npx "$PYTHON"
"$PYTHON" -m pip --version >/dev/null 2>&1 ||
	e2e_die "pip for $PYTHON is not installed (python3-pip; bash deploy/install-deps.sh)"
"$PYTHON" -c 'import ensurepip' >/dev/null 2>&1 ||
	e2e_die "venv's ensurepip is not installed (python3-venv; bash deploy/install-deps.sh)"
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"

e2e_vars
PKG_HOST=${GK_PKG_HOST:-0}
PKG_TMO=${GK_PKG_TIMEOUT:-90}
read -ra PKG_EXTRA <<<"${GK_PKG_EXTRA_ARGS:-}"
NPM=registry.npmjs.org
PYPI=(pypi.org files.pythonhosted.org)
CARGO=$(command -v cargo 2>/dev/null)
declare -A HOME_OF=([root]=/home/gk-root [user]=/home/$E2E_USER)
declare -A OWNER=([root]=root [user]=$E2E_USER)
# the user's own caches and installs, compared before and after
CACHES=(.npm .cache .local .cargo)

# ---------------------------------------------------------------------------
# Running the commands

# pkg_env WHO HOME: PKG_CMD becomes the prefix that runs a command as WHO
# with base_env (HOME).
pkg_env() {
	local env=()
	mapfile -t env < <(base_env "$2")
	if [ "$1" = user ]; then
		PKG_CMD=(setpriv --reuid="$E2E_USER" --regid="$E2E_USER"
			--init-groups -- env -i "${env[@]}")
	else
		PKG_CMD=(env -i "${env[@]}")
	fi
}

# prun WHO DIR ALLOW COMMAND...: run COMMAND as WHO in DIR, in a cage
# allowed the names in ALLOW (blank-separated; none: no network), or with
# GK_PKG_HOST=1 directly, HOME a scratch directory. Bounded (an outer
# `timeout -s KILL`, exit 137). stdout in $T/run.out, stderr in $T/run.err
# (appended to $T/all-runs.err); sets RUN_RC and RUN_MS; the metrics
# around it (mark, after) in a cage.
prun() {
	local who=$1 dir=$2 allow=() a w gk=() t0
	read -ra a <<<"$3"
	shift 3
	for w in "${a[@]}"; do
		allow+=(--allow "$w")
	done
	if [ "$PKG_HOST" = 1 ]; then
		pkg_env "$who" "$T/scratch-$who"
	else
		pkg_env "$who" "${HOME_OF[$who]}"
		gk=("$GKRUN" --control "$SOCK" "${allow[@]}" --ro "$EN_DIR")
		for w in "${PKG_EXTRA[@]}"; do
			gk+=("${w//'$HOME'/${HOME_OF[$who]}}")
		done
		gk+=(--)
		mark
	fi
	echo "== $who in $dir: ${gk[*]} $*" >>"$T/all-runs.err"
	t0=$(date +%s%N)
	( cd "$dir" &&
	  exec timeout -s KILL "$PKG_TMO" "${PKG_CMD[@]}" "${gk[@]}" "$@" \
		>"$T/run.out" 2>"$T/run.err" </dev/null )
	RUN_RC=$?
	RUN_MS=$((($(date +%s%N) - t0) / 1000000))
	cat "$T/run.out" "$T/run.err" >>"$T/all-runs.err"
	[ "$PKG_HOST" = 1 ] || after
}

# as_who WHO COMMAND...: run a host-side step (set-up, a check) as WHO.
as_who() {
	local who=$1
	shift
	pkg_env "$who" "${HOME_OF[$who]}"
	"${PKG_CMD[@]}" "$@"
}

# proj WHO NAME: a new project directory ~/proj/NAME of WHO; prints it.
proj() {
	local d=${HOME_OF[$1]}/proj/$2
	as_who "$1" mkdir -p "$d" && printf '%s\n' "$d"
}

# names DIR: the names in DIR, sorted, on one line (or find's error).
names() {
	find "$1" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>&1 | sort | paste -sd' '
}

# ok_run: the command exited 0.
ok_run() { [ "$RUN_RC" = 0 ]; }

# net_detail: the connections of the last cage, for a check's detail.
net_detail() {
	printf 'allowed %s (http %s, socks5 %s, transparent %s), denied %s' \
		"$(dm gatekeeper_connections_total verdict=allowed)" \
		"$(dm gatekeeper_connections_total proto=http verdict=allowed)" \
		"$(dm gatekeeper_connections_total proto=socks5 verdict=allowed)" \
		"$(dm gatekeeper_connections_total proto=transparent verdict=allowed)" \
		"$(dm gatekeeper_denied_total)"
}
# check_net WHO WHAT: in a cage, the last command's connections went
# through gatekeeperd, and none was refused.
check_net() {
	[ "$PKG_HOST" = 1 ] && return 0
	GK_DETAIL=$(net_detail)
	gk_check "$1: $2: through gatekeeperd (connections allowed, none denied)" \
		eval '[ "$(dm gatekeeper_connections_total verdict=allowed)" -ge 1 ] &&
		      [ "$(dm gatekeeper_denied_total)" = 0 ]'
}

# home_state HOME DIR: what is in HOME/DIR: every entry's type, mode,
# size, mtime and path, every file's sha256; "absent" if there is none.
home_state() {
	local d=$1/$2
	if [ ! -e "$d" ] && [ ! -L "$d" ]; then
		echo "absent $2"
		return 0
	fi
	( cd "$d" && find . -printf '%y %m %s %T@ %p -> %l\n' | sort &&
	  find . -type f -exec sha256sum {} + | sort )
}

# nginx_gets N PATH-RE: the requests nginx logged after its first N lines
# for a path matching PATH-RE, answered 200.
nginx_gets() {
	tail -n +"$(($1 + 1))" "$EN_DIR/nginx-access.log" |
		grep -Ec "\"GET $2 HTTP/[0-9.]+\" 200 "
}
nginx_lines() { wc -l <"$EN_DIR/nginx-access.log"; }

# ---------------------------------------------------------------------------
# The cases, for WHO

case_npm_install() {
	local who=$1 d r
	d=$(proj "$who" npm-install)
	prun "$who" "$d" "$NPM" npm install left-pad
	GK_DETAIL=$(run_detail)
	gk_check "$who: npm install left-pad (cold cache) exits 0" ok_run
	check_net "$who" "npm install"
	r=$(cd "$d" && node -e 'process.stdout.write(require("left-pad")("5", 3, "0"))' 2>&1)
	GK_DETAIL="node_modules: $(names "$d/node_modules") | left-pad('5', 3, '0'): $(oneline "$r")"
	gk_check "$who: npm install left-pad: node_modules/left-pad is 1.3.0 and pads" \
		eval 'grep -q "\"version\": \"1.3.0\"" "$d/node_modules/left-pad/package.json" &&
		      [ "$r" = 005 ] && grep -q "\"left-pad\"" "$d/package.json"'
}

case_npm_ci() {
	local who=$1 d n r
	d=$(proj "$who" npm-ci)
	cp "$EN_DIR/projects/npm-ci/package.json" \
		"$EN_DIR/projects/npm-ci/package-lock.json" "$d/"
	chown -R "${OWNER[$who]}:" "$d"
	n=$(nginx_lines)
	prun "$who" "$d" "$NPM" sh -c 'npm cache clean --force && npm ci'
	GK_DETAIL=$(run_detail)
	gk_check "$who: npm ci (the cache emptied first) exits 0" ok_run
	check_net "$who" "npm ci"
	GK_DETAIL="tarballs fetched: $(nginx_gets "$n" '/[^ ]+/-/[^ ]+\.tgz')"
	gk_check "$who: npm ci: the three tarballs came from the registry (a cold cache)" \
		eval '[ "$(nginx_gets "$n" "/[^ ]+/-/[^ ]+\\.tgz")" -ge 3 ]'
	r=$(cd "$d" && node node_modules/.bin/gk-hello 2>&1)
	GK_DETAIL="node_modules: $(names "$d/node_modules") | gk-hello: $(oneline "$r")"
	gk_check "$who: npm ci: gk-hello, gk-dep and left-pad installed, the bin runs" \
		eval '[ -d "$d/node_modules/gk-dep" ] && [ -d "$d/node_modules/left-pad" ] &&
		      [ "$r" = "hello from gk-hello" ]'
}

case_npx() {
	local who=$1 d
	d=$(proj "$who" npx)
	prun "$who" "$d" "$NPM" npx gk-hello
	GK_DETAIL=$(run_detail)
	gk_check "$who: npx gk-hello prints \"hello from gk-hello\"" \
		eval 'ok_run && grep -qx "hello from gk-hello" "$T/run.out"'
	check_net "$who" "npx gk-hello"
}

case_pip_user() {
	local who=$1 d
	d=$(proj "$who" pip-user)
	prun "$who" "$d" "${PYPI[*]}" sh -c \
		'pip install --user --break-system-packages gk_greet &&
		 python3 -c "import gk_greet; print(gk_greet.greet()); print(gk_greet.__file__)"'
	GK_DETAIL=$(run_detail)
	gk_check "$who: pip install --user gk_greet, then import gk_greet in the same cage" \
		eval 'ok_run && grep -qx "hello from gk_greet" "$T/run.out"'
	check_net "$who" "pip install --user"
	if ok_run; then
		gk_info "$who: gk_greet imported from $(tail -n 1 "$T/run.out")"
	fi
}

case_venv() {
	local who=$1 d
	d=$(proj "$who" venv)
	prun "$who" "$d" "${PYPI[*]}" sh -c \
		'python3 -m venv v && v/bin/pip install gk_greet &&
		 v/bin/python -c "import gk_greet; print(gk_greet.greet())"'
	GK_DETAIL=$(run_detail)
	gk_check "$who: python3 -m venv v && v/bin/pip install gk_greet, and the venv imports it" \
		eval 'ok_run && grep -qx "hello from gk_greet" "$T/run.out"'
	check_net "$who" "venv's pip install"
	GK_DETAIL=$(ls -d "$d"/v/lib/python3*/site-packages/gk_greet* 2>&1)
	gk_check "$who: the venv holds gk_greet (in the project directory)" \
		eval 'ls -d "$d"/v/lib/python3*/site-packages/gk_greet/__init__.py >/dev/null 2>&1'
}

case_cargo() {
	local who=$1 d m r
	if [ -z "$CARGO" ]; then
		gk_info "$who: cargo is not installed: no cargo build case"
		return 0
	fi
	d=$(proj "$who" ws)
	as_who "$who" sh -c 'cd "$1" &&
		printf "[workspace]\nmembers = [\"app\", \"util\"]\nresolver = \"2\"\n" >Cargo.toml &&
		for m in app util; do
			mkdir -p $m/src &&
			printf "[package]\nname = \"%s\"\nversion = \"0.1.0\"\nedition = \"2021\"\n" $m >$m/Cargo.toml
		done &&
		printf "fn main() {\n    println!(\"hello from app\");\n}\n" >app/src/main.rs &&
		printf "pub fn util() -> u32 {\n    7\n}\n" >util/src/lib.rs' sh "$d"
	prun "$who" "$d/app" "" cargo build
	GK_DETAIL=$(run_detail)
	gk_check "$who: cargo build in a workspace member exits 0" ok_run
	r=$("$d/target/debug/app" 2>&1)
	GK_DETAIL="target: $(names "$d/target/debug") | app: $(oneline "$r") | member's own target: $(ls -d "$d/app/target" 2>&1)"
	gk_check "$who: cargo build: the binary is in the workspace root's target/ and runs" \
		eval '[ "$r" = "hello from app" ] && [ ! -e "$d/app/target" ]'
}

case_git_worktree() {
	local who=$1 d r
	d=$(proj "$who" git)
	if ! as_who "$who" sh -c 'cd "$1" && git init -q -b main repo &&
	    cd repo && echo one >README && git add README &&
	    git -c user.name=gk -c user.email=gk@example.invalid commit -q -m one &&
	    git worktree add -q -b topic ../topic' sh "$d" >"$T/git-setup.log" 2>&1; then
		gk_fail "$who: a repository and its worktree on the host" \
			"$(cat "$T/git-setup.log")"
		return 0
	fi
	prun "$who" "$d/topic" "" sh -c 'echo two >cage.txt && git add cage.txt &&
		git -c user.name=gk -c user.email=gk@example.invalid commit -q -m "from a cage"'
	GK_DETAIL=$(run_detail)
	gk_check "$who: git commit in a worktree exits 0" ok_run
	r=$(tgit -C "$d/repo" log -1 --format=%s topic 2>&1)
	GK_DETAIL="topic's last commit: $(oneline "$r")"
	gk_check "$who: git commit in a worktree: the repository has the commit on topic" \
		test "$r" = "from a cage"
}

# pkg_cases WHO: every case for WHO, between two looks at its caches.
pkg_cases() {
	local who=$1 h=${HOME_OF[$1]} c new
	for c in "${CACHES[@]}"; do
		home_state "$h" "$c" >"$T/before-$who-${c#.}"
	done
	names "$h" | tr ' ' '\n' >"$T/before-$who-ls"
	if [ "$PKG_HOST" = 1 ]; then
		rm -rf "$T/scratch-$who"
		install -d -m 700 -o "${OWNER[$who]}" -g "${OWNER[$who]}" \
			"$T/scratch-$who"
	fi
	case_npm_install "$who"
	case_npm_ci "$who"
	case_npx "$who"
	case_pip_user "$who"
	case_venv "$who"
	case_cargo "$who"
	case_git_worktree "$who"
	new=$(names "$h" | tr ' ' '\n' | grep -vxF -f "$T/before-$who-ls" |
		paste -sd' ')
	gk_info "$who: new in ~ on the host: ${new:-nothing}"
	for c in "${CACHES[@]}"; do
		home_state "$h" "$c" >"$T/after-$who-${c#.}"
		GK_DETAIL="before: $(oneline "$(head -c 200 "$T/before-$who-${c#.}")") | after: $(oneline "$(head -c 400 "$T/after-$who-${c#.}")")"
		gk_check "$who: ~/$c on the host is unchanged ($(head -c 6 "$T/before-$who-${c#.}" | grep -q '^absent' && echo "absent" || echo "as it was"))" \
			cmp -s "$T/before-$who-${c#.}" "$T/after-$who-${c#.}"
	done
}

# ---- the internet ------------------------------------------------------------
e2e_begin
gk_ok "the test internet is up (nginx, dnsmasq; $NPM, ${PYPI[*]})"
for n in "$NPM" "${PYPI[@]}"; do
	r=$(dig +short +time=1 +tries=2 "$n" A 2>&1)
	GK_DETAIL="got: $(oneline "$r")"
	gk_check "internet: the host resolves $n -> ${EN_ADDR[$n]} (dnsmasq)" \
		test "$r" = "${EN_ADDR[$n]}"
done
r=$(as root curl -sS --noproxy '*' --max-time 20 -D "$T/h.txt" \
	"https://$NPM/left-pad" 2>&1)
GK_DETAIL="got: $(oneline "$r") | $(oneline "$(cat "$T/h.txt")")"
gk_check "internet: https://$NPM/left-pad is its packument (application/json)" \
	eval '[ "$(printf "%s" "$r" | "$PYTHON" -c "import json, sys
print(json.load(sys.stdin)[\"versions\"][\"1.3.0\"][\"dist\"][\"tarball\"])")" = \
	        "https://$NPM/left-pad/-/left-pad-1.3.0.tgz" ] &&
	      grep -qi "^content-type: application/json" "$T/h.txt"'
r=$(as root curl -sS --noproxy '*' --max-time 20 "https://pypi.org/simple/gk-greet/" 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "internet: https://pypi.org/simple/gk-greet/ links the wheel with its sha256" \
	eval '[[ "$r" == *"https://files.pythonhosted.org/"*"gk_greet-1.0-py3-none-any.whl#sha256="* ]]'

# ---- the homes, the user -----------------------------------------------------
mount --make-rprivate / 2>/dev/null
mount -t tmpfs -o mode=755 gk-test-home /home ||
	gk_abort "a private tmpfs on /home (the test's own mount namespace)"
e2e_user
for who in root user; do
	install -d -m 700 -o "${OWNER[$who]}" -g "${OWNER[$who]}" \
		"${HOME_OF[$who]}"
done
gk_ok "fresh homes ${HOME_OF[root]} (root) and ${HOME_OF[user]} ($E2E_USER), mode 0700"
if [ -n "$CARGO" ]; then
	gk_info "cargo: $CARGO ($("$CARGO" --version 2>&1))"
fi

# ---- gatekeeperd ---------------------------------------------------------------
if [ "$PKG_HOST" = 1 ]; then
	gk_info "GK_PKG_HOST=1: the commands run outside any cage, HOME a scratch directory"
else
	: >"$T/empty.conf"
	GKD_ARGS=(-f -c "$T/empty.conf" --control "$SOCK" --upstream "$EN_RESOLVER"
		--metrics "$METRICS" --audit-log "$AUDIT" --log-level debug)
	gk_start_daemon GKD_PID "$GKD" "${GKD_ARGS[@]}"
	daemon_ready "$GKD_PID" ||
		gk_abort "gatekeeperd starts (control socket, metrics)" "$T/GKD_PID.log"
	gk_ok "gatekeeperd is ready with its defaults (pid $GKD_PID)"
	chmod 755 "$T/run"
	[ "${#PKG_EXTRA[@]}" -gt 0 ] &&
		gk_info "GK_PKG_EXTRA_ARGS: ${PKG_EXTRA[*]}"
fi

# ---- the cases -----------------------------------------------------------------
for who in root user; do
	pkg_cases "$who"
done

# ---- stop --------------------------------------------------------------------------
if [ "$PKG_HOST" != 1 ]; then
	e2e_stop_daemon
fi

if [ "$PKG_HOST" = 1 ]; then
	gk_finish "outside cages"
elif [ "${#PKG_EXTRA[@]}" -gt 0 ]; then
	gk_finish "gk-run ${PKG_EXTRA[*]}"
fi
# shellcheck disable=SC2119  # no note for the summary
gk_finish
