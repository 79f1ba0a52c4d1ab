#!/usr/bin/env bash
#
# test_sandbox_fs.sh: what a sandboxed program can leave behind for the
# host through the filesystem gk-run gives it, tried with real programs
# (git, npm when installed, socat, apt-get, getent, bash, cat) as root and
# as the unprivileged user nobody, each with a home of its own:
#
#  - tool caches (--cache private, shared, tmp, host): npm and shell
#    writes to ~/.npm, ~/.cache, ~/.local and ~/.cargo/registry land in
#    gk-run's own ~/.gk-run/cache/NAME-HASH of the project (hidden inside)
#    and persist; the host's ~/.npm, ~/.cache and ~/.local stay byte for
#    byte as they were (absent ones absent); the host's programs in
#    ~/.local/bin still run; --cache tmp keeps nothing; --cache host
#    writes the host's own directories; a .pth file one project's run
#    plants in ~/.local/lib/python3.X/site-packages, and its ~/.cache, are
#    not another project's (its python3 runs nothing), nor are the old
#    layout's caches (one set for all projects, moved to old/), unless
#    both run with --cache shared;
#  - files that make the host run code: a pre-commit hook, core.fsmonitor,
#    .git/info, .git/config.worktree, .envrc, .gitmodules, .vscode, .idea
#    planted in the working directory, a worktree's git directories and
#    a worktree's .git file; ~/.bashrc, ~/.profile, ~/.gitconfig and
#    ~/.config/git when run from $HOME. After each attempt the host's own
#    git (status, commit) or bash runs, and no marker file may appear;
#    placeholders are gone afterwards (listings as before); --rw of exactly
#    such a path lifts the guard;
#  - the host's unix sockets: a socat daemon on /run (in this script's own
#    mount namespace) is out of reach unless given with --socket; an
#    abstract socket is out of reach with --net none;
#  - secret stores: tokens, histories, /etc/shadow, gshadow, SSH host
#    keys read empty; --ro brings one back;
#  - root inside: apt-get update from a file: repository works (APT_CONFIG);
#  - gated mode: /etc/nsswitch.conf says "hosts: files dns" (the script
#    bind-mounts a host file saying "hosts: files" in its namespace) and
#    getent resolves through gatekeeperd;
#  - git commit in a worktree whose repository is elsewhere and in a
#    subdirectory of a repository, npm install in a workspace member;
#    --rw of a missing directory creates it.
#
#   bash tests/integration/test_sandbox_fs.sh build/spawner/gk-run build/gatekeeperd
#   meson test -C build sandbox_fs_integration     (suite "integration")
#
# Runs as root only (it skips otherwise): it re-executes itself in private
# network, mount and PID namespaces (lib.sh) and mounts a tmpfs on /run,
# /mnt and /etc/ssl/private there (and its own /etc/nsswitch.conf), so the
# sockets, homes, projects and keys it makes never touch the machine's
# own; logs go to a temporary directory under /tmp. Prints
# one line per check ("ok   ..." or "FAIL ..."), exits 1 if any check
# failed, 77 (skip) when a tool, bwrap or user namespaces are missing.
# GK_KEEP_TMP=1 keeps the temporary directory.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_exe_args test_sandbox_fs.sh GKRUN=gk-run GKD=gatekeeperd -- "$@"
GK_GROUP=gatekeeper	# may use the control socket (gatekeeper/gk_control.c)
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
gk_require bwrap git socat apt-get apt-config getent bash setpriv groupadd \
	unshare mount sha256sum find timeout dnsmasq dig nft ip tar "$PYTHON"
gk_enter_netns 77 "$GK_SELF" "$@"	# does not return
gk_setup
T=$GK_TMP
if ! bwrap --unshare-user --unshare-pid --ro-bind / / --proc /proc \
    true >/dev/null 2>&1; then
	echo "SKIP: bwrap cannot create user namespaces here"
	exit 77
fi

# The sandbox hides /tmp (a fresh tmpfs), so what it must see lives under
# /mnt: a tmpfs of this mount namespace, gone with it. /run too is this
# namespace's own: the test's sockets never reach the machine's /run.
FS=/mnt
mount -t tmpfs -o mode=0755,size=512m gk-fs-test "$FS" ||
	gk_abort "mount a tmpfs on $FS in the test's mount namespace"
mount -t tmpfs -o mode=0755 gk-fs-run /run ||
	gk_abort "mount a tmpfs on /run in the test's mount namespace"
TOK=gkfs$RANDOM$RANDOM		# names no one else's file has
WHOS=(root nobody)
HAVE_NPM=0
command -v npm >/dev/null 2>&1 && HAVE_NPM=1

# ---------------------------------------------------------------------------
# Helpers

oneline() { printf '%s' "$1" | tr '\n' '|' | cut -c1-600; }

# as_prefix WHO[:member]: AS runs a command as WHO with a small, known
# environment and WHO's test home. nobody:member has the primary group
# gatekeeper (gated mode); plain nobody has no groups at all.
RUN_ENV=()	# more of gk-run's environment, for one run
as_prefix() {
	local who=${1%%:*} env v
	env=(PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
		"HOME=$FS/$who/home" LANG=C.UTF-8 GIT_CONFIG_NOSYSTEM=1
		"${RUN_ENV[@]}")
	for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
		[ -n "${!v:-}" ] && env+=("$v=${!v}")
	done
	if [ "$who" = root ]; then
		AS=(env -i "${env[@]}")
	elif [ "$1" = nobody:member ]; then
		AS=(setpriv --reuid=nobody --regid="$GK_GROUP"
			--groups="$GK_GROUP" -- env -i "${env[@]}")
	else
		AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups --
			env -i "${env[@]}")
	fi
}

# run WHO[:member] DIR GK-RUN-ARGS...: gk-run as WHO in DIR, bounded (60 s,
# then SIGKILL: 137). Sets RC; output in $T/out and $T/err.
run() {
	local who=$1 dir=$2
	shift 2
	as_prefix "$who"
	( cd "$dir" && exec timeout -s KILL 60 "${AS[@]}" "$GKRUN" "$@" \
		>"$T/out" 2>"$T/err" </dev/null )
	RC=$?
}

# host WHO DIR CMD...: CMD as WHO in DIR, outside any sandbox (the host's
# own tools after a run), bounded. Sets HRC; output in $T/host.out.
host() {
	local who=$1 dir=$2
	shift 2
	as_prefix "$who"
	( cd "$dir" && exec timeout -s KILL 30 "${AS[@]}" "$@" \
		>"$T/host.out" 2>&1 </dev/null )
	HRC=$?
}

detail() {
	printf 'rc=%s | out: %s | err: %s' "$RC" "$(oneline "$(cat "$T/out")")" \
		"$(oneline "$(cat "$T/err")")"
}

# said NAME WHAT: the cage's try.sh reported "NAME: WHAT" (wrote|refused).
said() { grep -qx "$1: $2" "$T/out"; }

# marks WHO: the marker files the host's tools left (planted code ran).
marks() { find "$FS/$1/marks" -mindepth 1 -printf '%f ' 2>/dev/null; }
clear_marks() { find "$FS/$1/marks" -mindepth 1 -delete; }

# snap PATH...: every file and directory below each PATH (type, size,
# mtime, mode, owner, link target) and each file's hash; "absent P" for
# a PATH that does not exist.
snap() {
	local p
	for p in "$@"; do
		if [ ! -e "$p" ] && [ ! -L "$p" ]; then
			echo "absent $p"
			continue
		fi
		find "$p" -printf '%p %y %s %T@ %m %u %l\n' | LC_ALL=C sort
		find "$p" -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum
	done
}

# listing DIR [DEPTH]: names and types below DIR.
listing() {
	find "$1" -mindepth 1 -maxdepth "${2:-1}" -printf '%P %y\n' 2>&1 |
		LC_ALL=C sort
}

# host_git WHO DIR: what the host's user does next in a repository: git
# status, then a commit (hooks, core.fsmonitor and config run here).
host_git() {
	host "$1" "$2" git status --porcelain
	host "$1" "$2" git commit -q --allow-empty -m "host side $TOK"
}

# ---------------------------------------------------------------------------
# The cage's scripts: read-only inside (under /mnt), one line per attempt.

SCR=$FS/scripts
mkdir -p "$SCR"
cat >"$SCR/try.sh" <<'EOF'
# try NAME CMD...: run CMD, say "NAME: wrote" or "NAME: refused".
try() {
	n=$1
	shift
	if "$@" >/dev/null 2>&1; then
		echo "$n: wrote"
	else
		echo "$n: refused"
	fi
}
EOF
# gk-evil.pth: planted in python's user site-packages; python3 runs its
# import line at start: a marker pth-<working directory's name> in the
# user's marks directory (beside the home), when it may write there.
cat >"$SCR/gk-evil.pth" <<'EOF'
import os; open(os.path.join(os.path.dirname(os.environ["HOME"]), "marks", "pth-" + os.path.basename(os.getcwd())), "w").close()
EOF
# repo.sh MARKS: plant code in the repository in the working directory,
# then use git as usual.
cat >"$SCR/repo.sh" <<'EOF'
. "$(dirname "$0")/try.sh"
m=$1
try hook sh -c 'printf "#!/bin/sh\ntouch %s/hook\n" "$1" >.git/hooks/pre-commit &&
	chmod +x .git/hooks/pre-commit' sh "$m"
