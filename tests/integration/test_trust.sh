#!/usr/bin/env bash
#
# test_trust.sh: the sandbox's view comes from trusted input only. What
# the project tree says (it is the sandbox's: an earlier run could have
# written it) never widens the view, and a path that became a symbolic
# link is refused, never followed. Real gk-run and bwrap with --net none
# (no gatekeeperd), as root and as the unprivileged user nobody:
#
#   - a `.git` file saying "gitdir: DIR" (a forged worktree): DIR stays
#     read-only (a write into it fails, the file there is unchanged),
#     gk-run says it is not a worktree its repository vouches for;
#   - a real worktree (`git worktree add`): its git directories are
#     writable and `git commit` works in it;
#   - the working directory is a symbolic link (`cd build` where build
#     became a link): refused (125), naming the link; its target is
#     untouched; from the target itself (cd -P) the run works;
#   - `--rw P` and `--cwd P` where P is a symbolic link: refused (125);
#   - a nested repository with core.fsmonitor that the sandbox registers
#     as a gitlink (git update-index --cacheinfo, git add of a nested
#     repository), and one it puts in place of an embedded repository
#     of the user's by renaming the directory above: their .git is moved
#     to .git-untrusted-by-gk-run and gk-run says so; the host's git
#     status afterwards runs nothing; the user's own submodule and
#     embedded repository stay as they were, their config read-only
#     inside, their .git not movable.
#
#   bash tests/integration/test_trust.sh build/spawner/gk-run
#   meson test -C build trust_integration      (suite "integration")
#
# Root only (it skips otherwise): private network, mount and PID
# namespaces (lib.sh), everything under a temporary directory.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2034  # eval'd checks read the variables they name
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"

gk_exe_args test_trust.sh GKRUN=gk-run -- "$@"
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: test_trust.sh needs root (namespaces, another user)"
	exit 77
fi
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
gk_require bwrap git setpriv unshare sh timeout
gk_enter_netns 77 "$GK_SELF" "$@"	# does not return
gk_setup
T=$GK_TMP
chmod 755 "$T"

oneline() { printf '%s' "$1" | tr '\n' '|' | cut -c1-600; }

# run WHO DIR GK-RUN-ARGS...: gk-run as WHO from DIR (PWD as a shell's,
# the path as given), bounded; RC, $T/out, $T/err.
run() {
	local who=$1 dir=$2 as=()
	shift 2
	[ "$who" = nobody ] && as=(setpriv --reuid=nobody --regid=nogroup
		--clear-groups)
	( cd "$dir" && PWD=$dir exec timeout -s KILL 60 "${as[@]}" env \
		HOME="$T/$who/home" PATH=/usr/local/bin:/usr/bin:/bin \
		PWD="$dir" "$GKRUN" --net none "$@" >"$T/out" 2>"$T/err" \
		</dev/null )
	RC=$?
}
detail() {
	GK_DETAIL="rc $RC; out: $(oneline "$(head -c 300 "$T/out")"); err: $(oneline "$(head -c 400 "$T/err")")"
}
gitc() { git -c user.email=t@example.org -c user.name=t "$@"; }
# host WHO DIR CMD...: CMD as WHO in DIR on the host, bounded.
host() {
	local who=$1 dir=$2 as=()
	shift 2
	[ "$who" = nobody ] && as=(setpriv --reuid=nobody --regid=nogroup
		--clear-groups)
	( cd "$dir" && exec timeout -s KILL 30 "${as[@]}" env 		HOME="$T/$who/home" PATH=/usr/local/bin:/usr/bin:/bin "$@" 		>"$T/host.out" 2>&1 </dev/null )
}

