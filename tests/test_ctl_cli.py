#!/usr/bin/env python3
"""test_ctl_cli.py: gatekeeperctl as a person runs it, against a stand-in.

    test_ctl_cli.py /path/to/gatekeeperctl

A stand-in for gatekeeperd's control socket (a unix socket in a temporary
directory, answering each request line with lines this script chose, as
the protocol says gatekeeperd does) is all gatekeeperctl talks to: no
daemon, no root, no network. Each case runs gatekeeperctl and checks its
exit status, its standard output and standard error, and the request
lines it sent: every command, --json, --follow to the end of a cage, the
question lookup of approve and deny, refusals with and without a code, the
refused peer's line, malformed and over-long replies, a silent daemon
(--timeout), a missing socket. Prints "ok N - ..." / "not ok N - ..." and
exits 1 if any case failed.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

CTL = None
FAILED = 0
COUNT = 0

CAGE = {"id": "k3j9x0qa", "label": "demo", "source": "10.143.0.2",
        "uid": 1000, "allow": ["*.github.com", "example.com:443"],
        "created": "2026-11-25T10:00:00Z", "pins": 3, "dns_queries": 12,
        "connections": 4,
        "denied": {"dns": 1, "socks5": 0, "http": 2, "transparent": 0}}
DENIAL = {"cage": "k3j9x0qa", "label": "demo",
          "time": "2026-11-25T10:00:00.123Z", "kind": "http",
          "host": "example.org", "port": 443, "reason": "not_allowlisted",
          "count": 3}
DNS_DENIAL = dict(DENIAL, kind="dns", port=0, host="evil.example", count=1)
QUESTION = {"cage": "k3j9x0qa", "label": "demo", "id": "17",
            "host": "example.org", "port": 443, "kind": "http", "age": 3,
            "expires_in": 57, "connections": 1}


def line(obj):
    return json.dumps(obj, separators=(",", ":"))


class Partial:
    """Bytes sent as they are, without a newline after them."""

    def __init__(self, data):
        self.data = data


class Standin:
    """A control socket answering request lines from a script: `answers`
    maps an op to the lines sent back (objects, or bytes: a line's text;
    Partial: bytes without a newline); "*" is for any other op;
    "_close_after" lists the ops after whose answer it closes. hold=True keeps the connection open after the last line
    (gatekeeperctl must then time out or stop on its own)."""

    def __init__(self, path, answers, hold=False, greet=None):
        self.path = path
        self.answers = answers
        self.hold = hold
        self.greet = greet          # a line sent at accept, then close
        self.requests = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(4)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def send(self, conn, item):
        if isinstance(item, Partial):
            conn.sendall(item.data)
        elif isinstance(item, bytes):
            conn.sendall(item + b"\n")
        else:
            conn.sendall(line(item).encode() + b"\n")

    def serve(self):
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            if self.greet is not None:
                self.send(conn, self.greet)
                conn.shutdown(socket.SHUT_RDWR)
                return
            buf = b""
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    req, buf = buf.split(b"\n", 1)
                    self.requests.append(json.loads(req))
                    op = self.requests[-1].get("op")
                    for item in self.answers.get(op,
                                                 self.answers.get("*", [])):
                        self.send(conn, item)
                    if not self.hold and op in self.answers.get(
                            "_close_after", []):
                        return
            # (the client closed)

    def close(self):
        self.sock.close()


def run(args, answers=None, hold=False, greet=None, env=None, timeout=20):
    """gatekeeperctl ARGS against a stand-in; (rc, out, err, requests)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "control.sock")
        s = None
        if answers is not None or greet is not None:
            s = Standin(path, answers or {}, hold, greet)
        e = dict(os.environ)
        e.pop("GK_CONTROL", None)
        e.update(env or {})
        p = subprocess.run([CTL, "--control", path] + args, env=e,
                           capture_output=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        reqs = s.requests if s else []
        if s:
            s.close()
        return (p.returncode, p.stdout.decode(errors="replace"),
                p.stderr.decode(errors="replace"), reqs)


def check(name, cond, detail=""):
    global FAILED, COUNT
    COUNT += 1
    if cond:
        print("ok %d - %s" % (COUNT, name))
    else:
        FAILED += 1
        print("not ok %d - %s" % (COUNT, name))
        for ln in str(detail).splitlines():
            print("#   " + ln)


def expect(name, res, rc, out=None, err=None, reqs=None, out_has=(),
           err_has=()):
    got_rc, got_out, got_err, got_reqs = res
    ok = got_rc == rc
    ok = ok and (out is None or got_out == out)
    ok = ok and (err is None or got_err == err)
    ok = ok and (reqs is None or got_reqs == reqs)
    ok = ok and all(h in got_out for h in out_has)
    ok = ok and all(h in got_err for h in err_has)
    check(name, ok, "rc=%r\nstdout:\n%s\nstderr:\n%s\nrequests: %r" %
          (got_rc, got_out, got_err, got_reqs))


OWN = "" if os.getuid() == 0 else \
    "gatekeeperctl: only your own cages (uid %d) are shown; root sees " \
    "every cage\n" % os.getuid()


def cases_list():
    asking = dict(CAGE, id="b2c3d4e5", label="", uid=0, questions=2,
                  allow=[], denied={"dns": 0})
    res = run(["list"], {"cage.list": [{"ok": True,
                                        "cages": [CAGE, asking]}]})
    expect("list: a table with a header, QUESTIONS when a cage asks", res,
           0, reqs=[{"op": "cage.list"}], err=OWN,
           out_has=["ID        LABEL  UID   SOURCE      AGE",
                    "PATTERNS  DENIALS  QUESTIONS\n",
                    "k3j9x0qa  demo   1000  10.143.0.2",
                    "2         3        -\n",
                    "b2c3d4e5  -      0     10.143.0.2",
                    "0         0        2\n"])
    res = run(["list"], {"cage.list": [{"ok": True, "cages": [CAGE]}]})
    expect("list: no QUESTIONS column when no cage asks", res, 0,
           out_has=["DENIALS\n"])
    check("list: no QUESTIONS column ... (absent)",
          "QUESTIONS" not in res[1], res[1])
    res = run(["list"], {"cage.list": [{"ok": True, "cages": []}]})
    expect("list: none", res, 0, out="no cages\n", err=OWN)
    raw = b'{"ok":true,"cages":[]}'
    res = run(["--json", "list"], {"cage.list": [raw]})
    expect("list --json: the reply as it came", res, 0,
           out=raw.decode() + "\n")
    res = run(["list", "-j"], {"cage.list": [raw]})
    expect("list -j (after the command)", res, 0, out=raw.decode() + "\n")


def cases_show():
    cage = dict(CAGE, pinned=[{"name": "github.com", "addr": "140.82.112.3",
                               "expires_in": 57}],
                recent=[DENIAL, DNS_DENIAL], pending=[QUESTION],
                questions=1)
    res = run(["show", "k3j9x0qa"], {"cage.show": [{"ok": True,
                                                     "cage": cage}]})
    expect("show: key: value lines, lists below their key", res, 0,
           reqs=[{"op": "cage.show", "id": "k3j9x0qa"}], err="",
           out_has=["id: k3j9x0qa\nlabel: demo\nuid: 1000\n"
                    "source: 10.143.0.2\ncreated: 2026-11-25T10:00:00Z (",
                    "pins: 3\ndns queries: 12\nconnections: 4\n"
                    "denied: dns 1, http 2\nquestions: 1\n"
                    "allow:\n  *.github.com\n  example.com:443\n"
                    "pinned:\n  github.com -> 140.82.112.3 (expires in 57s)\n"
                    "recent denials:\n"
                    "  2026-11-25T10:00:00.123Z http example.org:443 "
                    "not_allowlisted x3\n"
                    "  2026-11-25T10:00:00.123Z dns evil.example "
                    "not_allowlisted\n"
                    "pending questions:\n"
                    "  17 http example.org:443 (asked 3s ago, expires in "
                    "57s, 1 connection)\n"])
    res = run(["show", "zzzzzzzz"], {"cage.show": [
        {"ok": False, "error": "no cage zzzzzzzz (gatekeeperctl list)",
         "code": "no_such_cage"}]})
    expect("show: an unknown cage: exit 1, the message as it came", res, 1,
           out="", err="gatekeeperctl: no cage zzzzzzzz (gatekeeperctl "
           "list)\n")
    res = run(["show", "k3j9x0qa"], {"cage.show": [
        {"ok": False, "error": "cage k3j9x0qa is not yours",
         "code": "not_permitted"}]})
    expect("show: another uid's cage: exit 4", res, 4, out="",
           err="gatekeeperctl: cage k3j9x0qa is not yours\n")


def cases_denials():
    res = run(["denials"], {"denials": [{"ok": True,
                                         "denials": [DENIAL, DNS_DENIAL]}]})
    expect("denials: one line each, x3 when count > 1, no port for dns",
           res, 0, reqs=[{"op": "denials"}], err=OWN,
           out="2026-11-25T10:00:00.123Z k3j9x0qa (demo) http "
           "example.org:443 not_allowlisted x3\n"
           "2026-11-25T10:00:00.123Z k3j9x0qa (demo) dns evil.example "
           "not_allowlisted\n")
    res = run(["denials", "--cage", "k3j9x0qa"],
              {"denials": [{"ok": True, "denials": []}]})
    expect("denials --cage: its id in the request; none", res, 0,
           reqs=[{"op": "denials", "id": "k3j9x0qa"}],
           out="no recent denials\n")
    ev = dict(DENIAL, event="deny", why="not in the allowlist")
    del ev["count"]
    events = [{"ok": True, "denials": [DENIAL]}, ev,
              {"event": "deny.dropped", "count": 5},
              {"event": "ask", "id": "3"},
              {"event": "cage.end", "cage": "k3j9x0qa", "label": "demo"}]
    res = run(["denials", "-f", "-c", "k3j9x0qa"], {"denials": events},
              hold=True)
    expect("denials --follow --cage: live lines with why, to the cage's "
           "end (exit 0)", res, 0,
           reqs=[{"op": "denials", "id": "k3j9x0qa", "follow": True}],
           out="2026-11-25T10:00:00.123Z k3j9x0qa (demo) http "
           "example.org:443 not_allowlisted x3\n"
           "2026-11-25T10:00:00.123Z k3j9x0qa (demo) http "
           "example.org:443 not_allowlisted - not in the allowlist\n"
           "-- 5 denials dropped (gatekeeperctl read too slowly)\n"
           "-- cage k3j9x0qa (demo) ended\n")
    res = run(["--json", "denials", "--follow", "--cage=k3j9x0qa"],
              {"denials": events}, hold=True)
    expect("denials --follow --json: every line as it came", res, 0,
           out="".join(line(e) + "\n" for e in events))
    res = run(["denials", "--follow"], {"denials": events[:2],
                                        "_close_after": ["denials"]})
    expect("denials --follow: gatekeeperd going away: exit 3", res, 3,
           err_has=["gatekeeperctl: gatekeeperd closed the connection"])


def cases_update():
    upd = {"ok": True, "cage": {"id": "k3j9x0qa", "label": "demo",
                                "source": "10.143.0.2", "uid": 1000,
                                "allow": ["*.github.com", "pypi.org:443"]}}
    res = run(["allow", "k3j9x0qa", "pypi.org:443"], {"cage.update": [upd]})
    expect("allow: cage.update add; the allowlist after", res, 0,
           reqs=[{"op": "cage.update", "id": "k3j9x0qa",
                  "add": ["pypi.org:443"]}],
           out="k3j9x0qa (demo) allowlist:\n  *.github.com\n"
           "  pypi.org:443\n")
    res = run(["revoke", "k3j9x0qa", "pypi.org:443", "*.github.com"],
              {"cage.update": [dict(upd, cage=dict(upd["cage"],
                                                   allow=[]))]})
    expect("revoke: cage.update remove; an empty allowlist", res, 0,
           reqs=[{"op": "cage.update", "id": "k3j9x0qa",
                  "remove": ["pypi.org:443", "*.github.com"]}],
           out="k3j9x0qa (demo) allowlist: (none)\n")
    res = run(["revoke", "k3j9x0qa", "nope.example"], {"cage.update": [
        {"ok": False, "error": "cage k3j9x0qa has no pattern "
         "'nope.example'; it has: *.github.com"}]})
    expect("revoke: a pattern the cage lacks: exit 1", res, 1,
           err="gatekeeperctl: cage k3j9x0qa has no pattern 'nope.example'"
           "; it has: *.github.com\n")
    res = run(["destroy", "k3j9x0qa"], {"cage.destroy": [
        {"ok": True, "destroyed": "k3j9x0qa"}]})
    expect("destroy", res, 0, out="destroyed k3j9x0qa\n",
           reqs=[{"op": "cage.destroy", "id": "k3j9x0qa"}])


def cases_daemon():
    stats = {"ok": True, "stats": {
        "dns_queries": {"allowed": 10, "denied": 2, "servfail": 0},
        "dns_cache_hits": 5,
        "connections": {"socks5": {"allowed": 3, "denied": 1},
                        "http": {"allowed": 0}},
        "bytes": {"up": 123, "down": 18446744073709551615},
        "cages": 2}}
    res = run(["stats"], {"stats": [stats]})
    expect("stats: every counter, groups on one line, zeros left out",
           res, 0, out="dns_queries: allowed 10, denied 2\n"
           "dns_cache_hits: 5\nconnections:\n  socks5: allowed 3, denied 1\n"
           "  http: 0\nbytes: up 123, down 18446744073709551615\n"
           "cages: 2\n")
    res = run(["reload"], {"reload": [{"ok": True, "reload": {
        "policy": "2026-11-25.1", "cages": 3}}]})
    expect("reload: the policy version and the cages kept", res, 0,
           out="reloaded: host policy 2026-11-25.1, 3 cages kept\n")
    res = run(["reload"], {"reload": [{"ok": True, "reload": {
        "policy": "none", "cages": 1}}]})
    expect("reload: no host policy", res, 0,
           out="reloaded: no host policy, 1 cage kept\n")
    res = run(["reload"], {"reload": [{"ok": False, "error": "reload failed;"
                                       " the running configuration is kept:"
                                       " /etc/x.conf:3: bad\n/etc/x.conf:4:"
                                       " worse\n"}]})
    expect("reload: refused, its lines as they came", res, 1,
           err="gatekeeperctl: reload failed; the running configuration is "
           "kept: /etc/x.conf:3: bad\n/etc/x.conf:4: worse\n")
    res = run(["reload"], {"reload": [{"ok": False, "error": "root only",
                                       "code": "not_permitted"}]})
    expect("reload by a group member: exit 4", res, 4,
           err="gatekeeperctl: root only\n")


def cases_questions():
    q2 = dict(QUESTION, id="18", cage="b2c3d4e5", label="other",
              host="2001:db8::1", port=8443, kind="transparent")
    pend = {"ok": True, "questions": [QUESTION, q2]}
    res = run(["pending"], {"pending": [pend]})
    expect("pending: a table", res, 0, err=OWN,
           out="QID  CAGE      LABEL  KIND         TARGET              AGE  "
           "EXPIRES  CONNS\n"
           "17   k3j9x0qa  demo   http         example.org:443     3s   "
           "57s      1\n"
           "18   b2c3d4e5  other  transparent  [2001:db8::1]:8443  3s   "
           "57s      1\n")
    res = run(["pending"], {"pending": [{"ok": True, "questions": []}]})
    expect("pending: none", res, 0, out="no pending questions\n")
    res = run(["approve", "18", "--run"], {"pending": [pend],
                                           "cage.decide": [{"ok": True}]})
    expect("approve --run: the question's cage from pending, by operator",
           res, 0, reqs=[{"op": "pending"},
                         {"op": "cage.decide", "id": "b2c3d4e5",
                          "ask": "18", "decision": "run", "by": "operator"}],
           out="approved question 18 (run): transparent [2001:db8::1]:8443 "
           "of cage b2c3d4e5 (other)\n")
    res = run(["approve", "0017"], {"pending": [pend],
                                    "cage.decide": [{"ok": True}]})
    expect("approve: once by default; 0017 is question 17", res, 0,
           reqs=[{"op": "pending"},
                 {"op": "cage.decide", "id": "k3j9x0qa", "ask": "17",
                  "decision": "once", "by": "operator"}],
           out="approved question 17 (once): http example.org:443 of cage "
           "k3j9x0qa (demo)\n")
    res = run(["--json", "deny", "17"], {"pending": [pend],
                                         "cage.decide": [b'{"ok":true}']})
    expect("deny --json: the decide reply", res, 0, out='{"ok":true}\n',
           reqs=[{"op": "pending"},
                 {"op": "cage.decide", "id": "k3j9x0qa", "ask": "17",
                  "decision": "deny", "by": "operator"}])
    res = run(["deny", "99"], {"pending": [pend]})
    expect("deny: no such question: exit 1", res, 1, out="",
           err="gatekeeperctl: no pending question 99 (gatekeeperctl "
           "pending lists them)\n", reqs=[{"op": "pending"}])
    res = run(["approve", "17"], {"pending": [pend], "cage.decide": [
        {"ok": False, "error": "question 17 was answered already"}]})
    expect("approve: refused: exit 1", res, 1,
           err="gatekeeperctl: question 17 was answered already\n")


def cases_broken():
    res = run(["list"], {"cage.list": [b'{"ok":true,"cages":[{"id":1}]}']})
    expect("a malformed reply: exit 3, saying what is wrong", res, 3,
           out="", err_has=['"id" is not a string'])
    res = run(["list"], {"cage.list": [b'not json']})
    expect("not JSON: exit 3", res, 3, out="", err_has=["not JSON"])
    res = run(["--json", "list"], {"cage.list": [b'{"ok":1}']})
    expect("--json: a reply without a boolean ok: exit 3, not printed",
           res, 3, out="", err_has=['no boolean \\"ok\\"'.replace("\\", "")])
    res = run(["stats"], {"stats": [b'{"ok":true,"stats":{"x":"\xff"}}']})
    expect("non-UTF-8: exit 3", res, 3, out="", err_has=["not JSON"])
    res = run(["stats"], {"stats": [b'{"ok":true,"stats":{"x":'
                                    + b'1' * 70000 + b'}}']})
    expect("a reply over 64 KiB: exit 3", res, 3,
           err_has=["a line over 65536 bytes"])
    res = run(["--timeout", "1", "stats"], {"stats": []}, hold=True)
    expect("no reply within --timeout: exit 3", res, 3,
           err_has=["did not answer within 1 s"])
    res = run(["stats"], {"stats": [Partial(b'{"ok":tr')], "_close_after": ["stats"]})
    expect("closed in the middle of a line: exit 3", res, 3,
           err_has=["closed the connection in the middle of a line"])
    res = run(["stats"], {"stats": [{"ok": False}]})
    expect("ok:false without an error: exit 1, said so", res, 1,
           err_has=["refused the request and gave no reason"])
    res = run(["list"], greet={"ok": False, "error": "not permitted: uid "
                               "1001 is not root and not in group "
                               "'gatekeeper'; ask an administrator"})
    expect("a refused peer's line at connect: exit 4", res, 4,
           err="gatekeeperctl: not permitted: uid 1001 is not root and not "
           "in group 'gatekeeper'; ask an administrator\n")
    res = run(["list"])
    expect("no socket: exit 3, is gatekeeperd running?", res, 3,
           err_has=["gatekeeperctl: cannot reach gatekeeperd at ",
                    "control.sock (No such file or directory): is "
                    "gatekeeperd running? "])


def cases_usage():
    for args, msg in [
            (["lst"], "unknown command 'lst'"),
            ([], "no command given"),
            (["show"], "show: missing the cage ID"),
            (["show", "K3J9X0QA"], "show: 'K3J9X0QA' is not a cage id"),
            (["approve", "17x"], "approve: '17x' is not a question id"),
            (["approve", "99999999999999999999"], "is not a question id"),
            (["approve", "1", "--once", "--run"], "exclude each other"),
            (["deny", "1", "--run"], "--run is not an option of deny"),
            (["allow", "k3j9x0qa"], "allow: missing the PATTERN"),
            (["allow", "k3j9x0qa", "a..b"], "allow: invalid pattern"),
            (["list", "--bogus"], "unknown option '--bogus'"),
            (["--timeout", "0", "list"], "--timeout: '0' is not"),
            (["--follow", "denials"], "--follow is not an option before"),
            (["list", "x"], "list: unexpected argument 'x'")]:
        res = run(args)
        expect("usage: %s: exit 2, %s" % (" ".join(args) or "(none)", msg),
               res, 2, out="", err_has=[msg, "--help"])
    res = run(["--help"])
    expect("--help: stdout, exit 0, the exit statuses", res, 0, err="",
           out_has=["usage: gatekeeperctl", "Exit status:",
                    "approve QID [--once|--run]"])
    res = run(["denials", "--help"])
    expect("denials --help: its own text", res, 0,
           out_has=["usage: gatekeeperctl denials", "--follow"])
    res = run(["show", "--help"])
    expect("show --help without the ID it needs", res, 0,
           out_has=["usage: gatekeeperctl show ID"])
    res = run(["-V"])
    expect("-V: the version", res, 0, out_has=["gatekeeperctl (gatekeeper "])


def main():
    global CTL
    if len(sys.argv) != 2:
        print("usage: test_ctl_cli.py /path/to/gatekeeperctl",
              file=sys.stderr)
        return 2
    CTL = os.path.abspath(sys.argv[1])
    for cases in (cases_list, cases_show, cases_denials, cases_update,
                  cases_daemon, cases_questions, cases_broken, cases_usage):
        cases()
    print("# %d of %d failed" % (FAILED, COUNT) if FAILED else
          "# all %d passed" % COUNT)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
