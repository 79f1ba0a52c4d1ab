#!/usr/bin/env bash
#
# test_escapes.sh: ways out of a cage found by attacking it, each tried
# the way a hostile build script or agent would, against the real
# gatekeeperd, gk-run, bwrap and the hermetic internet of e2e_net.sh
# (nginx serving github.com and evil.example, dnsmasq upstream).
#
#   bash tests/integration/test_escapes.sh build/gatekeeperd build/spawner/gk-run
#
# 1. A daemon restart must not hand a running cage the control socket.
#    A program in an old cage waits while gatekeeperd is restarted (SIGTERM
#    then start, and kill -9 then start), then tries: to see or connect to
#    the control socket at its path; to connect to the new socket through a
#    hard link the host places in the cage's writable directory (the
#    socket "handed" to it); over that connection, cage.create with its own
#    network namespace (SCM_RIGHTS) and allow ["*.evil.example"]; then to
#    fetch https://evil.example/. All must fail, as root and as a member of
#    group gatekeeper, and evil.example's nginx must log nothing.
# 2. The cage cannot rewrite its own network settings (or any other
#    namespace's sysctl): writes to /proc/sys (disable_ipv6, rp_filter,
#    forwarding, ping_group_range, hostname, ipc and user limits, ...) fail
#    and the values, read from the host side of the cage's namespace, stay.
# (Empty-line Host smuggling and SSLv2 hellos are checked through all
# three proxies in test_proxy_peek.sh and test_transparent_peek.sh.)
#
# Runs as root in namespaces it creates itself (lib.sh). Prints "ok ..." /
# "FAIL ..." per check and a summary; exits 1 if a check failed or
# anything needed is missing. GK_KEEP_TMP=1 keeps the temp directory.

# Checks are often `gk_check MSG eval '...'`: the single quotes are meant.
# shellcheck disable=SC2016,SC2317,SC2034
GK_SELF=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$GK_SELF")/lib.sh"
# shellcheck source=tests/integration/e2e_lib.sh
. "$GK_LIB_DIR/e2e_lib.sh"
E2E_NAME=test_escapes.sh

e2e_args 0 "$@"
e2e_preamble dig dnsmasq curl unshare nsenter ip nginx fcgiwrap openssl \
    git /usr/lib/git-core/git-http-backend nft bwrap setpriv useradd \
    groupadd usermod getent timeout pgrep ln "$PYTHON"
GK_SKIP_CODE=1
gk_enter_netns 1 "$GK_SELF" "$@"
gk_setup

# shellcheck source=tests/integration/e2e_net.sh
. "$GK_LIB_DIR/e2e_net.sh"
e2e_vars

