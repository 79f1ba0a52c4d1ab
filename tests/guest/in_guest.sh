#!/usr/bin/env bash
# in_guest.sh: runs as root inside the Debian 12 guest that run_guest.sh
# boots (systemd 252 as PID 1, pure cgroup v2, Debian's 6.1 kernel with
# AppArmor), from gk-guest.service, with the share on /share. What an
# operator and the users of a stock host do with the package:
#
#   a. dpkg -i the package: group gatekeeper, gatekeeperd.service active
#      (Type=notify), its systemd-analyze security exposure
#   b. alice (a member of group gatekeeper) in a login session (su -l: her
#      shell in user.slice/user-UID.slice/session-N.scope), then root:
#      curl of an allowed name, of a denied one, git clone
#   c. alice's limits: --memory, --pids (a fork bomb), --cpus
#   d, e. systemctl reload, then restart, then a crash (SIGKILL and
#      Restart=) of gatekeeperd under alice's and root's live cages: the
#      unit comes back, the cages' fetches work again
#   f. systemctl stop under a live cage: no cage, table, link or cgroup
#      left; start again
#   g. AppArmor: the package's gk-run profile; gk-run's message when user
#      namespaces are off (user.max_user_namespaces=0)
#   h. the suite's scripts that depend most on the kernel and the cgroup
#      layout (nft, nft_transparent, contain, cage_limits), as root from a
#      login session (in_guest_suite.sh)
#   i. apt-get purge: nothing of the package left
#
# The internet is the guest's own: a network namespace "inet" behind a
# veth (documentation addresses: github.com 203.0.113.10, evil.example
# 203.0.113.66, its DNS server 203.0.113.53) with nginx (HTTPS with a
# test CA; a static page and a git repository over dumb HTTP) and
# dnsmasq; gatekeeperd's upstream is that DNS server.
#
# One "ok"/"FAIL" line per check, "time PART: N s" per part, and a
# summary; exit 1 if a check failed.
set -u
# shellcheck disable=SC2016  # eval'd checks: expanded when run

SHARE=${GK_GUEST_SHARE:-/share}
# shellcheck source=../integration/lib.sh
. "$SHARE/tests/integration/lib.sh"
R=$SHARE/result
mkdir -p "$R"
awk '{ printf "%d\n", $1 }' /proc/uptime >"$R/boot-seconds"
export DEBIAN_FRONTEND=noninteractive
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

W=/srv/gk-guest			# the internet's files
T=/var/tmp/gk-guest		# the checks' outputs
CA=/etc/gk-guest/ca.crt		# the test CA, world-readable
GH=203.0.113.10
EVIL=203.0.113.66
DNS=203.0.113.53
CG=/sys/fs/cgroup
UNITCG=$CG/system.slice/gatekeeperd.service
SLICE=$CG/gatekeeper.slice
CURL="curl -sS --max-time 20 --cacert $CA"
mkdir -p "$W" "$T" /etc/gk-guest
chmod 755 "$W" "$T" /etc/gk-guest

info() { gk_info "$*"; }
oneline() { tr '\n' '|' | cut -c1-400; }
# part NAME: the time of the part before, and NAME's heading
PART=
PART_T0=0
part() {
	[ -n "$PART" ] && echo "time $PART: $((SECONDS - PART_T0)) s"
	PART=$1
	PART_T0=$SECONDS
	[ -n "$PART" ] && echo "---- $PART"
}

# ---------------------------------------------------------------------------
part "the internet (netns inet: nginx, dnsmasq, test CA)"

