#!/usr/bin/env python3
"""socks_client.py: a raw SOCKS5 / HTTP CONNECT client for gatekeeper's
proxy integration tests (test_proxy.sh, test_proxy_peek.sh). Real bytes
over a real socket, every step bounded by --timeout; it reports what the
proxy answered as key=value lines on stdout, for the shell to grep.

usage: socks_client.py [OPTIONS] MODE HOST PORT

  --via socks|http|direct  SOCKS5 (default), HTTP CONNECT, or no proxy
                       at all: connect to HOST PORT itself (a cage's
                       transparent path)
  --proxy ADDR:PORT    default 127.0.0.1:1080 (socks), 127.0.0.1:3128 (http)
  --bind SRC           source address (picks the cage)
  --timeout S          per step, default 10
  SOCKS5 only:
  --methods LIST       methods offered, hex, comma-separated (default 00)
  --user U --password P   RFC 1929 username/password (offered as 02)
  --cmd N              1 CONNECT (default), 2 BIND, 3 UDP ASSOCIATE
  --atyp N             ATYP to send: default 3 for names, 1/4 for literals;
                       any other value sends a 4-byte address with it
  TLS / HTTP modes:
  --sni NAME|-         SNI (default HOST; "-": none)
  --cafile FILE        trust anchor (certificate and name are verified)
  --path P             request path (default /)
  --host-header H      Host header (default HOST)

MODE
  connect   handshake only. SOCKS: "method=0xNN", "auth=0xNN" (with
            --user), "rep=0xNN", or "closed=STAGE". HTTP: "status=NNN",
            "deny=<X-Gatekeeper-Deny>", "body=<first body line>".
  banner    after the handshake, read one line without sending anything:
            "banner=LINE" or "banner_closed" / "banner_timeout".
  tls       after the handshake, TLS + GET PATH: "tls=ok", "status=NNN",
            "len=N", "sha256=HEX"; or "tls=cut ERROR".
  http      after the handshake, plain GET PATH: "status=NNN", "len=N",
            "sha256=HEX", "body=<first line>"; or "http=cut ERROR".
  pipe      after the handshake, relay stdin/stdout (ssh ProxyCommand);
            exits 0 when both directions are done, 1 on a refused tunnel.
  hold      after the handshake print "held", keep the tunnel open until
            killed, the proxy closes it, or --timeout passes.
  raw       after the handshake write each --send (backslash escapes:
            \\r \\n \\t \\\\ \\xNN) as its own write, reading what comes back
            after each until --idle seconds pass quietly or the tunnel
            ends: "raw_sent=I:LEN" (or "raw_send_error=I:ERR"),
            "raw_recv=LEN", "raw_statuses=200,..." (HTTP status lines
            seen), "raw_hello=NAME,..." (the "hello from NAME" bodies
            seen), "raw_end=closed|reset|open" and "raw_end_ms=N" (from
            the last write to the end). After the last write, --until-end
            reads until the tunnel ends (or --timeout), and --hellos N
            until N "hello from" bodies came, --bytes N until N bytes came
            (or it ends, or --timeout), then --idle quietly: what is expected is waited for however
            slowly it comes, not for a fixed idle time.
Always "ms=N": time from connect() to the handshake's answer.
Exit status: 0 if the proxy's answer was read (whatever it said), 1 on a
connection/usage error before that, 2 usage.
"""

import argparse
import hashlib
import os
import select
import socket
import ssl
import sys
import time


def out(k, v):
    print("%s=%s" % (k, v), flush=True)


class Closed(Exception):
    pass


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise Closed()
        b += c
    return b


