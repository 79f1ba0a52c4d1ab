#!/usr/bin/env python3
"""framing_client.py: how a proxy handshake arrives, for test_proxy.sh.
Clients do not all send a handshake the way curl does: some send it a
byte at a time (a slow link, a naive client), some send everything at
once without waiting for the replies (optimistic SOCKS5 clients, a
CONNECT followed at once by its first request). Real bytes over a real
socket, every wait bounded.

usage: framing_client.py --bind SRC --proxy ADDR:PORT MODE HOST PORT

MODE
  socks-dribble     SOCKS5 greeting and CONNECT one byte at a time
                    (2 ms apart), then GET / once the reply is read
  socks-pipelined   greeting, CONNECT and GET / in one send
  http-dribble      HTTP CONNECT head one byte at a time, then GET /
  http-pipelined    HTTP CONNECT head and GET / in one send
  http-bighead      an absolute-form GET whose head is 20,000 bytes

Prints "status=NNN" (the origin's, or the proxy's for http-bighead),
"bytes=N" (of the response) or "error=WHAT".
"""
import argparse
import socket
import struct
import sys
import time


def read_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError("closed after %d of %d bytes" % (len(b), n))
        b += c
    return b


def read_head(s, rest=b""):
    b = rest
    while b"\r\n\r\n" not in b:
        c = s.recv(4096)
        if not c:
            raise EOFError("closed in a response head")
        b += c
        if len(b) > 65536:
            raise ValueError("response head too long")
    head, rest = b.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def read_all(s, rest):
    b = rest
    while True:
        c = s.recv(65536)
        if not c:
            return b
        b += c


def send_slowly(s, data):
    for i in range(len(data)):
        s.sendall(data[i:i + 1])
        time.sleep(0.002)


def socks_connect(host, port):
    h = host.encode()
    return b"\x05\x01\x00\x03" + bytes([len(h)]) + h + struct.pack(">H", port)


def get(host):
    return ("GET / HTTP/1.0\r\nHost: %s\r\n\r\n" % host).encode()


def status_of(head):
    parts = head.split("\r\n", 1)[0].split(" ")
    return parts[1] if len(parts) > 1 else "?"


def origin_response(s, rest=b""):
    head, rest = read_head(s, rest)
    body = read_all(s, rest)
    print("status=%s" % status_of(head))
    print("bytes=%d" % len(body))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bind", required=True)
    p.add_argument("--proxy", required=True)
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("mode", choices=["socks-dribble", "socks-pipelined",
                                    "http-dribble", "http-pipelined",
                                    "http-bighead"])
    p.add_argument("host")
    p.add_argument("port", type=int)
    a = p.parse_args()
    ph, pp = a.proxy.rsplit(":", 1)
    s = socket.socket()
    s.settimeout(a.timeout)
    s.bind((a.bind, 0))
    s.connect((ph, int(pp)))
    greet = b"\x05\x01\x00"
    conn = ("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" %
            (a.host, a.port, a.host, a.port)).encode()
    if a.mode == "socks-dribble":
        send_slowly(s, greet)
        if read_exact(s, 2) != b"\x05\x00":
            raise ValueError("method refused")
        send_slowly(s, socks_connect(a.host, a.port))
        rep = read_exact(s, 10)
        if rep[1] != 0:
            raise ValueError("rep=0x%02x" % rep[1])
        s.sendall(get(a.host))
        origin_response(s)
    elif a.mode == "socks-pipelined":
        s.sendall(greet + socks_connect(a.host, a.port) + get(a.host))
        if read_exact(s, 2) != b"\x05\x00":
            raise ValueError("method refused")
        rep = read_exact(s, 10)
        if rep[1] != 0:
            raise ValueError("rep=0x%02x" % rep[1])
        origin_response(s)
    elif a.mode in ("http-dribble", "http-pipelined"):
        if a.mode == "http-dribble":
            send_slowly(s, conn)
        else:
            s.sendall(conn + get(a.host))
        head, rest = read_head(s)
        if status_of(head) != "200":
            raise ValueError("CONNECT answered %s" % status_of(head))
        if a.mode == "http-dribble":
            s.sendall(get(a.host))
        origin_response(s, rest)
    else:
        filler = "X-Filler: " + "a" * 19900 + "\r\n"
        req = ("GET http://%s:%d/ HTTP/1.1\r\nHost: %s:%d\r\n%s\r\n" %
               (a.host, a.port, a.host, a.port, filler)).encode()
        s.sendall(req)
        head, rest = read_head(s)
        print("status=%s" % status_of(head))
        print("bytes=%d" % len(read_all(s, rest)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, EOFError, ValueError) as e:
        print("error=%s" % str(e).replace("\n", " "))
        sys.exit(1)