internet() {
	set -e
	ip netns add inet
	ip link add inet0 type veth peer name inet1
	ip link set inet1 netns inet
	ip addr add 198.51.100.1/30 dev inet0
	ip link set inet0 up
	ip -n inet link set lo up
	ip -n inet addr add 198.51.100.2/30 dev inet1
	ip -n inet link set inet1 up
	local a
	for a in $GH $EVIL $DNS; do
		ip -n inet addr add "$a/32" dev lo
	done
	ip -n inet route add default via 198.51.100.1
	ip route add 203.0.113.0/24 via 198.51.100.2

	# the test CA and a certificate for both names
	mkdir -p "$W/pki"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$W/pki/ca.key" -out "$CA" -days 2 -subj "/CN=gk guest CA" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$W/pki/server.key" -out "$W/pki/server.csr" \
		-subj "/CN=github.com" \
		-addext "subjectAltName=DNS:github.com,DNS:evil.example" \
		-addext "extendedKeyUsage=serverAuth"
	openssl x509 -req -in "$W/pki/server.csr" -CA "$CA" \
		-CAkey "$W/pki/ca.key" -CAcreateserial -days 2 \
		-copy_extensions copy -out "$W/pki/server.crt"
	chmod 644 "$CA"

	# the web roots and the repository (dumb HTTP)
	mkdir -p "$W/www/github.com/acme" "$W/www/evil.example"
	echo "hello from github.com" >"$W/www/github.com/index.html"
	echo "hello from evil.example" >"$W/www/evil.example/index.html"
	(
		export HOME=$W GIT_CONFIG_NOSYSTEM=1
		git init -q -b main "$W/git-src"
		cd "$W/git-src"
		echo "hello, gatekeeper" >README
		git add README
		git -c user.name=test -c user.email=test@example.invalid \
			commit -q -m "the test repository"
		git clone -q --bare "$W/git-src" "$W/www/github.com/acme/hello.git"
		git -C "$W/www/github.com/acme/hello.git" update-server-info
	)
	chmod -R a+rX "$W/www"

	mkdir -p "$W/nginx-tmp"
	cat >"$W/nginx.conf" <<EOF
user www-data;
worker_processes 1;
pid $W/nginx.pid;
error_log $W/nginx-error.log;
events { worker_connections 256; }
http {
	access_log $W/nginx-access.log;
	client_body_temp_path $W/nginx-tmp/body;
	proxy_temp_path $W/nginx-tmp/proxy;
	fastcgi_temp_path $W/nginx-tmp/fastcgi;
	uwsgi_temp_path $W/nginx-tmp/uwsgi;
	scgi_temp_path $W/nginx-tmp/scgi;
	default_type application/octet-stream;
	ssl_certificate $W/pki/server.crt;
	ssl_certificate_key $W/pki/server.key;
	server {
		listen $GH:443 ssl;
		listen $GH:80;
		server_name github.com;
		root $W/www/github.com;
	}
	server {
		listen $EVIL:443 ssl;
		listen $EVIL:80;
		server_name evil.example;
		root $W/www/evil.example;
	}
}
EOF
	ip netns exec inet nginx -c "$W/nginx.conf" -e "$W/nginx-error.log"
	ip netns exec inet dnsmasq --no-resolv --no-hosts --bind-interfaces \
		--listen-address=$DNS --user=nobody --group=nogroup \
		--pid-file="$W/dnsmasq.pid" --log-facility="$W/dnsmasq.log" \
		--log-queries \
		--address=/github.com/$GH --address=/evil.example/$EVIL
}
if ! (internet) >"$T/internet.log" 2>&1; then
	gk_abort "the internet could not be built" "$T/internet.log"
fi
GK_DETAIL=$(tail -n 5 "$T/internet.log" "$W/nginx-error.log" 2>&1 | oneline)
gk_check "the internet: https://github.com/ answers from the guest (test CA)" \
	gk_wait_for 100 eval "$CURL --resolve github.com:443:$GH https://github.com/ 2>/dev/null | grep -q 'hello from github.com'"
# dnsmasq answers: a query over UDP with python (no dig in the image)
dns_a() {
	python3 - "$1" <<'EOF'
import socket, struct, sys
name = sys.argv[1]
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
q += struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(q, ("203.0.113.53", 53))
r = s.recv(512)
print(".".join(str(b) for b in r[-4:]) if struct.unpack(">H", r[6:8])[0] else "none")
EOF
}
GK_DETAIL=$(dns_a github.com 2>&1 | oneline)
gk_check "the internet: its DNS server says github.com is $GH" \
	test "$(dns_a github.com 2>/dev/null)" = "$GH"