def socks_handshake(s, a):
    """Returns (ok, leftover). Prints what the proxy said."""
    methods = [int(x, 16) for x in a.methods.split(",") if x]
    if a.user is not None and 2 not in methods:
        methods = [2] if a.methods == "00" else methods + [2]
    s.sendall(bytes([5, len(methods)] + methods))
    try:
        ver, m = recv_exact(s, 2)
    except Closed:
        out("closed", "greeting")
        return False
    out("method", "0x%02x" % m)
    if m == 0xFF:
        return False
    if m == 2:
        u = (a.user or "").encode()
        p = (a.password or "").encode()
        s.sendall(bytes([1, len(u)]) + u + bytes([len(p)]) + p)
        try:
            _, st = recv_exact(s, 2)
        except Closed:
            out("closed", "auth")
            return False
        out("auth", "0x%02x" % st)
        if st != 0:
            return False
    elif m != 0:
        out("closed", "unknown_method")
        return False
    host, port = a.host, a.port
    atyp = a.atyp
    if atyp is None:
        try:
            socket.inet_pton(socket.AF_INET, host)
            atyp = 1
        except OSError:
            try:
                socket.inet_pton(socket.AF_INET6, host)
                atyp = 4
            except OSError:
                atyp = 3
    if atyp == 1:
        addr = socket.inet_pton(socket.AF_INET, host)
    elif atyp == 4:
        addr = socket.inet_pton(socket.AF_INET6, host)
    elif atyp == 3:
        h = host.encode()
        addr = bytes([len(h)]) + h
    else:
        addr = b"\xc0\x00\x02\x0a"	# 4 bytes with a bogus ATYP
    s.sendall(bytes([5, a.cmd, 0, atyp]) + addr + port.to_bytes(2, "big"))
    try:
        hdr = recv_exact(s, 4)
    except Closed:
        out("closed", "request")
        return False
    out("rep", "0x%02x" % hdr[1])
    # Read BND.ADDR/BND.PORT so the tunnel starts clean.
    try:
        if hdr[3] == 1:
            recv_exact(s, 4 + 2)
        elif hdr[3] == 4:
            recv_exact(s, 16 + 2)
        elif hdr[3] == 3:
            n = recv_exact(s, 1)[0]
            recv_exact(s, n + 2)
    except Closed:
        if hdr[1] == 0:
            out("closed", "reply")
        return False
    return hdr[1] == 0


def http_head(s, limit=65536):
    buf = b""
    while b"\r\n\r\n" not in buf:
        c = s.recv(4096)
        if not c:
            raise Closed()
        buf += c
        if len(buf) > limit:
            raise Closed()
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    hdrs = {}
    for ln in lines[1:]:
        if ":" in ln:
            k, v = ln.split(":", 1)
            hdrs.setdefault(k.strip().lower(), v.strip())
    return status, hdrs, rest


def read_body(s, hdrs, rest, limit=64 << 20):
    body = rest
    n = hdrs.get("content-length")
    want = int(n) if n is not None and n.isdigit() else None
    while want is None or len(body) < want:
        try:
            c = s.recv(65536)
        except (ssl.SSLError, OSError):
            break
        if not c:
            break
        body += c
        if len(body) > limit:
            break
    return body[:want] if want is not None else body


def first_line(b):
    t = b.decode("utf-8", "replace").strip().splitlines()
    return t[0] if t else ""


def http_handshake(s, a):
    hp = "[%s]:%d" % (a.host, a.port) if ":" in a.host else \
        "%s:%d" % (a.host, a.port)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n"
               "User-Agent: socks_client.py\r\n\r\n" % (hp, hp)).encode())
    try:
        status, hdrs, rest = http_head(s)
    except Closed:
        out("closed", "connect")
        return False, b""
    out("status", status)
    if "x-gatekeeper-deny" in hdrs:
        out("deny", hdrs["x-gatekeeper-deny"])
    if status // 100 != 2:
        body = read_body(s, hdrs, rest, limit=65536)
        out("body", first_line(body))
        return False, b""
    return True, rest


def do_request(s, a, path, host):
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: socks_client.py"
               "\r\nConnection: close\r\n\r\n" % (path, host)).encode())
    status, hdrs, rest = http_head(s)
    body = read_body(s, hdrs, rest)
    out("status", status)
    out("len", len(body))
    out("sha256", hashlib.sha256(body).hexdigest())
    out("body", first_line(body[:200]))