try fsmonitor git config core.fsmonitor "touch $m/fsmonitor; false"
try info sh -c 'echo "* diff=gk" >.git/info/attributes'
try worktreeconfig sh -c 'printf "[core]\n\tfsmonitor = \"touch %s/worktreeconfig; false\"\n" "$1" \
	>.git/config.worktree' sh "$m"
try envrc sh -c 'echo "touch $1/envrc" >.envrc' sh "$m"
try gitmodules sh -c 'printf "[submodule \"x\"]\n\tpath = x\n\turl = ../x\n" >.gitmodules'
try vscode sh -c 'mkdir -p .vscode && echo "{}" >.vscode/tasks.json'
try idea sh -c 'mkdir -p .idea && echo x >.idea/workspace.xml'
try commit sh -c 'echo in-cage >>tracked && git add tracked &&
	git commit -q -m in-cage'
EOF
# rename.sh MARKS: move .git away and put a copy with a hook in its place.
cat >"$SCR/rename.sh" <<'EOF'
if mv .git .git-gk-old 2>/dev/null; then
	mkdir .git && cp -a .git-gk-old/. .git/ 2>/dev/null
	printf '#!/bin/sh\ntouch %s/rename\n' "$1" >.git/hooks/pre-commit
	chmod +x .git/hooks/pre-commit
	echo "rename: wrote"
else
	echo "rename: refused"
fi
EOF
# plain.sh: a working directory that is no repository.
cat >"$SCR/plain.sh" <<'EOF'
. "$(dirname "$0")/try.sh"
try init git init -q
try mkdir mkdir .git
try envrc sh -c 'echo x >.envrc'
EOF
# home.sh MARKS: run from $HOME: plant code in the shell's and git's files.
cat >"$SCR/home.sh" <<'EOF'
. "$(dirname "$0")/try.sh"
m=$1
try bashrc sh -c 'echo "touch $1/bashrc" >>"$HOME/.bashrc"' sh "$m"
try profile sh -c 'echo "touch $1/profile" >"$HOME/.profile"' sh "$m"
try zshenv sh -c 'echo "touch $1/zshenv" >"$HOME/.zshenv"' sh "$m"
try gitconfig git config --global core.fsmonitor "touch $m/gitconfig; false"
try configgit sh -c 'mkdir -p "$HOME/.config/git" &&
	printf "[core]\n\tpager = touch %s/configgit\n" "$1" >"$HOME/.config/git/config"' sh "$m"
try gkrunconf sh -c 'mkdir -p "$HOME/.config/gk-run" &&
	echo "rw /" >"$HOME/.config/gk-run/config"'
try homefile sh -c 'echo ok >"$HOME/gk-home-file"'
EOF
# wt.sh MARKS MAIN: from a worktree: commit, then plant code in the
# repository's git directory, the worktree's .git file and its commondir.
cat >"$SCR/wt.sh" <<'EOF'
. "$(dirname "$0")/try.sh"
m=$1 main=$2
try commit sh -c 'echo wt >wt-file && git add wt-file && git commit -q -m in-worktree'
try hook sh -c 'printf "#!/bin/sh\ntouch %s/wt-hook\n" "$1" >"$2/.git/hooks/pre-commit" &&
	chmod +x "$2/.git/hooks/pre-commit"' sh "$m" "$main"
try config git config core.fsmonitor "touch $m/wt-config; false"
# a git directory of our own, its config ours
mkdir -p evil && cp -a "$main/.git/objects" "$main/.git/refs" "$main/.git/HEAD" evil/ 2>/dev/null
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch %s/wt-evil; false"\n' "$m" >evil/config
case $3 in
dotgit) try dotgit sh -c 'echo "gitdir: $PWD/evil" >.git' ;;
commondir) try commondir sh -c 'echo "$PWD/evil" >"$1/.git/worktrees/wt/commondir"' sh "$main" ;;
esac
EOF
chmod -R a+rX "$SCR"

# ---------------------------------------------------------------------------
# Setup: homes, projects, daemons

# prepare WHO: $FS/WHO with a home (caches, host programs, secrets, shell
# and git start-up files), a plain working directory, a repository, a
# worktree of another repository, an npm workspace; all owned by WHO.
prepare() {
	local who=$1 d=$FS/$1 h=$FS/$1/home
	mkdir -p "$h/.cache/pip/http" "$h/.local/bin" "$h/.local/share/gk" \
		"$h/.config/gh" "$h/.cargo" "$d/work" "$d/marks" "$d/pkg"
	echo "host-pip-entry" >"$h/.cache/pip/http/entry"
	echo "host-share" >"$h/.local/share/gk/f"
	printf '#!/bin/sh\necho host tool ran\n' >"$h/.local/bin/gk-hosttool"
	chmod 755 "$h/.local/bin/gk-hosttool"
	echo 'export GK_HOST_BASHRC=1' >"$h/.bashrc"
	printf '[user]\n\tname = GK Test\n\temail = gk@test.invalid\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n' \
		>"$h/.gitconfig"
	echo "https://u:gk-secret-gitcred@github.com" >"$h/.git-credentials"
	printf 'github.com:\n    oauth_token: gk-secret-gh\n    git_protocol: https\n' \
		>"$h/.config/gh/hosts.yml"
	mkdir -p "$h/.docker/contexts"
	printf '{\n  "auths": {"ghcr.io": {"auth": "gk-secret-docker"}},\n  "detachKeys": "ctrl-x"\n}\n' \
		>"$h/.docker/config.json"
	echo "gk-secret-dockerctx" >"$h/.docker/contexts/meta"
	printf '@corp:registry=https://npm.corp.example/\n//registry.npmjs.org/:_authToken=npm_gk-secret-npmrc\n' \
		>"$h/.npmrc"
	printf '[pypi]\npassword = gk-secret-pypirc\n' >"$h/.pypirc"
	printf '[registry]\ntoken = "gk-secret-cargo"\n' >"$h/.cargo/credentials.toml"
	echo "gk-secret-vault" >"$h/.vault-token"
	mkdir -p "$h/.claude" "$h/.m2" "$h/.config/containers" "$h/.gem" \
		"$h/.config/Bitwarden CLI"
	echo "db:5432:*:u:gk-secret-pgpass" >"$h/.pgpass"
	echo '{"accessToken":"gk-secret-claude"}' >"$h/.claude/.credentials.json"
	echo '{"oauthAccount":"gk-secret-claudejson"}' >"$h/.claude.json"
	echo "<password>gk-secret-m2</password>" >"$h/.m2/settings.xml"
	echo '{"auths":{"r":{"auth":"gk-secret-podman"}}}' \
		>"$h/.config/containers/auth.json"
	echo ":rubygems_api_key: gk-secret-gem" >"$h/.gem/credentials"
	echo '{"token":"gk-secret-bw"}' >"$h/.config/Bitwarden CLI/data.json"
	echo "export TOKEN=gk-secret-bashhist" >"$h/.bash_history"
	echo "token = 'gk-secret-pyhist'" >"$h/.python_history"
	echo "plain" >"$d/work/readme"
	for p in probe tmp host; do
		mkdir -p "$d/pkg/$p/package"
		printf '{"name":"gk-fs-%s","version":"1.0.0"}\n' "$p" \
			>"$d/pkg/$p/package/package.json"
		tar czf "$d/pkg/gk-fs-$p-1.0.0.tgz" -C "$d/pkg/$p" package
	done
	mkdir -p "$d/apt/repo" "$d/work/apt/lists/partial" "$d/work/apt/cache"
	: >"$d/apt/repo/Packages"
	echo "deb [trusted=yes] file:$d/apt/repo ./" >"$d/apt/sources.list"
	mkdir -p "$d/ws/packages/a"
	echo '{"name":"ws","private":true,"workspaces":["packages/*"]}' \
		>"$d/ws/package.json"
	echo '{"name":"a","version":"1.0.0"}' >"$d/ws/packages/a/package.json"
	chown -R "$who:" "$d"
	# repositories, made by their owner
	mkdir -p "$d/repo" "$d/proj/main/sub" "$d/control"
	chown -R "$who" "$d/repo" "$d/proj" "$d/control"
	host "$who" "$d/repo" sh -c 'git init -q && echo t >tracked &&
		git add tracked && git commit -q -m init'
	# a repository with a submodule (its git directory: .git/modules/sm)
	mkdir -p "$d/smrepo"
	chown "$who" "$d/smrepo"
	host "$who" "$d/smrepo" sh -c 'git init -q &&
		git init -q ../smsrc && git -C ../smsrc commit -q --allow-empty -m s &&
		git -c protocol.file.allow=always submodule -q add ../smsrc sm &&
		git commit -q -m sm'
	host "$who" "$d/proj/main" sh -c 'git init -q && echo s >sub/f &&
		git add sub/f && git commit -q -m init &&
		git worktree add -q ../wt'
	host "$who" "$d/control" sh -c 'git init -q && git commit -q --allow-empty -m init'
}