for who in root nobody; do
	W=$T/$who
	mkdir -p "$W/home" "$W/proj" "$W/victim" "$W/victim2"
	echo original >"$W/victim/file"
	echo original >"$W/victim2/file"
	# ---- a forged worktree: the .git file names a directory ---------------
	echo "gitdir: $W/victim" >"$W/proj/.git"
	# ---- a real worktree --------------------------------------------------
	gitc init -q "$W/repo" && gitc -C "$W/repo" commit -q --allow-empty \
		-m init && gitc -C "$W/repo" worktree add -q "$W/wt" 2>/dev/null
	# ---- links where directories were -------------------------------------
	mkdir -p "$W/proj2"
	ln -s "$W/victim2" "$W/proj2/build"
	chown -R "$who" "$W"

	run "$who" "$W/proj" -- sh -c "echo changed >$W/victim/file"
	detail
	gk_check "$who: a .git file naming another directory does not make it writable" \
		eval '[ "$RC" != 0 ] && grep -qx original "$W/victim/file" &&
		    grep -q "not a worktree its repository vouches for" "$T/err"'
	run "$who" "$W/proj" --dry-run -- true
	GK_DETAIL=$(oneline "$(tr ' ' '\n' <"$T/out" | grep -B1 "$W/victim" | head -4)")
	gk_check "$who: ... nor bound at all (--dry-run)" \
		eval '! grep -q -- "$W/victim" "$T/out"'

	run "$who" "$W/wt" -- sh -c 'echo x >f && git add f &&
		git -c user.email=t@example.org -c user.name=t commit -q -m w &&
		echo committed'
	detail
	gk_check "$who: a real worktree: git commit works in it" \
		eval '[ "$RC" = 0 ] && grep -qx committed "$T/out" &&
		    [ "$(git -c safe.directory="*" -C "$W/repo" rev-list --all --count)" = 2 ]'

	run "$who" "$W/proj2/build" -- sh -c 'echo changed >file'
	detail
	gk_check "$who: the working directory is a symbolic link: refused (125), its target untouched" \
		eval '[ "$RC" = 125 ] && grep -q "the working directory .*/proj2/build is a symbolic link" "$T/err" &&
		    grep -qx original "$W/victim2/file"'
	run "$who" "$W/victim2" -- sh -c 'echo mine >file2'
	detail
	gk_check "$who: ... from the target itself the run works" \
		eval '[ "$RC" = 0 ] && [ -f "$W/victim2/file2" ]'
	run "$who" "$W/proj2" --rw build -- sh -c 'echo changed >build/file'
	detail
	gk_check "$who: --rw of a symbolic link: refused (125), its target untouched" \
		eval '[ "$RC" = 125 ] && grep -q -- "--rw build is a symbolic link" "$T/err" &&
		    grep -qx original "$W/victim2/file"'
	run "$who" "$W/proj2" --cwd build -- sh -c 'echo changed >file'
	detail
	gk_check "$who: --cwd of a symbolic link: refused (125), its target untouched" \
		eval '[ "$RC" = 125 ] && grep -q -- "--cwd build is a symbolic link" "$T/err" &&
		    grep -qx original "$W/victim2/file"'

	# ---- repositories the host's git status would enter -----------------
	mkdir -p "$W/marks" "$W/gl"
	gitc init -q "$W/smsrc" && gitc -C "$W/smsrc" commit -q --allow-empty -m s
	( cd "$W/gl" && gitc init -q && gitc commit -q --allow-empty -m init &&
		gitc -c protocol.file.allow=always submodule -q add "$W/smsrc" sm &&
		gitc init -q emb && gitc -C emb commit -q --allow-empty -m e &&
		gitc add emb 2>/dev/null && gitc commit -q -m subs )
	chown -R "$who" "$W"
	emb_config=$(cat "$W/gl/emb/.git/config")
	run "$who" "$W/gl" -- sh -c '
		g() { git -c user.email=t@example.org -c user.name=t "$@"; }
		# a repository of its own, registered by hand and by git add
		g init -q sub && g -C sub commit -q --allow-empty -m s &&
		g -C sub config core.fsmonitor "touch $1/sub; false" &&
		git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub &&
		echo sub-registered
		g init -q sub2 && g -C sub2 commit -q --allow-empty -m s &&
		g -C sub2 config core.fsmonitor "touch $1/sub2; false" &&
		g add sub2 2>/dev/null && echo sub2-added
		# the user'"'"'s own: config, and .git moved away
		git -C emb config core.fsmonitor "touch $1/emb; false" 2>/dev/null &&
			echo emb-config-written
		mv emb/.git emb/.git-old 2>/dev/null && echo emb-git-moved
		# ... or the directory above it, and a new one in its place
		mv emb emb-moved && g init -q emb && g -C emb commit -q --allow-empty -m x &&
		g -C emb config core.fsmonitor "touch $1/emb-new; false" &&
		git update-index --cacheinfo 160000,$(git -C emb rev-parse HEAD),emb &&
		echo emb-replaced
		git status --porcelain >/dev/null && echo status-ok' sh "$W/marks"
	detail
	gk_check "$who: gitlinks: the sandbox registered repositories of its own and replaced the user's embedded one (its config and .git stayed put)" \
		eval 'grep -qx sub-registered "$T/out" && grep -qx sub2-added "$T/out" &&
		    grep -qx emb-replaced "$T/out" && grep -qx status-ok "$T/out" &&
		    ! grep -q "emb-config-written\|emb-git-moved" "$T/out" &&
		    [ "$(cat "$W/gl/emb-moved/.git/config")" = "$emb_config" ]'
	GK_DETAIL="$(ls -a "$W/gl/sub" "$W/gl/sub2" "$W/gl/emb" 2>&1 | tr '\n' ' ') | err: $(oneline "$(cat "$T/err")")"
	gk_check "$who: gitlinks: their .git moved to .git-untrusted-by-gk-run, and gk-run says so" \
		eval 'for d in sub sub2 emb; do
			[ -d "$W/gl/$d/.git-untrusted-by-gk-run" ] && [ ! -e "$W/gl/$d/.git" ] &&
			    grep -q "$W/gl/$d/.git is a git repository the sandbox made or replaced" "$T/err" || exit 1
		    done'
	host "$who" "$W/gl" git status --porcelain
	GK_DETAIL="marks: $(ls "$W/marks" | tr '\n' ' ') | $(oneline "$(cat "$T/host.out")")"
	gk_check "$who: gitlinks: the host's git status afterwards runs nothing; the user's submodule is untouched" \
		eval '[ -z "$(ls "$W/marks")" ] && [ -f "$W/gl/sm/.git" ] &&
		    [ ! -e "$W/gl/sm/.git-untrusted-by-gk-run" ] &&
		    grep -q "sub2\$" "$T/host.out"'

	# ---- an index that is a link, or a FIFO ------------------------------
	run "$who" "$W/gl" -- sh -c '
		g() { git -c user.email=t@example.org -c user.name=t "$@"; }
		g init -q sub4 && g -C sub4 commit -q --allow-empty -m s &&
		g -C sub4 config core.fsmonitor "touch $1/sub4; false" &&
		cp .git/index myindex &&
		GIT_INDEX_FILE=$PWD/myindex git update-index --add --cacheinfo \
			160000,$(git -C sub4 rev-parse HEAD),sub4 &&
		rm .git/index && ln -s ../myindex .git/index && echo linked' \
		sh "$W/marks"
	host "$who" "$W/gl" git status --porcelain
	GK_DETAIL="$(detail) | $(ls -ld "$W/gl/.git"/index* 2>&1 | tr '\n' ' ') | marks: $(ls "$W/marks")"
	gk_check "$who: gitlinks: an index replaced by a link to one of the sandbox's: moved aside, said; the host's git status runs nothing" \
		eval 'grep -qx linked "$T/out" && [ ! -e "$W/gl/.git/index" ] &&
		    [ -L "$W/gl/.git/index-untrusted-by-gk-run" ] &&
		    grep -q "index is not a regular file" "$T/err" &&
		    [ -z "$(ls "$W/marks")" ]'
	rm -f "$W/gl/.git/index-untrusted-by-gk-run"
	host "$who" "$W/gl" git read-tree HEAD
	t0=$(date +%s)
	run "$who" "$W/gl" -- sh -c 'rm .git/index && mkfifo .git/index && echo fifo'
	t1=$(date +%s)
	GK_DETAIL="$(detail) | $((t1 - t0)) s | $(ls -ld "$W/gl/.git"/index* 2>&1 | tr '\n' ' ')"
	gk_check "$who: gitlinks: an index replaced by a FIFO: gk-run does not block on it, moves it aside" \
		eval 'grep -qx fifo "$T/out" && [ "$((t1 - t0))" -lt 20 ] &&
		    [ -p "$W/gl/.git/index-untrusted-by-gk-run" ] && [ ! -e "$W/gl/.git/index" ]'
	rm -f "$W/gl/.git/index-untrusted-by-gk-run"
	host "$who" "$W/gl" git read-tree HEAD

	# ---- index paths git itself never writes ("ab/..", ".") ---------------
	run "$who" "$W/gl" -- sh -c '
		c=$(git rev-parse HEAD) && mkdir -p ab &&
		git update-index --add --cacheinfo 160000,$c,abcde &&
		git update-index --add --cacheinfo 160000,$c,z &&
		python3 -c "
