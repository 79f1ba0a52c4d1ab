# shellcheck shell=bash
#
# gkrun_home.sh: a developer's home for gkrun_bench.sh, sourced.
#
# bench_home DIR OWNER: DIR becomes a home of 50 entries as a developer's
# looks: shell and editor start-up files, tool caches with something in
# them (pip, npm, cargo, go, maven, pip --user), secret stores gk-run
# hides (~/.ssh, ~/.gnupg, ~/.aws, histories, a token in ~/.npmrc), and
# everyday directories; DIR/src/proj is a git repository with a
# package.json, the working directory of the timed runs. Owned by OWNER.
# 0, or 1 when a step failed (said on stderr).

bench_home() {
	local h=$1 owner=$2 d f
	mkdir -p "$h" || return 1
	for d in .cache/pip/http .npm/_cacache .cargo/registry/index \
	    .cargo/bin .rustup/toolchains .local/bin .local/lib/python3 \
	    .local/share/applications .config/git .config/htop \
	    .m2/repository go/pkg/mod .ssh .gnupg .aws .vim/pack .docker \
	    .kube .terraform.d .gradle/caches .java .ipython .jupyter \
	    Documents Downloads Desktop Music Pictures Videos Templates \
	    Public bin notes scratch work src/proj; do
		mkdir -p "$h/$d" || return 1
	done
	echo entry >"$h/.cache/pip/http/e"
	echo entry >"$h/.npm/_cacache/e"
	echo entry >"$h/.cargo/registry/index/e"
	echo 'export PATH=$HOME/.cargo/bin:$PATH' >"$h/.cargo/env"
	printf '#!/bin/sh\nexit 0\n' >"$h/.local/bin/tool"
	chmod 755 "$h/.local/bin/tool"
	echo "ssh-ed25519 AAAA bench" >"$h/.ssh/id_ed25519.pub"
	printf '[default]\naws_access_key_id = BENCH\n' >"$h/.aws/credentials"
	printf '//registry.npmjs.org/:_authToken=npm_bench\n' >"$h/.npmrc"
	for f in .bashrc .profile .bash_logout .gitconfig .vimrc .inputrc \
	    .tmux.conf .editorconfig .wget-hsts .selected_editor \
	    .bash_history .lesshst .python_history .viminfo .dir_colors \
	    .sqlite_history .psqlrc; do
		echo "# $f" >"$h/$f" || return 1
	done
	printf '[user]\n\tname = Bench\n\temail = bench@example.invalid\n' \
		>"$h/.gitconfig"
	echo '{"name":"proj","version":"1.0.0"}' >"$h/src/proj/package.json"
	git -C "$h/src/proj" init -q || return 1
	chown -R "$owner:" "$h" || return 1
	if [ "$(find "$h" -mindepth 1 -maxdepth 1 | wc -l)" -ne 50 ]; then
		echo "bench_home: $h has $(find "$h" -mindepth 1 -maxdepth 1 |
			wc -l) entries, not 50" >&2
		return 1
	fi
}