# controls WHO: code planted from outside does run (so a missing marker
# below means something): a pre-commit hook, core.fsmonitor, .bashrc.
controls() {
	local who=$1 d=$FS/$1
	host "$who" "$d/control" sh -c '
		printf "#!/bin/sh\ntouch %s/ctl-hook\n" "$1" >.git/hooks/pre-commit &&
		chmod +x .git/hooks/pre-commit &&
		git config core.fsmonitor "touch $1/ctl-fsmonitor; false" &&
		mkdir -p h && echo "touch $1/ctl-bashrc" >h/.bashrc' sh "$d/marks"
	host_git "$who" "$d/control"
	host "$who" "$d/control" env HOME="$d/control/h" bash -ic true
	GK_DETAIL="marks: $(marks "$who") | $(oneline "$(cat "$T/host.out")")"
	gk_check "$who: control: a hook, core.fsmonitor and .bashrc planted from outside run on the host (git commit, git status, bash -i)" \
		eval '[ -e "$d/marks/ctl-hook" ] && [ -e "$d/marks/ctl-fsmonitor" ] &&
		    [ -e "$d/marks/ctl-bashrc" ]'
	rm -f "$d/marks"/ctl-*
}

# A host whose name service bypasses DNS (systemd-resolved's socket in
# /run, mdns): "hosts: files" in this namespace only.
NSS_HOSTS=0
if [ -f /etc/nsswitch.conf ]; then
	sed 's/^hosts:.*/hosts: files/' /etc/nsswitch.conf >"$T/nsswitch.conf"
	grep -q '^hosts:' "$T/nsswitch.conf" ||
		echo "hosts: files" >>"$T/nsswitch.conf"
	chmod 644 "$T/nsswitch.conf"
	mount --bind "$T/nsswitch.conf" /etc/nsswitch.conf && NSS_HOSTS=1
fi
[ "$NSS_HOSTS" = 1 ] ||
	gk_info "no /etc/nsswitch.conf to replace: the nsswitch check is skipped"

# A TLS key where distributions keep them (root only, mode 0600).
SSL_PRIVATE=0
if [ -d /etc/ssl/private ] &&
    mount -t tmpfs -o mode=0710 gk-fs-ssl /etc/ssl/private; then
	echo "gk-secret-ssl" >/etc/ssl/private/gk-test.key
	chmod 600 /etc/ssl/private/gk-test.key
	SSL_PRIVATE=1
fi

# gatekeeperd's audit log where the unit keeps it (/var/log/gatekeeper,
# its LogsDirectory=): every cage's names and labels; a tmpfs on /var/log
# in this script's mount namespace only.
AUDIT_DIR=0
if mount -t tmpfs -o mode=0755 gk-fs-log /var/log; then
	mkdir -m 0750 /var/log/gatekeeper &&
		echo '{"event":"proxy.deny","host":"gk-secret-audit.example"}' \
			>/var/log/gatekeeper/audit.log && AUDIT_DIR=1
fi

# The host's daemons: a unix socket on /run, an abstract one.
RUNSOCK=/run/gk-test-$$.sock
ABSTRACT=gk-test-$TOK
( gk_close_ctl_fds; exec socat UNIX-LISTEN:"$RUNSOCK",fork,mode=666 \
	SYSTEM:'echo host daemon reached' >"$T/socat-run.log" 2>&1 ) &
gk_track_pid "$!"
( gk_close_ctl_fds; exec socat ABSTRACT-LISTEN:"$ABSTRACT",fork \
	SYSTEM:'echo abstract daemon reached' >"$T/socat-abs.log" 2>&1 ) &
gk_track_pid "$!"
gk_wait_for 50 test -S "$RUNSOCK" ||
	gk_fail "socat listens on $RUNSOCK" "$(cat "$T/socat-run.log")"

# gatekeeperd and its upstream (dnsmasq with lib.sh's records), in this
# network namespace.
SOCK=$T/run/control.sock
GKD_PID=
GKD_UP=0
start_gatekeeperd() {
	gk_start_upstream 5353 "$T/upstream.log" || {
		gk_fail "the upstream (dnsmasq on 127.0.0.1:5353) starts"
		return 1
	}
	gk_start_local_daemon || return 1
	GKD_UP=1
}
start_gatekeeperd
GK_SUMMARY_LOG=$T/GKD_PID.log

echo "# gk-run: $GKRUN ($("$GKRUN" --version 2>&1))"
echo "# bwrap: $(bwrap --version), git: $(git --version), npm: $([ "$HAVE_NPM" = 1 ] && npm --version 2>/dev/null || echo none)"

# ---------------------------------------------------------------------------
# 1. Tool caches

# npm_or_sh WHAT PKG: the cage's command that writes ~/.npm: npm's own
# cache (npm cache add of a local tarball), or a shell write without npm.
npm_add() {
	if [ "$HAVE_NPM" = 1 ]; then
		printf 'npm cache add %s --offline --no-audit --no-fund >/dev/null' "$1"
	else
		printf 'mkdir -p "$HOME/.npm/_cacache" && echo %s >"$HOME/.npm/_cacache/%s"' \
			"$(basename "$1")" "$(basename "$1")"
	fi
}
npm_ls() {
	if [ "$HAVE_NPM" = 1 ]; then
		printf 'npm cache ls --offline 2>/dev/null'
	else
		printf 'ls "$HOME/.npm/_cacache" 2>/dev/null'
	fi
}

# cache_key DIR: the name of DIR's private caches under ~/.gk-run/cache:
# its real path's last component ([A-Za-z0-9._-], others '_', no leading
# '.', at most 40), '-', 16 hex digits of the SHA-256 of the real path.
cache_key() {
	local p
	p=$(readlink -f "$1")
	printf '%s-%s' "$(basename "$p" | sed 's/[^A-Za-z0-9._-]/_/g; s/^\./_/' |
		cut -c1-40)" "$(printf %s "$p" | sha256sum | cut -c1-16)"
}

