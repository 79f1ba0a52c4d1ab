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
#   - `--rw P` and `--cwd P` where P is a symbolic link: refused (125).
#
#   bash tests/integration/test_trust.sh build/spawner/gk-run
#   meson test -C build trust_integration      (suite "integration")
#
# Root only (it skips otherwise): private network, mount and PID
# namespaces (lib.sh), everything under a temporary directory.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016
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
done

gk_summary
[ "$GK_NFAIL" = 0 ]