def unescape(t):
    """--send text to bytes: \\r \\n \\t \\\\ \\xNN; the rest as is."""
    out, i = bytearray(), 0
    while i < len(t):
        c = t[i]
        if c == "\\" and i + 1 < len(t):
            n = t[i + 1]
            if n in "rnt\\":
                out += {"r": b"\r", "n": b"\n", "t": b"\t",
                        "\\": b"\\"}[n]
                i += 2
                continue
            if n == "x" and i + 3 < len(t):
                out.append(int(t[i + 2:i + 4], 16))
                i += 4
                continue
        out += c.encode("latin-1")
        i += 1
    return bytes(out)


def nhellos(got):
    t = bytes(got).decode("latin-1").replace("\r\n", "\n")
    return sum(1 for ln in t.split("\n") if ln.startswith("hello from "))


def raw_read(s, idle, deadline, got, done=None):
    """Read until idle seconds pass quietly (after done(got), when given),
    the peer ends or deadline; returns "closed", "reset" or "open"."""
    while time.monotonic() < deadline:
        wait = min(idle, deadline - time.monotonic())
        if done is not None and not done(got):
            wait = deadline - time.monotonic()
        r, _, _ = select.select([s], [], [], max(wait, 0))
        if not r:
            if done is not None and not done(got):
                continue
            return "open"
        try:
            d = s.recv(65536)
        except ConnectionResetError:
            return "reset"
        except OSError:
            return "reset"
        if not d:
            return "closed"
        got += d
    return "open"


def raw(s, a, left):
    got = bytearray(left)
    end = "open"
    deadline = time.monotonic() + a.timeout
    t1 = time.monotonic()
    sends = a.send or []
    for i, text in enumerate(sends):
        b = unescape(text)
        t1 = time.monotonic()
        try:
            s.sendall(b)
            out("raw_sent", "%d:%d" % (i + 1, len(b)))
        except OSError as e:
            out("raw_send_error", "%d:%s" % (i + 1, e.__class__.__name__))
            end = "reset" if isinstance(e, ConnectionResetError) else \
                "closed"
            break
        done = None
        if i == len(sends) - 1 and a.until_end:
            done = lambda g: False
        elif i == len(sends) - 1 and a.hellos:
            done = lambda g: nhellos(g) >= a.hellos
        elif i == len(sends) - 1 and a.bytes:
            done = lambda g: len(g) >= a.bytes
        end = raw_read(s, a.idle, deadline, got, done)
        if end != "open":
            break
    out("raw_recv", len(got))
    text = bytes(got).decode("latin-1")
    st = [ln.split(" ")[1] for ln in text.split("\r\n")
          if ln.startswith("HTTP/1.") and len(ln.split(" ")) > 1]
    out("raw_statuses", ",".join(st))
    hello = [ln[len("hello from "):].strip()
             for ln in text.replace("\r\n", "\n").split("\n")
             if ln.startswith("hello from ")]
    out("raw_hello", ",".join(hello))
    out("raw_end", end)
    out("raw_end_ms", int((time.monotonic() - t1) * 1000))
    return 0


def pipe(s, left):
    if left:
        os.write(1, left)
    fds = [0, s]
    up_open = True
    while True:
        r, _, _ = select.select(fds, [], [])
        if 0 in r:
            d = os.read(0, 65536)
            if not d:
                fds.remove(0)
                up_open = False
                try:
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
            else:
                s.sendall(d)
        if s in r:
            try:
                d = s.recv(65536)
            except OSError:
                d = b""
            if not d:
                return 0
            os.write(1, d)
        if not up_open and not fds:
            return 0


