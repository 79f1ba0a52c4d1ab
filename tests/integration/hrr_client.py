#!/usr/bin/env python3
"""hrr_client.py: a TLS 1.3 client that makes a server ask for a
HelloRetryRequest and answers it with a second ClientHello of its own
choosing, for gatekeeper's peek tests (test_proxy_peek.sh,
test_transparent_peek.sh). Raw bytes over a real socket (SOCKS5 and HTTP
CONNECT come from socks_client.py); no handshake is finished.

usage: hrr_client.py [OPTIONS] HOST PORT SNI1 SNI2

  --via socks|http|direct  as socks_client.py (default socks)
  --proxy ADDR:PORT, --bind SRC, --timeout S (per step, default 10)
  --no-ccs             no change_cipher_spec record before the second
                       hello (it is sent by default, as TLS 1.3 clients
                       in middlebox compatibility mode do)

ClientHello 1 names SNI1 ("-": none) and offers the groups x25519 and
secp256r1 with a key share for x25519 only; a server that wants
secp256r1 answers with a HelloRetryRequest. ClientHello 2 names SNI2
("-": none) with a key share for the group asked for (and the cookie,
if one came). Prints key=value lines:
  tunnel=ok|refused           the proxy's answer
  first=hrr|server_hello|alert|closed|reset|timeout|other
  group=0xNNNN                the group the HelloRetryRequest asks for
  after=server_hello|hrr|alert|closed|reset|timeout|other
                              the first record after ClientHello 2 other
                              than the server's change_cipher_spec
  after_ms=N                  from the second hello to that
Exit status: 0 when the proxy's answer was read, 1 otherwise.
"""

import argparse
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import socks_client  # noqa: E402

HRR_RANDOM = bytes.fromhex(
    "cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c")
X25519, P256 = 0x001d, 0x0017
# a public key on each curve (the base point: we never finish)
KEYS = {
    X25519: bytes([9]) + bytes(31),
    P256: bytes.fromhex(
        "04"
        "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
        "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"),
}


def out(k, v):
    print("%s=%s" % (k, v), flush=True)


def u16(n):
    return n.to_bytes(2, "big")


def vec16(b):
    return u16(len(b)) + b


def ext(t, body):
    return u16(t) + vec16(body)


def client_hello(rnd, sid, sni, group, cookie):
    exts = b""
    if sni != "-":
        h = sni.encode()
        exts += ext(0, vec16(b"\x00" + vec16(h)))
    exts += ext(10, vec16(u16(X25519) + u16(P256)))
    exts += ext(13, vec16(b"".join(u16(x) for x in
                                   (0x0403, 0x0804, 0x0401, 0x0503, 0x0805,
                                    0x0501, 0x0806, 0x0601))))
    exts += ext(43, bytes([2]) + u16(0x0304))
    exts += ext(45, bytes([1, 1]))
    exts += ext(51, vec16(u16(group) + vec16(KEYS[group])))
    if cookie is not None:
        exts += ext(44, cookie)
    body = (u16(0x0303) + rnd + bytes([len(sid)]) + sid +
            vec16(u16(0x1301) + u16(0x1302) + u16(0x1303)) + b"\x01\x00" +
            vec16(exts))
    hs = bytes([1]) + len(body).to_bytes(3, "big") + body
    return bytes([22, 3, 1]) + vec16(hs)


class Reader:
    def __init__(self, s, rest, timeout):
        self.s, self.buf, self.timeout = s, rest, timeout

    def record(self):
        """(type, payload), or a word: closed, reset, timeout."""
        deadline = time.monotonic() + self.timeout
        while True:
            if len(self.buf) >= 5:
                n = int.from_bytes(self.buf[3:5], "big")
                if len(self.buf) >= 5 + n:
                    r = (self.buf[0], self.buf[5:5 + n])
                    self.buf = self.buf[5 + n:]
                    return r
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            self.s.settimeout(left)
            try:
                c = self.s.recv(65536)
            except socket.timeout:
                return "timeout"
            except ConnectionResetError:
                return "reset"
            if not c:
                return "closed"
            self.buf += c


def what(rec):
    """A record's name, and the HelloRetryRequest's group and cookie."""
    if isinstance(rec, str):
        return rec, None, None
    t, p = rec
    if t == 21:
        return "alert", None, None
    if t != 22 or len(p) < 38 or p[0] != 2:
        return "other", None, None
    if p[6:38] != HRR_RANDOM:
        return "server_hello", None, None
    group, cookie = None, None
    i = 38
    i += 1 + p[i]           # legacy_session_id_echo
    i += 2 + 1 + 2          # cipher_suite, compression, extensions length
    while i + 4 <= len(p):
        et, n = int.from_bytes(p[i:i + 2], "big"), int.from_bytes(
            p[i + 2:i + 4], "big")
        d = p[i + 4:i + 4 + n]
        if et == 51 and n == 2:
            group = int.from_bytes(d, "big")
        elif et == 44:
            cookie = d
        i += 4 + n
    return "hrr", group, cookie


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--via", choices=["socks", "http", "direct"],
                   default="socks")
    p.add_argument("--proxy")
    p.add_argument("--bind")
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--no-ccs", action="store_true")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("sni1")
    p.add_argument("sni2")
    a = p.parse_args()
    a.methods, a.user, a.password, a.cmd, a.atyp = "00", None, None, 1, None
    if a.via == "direct":
        target = (a.host, a.port)
    else:
        hp = a.proxy or ("127.0.0.1:1080" if a.via == "socks" else
                         "127.0.0.1:3128")
        h, _, pt = hp.rpartition(":")
        target = (h, int(pt))
    try:
        s = socket.create_connection(
            target, timeout=a.timeout,
            source_address=(a.bind, 0) if a.bind else None)
    except OSError as e:
        out("error", "connect %s" % e)
        return 1
    rest = b""
    if a.via == "socks":
        ok = socks_client.socks_handshake(s, a)
    elif a.via == "http":
        ok, rest = socks_client.http_handshake(s, a)
    else:
        ok = True
    out("tunnel", "ok" if ok else "refused")
    if not ok:
        return 0
    rnd, sid = os.urandom(32), os.urandom(32)
    s.sendall(client_hello(rnd, sid, a.sni1, X25519, None))
    rd = Reader(s, rest, a.timeout)
    first, group, cookie = what(rd.record())
    out("first", first)
    if first != "hrr" or group is None:
        return 0
    out("group", "0x%04x" % group)
    if group not in KEYS:
        return 0
    ch2 = client_hello(rnd, sid, a.sni2, group, cookie)
    if not a.no_ccs:
        ch2 = bytes([20, 3, 3, 0, 1, 1]) + ch2
    t0 = time.monotonic()
    try:
        s.sendall(ch2)
    except OSError as e:
        out("send_error", e)
    while True:
        rec = rd.record()
        if isinstance(rec, tuple) and rec[0] == 20:
            continue        # the server's change_cipher_spec after HRR
        break
    out("after", what(rec)[0])
    out("after_ms", int((time.monotonic() - t0) * 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