checks_cache() {
	local who=$1 d=$FS/$1 h=$FS/$1/home before after pc mine rc1 dir
	[ "$HAVE_NPM" = 1 ] || gk_info "$who: npm is not installed: a shell writes ~/.npm instead"
	before=$(snap "$h/.npm" "$h/.cache" "$h/.local")
	mine=$(snap "$h/.cargo")
	run "$who" "$d/work" -- sh -c "
		$(npm_add "$d/pkg/gk-fs-probe-1.0.0.tgz") &&
		mkdir -p \"\$HOME/.cache/gk-fs-$TOK\" && echo c1 >\"\$HOME/.cache/gk-fs-$TOK/entry\" &&
		mkdir -p \"\$HOME/.local/lib/python3/site-packages\" &&
		echo m >\"\$HOME/.local/lib/python3/site-packages/gk_fs.py\" &&
		echo new >\"\$HOME/.local/bin/gk-newtool\" &&
		mkdir -p \"\$HOME/.cargo/registry/gk\" && echo r >\"\$HOME/.cargo/registry/gk/x\" &&
		echo \"home=\$HOME\" && \"\$HOME/.local/bin/gk-hosttool\" &&
		echo \"gk-run dir: [\$(ls -A \"\$HOME/.gk-run\")]\" &&
		{ echo v >\"\$HOME/gk-vanish\"; true; }"
	GK_DETAIL=$(detail)
	gk_check "$who: --cache private: npm cache add and writes to ~/.cache, ~/.local/lib, ~/.local/bin, ~/.cargo/registry work (HOME is the test's)" \
		eval '[ "$RC" = 0 ] && grep -qx "home=$h" "$T/out"'
	after=$(snap "$h/.npm" "$h/.cache" "$h/.local")
	GK_DETAIL="diff: $(oneline "$(diff <(echo "$before") <(echo "$after"))")"
	gk_check "$who: --cache private: the host's ~/.npm (absent), ~/.cache and ~/.local are byte for byte unchanged" \
		eval '[ "$before" = "$after" ] && [[ "$after" == *"absent $h/.npm"* ]]'
	pc=$h/.gk-run/cache/$(cache_key "$d/work")
	GK_DETAIL="$(cd "$h" 2>/dev/null && find .gk-run -maxdepth 4 2>&1 | head -20 | paste -sd' ')"
	gk_check "$who: --cache private: the writes are in ~/.gk-run/cache/NAME-HASH of the working directory on the host (npm's _cacache, .cache, .local/lib, .local/bin, .cargo/registry)" \
		eval '[ -d "$pc/.npm/_cacache" ] && [ "$(cat "$pc/.cache/gk-fs-$TOK/entry")" = c1 ] &&
		    [ -f "$pc/.local/lib/python3/site-packages/gk_fs.py" ] &&
		    [ -f "$pc/.local/bin/gk-newtool" ] && [ -f "$pc/.cargo/registry/gk/x" ]'
	GK_DETAIL=$(detail)
	gk_check "$who: --cache private: ~/.gk-run is hidden inside (empty)" \
		grep -qx "gk-run dir: \[\]" "$T/out"
	gk_check "$who: --cache private: the host's programs in ~/.local/bin still run inside" \
		grep -qx "host tool ran" "$T/out"
	GK_DETAIL="home: $(listing "$h" | paste -sd' ') | .cargo: $(listing "$h/.cargo" | paste -sd' ')"
	gk_check "$who: --cache private: new files on the stand-ins for read-only parents vanish (~/gk-vanish); the host's ~/.cargo unchanged" \
		eval '[ ! -e "$h/gk-vanish" ] && [ "$mine" = "$(snap "$h/.cargo")" ]'

	# --cache-dir: where a path a tool printed inside (npm's log) is
	run "$who" "$d/work" -- sh -c "mkdir -p \"\$HOME/.npm/_logs\" &&
		echo log >\"\$HOME/.npm/_logs/gk-$TOK-debug-0.log\" && exit 1"
	rc1=$RC
	run "$who" "$d/work" --cache-dir
	dir=$(cat "$T/out")
	GK_DETAIL="$(detail) | the failed run: rc=$rc1"
	gk_check "$who: gk-run --cache-dir prints the project's caches' directory DIR on the host: ~/.npm/_logs/x written inside (by a failed run) is DIR/.npm/_logs/x" \
		eval '[ "$rc1" = 1 ] && [ "$RC" = 0 ] && [ "$dir" = "$pc" ] &&
		    [ "$(cat "$dir/.npm/_logs/gk-$TOK-debug-0.log")" = log ] && [ ! -s "$T/err" ]'
	run "$who" "$d/work" --cache shared --cwd "$d/work" --cache-dir
	GK_DETAIL=$(detail)
	gk_check "$who: ... --cache shared --cache-dir: ~/.gk-run/cache/shared" \
		eval '[ "$RC" = 0 ] && [ "$(cat "$T/out")" = "$h/.gk-run/cache/shared" ]'
	run "$who" "$d/work" --cache tmp --cache-dir
	GK_DETAIL=$(detail)
	gk_check "$who: ... --cache tmp --cache-dir: exit 1, nothing printed, nothing kept (said)" \
		eval '[ "$RC" = 1 ] && [ ! -s "$T/out" ] && grep -q "nothing is kept" "$T/err"'
	run "$who" "$d/work" --cache-dir -- sh -c "echo ran"
	GK_DETAIL=$(detail)
	gk_check "$who: ... --cache-dir with a command: a usage error (125), nothing run" \
		eval '[ "$RC" = 125 ] && ! grep -q ran "$T/out" && grep -q -- "--cache-dir" "$T/err"'

	run "$who" "$d/work" -- sh -c "$(npm_ls); cat \"\$HOME/.cache/gk-fs-$TOK/entry\" \"\$HOME/.local/bin/gk-newtool\""
	GK_DETAIL=$(detail)
	gk_check "$who: --cache private: a second run finds what the first wrote (npm cache ls, ~/.cache, ~/.local/bin)" \
		eval '[ "$RC" = 0 ] && grep -q "gk-fs-probe" "$T/out" && grep -qx c1 "$T/out" &&
		    grep -qx new "$T/out"'

	run "$who" "$d/work" --cache tmp -- sh -c "
		$(npm_add "$d/pkg/gk-fs-tmp-1.0.0.tgz") &&
		mkdir -p \"\$HOME/.cache/gk-fs-$TOK\" && echo t >\"\$HOME/.cache/gk-fs-$TOK/tmp-entry\" &&
		{ cat \"\$HOME/.cache/gk-fs-$TOK/entry\" 2>/dev/null || echo no-private; } &&
		\"\$HOME/.local/bin/gk-hosttool\""
	GK_DETAIL=$(detail)
	gk_check "$who: --cache tmp: a fresh cache (the private one not seen), writable, host programs still run" \
		eval '[ "$RC" = 0 ] && grep -qx no-private "$T/out" && grep -qx "host tool ran" "$T/out"'
	run "$who" "$d/work" --cache tmp -- sh -c "$(npm_ls); ls -A \"\$HOME/.cache\""
	GK_DETAIL="$(detail) | private: $(ls -A "$pc/.cache/gk-fs-$TOK")"
	gk_check "$who: --cache tmp: nothing persists (npm cache, ~/.cache), not in the private cache either" \
		eval '[ "$RC" = 0 ] && ! grep -q "gk-fs-tmp" "$T/out" && ! grep -q "gk-fs-$TOK" "$T/out" &&
		    [ ! -e "$pc/.cache/gk-fs-$TOK/tmp-entry" ]'
	after=$(snap "$h/.npm" "$h/.cache" "$h/.local")
	GK_DETAIL="diff: $(oneline "$(diff <(echo "$before") <(echo "$after"))")"
	gk_check "$who: --cache tmp: the host's ~/.npm, ~/.cache and ~/.local still unchanged" \
		test "$before" = "$after"

	run "$who" "$d/work" --cache host -- sh -c "
		$(npm_add "$d/pkg/gk-fs-host-1.0.0.tgz") &&
		mkdir -p \"\$HOME/.cache/gk-fs-$TOK\" && echo h >\"\$HOME/.cache/gk-fs-$TOK/host-entry\""
	GK_DETAIL="$(detail) | host: $(listing "$h/.npm"; listing "$h/.cache")"
	gk_check "$who: --cache host: the host's own ~/.npm (created) and ~/.cache are written" \
		eval '[ "$RC" = 0 ] && [ -d "$h/.npm/_cacache" ] &&
		    [ "$(cat "$h/.cache/gk-fs-$TOK/host-entry")" = h ] &&
		    [ ! -e "$pc/.cache/gk-fs-$TOK/host-entry" ]'
	if [ -s "$T/err" ]; then
		gk_info "$who: --cache host: gk-run's stderr: $(oneline "$(cat "$T/err")")"
	else
		gk_info "$who: --cache host: gk-run printed no warning"
	fi
}

# plant DIR: the cage's command that plants $SCR/gk-evil.pth in python's
# user site-packages (python runs its import lines at every start) and
# ~/.cache/gk-proj-$TOK/entry saying DIR's name; prints the site path.
plant() {
	printf '%s' "sp=\$($PYTHON -c 'import site; print(site.getusersitepackages())') &&
		mkdir -p \"\$sp\" && cp $SCR/gk-evil.pth \"\$sp/gk-evil.pth\" &&
		mkdir -p \"\$HOME/.cache/gk-proj-$TOK\" &&
		echo $1 >\"\$HOME/.cache/gk-proj-$TOK/entry\" && echo \"site=\$sp\""
}
# victim: the cage's command of the next project: python3, then what it
# finds in ~/.cache.
victim() {
	printf '%s' "$PYTHON -c pass; echo py=\$?;
		cat \"\$HOME/.cache/gk-proj-$TOK/entry\" 2>/dev/null || echo no-entry"
}

# Project A's run (the working directory of checks_cache) plants code in
# its caches; project B's python3 must not run it, B must not see A's
# ~/.cache; A keeps its own; --cache shared shares them on purpose.
checks_cache_projects() {
	local who=$1 d=$FS/$1 h=$FS/$1/home m=$FS/$1/marks a b pa py old
	a=$d/work
	b=$d/projb
	mkdir -p "$b"
	chown "$who:" "$b"
	clear_marks "$who"
	pa=$h/.gk-run/cache/$(cache_key "$a")
	run "$who" "$a" --net none -- sh -c "$(plant a)"
	GK_DETAIL="$(detail) | $(cd "$h/.gk-run/cache" 2>/dev/null && find . -maxdepth 6 -name 'gk-evil.pth' | paste -sd' ')"
	gk_check "$who: --cache private: project A plants ~/.local/lib/python3.X/site-packages/gk-evil.pth and ~/.cache (--net none), kept in ~/.gk-run/cache/$(cache_key "$a")" \
		eval '[ "$RC" = 0 ] && compgen -G "$pa/.local/lib/python3*/site-packages/gk-evil.pth" >/dev/null &&
		    [ "$(cat "$pa/.cache/gk-proj-$TOK/entry")" = a ]'

	run "$who" "$b" --net none --rw "$m" -- sh -c "$(victim)"
	GK_DETAIL="$(detail) | marks: $(marks "$who")"
	gk_check "$who: --cache private: project B's python3 does not run A's .pth (no marker, though B may write the marks directory)" \
		eval '[ "$RC" = 0 ] && grep -qx py=0 "$T/out" && [ -z "$(marks "$who")" ]'
	gk_check "$who: --cache private: project B does not see A's ~/.cache" \
		eval '[ "$RC" = 0 ] && grep -qx no-entry "$T/out"'

	run "$who" "$a" --net none --rw "$m" -- sh -c "$(victim)"
	GK_DETAIL="$(detail) | marks: $(marks "$who") | .project: $(cat "$pa/.project" 2>&1)"
	gk_check "$who: --cache private: project A's next run has its own caches (its .pth runs, its ~/.cache), ~/.gk-run/cache/$(cache_key "$a")/.project names A" \
		eval '[ "$RC" = 0 ] && grep -qx a "$T/out" && [ -e "$m/pth-work" ] &&
		    [ "$(cat "$pa/.project")" = "$(readlink -f "$a")" ]'
	clear_marks "$who"

	run "$who" "$b" --dry-run -- true
	GK_DETAIL=$(detail)
	gk_check "$who: --dry-run shows project B's own cache directory (~/.gk-run/cache/$(cache_key "$b"))" \
		eval '[ "$RC" = 0 ] && grep -qF -- "$h/.gk-run/cache/$(cache_key "$b")/.local/lib" "$T/out"'

	# the one set all projects had before, code planted in it
	py=$($PYTHON -c 'import sys; print("python%d.%d" % sys.version_info[:2])')
	old=$h/.gk-run/cache/.local/lib/$py/site-packages
	mkdir -p "$old" "$h/.gk-run/cache/.cache/gk-proj-$TOK"
	cp "$SCR/gk-evil.pth" "$old/gk-evil.pth"
	echo old >"$h/.gk-run/cache/.cache/gk-proj-$TOK/entry"
	chown -R "$who:" "$h/.gk-run"
	run "$who" "$b" --net none --rw "$m" -- sh -c "$(victim)"
	GK_DETAIL="$(detail) | marks: $(marks "$who") | cache: $(ls -A "$h/.gk-run/cache" | paste -sd' ')"
	gk_check "$who: --cache private: the old layout's caches (one set for all projects) are not used: no .pth run, no ~/.cache entry; moved to ~/.gk-run/cache/old, said once" \
		eval '[ "$RC" = 0 ] && grep -qx no-entry "$T/out" && [ -z "$(marks "$who")" ] &&
		    [ -f "$h/.gk-run/cache/old/.local/lib/$py/site-packages/gk-evil.pth" ] &&
		    [ ! -e "$h/.gk-run/cache/.local" ] && grep -q "moved to .*/old" "$T/err"'
	run "$who" "$b" --net none -- true
	GK_DETAIL=$(detail)
	gk_check "$who: --cache private: the next run says nothing of the old caches, left in ~/.gk-run/cache/old" \
		eval '[ "$RC" = 0 ] && ! grep -q "old" "$T/err" &&
		    [ -f "$h/.gk-run/cache/old/.local/lib/$py/site-packages/gk-evil.pth" ]'

	run "$who" "$a" --net none --cache shared -- sh -c "$(plant shared)"
	run "$who" "$b" --net none --cache shared --rw "$m" -- sh -c "$(victim)"
	GK_DETAIL="$(detail) | marks: $(marks "$who")"
	gk_check "$who: --cache shared: project B runs what A planted and sees A's ~/.cache (~/.gk-run/cache/shared)" \
		eval '[ "$RC" = 0 ] && grep -qx shared "$T/out" && [ -e "$m/pth-projb" ] &&
		    compgen -G "$h/.gk-run/cache/shared/.local/lib/python3*/site-packages/gk-evil.pth" >/dev/null'
	clear_marks "$who"
}

# ---------------------------------------------------------------------------
# 2. Files that make the host run code

checks_repo() {
	local who=$1 d=$FS/$1 r=$FS/$1/repo m=$FS/$1/marks before after x
	host "$who" "$r" git config extensions.worktreeConfig true
	before="$(listing "$r") / $(listing "$r/.git") / $(listing "$r/.git/hooks")"
	run "$who" "$r" -- sh "$SCR/repo.sh" "$m"
	host_git "$who" "$r"
	host "$who" "$r" git log --format=%s
	after="$(listing "$r") / $(listing "$r/.git") / $(listing "$r/.git/hooks")"
	GK_DETAIL="$(detail) | marks: $(marks "$who")"
	gk_check "$who: repo: a pre-commit hook cannot be planted; the host's git commit runs none" \
		eval 'said hook refused && [ ! -e "$m/hook" ]'
	gk_check "$who: repo: git config core.fsmonitor fails inside; the host's git status runs nothing" \
		eval 'said fsmonitor refused && [ ! -e "$m/fsmonitor" ]'
	gk_check "$who: repo: .git/info cannot be written" \
		eval 'said info refused && [ ! -e "$r/.git/info/attributes" ]'
	gk_check "$who: repo: .git/config.worktree cannot be written (extensions.worktreeConfig on); the host's git status runs nothing" \
		eval 'said worktreeconfig refused && [ ! -e "$m/worktreeconfig" ] &&
		    [ ! -e "$r/.git/config.worktree" ]'
	for x in envrc gitmodules vscode idea; do
		gk_check "$who: repo: .$x cannot be created" \
			eval 'said "$x" refused && [ ! -e "$r/.$x" ]'
	done
	GK_DETAIL="before: $(oneline "$before") | after: $(oneline "$after")"
	gk_check "$who: repo: no placeholder is left (.git, .git/hooks and the directory list as before)" \
		test "$before" = "$after"
	GK_DETAIL="$(detail) | log: $(oneline "$(cat "$T/host.out")")"
	gk_check "$who: repo: git add and git commit inside still work (the commit is on the host)" \
		eval 'said commit wrote && grep -qx in-cage "$T/host.out"'

	# a submodule's git directory (.git/modules/sm): its hooks and config
	run "$who" "$d/smrepo" -- sh -c '. "$1/try.sh"
		try smhook sh -c "printf \"#!/bin/sh\ntouch %s/smhook\n\" \"\$1\" >.git/modules/sm/hooks/post-commit && chmod +x .git/modules/sm/hooks/post-commit" sh "$2"
		try smconfig git -C sm config core.fsmonitor "touch $2/smconfig; false"' \
		sh "$SCR" "$m"
	host "$who" "$d/smrepo/sm" git status --porcelain
	host "$who" "$d/smrepo/sm" git commit -q --allow-empty -m "host side $TOK"
	GK_DETAIL="$(detail) | marks: $(marks "$who")"
	gk_check "$who: repo: a submodule's hooks and config cannot be planted; the host's git in it runs nothing" \
		eval 'said smhook refused && said smconfig refused &&
		    [ ! -e "$m/smhook" ] && [ ! -e "$m/smconfig" ]'

	run "$who" "$r" -- sh "$SCR/rename.sh" "$m"
	host_git "$who" "$r"
	GK_DETAIL="$(detail) | marks: $(marks "$who") | $(listing "$r" | paste -sd' ')"
	gk_check "$who: repo: .git cannot be moved away and replaced by a copy with a hook; the host's git commit runs none" \
		eval 'said rename refused && [ ! -e "$m/rename" ] && [ ! -e "$r/.git-gk-old" ]'
	if [ -d "$r/.git-gk-old" ]; then		# undo it for what follows
		rm -rf "$r/.git"
		mv "$r/.git-gk-old" "$r/.git"
	fi

	# a new .git/commondir would redirect the host's git to a git
	# directory of the sandbox's making: a placeholder holding "." (git
	# dies on an empty one) stands there, read-only, and goes afterwards
	run "$who" "$r" -- sh -c 'mkdir -p evil && cp -a .git/objects .git/refs evil/ &&
		printf "[core]\n\tfsmonitor = \"touch %s/commondir; false\"\n" "$1" >evil/config &&
		git status --porcelain >/dev/null && echo status-ok &&
		echo ../evil >.git/commondir' sh "$m"
	host_git "$who" "$r"
	GK_DETAIL="$(detail) | marks: $(marks "$who") | commondir: $(cat "$r/.git/commondir" 2>&1)"
	gk_check "$who: repo: .git/commondir cannot be planted (git works inside); none is left; the host's git runs nothing" \
		eval 'grep -qx status-ok "$T/out" && [ "$RC" != 0 ] &&
		    [ ! -e "$r/.git/commondir" ] && [ ! -e "$m/commondir" ]'
	rm -rf "$r/evil" "$r/.git/commondir"
	clear_marks "$who"
}

checks_plain() {
	local who=$1 w=$FS/$1/work before after
	before=$(listing "$w")
	run "$who" "$w" -- sh "$SCR/plain.sh"
	after=$(listing "$w")
	GK_DETAIL="$(detail) | after: $(oneline "$after")"
	gk_check "$who: plain directory: git init and mkdir .git fail, .envrc cannot be created" \
		eval 'said init refused && said mkdir refused && said envrc refused &&
		    [ ! -e "$w/.git" ] && [ ! -e "$w/.envrc" ]'
	GK_DETAIL="before: $(oneline "$before") | after: $(oneline "$after")"
	gk_check "$who: plain directory: no placeholder is left (the list as before)" \
		test "$before" = "$after"
	run "$who" "$w" -- sh -c 'echo made >made-inside'
	GK_DETAIL=$(detail)
	gk_check "$who: plain directory: still writable" \
		eval '[ "$RC" = 0 ] && [ "$(cat "$w/made-inside")" = made ]'
	rm -f "$w/made-inside"
}

checks_home() {
	local who=$1 h=$FS/$1/home m=$FS/$1/marks before after rc gc
	rc=$(sha256sum <"$h/.bashrc")
	gc=$(sha256sum <"$h/.gitconfig")
	before="$(listing "$h") / $(listing "$h/.config")"
	run "$who" "$h" -- sh "$SCR/home.sh" "$m"
	host "$who" "$h" bash -ic true
	host "$who" "$h" bash -lc true
	host_git "$who" "$FS/$who/repo"
	GK_DETAIL="$(detail) | marks: $(marks "$who")"
	gk_check "$who: from \$HOME: ~/.bashrc cannot be appended to; the host's bash -i runs nothing new" \
		eval 'said bashrc refused && [ "$(sha256sum <"$h/.bashrc")" = "$rc" ] && [ ! -e "$m/bashrc" ]'
	gk_check "$who: from \$HOME: ~/.profile and ~/.zshenv cannot be created; the host's bash -l runs nothing" \
		eval 'said profile refused && said zshenv refused && [ ! -e "$h/.profile" ] &&
		    [ ! -e "$h/.zshenv" ] && [ ! -e "$m/profile" ]'
	gk_check "$who: from \$HOME: git config --global fails (~/.gitconfig read-only); the host's git runs nothing" \
		eval 'said gitconfig refused && [ "$(sha256sum <"$h/.gitconfig")" = "$gc" ] &&
		    [ ! -e "$m/gitconfig" ]'
	gk_check "$who: from \$HOME: ~/.config/git cannot be created" \
		eval 'said configgit refused && [ ! -e "$h/.config/git" ]'
	gk_check "$who: from \$HOME: gk-run's own ~/.config/gk-run cannot be created (a later run would take it as the user's)" \
		eval 'said gkrunconf refused && [ ! -e "$h/.config/gk-run" ]'
	gk_check "$who: from \$HOME: other files in \$HOME are writable" \
		eval 'said homefile wrote && [ -e "$h/gk-home-file" ]'
	rm -f "$h/gk-home-file"
	after="$(listing "$h") / $(listing "$h/.config")"
	GK_DETAIL="before: $(oneline "$before") | after: $(oneline "$after")"
	gk_check "$who: from \$HOME: no placeholder is left (\$HOME and ~/.config list as before)" \
		test "$before" = "$after"
	clear_marks "$who"
}

checks_lift() {
	local who=$1 w=$FS/$1/work
	echo 'export GK=1' >"$w/.envrc"
	chown "$who" "$w/.envrc"
	run "$who" "$w" -- sh -c 'echo "export GK=2" >>.envrc'
	GK_DETAIL="$(detail) | .envrc: $(oneline "$(cat "$w/.envrc")")"
	gk_check "$who: an existing .envrc is read-only" \
		eval '[ "$RC" != 0 ] && [ "$(cat "$w/.envrc")" = "export GK=1" ]'
	run "$who" "$w" --rw ./.envrc -- sh -c 'echo "export GK=2" >>.envrc'
	GK_DETAIL="$(detail) | .envrc: $(oneline "$(cat "$w/.envrc")")"
	gk_check "$who: --rw ./.envrc lifts the guard: appended" \
		eval '[ "$RC" = 0 ] && [ "$(tail -n 1 "$w/.envrc")" = "export GK=2" ]'
	run "$who" "$w" --rw ./.vscode -- sh -c 'echo "{}" >.vscode/settings.json'
	GK_DETAIL="$(detail) | .vscode: $(listing "$w/.vscode" | paste -sd' ')"
	gk_check "$who: --rw ./.vscode (missing): created, and writable inside" \
		eval '[ "$RC" = 0 ] && [ -f "$w/.vscode/settings.json" ]'
	rm -rf "$w/.envrc" "$w/.vscode"
}

# ---------------------------------------------------------------------------
# 3. The host's sockets

checks_sockets() {
	local who=$1 w=$FS/$1/work
	host "$who" "$w" socat -t 2 - UNIX-CONNECT:"$RUNSOCK"
	GK_DETAIL="rc=$HRC $(oneline "$(cat "$T/host.out")")"
	gk_check "$who: control: the host's daemon on $RUNSOCK answers $who outside the sandbox" \
		grep -qx "host daemon reached" "$T/host.out"
	run "$who" "$w" -- sh -c "ls -A /run; socat -t 2 - UNIX-CONNECT:$RUNSOCK ||
		socat -t 2 - UNIX-CONNECT:/var$RUNSOCK; echo x >/run/gk-inside-$TOK"
	GK_DETAIL=$(detail)
	gk_check "$who: /run is a fresh tmpfs: the host's socket there is neither listed nor reachable (also via /var/run)" \
		eval '! grep -q "gk-test-" "$T/out" && ! grep -q "daemon reached" "$T/out"'
	GK_DETAIL=$(ls -A /run)
	gk_check "$who: what the sandbox writes in /run stays in it" \
		test ! -e "/run/gk-inside-$TOK"
	run "$who" "$w" --socket "$RUNSOCK" -- socat -t 2 - UNIX-CONNECT:"$RUNSOCK"
	GK_DETAIL=$(detail)
	gk_check "$who: --socket $RUNSOCK: that socket is reachable" \
		eval '[ "$RC" = 0 ] && grep -qx "host daemon reached" "$T/out"'
	host "$who" "$w" socat -t 2 - ABSTRACT-CONNECT:"$ABSTRACT"
	run "$who" "$w" --net host -- socat -t 2 - ABSTRACT-CONNECT:"$ABSTRACT"
	GK_DETAIL="host: $(oneline "$(cat "$T/host.out")") | $(detail)"
	gk_check "$who: control: the abstract socket @$ABSTRACT answers outside and with --net host" \
		eval 'grep -qx "abstract daemon reached" "$T/host.out" &&
		    grep -qx "abstract daemon reached" "$T/out"'
	run "$who" "$w" --net none -- socat -t 2 - ABSTRACT-CONNECT:"$ABSTRACT"
	GK_DETAIL=$(detail)
	gk_check "$who: --net none: the abstract socket is out of reach (another network namespace)" \
		eval '[ "$RC" != 0 ] && ! grep -q "daemon reached" "$T/out"'
}

# ---------------------------------------------------------------------------
# 4. Secret stores

# all_named NAME...: each NAME is in gk-run's kept-out line
all_named() {
	local n
	for n in "$@"; do
		grep -q "^gk-run: kept out.*[ :]$n\( \|\$\)" "$T/err" || return 1
	done
}

checks_secrets() {
	local who=$1 h=$FS/$1/home w=$FS/$1/work f k
	for f in .git-credentials .config/gh/hosts.yml .docker/config.json \
	    .docker/contexts/meta .npmrc .pypirc \
	    .cargo/credentials.toml .vault-token .bash_history .python_history \
	    .pgpass .claude/.credentials.json .claude.json .m2/settings.xml \
	    .config/containers/auth.json .gem/credentials \
	    ".config/Bitwarden CLI/data.json"; do
		run "$who" "$w" -- cat "$h/$f"
		GK_DETAIL=$(detail)
		gk_check "$who: ~/$f: its secret cannot be read (empty or absent inside)" \
			eval '! grep -q gk-secret "$T/out" "$T/err" && grep -q gk-secret "$h/$f"'
	done
	run "$who" "$w" --ro "$h/.npmrc" -- cat "$h/.npmrc"
	GK_DETAIL=$(detail)
	gk_check "$who: --ro ~/.npmrc brings it back" \
		grep -q gk-secret-npmrc "$T/out"
	# settings files that hold secrets too: shown, their secrets replaced
	run "$who" "$w" -- cat "$h/.npmrc" "$h/.pypirc" "$h/.git-credentials" \
		"$h/.cargo/credentials.toml"
	GK_DETAIL=$(detail)
	gk_check "$who: ~/.npmrc, ~/.pypirc, ~/.git-credentials, cargo's credentials readable: settings kept, each secret a placeholder of its shape" \
		eval '[ "$RC" = 0 ] && ! grep -q gk-secret "$T/out" &&
		    grep -qx "@corp:registry=https://npm.corp.example/" "$T/out" &&
		    grep -qx "//registry.npmjs.org/:_authToken=npm_gkplaceholdergk" "$T/out" &&
		    grep -qx "\[pypi\]" "$T/out" && grep -q "^https://u:gkpl.*@github.com$" "$T/out"'
	run "$who" "$w" -- sh -c 'cat ~/.config/gh/hosts.yml ~/.docker/config.json; cat ~/.docker/contexts/meta'
	GK_DETAIL=$(detail)
	gk_check "$who: gh's hosts.yml and docker's config.json shown with placeholders in their hidden directories, the rest of them hidden" \
		eval '! grep -q gk-secret "$T/out" && grep -qx "    git_protocol: https" "$T/out" &&
		    grep -qx "    oauth_token: gkplaceholde" "$T/out" &&
		    grep -q "\"auth\": \"gkplaceholdergkp\"" "$T/out" &&
		    grep -q "detachKeys" "$T/out"'
	if command -v npm >/dev/null; then
		run "$who" "$w" -- npm config get @corp:registry
		GK_DETAIL=$(detail)
		gk_check "$who: npm inside sees the scoped registry of ~/.npmrc" \
			grep -qx "https://npm.corp.example/" "$T/out"
	fi
	# a link planted as ~/.npmrc is never read: the file is hidden whole
	mv "$h/.npmrc" "$h/npmrc.real"
	ln -s npmrc.real "$h/.npmrc"
	run "$who" "$w" -- cat "$h/.npmrc"
	GK_DETAIL=$(detail)
	gk_check "$who: ~/.npmrc a link: not read through, hidden as before" \
		eval '! grep -q "gk-secret\|corp:registry" "$T/out"'
	rm "$h/.npmrc"
	mv "$h/npmrc.real" "$h/.npmrc"
	# credentials in gk-run's environment stay out, named (never shown)
	# on stderr; --pass-env lets one in
	RUN_ENV=(GITHUB_TOKEN=gk-secret-env-gh NPM_TOKEN=gk-secret-env-npm
		AWS_SECRET_ACCESS_KEY=gk-secret-env-aws
		AWS_ACCESS_KEY_ID=gk-secret-env-awsid
		ANTHROPIC_API_KEY=gk-secret-env-anthropic
		VAULT_TOKEN=gk-secret-env-vault PGPASSWORD=gk-secret-env-pg
		DATABASE_URL=postgres://app:gk-secret-env-url@db.example/x
		AWS_REGION=eu-west-1)
	run "$who" "$w" -- env
	GK_DETAIL=$(detail)
	gk_check "$who: env inside shows none of the credential variables; AWS_REGION passes; DATABASE_URL's password is a placeholder" \
		eval '[ "$RC" = 0 ] && ! grep -q gk-secret "$T/out" &&
		    grep -qx "AWS_REGION=eu-west-1" "$T/out" &&
		    grep -qx "DATABASE_URL=postgres://app:gkplaceholdergkpl@db.example/x" "$T/out" &&
		    grep -q "^gk-run: passwords in URLs replaced by placeholders: DATABASE_URL$" "$T/err"'
	gk_check "$who: ... and gk-run named each one it kept out, no value" \
		eval 'grep -q "^gk-run: kept out of the sandbox.s environment" "$T/err" &&
		    all_named GITHUB_TOKEN NPM_TOKEN AWS_SECRET_ACCESS_KEY \
			AWS_ACCESS_KEY_ID ANTHROPIC_API_KEY VAULT_TOKEN PGPASSWORD &&
		    ! grep -q gk-secret "$T/err"'
	run "$who" "$w" --pass-env NPM_TOKEN -- env
	GK_DETAIL=$(detail)
	gk_check "$who: --pass-env NPM_TOKEN lets that one in, no other" \
		eval 'grep -qx "NPM_TOKEN=gk-secret-env-npm" "$T/out" &&
		    [ "$(grep -c gk-secret "$T/out")" = 1 ]'
	# the user's configuration file: defaults before the command line
	mkdir -p "$h/.config/gk-run" "$h/private"
	echo "gk-private" >"$h/private/f"
	printf '# defaults\nro ~/.claude\nhide ~/private\npass-env VAULT_TOKEN\n' \
		>"$h/.config/gk-run/config"
	chown -R "${who%%:*}" "$h/.config/gk-run" "$h/private" 2>/dev/null
	run "$who" "$w" -- sh -c 'cat ~/.claude/.credentials.json; cat ~/private/f; env'
	GK_DETAIL=$(detail)
	gk_check "$who: ~/.config/gk-run/config: ro ~/.claude brings it back, hide ~/private hides, pass-env VAULT_TOKEN lets it in" \
		eval 'grep -q gk-secret-claude "$T/out" && ! grep -q gk-private "$T/out" &&
		    grep -qx "VAULT_TOKEN=gk-secret-env-vault" "$T/out" &&
		    ! grep -q gk-secret-env-gh "$T/out"'
	printf 'ro ~/.claude\nhdie ~/private\n' >"$h/.config/gk-run/config"
	run "$who" "$w" -- true
	GK_DETAIL=$(detail)
	gk_check "$who: a bad line in it: exit 125, FILE:LINE and what is wrong" \
		eval '[ "$RC" = 125 ] && grep -q "^gk-run: $h/.config/gk-run/config:2: unknown directive .hdie." "$T/err"'
	rm "$h/.config/gk-run/config"
	ln -s "$h/.bashrc" "$h/.config/gk-run/config"
	run "$who" "$w" -- true
	GK_DETAIL=$(detail)
	gk_check "$who: the file a link: refused (125), never read through" \
		eval '[ "$RC" = 125 ] && grep -q "a link" "$T/err"'
	rm -r "$h/.config/gk-run" "$h/private"
	RUN_ENV=()
	# (the machine's own files: counted, never printed)
	for f in /etc/shadow /etc/gshadow; do
		[ -e "$f" ] || continue
		run "$who" "$w" -- sh -c "echo bytes=\$(wc -c <$f); echo root=\$(grep -c '^root:' $f)"
		GK_DETAIL=$(detail)
		if [ "$who" = root ]; then
			gk_check "$who: $f reads empty" \
				eval '[ "$RC" = 0 ] && grep -qx "bytes=0" "$T/out"'
		else
			gk_check "$who: $f discloses nothing" \
				eval '! grep -qx "root=1" "$T/out"'
		fi
	done
	if [ "$who" = root ] && [ -e /etc/shadow ]; then
		run "$who" "$w" --ro /etc/shadow -- grep -c "^root:" /etc/shadow
		GK_DETAIL=$(detail)
		gk_check "$who: --ro /etc/shadow brings it back" grep -qx 1 "$T/out"
	fi
	k=$(find /etc/ssh -maxdepth 1 -name 'ssh_host_*_key' 2>/dev/null |
		LC_ALL=C sort | paste -sd' ')
	if [ -n "$k" ]; then
		run "$who" "$w" -- sh -c "cat $k | wc -c"
		GK_DETAIL="$k | $(detail)"
		gk_check "$who: the SSH host keys disclose nothing (0 bytes)" \
			eval '[ "$(cat "$T/out")" = 0 ]'
	fi
	if [ "$SSL_PRIVATE" = 1 ]; then
		run "$who" "$w" -- sh -c 'ls -A /etc/ssl/private; cat /etc/ssl/private/*'
		GK_DETAIL=$(detail)
		gk_check "$who: /etc/ssl/private (a key in it) is empty inside" \
			eval '! grep -q gk-secret "$T/out" && ! grep -q gk-test.key "$T/out"'
	fi
	if [ "$AUDIT_DIR" = 1 ]; then
		for fs in sandbox host; do
			run "$who" "$w" --fs "$fs" --ro /var/log/gatekeeper -- \
				sh -c 'ls -A /var/log/gatekeeper; cat /var/log/gatekeeper/audit.log'
			GK_DETAIL=$(detail)
			gk_check "$who: gatekeeperd's audit log (/var/log/gatekeeper) is hidden, --fs $fs, even with --ro" \
				eval '! grep -q gk-secret "$T/out" && ! grep -q audit.log "$T/out"'
		done
	fi
}

# ---------------------------------------------------------------------------
# 5. apt as root

checks_apt() {
	local who=$1 d=$FS/$1 a
	a="apt-get update -q -o Dir::Etc::SourceList=$d/apt/sources.list"
	a+=" -o Dir::Etc::SourceParts=/nonexistent"
	a+=" -o Dir::State::Lists=$d/work/apt/lists"
	a+=" -o Dir::Cache=$d/work/apt/cache -o Debug::NoLocking=1"
	run "$who" "$d/work" -- sh -c "$a; echo update=\$?;
		echo APT_CONFIG=\${APT_CONFIG:-}; apt-config dump | grep '^APT::Sandbox::User '"
	GK_DETAIL=$(detail)
	if [ "$who" = root ]; then
		gk_check "root: apt-get update from a file: repository works (its methods need not drop to _apt)" \
			grep -qx "update=0" "$T/out"
		gk_check "root: APT_CONFIG is /run/gk-run/apt.conf, APT::Sandbox::User \"root\"" \
			eval 'grep -qx "APT_CONFIG=/run/gk-run/apt.conf" "$T/out" &&
			    grep -qx "APT::Sandbox::User \"root\";" "$T/out"'
	else
		gk_check "$who: APT_CONFIG is not set (only root inside needs it)" \
			grep -qx "APT_CONFIG=" "$T/out"
	fi
}

# ---------------------------------------------------------------------------
# 6. The project above the working directory

checks_project() {
	local who=$1 d=$FS/$1 m=$FS/$1/marks wt=$FS/$1/proj/wt \
		main=$FS/$1/proj/main gd before after dg cd
	gd=$main/.git/worktrees/wt
	dg=$(cat "$wt/.git")
	cd=$(cat "$gd/commondir")
	before="$(listing "$gd") / $(listing "$main/.git") / $(listing "$wt")"
	run "$who" "$wt" -- true
	after="$(listing "$gd") / $(listing "$main/.git") / $(listing "$wt")"
	GK_DETAIL="rc=$RC | before: $(oneline "$before") | after: $(oneline "$after")"
	gk_check "$who: worktree: no placeholder is left (the worktree's git directory, the repository's, the worktree)" \
		eval '[ "$RC" = 0 ] && [ "$before" = "$after" ]'
	run "$who" "$wt" -- sh "$SCR/wt.sh" "$m" "$main"
	host_git "$who" "$wt"
	host "$who" "$main" git log --all --format=%s
	GK_DETAIL="$(detail) | log: $(oneline "$(cat "$T/host.out")")"
	gk_check "$who: worktree (its repository outside the cwd): git commit works" \
		eval 'said commit wrote && grep -qx in-worktree "$T/host.out"'
	GK_DETAIL="$(detail) | marks: $(marks "$who")"
	gk_check "$who: worktree: no hook can be planted in the repository's git directory; the host's git commit runs none" \
		eval 'said hook refused && [ ! -e "$m/wt-hook" ]'
	gk_check "$who: worktree: git config fails (the repository's config); the host's git status runs nothing" \
		eval 'said config refused && [ ! -e "$m/wt-config" ]'
	rm -rf "$wt/evil"

	run "$who" "$wt" -- sh "$SCR/wt.sh" "$m" "$main" dotgit
	host_git "$who" "$wt"
	GK_DETAIL="$(detail) | .git: $(cat "$wt/.git") | marks: $(marks "$who")"
	gk_check "$who: worktree: its .git file cannot be pointed at a git directory of the sandbox's making; the host's git runs nothing" \
		eval 'said dotgit refused && [ "$(cat "$wt/.git")" = "$dg" ] && [ ! -e "$m/wt-evil" ]'
	printf '%s\n' "$dg" >"$wt/.git"
	clear_marks "$who"

	run "$who" "$wt" -- sh "$SCR/wt.sh" "$m" "$main" commondir
	host_git "$who" "$wt"
	GK_DETAIL="$(detail) | commondir: $(cat "$gd/commondir") | marks: $(marks "$who")"
	gk_check "$who: worktree: its commondir cannot be pointed elsewhere; the host's git runs nothing" \
		eval 'said commondir refused && [ "$(cat "$gd/commondir")" = "$cd" ] && [ ! -e "$m/wt-evil" ]'
	printf '%s\n' "$cd" >"$gd/commondir"
	rm -rf "$wt/evil"
	clear_marks "$who"

	# from a subdirectory: the repository's commondir, and that of a
	# worktree (not the one the sandbox runs in)
	run "$who" "$main/sub" -- sh -c 'mkdir -p evil && cp -a ../.git/objects ../.git/refs ../.git/HEAD evil/ &&
		printf "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch %s/wt-evil; false\"\n" "$1" >evil/config &&
		{ echo "$PWD/evil" >../.git/commondir; echo "$PWD/evil" >../.git/worktrees/wt/commondir; }' sh "$m"
	host_git "$who" "$main"
	host_git "$who" "$wt"
	GK_DETAIL="$(detail) | commondir: $(cat "$main/.git/commondir" 2>&1); $(cat "$gd/commondir") | marks: $(marks "$who")"
	gk_check "$who: a subdirectory of a repository: neither the repository's nor another worktree's commondir can be planted; the host's git runs nothing" \
		eval '[ "$RC" != 0 ] && [ ! -e "$main/.git/commondir" ] &&
		    [ "$(cat "$gd/commondir")" = "$cd" ] && [ ! -e "$m/wt-evil" ]'
	printf '%s\n' "$cd" >"$gd/commondir"
	rm -rf "$main/.git/commondir" "$main/sub/evil"
	clear_marks "$who"

	run "$who" "$main/sub" -- sh -c 'echo s2 >s2 && git add s2 &&
		git commit -q -m in-subdir && git log -1 --format=%s'
	GK_DETAIL=$(detail)
	gk_check "$who: a subdirectory of a repository: git add and git commit work" \
		eval '[ "$RC" = 0 ] && grep -qx in-subdir "$T/out"'
	run "$who" "$main/sub" -- sh -c 'echo x >../.git/hooks/pre-commit'
	GK_DETAIL=$(detail)
	gk_check "$who: a subdirectory of a repository: its hooks stay read-only" \
		eval '[ "$RC" != 0 ] && [ ! -e "$main/.git/hooks/pre-commit" ]'

	if [ "$HAVE_NPM" = 1 ]; then
		run "$who" "$d/ws/packages/a" -- npm install --offline --no-audit --no-fund
	else
		run "$who" "$d/ws/packages/a" -- sh -c 'echo {} >../../package-lock.json &&
			mkdir -p ../../node_modules && ln -s ../packages/a ../../node_modules/a'
	fi
	GK_DETAIL="$(detail) | ws: $(listing "$d/ws" 2 | paste -sd' ')"
	gk_check "$who: an npm workspace member: npm install writes the workspace root (package-lock.json, node_modules/a)" \
		eval '[ "$RC" = 0 ] && [ -f "$d/ws/package-lock.json" ] && [ -L "$d/ws/node_modules/a" ]'
	run "$who" "$d/ws/packages/a" -- sh -c 'echo x >../../.envrc'
	GK_DETAIL=$(detail)
	gk_check "$who: an npm workspace member: .envrc at the workspace root cannot be created" \
		eval '[ "$RC" != 0 ] && [ ! -e "$d/ws/.envrc" ]'
}

# checks_concurrent WHO: runs in flight together in one repository share
# its placeholders; each starts, and the last one out removes them all.
checks_concurrent() {
	local who=$1 d=$FS/$1 r=$FS/$1/repo i before after fails=0 pids=()
	before=$(listing "$r")
	as_prefix "$who"
	for i in $(seq 16); do
		( cd "$r" && timeout -s KILL 60 "${AS[@]}" "$GKRUN" -- \
			sleep 0.3 >"$T/conc.$i.out" 2>&1 </dev/null
		  echo $? >"$T/conc.$i.rc" ) &
		pids+=($!)
	done
	wait "${pids[@]}"	# these only (gatekeeperd runs in the background)
	for i in $(seq 16); do
		[ "$(cat "$T/conc.$i.rc" 2>/dev/null)" = 0 ] || fails=$((fails + 1))
	done
	after=$(listing "$r")
	GK_DETAIL="failed: $fails | $(head -c 300 "$T/conc.1.out") | before: $(oneline "$before") | after: $(oneline "$after")"
	gk_check "$who: 16 runs at once in one repository all start and exit 0" \
		test "$fails" = 0
	gk_check "$who: ... and leave no placeholder behind" \
		test "$before" = "$after"
}

# checks_killed WHO: gk-run killed (SIGKILL) while its command runs in a
# repository: its keeper removes the placeholders at once (no other run
# is in flight), not the next run.
checks_killed() {
	local who=$1 r=$FS/$1/repo before after bg gkpid ready=no
	before="$(listing "$r") / $(listing "$r/.git")"
	as_prefix "$who"
	# (the sandbox sees $T under /tmp as its own tmpfs: the ready mark
	# goes in the work tree, and away again once seen)
	( cd "$r" && exec timeout -s KILL 60 "${AS[@]}" "$GKRUN" -- \
		sh -c 'touch killed-ready && exec sleep 50' \
		>"$T/killed.out" 2>&1 </dev/null ) &
	bg=$!
	gk_wait_for 200 test -e "$r/killed-ready" && ready=yes
	# $bg is timeout; its child is gk-run (setpriv and env exec it)
	gkpid=$(pgrep -P "$bg" | head -1)
	[ -n "$gkpid" ] && kill -KILL "$gkpid"
	rm -f "$r/killed-ready"
	gk_wait_for 40 eval '[ "$(listing "$r") / $(listing "$r/.git")" = "$before" ]'
	after="$(listing "$r") / $(listing "$r/.git")"
	wait "$bg" 2>/dev/null
	GK_DETAIL="ready: $ready | before: $(oneline "$before") | after: $(oneline "$after")"
	gk_check "$who: gk-run killed (SIGKILL) in a repository: no placeholder is left 2 s later" \
		eval '[ "$ready" = yes ] && [ "$before" = "$after" ] &&
		    ! pgrep -f "^sleep 50\$" >/dev/null'
}

checks_rw_missing() {
	local who=$1 d=$FS/$1
	run "$who" "$d/work" --rw "$d/made/deep" -- sh -c "echo m >$d/made/deep/f"
	GK_DETAIL="$(detail) | $(ls -ld "$d/made/deep" 2>&1)"
	gk_check "$who: --rw of a missing directory creates it ($who's), writable inside" \
		eval '[ "$RC" = 0 ] && [ "$(cat "$d/made/deep/f")" = m ] &&
		    [ "$(stat -c %U "$d/made/deep")" = "$who" ]'
}

# ---------------------------------------------------------------------------
# 7. Gated mode

checks_gated() {
	local who=$1 as=$1 w=$FS/$1/work
	[ "$who" = nobody ] && as=nobody:member
	if [ "$GKD_UP" != 1 ]; then
		gk_fail "$who: gated: gatekeeperd is not running"
		return 0
	fi
	run "$as" "$w" --allow '*.github.com' --control "$SOCK" -- sh -c \
		'grep "^hosts:" /etc/nsswitch.conf; grep "^passwd:" /etc/nsswitch.conf; getent ahostsv4 github.com'
	GK_DETAIL=$(detail)
	if [ "$NSS_HOSTS" = 1 ]; then
		gk_check "$who: gated: /etc/nsswitch.conf says \"hosts: files dns\" (the host's: \"hosts: files\"), the rest kept" \
			eval 'grep -qx "hosts: files dns" "$T/out" &&
			    grep -qx "$(grep "^passwd:" /etc/nsswitch.conf)" "$T/out"'
	fi
	gk_check "$who: gated: getent ahostsv4 github.com resolves through gatekeeperd" \
		eval '[ "$RC" = 0 ] && grep -Eq "^192\.0\.2\.10 " "$T/out"'
}

# ---------------------------------------------------------------------------

for who in "${WHOS[@]}"; do
	echo "---- as $who ----"
	prepare "$who"
	controls "$who"
	checks_cache "$who"
	checks_cache_projects "$who"
	checks_repo "$who"
	checks_plain "$who"
	checks_home "$who"
	checks_lift "$who"
	checks_sockets "$who"
	checks_secrets "$who"
	checks_apt "$who"
	checks_project "$who"
	checks_rw_missing "$who"
	checks_concurrent "$who"
	checks_killed "$who"
	checks_gated "$who"
done

rh=$(getent passwd root | cut -d: -f6)
GK_DETAIL=$(find "$rh/.gk-run" "$rh/.cache" "$rh/.npm" -maxdepth 3 -name "*$TOK*" 2>/dev/null | head -3)
gk_check "the machine's own home ($rh) got nothing from the runs" test -z "$GK_DETAIL"
if [ "$GKD_UP" = 1 ]; then
	gk_stop_daemon "$GKD_PID"
	GK_DETAIL="rc=$GK_RC | $(gk_tail "$T/GKD_PID.log" 6)"
	gk_check "gatekeeperd stops on SIGTERM with status 0" test "$GK_RC" = 0
fi
gk_finish