# gatekeeperd's configuration, before the package's service starts
mkdir -p /etc/gatekeeper
printf '# the guest test: its own internet'"'"'s DNS server\nupstream = %s\n' \
	"$DNS" >/etc/gatekeeper/gatekeeperd.conf

# ---------------------------------------------------------------------------
part "a. install the package"

debs=("$SHARE"/gatekeeper_*.deb)
if [ -f "${debs[0]}" ]; then
	dpkg -i --force-confdef --force-confold "${debs[0]}" >"$T/dpkg.log" 2>&1
	rc=$?
	GK_DETAIL="exit $rc: $(tail -n 8 "$T/dpkg.log" | oneline)"
	gk_check "dpkg -i $(basename "${debs[0]}"): exit 0" test "$rc" = 0
	PKG=deb
else
	GK_DETAIL="run_guest.sh found no deploy/build-deb.sh: installed the meson install tree instead"
	gk_check "a gatekeeper_*.deb to install" false
	tar -C / -xzf "$SHARE/gatekeeper-install.tar.gz" &&
	systemd-sysusers && systemctl daemon-reload &&
	systemctl enable --now gatekeeperd >"$T/dpkg.log" 2>&1
	PKG=tree
fi
gk_check "group gatekeeper exists" getent group gatekeeper
unit_active() { [ "$(systemctl is-active gatekeeperd 2>/dev/null)" = active ]; }
GK_DETAIL=$(systemctl status gatekeeperd --no-pager 2>&1 | tail -n 8 | oneline)
gk_check "gatekeeperd.service is active" gk_wait_for 300 unit_active
GK_DETAIL=$(systemctl show -p Type gatekeeperd)
gk_check "gatekeeperd.service is Type=notify" \
	test "$(systemctl show -p Type --value gatekeeperd)" = notify
