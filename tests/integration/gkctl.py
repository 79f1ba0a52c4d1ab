#!/usr/bin/env python3
"""gkctl.py: a small control-socket client for gatekeeperd's tests and demo.

The control protocol is newline-delimited JSON over a unix stream socket:
one request per line, one reply per line. A cage lives exactly as long as
the connection that created it, so this client makes the connection's
lifetime explicit:

  gkctl.py SOCKET [REQUEST ...]
      Connect, send each REQUEST argument (a JSON object, one line) and
      print each reply on its own line. With no REQUEST arguments, read
      requests from stdin, one per line, until EOF. The connection closes
      when the client exits: after the last argument, or at EOF on stdin.

  gkctl.py SOCKET --hold [REQUEST ...]
      Like the above, but after the REQUEST arguments keep the connection
      open, reading further requests from stdin, until EOF on stdin or
      SIGTERM/SIGINT. Run it in the background with stdin on a fifo: the
      shell writes requests into the fifo and closes its end (or kills
      the client) to close the connection, deterministically.

  gkctl.py --get PATH [FILE]
      Print a field of a JSON reply read from FILE (default stdin; the
      last non-empty line is used). PATH is dotted: "cage.id", "ok",
      "error", "cages.0.id". Objects and lists print as JSON; booleans as
      true/false; a missing field prints nothing and exits 1.

Options: --timeout SECONDS (per reply, default 5). Exit status: 0 when every
reply came back (whether "ok" was true or false), 1 on a connection error
or timeout, 2 on usage errors. A request line that is not valid JSON is
sent as-is: testing the daemon's handling of bad JSON is the point.
"""

import json
import os
import select
import signal
import socket
import sys
import time

USAGE = ("usage: gkctl.py SOCKET [--hold] [--timeout S] [REQUEST ...]\n"
         "       gkctl.py --get PATH [FILE]\n")


def get_field(path, stream):
    lines = [ln for ln in stream.read().splitlines() if ln.strip()]
    if not lines:
        return 1
    try:
        obj = json.loads(lines[-1])
    except ValueError:
        return 1
    for part in path.split("."):
        if isinstance(obj, dict) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return 1
    if isinstance(obj, bool):
        print("true" if obj else "false")
    elif isinstance(obj, (dict, list)):
        print(json.dumps(obj, separators=(",", ":")))
    elif obj is None:
        print("null")
    else:
        print(obj)
    return 0


class Conn:
    def __init__(self, path, timeout):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.timeout = timeout

    def request(self, line):
        line = line.rstrip("\r\n")
        self.sock.sendall(line.encode() + b"\n")
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply within %gs" % self.timeout)
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed by gatekeeperd")
            self.buf += chunk
        reply, self.buf = self.buf.split(b"\n", 1)
        return reply.decode(errors="replace")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def main(argv):
    if len(argv) >= 2 and argv[1] == "--get":
        if len(argv) not in (3, 4):
            sys.stderr.write(USAGE)
            return 2
        if len(argv) == 4:
            with open(argv[3], encoding="utf-8", errors="replace") as f:
                return get_field(argv[2], f)
        return get_field(argv[2], sys.stdin)

    args = argv[1:]
    if not args or args[0].startswith("-"):
        sys.stderr.write(USAGE)
        return 2
    path = args.pop(0)
    hold = False
    timeout = 5.0
    requests = []
    while args:
        a = args.pop(0)
        if a == "--hold":
            hold = True
        elif a == "--timeout" and args:
            timeout = float(args.pop(0))
        else:
            requests.append(a)

    stop = {"flag": False}

    def on_signal(signum, frame):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    try:
        conn = Conn(path, timeout)
    except OSError as e:
        sys.stderr.write("gkctl.py: %s: %s\n" % (path, e))
        return 1
    try:
        for r in requests:
            print(conn.request(r), flush=True)
        if requests and not hold:
            return 0
        # Requests from stdin until EOF (or a signal when holding).
        fd = sys.stdin.fileno()
        pending = b""
        while not stop["flag"]:
            try:
                rl, _, _ = select.select([fd, conn.sock], [], [], 0.2)
            except InterruptedError:
                continue
            if conn.sock in rl:
                # Nothing is expected between requests: the daemon closed
                # the connection (or sent something unsolicited).
                chunk = conn.sock.recv(65536)
                if not chunk:
                    sys.stderr.write("gkctl.py: connection closed by "
                                     "gatekeeperd\n")
                    return 1
                conn.buf += chunk
            if fd in rl:
                data = os.read(fd, 65536)
                if not data:
                    break
                pending += data
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if line.strip():
                        print(conn.request(line.decode(errors="replace")),
                              flush=True)
        if pending.strip() and not stop["flag"]:
            print(conn.request(pending.decode(errors="replace")), flush=True)
        return 0
    except (OSError, TimeoutError, ConnectionError) as e:
        sys.stderr.write("gkctl.py: %s\n" % e)
        return 1
    finally:
        conn.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