def main():
    p = argparse.ArgumentParser(add_help=True)
    p.add_argument("--via", choices=["socks", "http", "direct"],
                   default="socks")
    p.add_argument("--proxy")
    p.add_argument("--bind")
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--methods", default="00")
    p.add_argument("--user")
    p.add_argument("--password")
    p.add_argument("--cmd", type=int, default=1)
    p.add_argument("--atyp", type=int)
    p.add_argument("--sni")
    p.add_argument("--cafile")
    p.add_argument("--path", default="/")
    p.add_argument("--host-header")
    p.add_argument("--send", action="append")
    p.add_argument("--idle", type=float, default=0.5)
    p.add_argument("--until-end", action="store_true")
    p.add_argument("--hellos", type=int, default=0)
    p.add_argument("--bytes", type=int, default=0)
    p.add_argument("mode", choices=["connect", "banner", "tls", "http",
                                    "pipe", "hold", "raw"])
    p.add_argument("host")
    p.add_argument("port", type=int)
    a = p.parse_args()
    if a.user is not None and a.password is None:
        a.password = "x"
    proxy = a.proxy or ("127.0.0.1:1080" if a.via == "socks"
                        else "127.0.0.1:3128")
    ph, pp = proxy.rsplit(":", 1)
    if a.via == "direct":
        ph, pp = a.host, a.port
    t0 = time.monotonic()
    try:
        s = socket.create_connection((ph, int(pp)), timeout=a.timeout,
                                     source_address=(a.bind, 0)
                                     if a.bind else None)
    except OSError as e:
        out("proxy", "unreachable %s" % e)
        return 1
    s.settimeout(a.timeout)
    try:
        if a.via == "socks":
            ok, left = socks_handshake(s, a), b""
        elif a.via == "http":
            ok, left = http_handshake(s, a)
        else:
            ok, left = True, b""
    except socket.timeout:
        out("closed", "timeout")
        out("ms", int((time.monotonic() - t0) * 1000))
        return 0
    except (ConnectionResetError, BrokenPipeError) as e:
        out("closed", "reset %s" % e.__class__.__name__)
        out("ms", int((time.monotonic() - t0) * 1000))
        return 0
    out("ms", int((time.monotonic() - t0) * 1000))
    if a.mode == "connect":
        return 0
    if not ok:
        return 1 if a.mode == "pipe" else 0
    host_header = a.host_header or a.host
    try:
        if a.mode == "banner":
            buf = left
            while b"\n" not in buf:
                c = s.recv(256)
                if not c:
                    out("banner_closed", buf.decode("latin-1").strip())
                    return 0
                buf += c
            out("banner", buf.split(b"\n")[0].decode("latin-1").strip())
            out("banner_ms", int((time.monotonic() - t0) * 1000))
            return 0
        if a.mode == "hold":
            out("held", 1)
            # Until killed, the proxy closes the tunnel, or --timeout;
            # whatever the server sends (a banner) is read and dropped.
            end = time.monotonic() + a.timeout
            while time.monotonic() < end:
                r, _, _ = select.select([s], [], [], end - time.monotonic())
                if r and not s.recv(65536):
                    break
            s.close()
            return 0
        if a.mode == "pipe":
            s.settimeout(None)
            return pipe(s, left)
        if a.mode == "raw":
            return raw(s, a, left)
        if a.mode == "tls":
            ctx = ssl.create_default_context(cafile=a.cafile)
            sni = a.host if a.sni is None else a.sni
            if sni == "-":
                sni = None
                ctx.check_hostname = False
            try:
                t = ctx.wrap_socket(s, server_hostname=sni)
            except (ssl.SSLError, OSError, socket.timeout) as e:
                out("tls", "cut %s" % (str(e).replace("\n", " ") or
                                       e.__class__.__name__))
                return 0
            out("tls", "ok")
            try:
                do_request(t, a, a.path, host_header)
            except (Closed, ssl.SSLError, OSError, socket.timeout) as e:
                out("http", "cut %s" % (e.__class__.__name__))
            return 0
        if a.mode == "http":
            if left:
                out("note", "%d unexpected bytes before the request" %
                    len(left))
            try:
                do_request(s, a, a.path, host_header)
            except (Closed, OSError, socket.timeout) as e:
                out("http", "cut %s" % (e.__class__.__name__))
            return 0
    except socket.timeout:
        out("%s_timeout" % a.mode, 1)
        return 0
    except OSError as e:
        out("%s_error" % a.mode, e.__class__.__name__)
        return 0
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