exposure=$(systemd-analyze security gatekeeperd 2>/dev/null |
	sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
info "systemd-analyze security gatekeeperd: ${exposure:-none}"
GK_DETAIL="exposure ${exposure:-not reported}"
gk_check "systemd-analyze security gatekeeperd: exposure <= 4.0" \
	eval '[ -n "$exposure" ] && awk -v e="$exposure" "BEGIN { exit !(e <= 4.0) }"'
[ -S /run/gatekeeper/control.sock ] ||
	gk_wait_for 100 test -S /run/gatekeeper/control.sock

# the counts, the failed checks, and the exit status
summary() {
	part ""
	echo "$GK_NPASS passed, $GK_NFAIL failed"
	for f in "${GK_FAILED[@]}"; do
		echo "FAILED: $f"
	done
	[ "$GK_NFAIL" -eq 0 ]
	exit
}

# GK_GUEST_PARTS=suite (run_guest.sh): the suite's scripts alone
PARTS=$(cat "$SHARE/parts" 2>/dev/null || echo all)
if [ "$PARTS" = suite ]; then
	part "h. the suite's kernel and cgroup scripts"
	# shellcheck source=tests/guest/in_guest_suite.sh
	. "$SHARE/tests/guest/in_guest_suite.sh"
	summary
fi

# ---------------------------------------------------------------------------
part "b. gated commands: alice in a login session, root"

getent passwd alice >/dev/null || useradd -m -s /bin/bash alice
usermod -aG gatekeeper alice
mkdir -p /home/alice/work
chown alice: /home/alice/work
mkdir -p /root/work

# as_alice NAME SECONDS CMD: CMD (a shell line) as alice from a login
# session (su -l: PAM, logind), in ~/work, with the test CA named for curl
# and git; stdout in $T/NAME.out, stderr in $T/NAME.err, exit status in RC.
as_alice() {
	local name=$1 secs=$2
	RC=0
	timeout -k 5 "$secs" su -l alice -s /bin/bash -c \
		"cd ~/work && export GIT_SSL_CAINFO=$CA CURL_CA_BUNDLE=$CA && $3" \
		>"$T/$name.out" 2>"$T/$name.err" </dev/null || RC=$?
}
# as_root NAME SECONDS CMD...: the same for root, from this service.
as_root() {
	local name=$1 secs=$2
	shift 2
	RC=0
	(cd /root/work && GIT_SSL_CAINFO=$CA CURL_CA_BUNDLE=$CA \
		timeout -k 5 "$secs" "$@") >"$T/$name.out" 2>"$T/$name.err" \
		</dev/null || RC=$?
}
detail() { GK_DETAIL="exit $RC; out: $(head -c 300 "$T/$1.out" | oneline); err: $(tail -c 600 "$T/$1.err" | oneline)"; }

as_alice session 60 'cat /proc/self/cgroup; id'
detail session
uid=$(id -u alice)
gk_check "alice's shell from su -l is in a logind session (user.slice/user-$uid.slice/session-*.scope) and in group gatekeeper" \
	eval 'grep -q "^0::/user.slice/user-$uid.slice/session-[^/]*\.scope$" "$T/session.out" &&
	    grep -q "(gatekeeper)" "$T/session.out"'

as_alice curl-ok 120 "gk-run --allow github.com -- $CURL https://github.com/"
detail curl-ok
gk_check "alice: gk-run --allow github.com -- curl https://github.com/: the page, exit 0" \
	eval '[ "$RC" = 0 ] && grep -q "hello from github.com" "$T/curl-ok.out"'
as_alice curl-evil 120 "gk-run --allow github.com -- $CURL https://evil.example/"
detail curl-evil
gk_check "alice: gk-run --allow github.com -- curl https://evil.example/: fails, gk-run says evil.example was denied" \
	eval '[ "$RC" != 0 ] && [ "$RC" != 125 ] && ! grep -q "hello from evil" "$T/curl-evil.out" &&
	    grep -q "denied evil.example" "$T/curl-evil.err"'
as_alice clone 180 "rm -rf hello && gk-run --allow github.com -- git clone -q https://github.com/acme/hello.git hello && cat hello/README"
detail clone
gk_check "alice: gk-run --allow github.com -- git clone https://github.com/acme/hello.git: the repository" \
	eval '[ "$RC" = 0 ] && grep -q "hello, gatekeeper" "$T/clone.out"'

as_root root-curl-ok 120 gk-run --allow github.com -- $CURL https://github.com/
detail root-curl-ok
gk_check "root: gk-run --allow github.com -- curl https://github.com/: the page, exit 0" \
	eval '[ "$RC" = 0 ] && grep -q "hello from github.com" "$T/root-curl-ok.out"'
as_root root-curl-evil 120 gk-run --allow github.com -- $CURL https://evil.example/
detail root-curl-evil
gk_check "root: gk-run --allow github.com -- curl https://evil.example/: fails, gk-run says evil.example was denied" \
	eval '[ "$RC" != 0 ] && [ "$RC" != 125 ] && ! grep -q "hello from evil" "$T/root-curl-evil.out" &&
	    grep -q "denied evil.example" "$T/root-curl-evil.err"'
rm -rf /root/work/hello
as_root root-clone 180 sh -c 'gk-run --allow github.com -- git clone -q https://github.com/acme/hello.git hello && cat hello/README'
detail root-clone
gk_check "root: gk-run --allow github.com -- git clone https://github.com/acme/hello.git: the repository" \
	eval '[ "$RC" = 0 ] && grep -q "hello, gatekeeper" "$T/root-clone.out"'

# ---------------------------------------------------------------------------
part "c. limits (alice)"

# cage_cg PID: the cgroup directory of the cage holding PID (its path up
# to the component named cage-*), or nothing.
cage_cg() {
	local p
	p=$(sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null) || return 1
	case $p in
	*/cage-*) ;;
	*) return 1 ;;
	esac
	p=$(printf '%s' "$p" | sed 's|\(/cage-[^/]*\).*|\1|')
	echo "$CG$p"
}
# caged_pid MARK: a process of alice whose command line holds MARK and
# that is in a cage.
caged_pid() {
	local p
	for p in $(pgrep -u alice -f "$1"); do
		cage_cg "$p" >/dev/null && { echo "$p"; return 0; }
	done
	return 1
}