import sys
p = \".git/index\"
b = open(p, \"rb\").read()
b = b.replace(b\"abcde\\0\", b\"ab/..\\0\").replace(b\"\\0z\\0\", b\"\\0.\\0\")
open(p, \"wb\").write(b)" && echo patched'
	GK_DETAIL="$(detail) | $(ls -a "$W/gl" | tr '\n' ' ')"
	gk_check "$who: gitlinks: index paths no git writes (ab/.., .) name the repository itself: its .git stays" \
		eval 'grep -qx patched "$T/out" && [ -d "$W/gl/.git" ] &&
		    [ ! -e "$W/gl/.git-untrusted-by-gk-run" ] &&
		    ! grep -q "is a git repository the sandbox made" "$T/err"'
	[ -d "$W/gl/.git-untrusted-by-gk-run" ] && mv "$W/gl/.git-untrusted-by-gk-run" "$W/gl/.git"
	rm -f "$W/gl/.git/index"
	rmdir "$W/gl/ab" 2>/dev/null
	host "$who" "$W/gl" git read-tree HEAD

	# ---- ... also when gk-run is killed (its keeper checks) --------------
	rm -f "$W/gl/ready"
	as=()
	[ "$who" = nobody ] && as=(setpriv --reuid=nobody --regid=nogroup
		--clear-groups)
	( cd "$W/gl" && exec timeout -s KILL 60 "${as[@]}" env \
		HOME="$T/$who/home" PATH=/usr/local/bin:/usr/bin:/bin \
		"$GKRUN" --net none -- sh -c '
		g() { git -c user.email=t@example.org -c user.name=t "$@"; }
		g init -q sub3 && g -C sub3 commit -q --allow-empty -m s &&
		g -C sub3 config core.fsmonitor "touch $1/sub3; false" &&
		g add sub3 2>/dev/null && touch ready && exec sleep 50' sh \
		"$W/marks" >"$T/out" 2>"$T/err" </dev/null ) &
	bg=$!
	gk_wait_for 200 test -e "$W/gl/ready"
	# $bg is timeout (the subshell exec'd it); its child, gk-run (setpriv
	# and env exec it)
	gkpid=$(pgrep -P "$bg" | head -1)
	[ -n "$gkpid" ] && kill -KILL "$gkpid"
	gk_wait_for 100 test -d "$W/gl/sub3/.git-untrusted-by-gk-run"
	wait "$bg" 2>/dev/null
	host "$who" "$W/gl" git status --porcelain
	GK_DETAIL="ready: $([ -e "$W/gl/ready" ] && echo yes) | $(ls -a "$W/gl/sub3" 2>&1 | tr '\n' ' ') | err: $(oneline "$(cat "$T/err")") | marks: $(ls "$W/marks")"
	gk_check "$who: gitlinks: gk-run killed (SIGKILL) with a repository registered: moved aside all the same; the host's git status runs nothing" \
		eval '[ -e "$W/gl/ready" ] && [ -d "$W/gl/sub3/.git-untrusted-by-gk-run" ] &&
		    [ ! -e "$W/gl/sub3/.git" ] && [ -z "$(ls "$W/marks")" ] &&
		    ! pgrep -f "^sleep 50\$" >/dev/null'
done

gk_summary
[ "$GK_NFAIL" = 0 ]