e2e_begin
CA=$EN_DIR/ca.crt
gk_ok "the test internet is up (internet netns pid $EN_NS_PID)"
r=$(as root curl -sS --noproxy '*' --max-time 10 https://evil.example/index.html 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "control: the host reaches https://evil.example/ (so a leak would show)" \
	test "$r" = "hello from evil.example"

e2e_user

: >"$T/empty.conf"
GKD_ARGS=(-f -c "$T/empty.conf" --control "$SOCK" --upstream "$EN_RESOLVER"
	--metrics "$METRICS" --audit-log "$AUDIT" --log-level debug)
start_gkd() {
	gk_start_daemon GKD_PID "$GKD" "${GKD_ARGS[@]}"
	daemon_ready "$GKD_PID"
}
start_gkd || gk_abort "gatekeeperd starts (control socket, metrics)" "$T/GKD_PID.log"
gk_ok "gatekeeperd is ready (pid $GKD_PID)"
chmod 755 "$T/run"
GK_DETAIL=$(ls -l "$SOCK" 2>&1)
gk_check "the control socket is group $E2E_GROUP, mode 0660 (the user may connect)" \
	eval '[ "$(stat -c "%a %G" "$SOCK")" = "660 $E2E_GROUP" ]'

# ---- 1. the control socket after a restart ------------------------------------
cp "$CA" "$SHARE/ca.crt"
cat >"$SHARE/attack.py" <<'EOF'
# attack.py OUT CTL HANDED: wait for OUT/go (60 s at most), then try the
# control socket at CTL, the one linked at HANDED, a cage for ourselves,
# and https://evil.example/. One line per step in OUT/result.
import json, os, socket, ssl, sys, time, urllib.request
out, ctl, handed = sys.argv[1:4]
res = open(os.path.join(out, "result"), "w")
t0 = time.monotonic()
def say(k, v):
    res.write("%s %s (%dms)\n" % (k, str(v).replace("\n", " ")[:300],
              (time.monotonic() - t0) * 1000)); res.flush()
for _ in range(600):
    if os.path.exists(os.path.join(out, "go")):
        break
    time.sleep(0.1)
else:
    say("go", "never came"); sys.exit(1)
t0 = time.monotonic()
d = os.path.dirname(ctl)
try:
    say("ls", sorted(os.listdir(d)))
except OSError as e:
    say("ls", "ERR %s" % e.strerror)
held = []		# a cage lives as long as its connection: keep them
def rpc(path, fd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    held.append(s)
    s.settimeout(5)
    s.connect(path)
    req = json.dumps({"op": "cage.create", "netns": True,
                      "label": "attack", "allow": ["*.evil.example"]})
    req = (req + "\n").encode()
    try:		# a peer refused at once finds the reply waiting
        socket.send_fds(s, [req], [fd])
    except OSError:
        pass
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").strip() or "EOF"
for name, path in (("ctl", ctl), ("handed", handed)):
    try:
        ns = os.open("/proc/self/ns/net", os.O_RDONLY)
        say(name, rpc(path, ns))
    except OSError as e:
        say(name, "ERR %s" % (e.strerror or e))
time.sleep(0.5)		# a cage, had one been made, is plumbed by now
try:
    ctx = ssl.create_default_context(cafile=sys.argv[4])
    proxy = urllib.request.ProxyHandler()
    op = urllib.request.build_opener(proxy,
        urllib.request.HTTPSHandler(context=ctx))
    body = op.open("https://evil.example/index.html", timeout=5).read()
    say("evil", body.decode(errors="replace"))
except Exception as e:
    say("evil", "ERR %s" % e)
say("done", 1)
EOF
chmod -R a+rX "$SHARE"

res() { sed -n "s/^$2 //p" "$1/result" 2>/dev/null | head -1; }
nginx_lines() { grep -c . "$EN_DIR/nginx-access.log" 2>/dev/null; }

restart_case() {	# WHO HOW (TERM|KILL)
	local who=$1 how=$2 dir=$T/atk-$1-$2 var before n i
	rm -rf "$dir"
	mkdir -p "$dir"
	[ "$who" = user ] && chown "$E2E_USER:" "$dir"
	var=ATK_${who}_$how
	cage_bg "$var" "$who" --allow '*.github.com' --ro "$SHARE" --rw "$dir" \
		-- "$PYTHON" "$SHARE/attack.py" "$dir" "$SOCK" "$dir/handed.sock" \
		"$SHARE/ca.crt"
	wait_ms 300 eval '[ "$(nlinks)" -ge 1 ]'
	GK_DETAIL="$(leftover_detail) | $(oneline "$(cat "$T/$var.err" 2>/dev/null)")"
	gk_check "$who/$how: the attacking cage runs (link $(gk_links | paste -sd, -))" \
		eval '[ "$(nlinks)" -ge 1 ]'
	gk_stop_daemon "$GKD_PID" "$how"
	gk_info "$who/$how: gatekeeperd stopped with SIG$how (status $GK_RC)"
	mv "$T/GKD_PID.log" "$T/GKD_PID.log.$who-$how"
	start_gkd || gk_abort "gatekeeperd restarts after SIG$how" "$T/GKD_PID.log"
	gk_ok "$who/$how: gatekeeperd restarted (pid $GKD_PID) while the cage runs"
	ln "$SOCK" "$dir/handed.sock"	# same inode: mode 0660, group $E2E_GROUP
	before=$(nginx_lines)
	touch "$dir/go"
	wait_ms 300 eval '[ -n "$(res "$dir" done)" ]'
	GK_DETAIL="result: $(oneline "$(cat "$dir/result" 2>&1)")"
	gk_check "$who/$how: the attack ran to its end" test -n "$(res "$dir" "done")"
	GK_DETAIL="ls: $(res "$dir" ls)"
	gk_check "$who/$how: the control socket's directory shows no socket in the cage" \
		eval '! res "$dir" ls | grep -q "control.sock"'
	GK_DETAIL="ctl: $(res "$dir" ctl)"
	gk_check "$who/$how: connecting to the control socket's path fails" \
		eval 'res "$dir" ctl | grep -q "^ERR"'
	# (gk-run's socket gate refuses a hard-linked host socket at the
	# connect; were it reached, gatekeeperd refuses the peer's namespace)
	GK_DETAIL="handed: $(res "$dir" handed); gk-run: $(oneline "$(grep "host socket" "$T/$var.err" 2>/dev/null)")"
	gk_check "$who/$how: the new socket handed in (hard link) is refused: at the connect, or the cage (another user namespace)" \
		eval '{ res "$dir" handed | grep -q "^ERR" &&
		      grep -q "refused a connection to the host socket .*handed.sock" "$T/$var.err"; } ||
		    { res "$dir" handed | grep -q "\"ok\":false" &&
		      res "$dir" handed | grep -q "another user namespace"; }'
	GK_DETAIL="evil: $(res "$dir" evil)"
	gk_check "$who/$how: https://evil.example/ stays out of reach" \
		eval '! res "$dir" evil | grep -q "hello from"'
	n=$(nginx_lines)
	GK_DETAIL="nginx access log lines: $before -> $n: $(tail -n +$((before + 1)) "$EN_DIR/nginx-access.log" | head -3 | paste -sd'|' -)"
	gk_check "$who/$how: no request from the attack reached the internet's nginx" \
		test "$n" = "$before"
	GK_DETAIL=$(grep -h "refused" "$T/GKD_PID.log" | tail -2)
	gk_check "$who/$how: the refusal is said (gk-run's gate, or gatekeeperd's log)" \
		eval 'grep -q "refused a connection to the host socket" "$T/$var.err" ||
		    grep -q "another user namespace" "$T/GKD_PID.log"'
	kill -TERM "${!var}" 2>/dev/null
	gk_wait_exit "${!var}" 50 || kill9 "${!var}"
}
restart_case root TERM
restart_case user TERM
restart_case root KILL
restart_case user KILL
wait_ms 300 no_leftovers
GK_DETAIL="$(leftover_detail)"
gk_check "after the restart cases: no link or set element left" no_leftovers

# The control peer check also holds with the socket in plain view: a
# program in a user namespace of its own (as every sandbox is) is refused.
r=$(as user unshare -U "$PYTHON" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
print(s.recv(4096).decode())' "$SOCK" 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "user: a peer in another user namespace is refused on the socket itself" \
	eval '[[ "$r" == *"another user namespace"* ]]'
r=$(as user "$PYTHON" "$GKCTL" "$SOCK" --timeout 3 '{"op":"cage.list"}' 2>&1)
GK_DETAIL="got: $(oneline "$r")"
gk_check "control: the same user outside any namespace is served" \
	eval '[[ "$r" == *"\"ok\":true"* ]]'

# ---- 2. /proc/sys --------------------------------------------------------------
cat >"$SHARE/sysctl.py" <<'EOF'
# sysctl.py OUT: try to change per-namespace sysctls; one line per knob:
# "NAME rc=0|ERRNO before=V after=V" in OUT/sysctl; then wait for OUT/stop.
import os, sys, time
out = sys.argv[1]
knobs = {
    "net/ipv6/conf/all/disable_ipv6": None, "net/ipv6/conf/default/disable_ipv6": None,
    "net/ipv6/conf/eth0/disable_ipv6": None, "net/ipv4/conf/all/rp_filter": "0",
    "net/ipv4/conf/eth0/rp_filter": "0", "net/ipv4/conf/default/rp_filter": "0",
    "net/ipv4/ip_forward": None, "net/ipv4/conf/eth0/forwarding": None,
    "net/ipv4/conf/eth0/route_localnet": None, "net/ipv4/conf/eth0/accept_local": None,
    "net/ipv4/ping_group_range": "0 2147483647", "net/ipv4/ip_unprivileged_port_start": "0",
    "net/core/somaxconn": "4097", "kernel/hostname": "gk-escaped",
    "kernel/domainname": "gk-escaped", "kernel/shmmax": "4096",
    "kernel/msgmax": "4096", "fs/mqueue/queues_max": "7", "user/max_user_namespaces": "7",
}
lines = []
for k, v in knobs.items():
    p = "/proc/sys/" + k
    try:
        before = open(p).read().strip()
    except OSError as e:
        lines.append("%s rc=missing" % k); continue
    if v is None:
        v = "0" if before == "1" else "1"
    try:
        with open(p, "w") as f:
            f.write(v + "\n")
        rc = "0"
    except OSError as e:
        rc = str(e.strerror).replace(" ", "_")
    after = "_".join(open(p).read().split())
    lines.append("%s rc=%s before=%s after=%s" % (k, rc, "_".join(before.split()), after))
open(os.path.join(out, "sysctl.tmp"), "w").write("\n".join(lines) + "\n")
os.rename(os.path.join(out, "sysctl.tmp"), os.path.join(out, "sysctl"))
for _ in range(300):
    if os.path.exists(os.path.join(out, "stop")):
        break
    time.sleep(0.1)
EOF
chmod a+r "$SHARE/sysctl.py"
sysctl_case() {	# WHO
	local who=$1 dir=$T/sys-$1 var=SYS_$1 pid k line bad
	rm -rf "$dir"
	mkdir -p "$dir"
	[ "$who" = user ] && chown "$E2E_USER:" "$dir"
	cage_bg "$var" "$who" --allow '*.github.com' --ro "$SHARE" --rw "$dir" \
		-- "$PYTHON" "$SHARE/sysctl.py" "$dir"
	wait_ms 300 test -s "$dir/sysctl"
	GK_DETAIL="$(oneline "$(cat "$T/$var.err" 2>/dev/null)")"
	gk_check "$who: the sysctl probe ran in a cage" test -s "$dir/sysctl"
	bad=$(awk '$2 != "rc=missing" && ($2 == "rc=0" || $3 != "before=" substr($4, 7)) {print}' \
		"$dir/sysctl" 2>/dev/null)
	GK_DETAIL="changed: $(oneline "$bad") | all: $(oneline "$(cat "$dir/sysctl" 2>&1)")"
	gk_check "$who: no /proc/sys write in the cage succeeds, no value changes ($(grep -vc rc=missing "$dir/sysctl" 2>/dev/null) knobs)" \
		eval '[ -s "$dir/sysctl" ] && [ -z "$bad" ]'
	if [ "$who" = root ]; then
		# uid 0 inside owns the namespace's sysctls: only the
		# read-only /proc/sys stops it
		GK_DETAIL=$(grep disable_ipv6 "$dir/sysctl" 2>&1 | head -1)
		gk_check "root: the write to disable_ipv6 fails with a read-only file system" \
			grep -q "net/ipv6/conf/all/disable_ipv6 rc=Read-only_file_system" "$dir/sysctl"
	fi
	pid=$(pgrep -f "^$PYTHON $SHARE/sysctl.py $dir" | head -1)
	line=
	for k in ipv6/conf/all/disable_ipv6 ipv6/conf/eth0/disable_ipv6 \
	    ipv4/conf/eth0/rp_filter ipv4/conf/all/rp_filter; do
		line="$line $k=$(nsenter --net="/proc/$pid/ns/net" cat "/proc/sys/net/$k" 2>&1)"
	done
	GK_DETAIL="seen from the host in the cage's netns (pid ${pid:-none}):$line"
	gk_check "$who: seen from the host, the cage's netns still has IPv6 off and rp_filter as gatekeeperd set it" \
		eval '[ -n "$pid" ] && [[ "$line" == *"ipv6/conf/all/disable_ipv6=1 ipv6/conf/eth0/disable_ipv6=1"* ]]'
	touch "$dir/stop"
	gk_wait_exit "${!var}" 50 || kill9 "${!var}"
}
sysctl_case root
sysctl_case user
wait_ms 300 no_leftovers
GK_DETAIL="$(leftover_detail)"
gk_check "after the sysctl cases: no link or set element left" no_leftovers

gk_check "no sanitizer reports in gatekeeperd's logs" \
	eval '! cat "$T"/GKD_PID.log* | grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:"'
GK_DETAIL=$(grep -Eh -m3 "AddressSanitizer|LeakSanitizer|runtime error:" "$T"/*.err 2>/dev/null)
gk_check "no sanitizer reports on gk-run's stderr" \
	eval '! cat "$T"/*.err 2>/dev/null | grep -Eq "AddressSanitizer|LeakSanitizer|runtime error:"'
gk_stop_daemon "$GKD_PID" TERM
GK_DETAIL="exit status $GK_RC"
gk_check "gatekeeperd stops cleanly (exit 0)" test "$GK_RC" = 0

gk_finish