as_alice memory 120 "gk-run --allow github.com --memory 64M -- python3 -c 'a = bytearray(512 << 20); print(\"allocated\", len(a))'"
detail memory
gk_check "alice: --memory 64M, python3 allocating 512 MiB: exit 137, 'out of memory'" \
	eval '[ "$RC" = 137 ] && grep -q "out of memory" "$T/memory.err" && ! grep -q allocated "$T/memory.out"'

(as_alice bomb 120 "gk-run --allow github.com --pids 32 --timeout 8 -- sh -c 'b() { b | b & }; b; sleep 30' gk-guest-bomb"; exit "$RC") &
BOMB=$!
# bomb_snapshot DIR: the cage's pids files, cgroups and tasks
bomb_snapshot() {
	local t c
	echo "pids.current $(cat "$1/pids.current") pids.max $(cat "$1/pids.max") events $(tr '\n' ' ' <"$1/pids.events")"
	find "$1" -mindepth 1 -type d
	for t in $(cat "$1/cgroup.threads"); do
		read -r c <"/proc/$t/comm" 2>/dev/null
		echo "task $t $c $(sed -n 's/^PPid:\t*//p' "/proc/$t/status" 2>/dev/null) $(sed -n 's/^0:://p' "/proc/$t/cgroup" 2>/dev/null)"
	done
}
rm -f "$T/bomb-over.txt"
peak=0 bombcg=
for ((i = 0; i < 300; i++)); do
	if [ -z "$bombcg" ]; then
		p=$(caged_pid gk-guest-bomb) && bombcg=$(cage_cg "$p")
	fi
	if [ -n "$bombcg" ]; then
		read -r n 2>/dev/null <"$bombcg/pids.current" || break
		[ "$n" -gt "$peak" ] && peak=$n
		# past the limit: what is in the cage then, once
		if [ "$n" -gt 32 ] && [ ! -s "$T/bomb-over.txt" ]; then
			bomb_snapshot "$bombcg" >"$T/bomb-over.txt" 2>&1
		fi
	fi
	kill -0 "$BOMB" 2>/dev/null || break
	sleep 0.05
done
[ -n "$bombcg" ] && [ -r "$bombcg/pids.peak" ] &&
	peak=$(cat "$bombcg/pids.peak" 2>/dev/null || echo "$peak")
wait "$BOMB"
RC=$?
detail bomb
GK_DETAIL="cage cgroup ${bombcg:-not found}; peak $peak tasks; $GK_DETAIL"
info "fork bomb: cage cgroup ${bombcg:-not found}, peak $peak tasks"
gk_check "alice: --pids 32, a fork bomb: never more than 32 tasks in its cage" \
	eval '[ -n "$bombcg" ] && [ "$peak" -ge 4 ] && [ "$peak" -le 32 ]'
if [ -s "$T/bomb-over.txt" ]; then
	echo "       the cage when it held more than 32 tasks (task, name, parent, cgroup):"
	sed 's/^/       | /' "$T/bomb-over.txt" | head -n 50
fi
gk_check "... and gk-run says the process limit was reached" \
	grep -q "process limit" "$T/bomb.err"

as_alice cpus 120 "gk-run --allow github.com --cpus 0.5 -- python3 -c '
import os, time
t = time.monotonic(); c = time.process_time()
while time.monotonic() - t < 4.0:
    pass
print(\"ratio %.2f\" % ((time.process_time() - c) / (time.monotonic() - t)))'"
detail cpus
ratio=$(sed -n 's/^ratio //p' "$T/cpus.out")
info "--cpus 0.5: CPU time / wall time ${ratio:-none}"
gk_check "alice: --cpus 0.5, a 4 s busy loop: CPU time about half of wall time (0.3-0.7)" \
	eval '[ "$RC" = 0 ] && [ -n "$ratio" ] && awk -v r="$ratio" "BEGIN { exit !(r >= 0.3 && r <= 0.7) }"'

# ---------------------------------------------------------------------------
part "d, e. reload, restart and a crash, under live cages (alice, root)"

# a cage fetching every 0.5 s for ~75 s: "ok EPOCH" / "fail EPOCH" a try
BODY='end=$(($(date +%s) + 75)); while [ $(date +%s) -lt $end ]; do if '"$CURL"' --max-time 5 -o /dev/null https://github.com/ 2>/dev/null; then echo ok $(date +%s); else echo fail $(date +%s); fi; sleep 0.5; done'
LOOP="gk-run --allow github.com -- sh -c '$BODY' gk-guest-loop"
# oks_after EPOCH NAME: an "ok" try at or after EPOCH
oks_after() { awk -v t="$1" '$1 == "ok" && $2 >= t { f = 1 } END { exit !f }' "$T/$2.out"; }
restarts() { systemctl show -p NRestarts --value gatekeeperd; }
# wait_while PID TENTHS COMMAND...: gk_wait_for, cut short when PID has
# exited (COMMAND tried once more then).
wait_while() {
	local pid=$1 max=$2 i
	shift 2
	for ((i = 0; i < max; i++)); do
		"$@" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	"$@"
}

(as_alice loop 180 "$LOOP"; exit "$RC") &
LOOPPID=$!
# and one of root's beside it
(as_root loop-root 180 gk-run --allow github.com -- sh -c "$BODY" \
	gk-guest-rootloop; exit "$RC") &
ROOTLOOPPID=$!
GK_DETAIL=$(tail -c 400 "$T/loop.err" | oneline)
gk_check "alice's fetching cage is up (a first ok)" \
	wait_while "$LOOPPID" 600 oks_after 0 loop
GK_DETAIL=$(tail -c 400 "$T/loop-root.err" | oneline)
gk_check "root's fetching cage is up (a first ok)" \
	wait_while "$ROOTLOOPPID" 600 oks_after 0 loop-root

t_reload=$(date +%s)
systemctl reload gatekeeperd >"$T/reload.log" 2>&1
rc=$?
GK_DETAIL="exit $rc: $(oneline <"$T/reload.log")"
gk_check "systemctl reload gatekeeperd: exit 0, unit active" \
	eval '[ "$rc" = 0 ] && unit_active'
GK_DETAIL=$(tail -n 5 "$T/loop.out" | oneline)
gk_check "... the cage's fetches keep working after the reload" \
	wait_while "$LOOPPID" 150 oks_after $((t_reload + 1)) loop

n0=$(restarts)
systemctl restart gatekeeperd >"$T/restart.log" 2>&1
rc=$?
t_restart=$(date +%s)
GK_DETAIL="exit $rc: $(oneline <"$T/restart.log"); $(systemctl status gatekeeperd --no-pager 2>&1 | tail -n 6 | oneline)"
gk_check "systemctl restart gatekeeperd under alice's and root's cages: exit 0" test "$rc" = 0
gk_check "... the unit is active again" gk_wait_for 300 unit_active
sleep 2
GK_DETAIL="NRestarts $n0 before, $(restarts) after"
gk_check "... NRestarts does not climb" test "$(restarts)" = "$n0"
GK_DETAIL="$(systemctl show -p Result -p ExecMainStatus gatekeeperd | oneline)"
gk_check "... and its Result is success" \
	test "$(systemctl show -p Result --value gatekeeperd)" = success
GK_DETAIL=$(ps -u alice -o pid,args 2>&1 | grep -v grep | grep gk-guest-loop | oneline)
gk_check "... alice's command keeps running" \
	eval 'kill -0 "$LOOPPID" 2>/dev/null && caged_pid gk-guest-loop >/dev/null'
GK_DETAIL="restart at $t_restart; tries: $(tail -n 12 "$T/loop.out" | oneline)"
gk_check "... and its fetches work again after the restart" \
	wait_while "$LOOPPID" 450 oks_after $((t_restart + 1)) loop
GK_DETAIL="restart at $t_restart; tries: $(tail -n 12 "$T/loop-root.out" | oneline)"
gk_check "... root's command keeps running, and its fetches work again after the restart" \
	wait_while "$ROOTLOOPPID" 450 oks_after $((t_restart + 1)) loop-root

# a crash: Restart= brings it back, and the cages with it
n0=$(restarts)
systemctl kill -s KILL gatekeeperd >"$T/crash.log" 2>&1
t_crash=$(date +%s)
GK_DETAIL="NRestarts $n0 before, $(restarts) now; $(systemctl status gatekeeperd --no-pager 2>&1 | tail -n 4 | oneline)"
gk_check "gatekeeperd killed (SIGKILL): Restart= starts it again (NRestarts climbs by one, active)" \
	gk_wait_for 300 eval '[ "$(restarts)" = $((n0 + 1)) ] && unit_active'
GK_DETAIL="crash at $t_crash; tries: $(tail -n 12 "$T/loop.out" | oneline)"
gk_check "... alice's and root's fetches work again after it" \
	eval 'wait_while "$LOOPPID" 450 oks_after $((t_crash + 1)) loop &&
	    wait_while "$ROOTLOOPPID" 450 oks_after $((t_crash + 1)) loop-root'
wait "$LOOPPID"
RC=$?
detail loop
gk_check "... alice's gk-run exits 0 at the end" test "$RC" = 0
wait "$ROOTLOOPPID"
RC=$?
detail loop-root
gk_check "... root's gk-run exits 0 at the end" test "$RC" = 0
info "tries: $(grep -c '^ok' "$T/loop.out") ok, $(grep -c '^fail' "$T/loop.out") failed"
if ! unit_active; then
	info "gatekeeperd is not active ($(systemctl show -p Result --value gatekeeperd)): reset-failed and start, for what follows"
	systemctl reset-failed gatekeeperd 2>/dev/null
	systemctl start gatekeeperd 2>/dev/null
	gk_wait_for 300 unit_active
fi

# ---------------------------------------------------------------------------
part "f. stop under a live cage, start again"

(as_alice stop 180 "gk-run --allow github.com -- sh -c 'sleep 120' gk-guest-stop"; exit "$RC") &
STOPPID=$!
GK_DETAIL=$(tail -c 400 "$T/stop.err" | oneline)
gk_check "alice's cage for the stop is up" \
	wait_while "$STOPPID" 600 eval 'caged_pid gk-guest-stop >/dev/null'
p=$(caged_pid gk-guest-stop) && info "its cgroup: $(cage_cg "$p")"
systemctl stop gatekeeperd >"$T/stop.log" 2>&1
rc=$?
no_table() { ! nft list table inet gatekeeper >/dev/null 2>&1; }
no_link() { ! ip -o link show | grep -q ': gk-'; }
no_cages() {
	! find "$SLICE" "$UNITCG" -name 'cage-*' -type d 2>/dev/null | grep -q .
}
gone() { ! kill -0 "$STOPPID" 2>/dev/null; }
nothing_left() { no_table && no_link && no_cages && gone; }
gk_wait_for 150 nothing_left
GK_DETAIL="stop exit $rc; table: $(nft list table inet gatekeeper 2>&1 | head -n 2 | oneline); links: $(ip -o link show | grep ': gk-' | cut -d' ' -f2 | oneline); cgroups: $(find "$SLICE" "$UNITCG" -name 'cage-*' -type d 2>/dev/null | oneline); gk-run: $(gone && echo exited || echo running)"
gk_check "systemctl stop gatekeeperd under a live cage: within 15 s no table inet gatekeeper, no gk-* link, no cage cgroup, gk-run exited" \
	eval '[ "$rc" = 0 ] && nothing_left'
gone || kill -KILL "$STOPPID" 2>/dev/null
wait "$STOPPID" 2>/dev/null
info "gk-run after the stop: $(tail -n 3 "$T/stop.err" | oneline)"

systemctl start gatekeeperd >"$T/start.log" 2>&1
rc=$?
GK_DETAIL="exit $rc: $(oneline <"$T/start.log"); $(systemctl status gatekeeperd --no-pager 2>&1 | tail -n 6 | oneline)"
gk_check "systemctl start gatekeeperd: active again" \
	eval '[ "$rc" = 0 ] && gk_wait_for 300 unit_active'
as_alice curl-again 120 "gk-run --allow github.com -- $CURL https://github.com/"
detail curl-again
gk_check "alice: a gated curl works after the start" \
	eval '[ "$RC" = 0 ] && grep -q "hello from github.com" "$T/curl-again.out"'

# ---------------------------------------------------------------------------
part "g. AppArmor and restricted user namespaces"

if [ -f /etc/apparmor.d/gk-run ]; then
	GK_DETAIL=$(apparmor_parser -QT /etc/apparmor.d/gk-run 2>&1 | oneline)
	gk_check "apparmor_parser -QT /etc/apparmor.d/gk-run parses the package's profile" \
		apparmor_parser -QT /etc/apparmor.d/gk-run
	if [ -r /sys/kernel/security/apparmor/profiles ]; then
		GK_DETAIL=$(grep -i gk-run /sys/kernel/security/apparmor/profiles | oneline)
		gk_check "... and the profile is loaded" \
			grep -q 'gk-run' /sys/kernel/security/apparmor/profiles
	else
		info "AppArmor is not enabled in this kernel: the profile's load not checked"
	fi
else
	info "the package installed no /etc/apparmor.d/gk-run"
fi
old=$(sysctl -n user.max_user_namespaces)
sysctl -qw user.max_user_namespaces=0
as_alice userns 120 "gk-run --allow github.com -- true"
sysctl -qw user.max_user_namespaces="$old"
detail userns
gk_check "alice with user.max_user_namespaces=0: exit 125 and gk-run names user.max_user_namespaces" \
	eval '[ "$RC" = 125 ] && grep -q "user.max_user_namespaces" "$T/userns.err"'

# ---------------------------------------------------------------------------
part "h. the suite's kernel and cgroup scripts"
# shellcheck source=tests/guest/in_guest_suite.sh
. "$SHARE/tests/guest/in_guest_suite.sh"

# ---------------------------------------------------------------------------
part "i. purge"

if [ "$PKG" = deb ]; then
	apt-get purge -y gatekeeper >"$T/purge.log" 2>&1
	rc=$?
	GK_DETAIL="exit $rc: $(tail -n 6 "$T/purge.log" | oneline)"
	gk_check "apt-get purge -y gatekeeper: exit 0" test "$rc" = 0
	GK_DETAIL=$(systemctl list-unit-files gatekeeperd.service 2>&1 | oneline)
	gk_check "... the unit is gone" \
		eval '! systemctl cat gatekeeperd.service >/dev/null 2>&1 && ! unit_active'
	gk_check "... /etc/gatekeeper is gone" test ! -e /etc/gatekeeper
	gk_check "... /var/log/gatekeeper is gone" test ! -e /var/log/gatekeeper
	gk_check "... group gatekeeper is gone" eval '! getent group gatekeeper'
	GK_DETAIL="$(nft list tables 2>&1 | oneline); $(ip -o link show | grep ': gk-' | oneline)"
	gk_check "... no table inet gatekeeper, no gk-* link" \
		eval 'no_table && no_link'
else
	info "no package: purge not tried"
fi

summary
