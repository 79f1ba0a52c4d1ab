#!/bin/bash
# Regenerate the captured TLS ClientHellos in this directory. A python3 TCP
# listener on 127.0.0.1:$PORT accepts one connection per case, reads until
# the handshake records hold a complete ClientHello (or 3 s pass), writes
# the raw bytes to <case>.bin and closes; the client then fails its
# handshake, which is expected. Names resolve to 127.0.0.1 through each
# client's own option (--resolve, http.curloptResolve): loopback only, no
# DNS, no /etc/hosts change. Afterwards the synthetic GREASE and ECH
# variants are derived from curl_h2.bin (see README.md).
set -euo pipefail
cd "$(dirname "$0")"
PORT=${PORT:-48443}

python3 - "$PORT" <<'PY'
import os, socket, subprocess, sys, threading

port = int(sys.argv[1])
dn = subprocess.DEVNULL
url = lambda h: "https://%s:%d/x" % (h, port)
res = lambda h: "%s:%d:127.0.0.1" % (h, port)
ossl = ["openssl", "s_client", "-connect", "127.0.0.1:%d" % port]
alpn = ",".join("proto-%03d-padding-for-fragmentation" % i for i in range(40))
pyc = ("import ssl,socket,sys\n"
       "s=socket.create_connection(('127.0.0.1',%d))\n"
       "try:\n ssl.create_default_context().wrap_socket(s,"
       "server_hostname=sys.argv[1])\nexcept Exception: pass\n" % port)
cases = [
    ("curl_h2", ["curl", "-sk", "--max-time", "3", "--resolve",
                 res("web.example.test"), url("web.example.test")]),
    ("curl_tls12", ["curl", "-sk", "--max-time", "3", "--tlsv1.2",
                    "--tls-max", "1.2", "--http1.1", "--resolve",
                    res("tls12.example.test"), url("tls12.example.test")]),
    ("curl_ip", ["curl", "-sk", "--max-time", "3", url("127.0.0.1")]),
    ("openssl_sni", ossl + ["-servername", "api.example.test"]),
    ("openssl_nosni", ossl + ["-noservername"]),
    ("openssl_mixed", ossl + ["-servername", "MiXeD-1.Example.TEST."]),
    ("openssl_tls12", ossl + ["-tls1_2", "-servername", "old.example.test"]),
    ("openssl_frag", ossl + ["-max_send_frag", "512", "-alpn", alpn,
                             "-servername", "frag.example.test"]),
    ("git_gnutls", ["git", "-c", "http.curloptResolve=" +
                    res("git.example.test"), "ls-remote",
                    url("git.example.test")]),
    ("wget_gnutls", ["wget", "-q", "-O", "-", "--tries=1", "--timeout=3",
                     "--no-check-certificate", url("localhost")]),
    ("python_ssl", ["python3", "-c", pyc, "py.example.test"]),
]

def complete(b):
    """True once the handshake records hold the whole first message."""
    pos, hs = 0, b""
    while len(b) - pos >= 5 and b[pos] == 0x16:
        n = int.from_bytes(b[pos + 3:pos + 5], "big")
        if len(b) - pos - 5 < n:
            return False
        hs += b[pos + 5:pos + 5 + n]
        pos += 5 + n
        if len(hs) >= 4 and len(hs) >= 4 + int.from_bytes(hs[1:4], "big"):
            return True
    return len(b) > 0 and b[0] != 0x16

srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(1)
srv.settimeout(10)
for name, argv in cases:
    p = subprocess.Popen(argv, stdin=dn, stdout=dn, stderr=dn)
    c, _ = srv.accept()
    c.settimeout(3)
    data = b""
    try:
        while not complete(data):
            d = c.recv(65536)
            if not d:
                break
            data += d
    except socket.timeout:
        pass
    c.close()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    open(name + ".bin", "wb").write(data)
    print("%-16s %5d bytes" % (name, len(data)))
srv.close()
PY

# Synthetic variants of curl_h2.bin (one record, no GREASE, no ECH).
python3 - <<'PY'
def u16(v):
    return v.to_bytes(2, "big")

def split(body):
    p = 34
    p += 1 + body[p]
    ncs = int.from_bytes(body[p:p + 2], "big")
    head, cs = body[:p], body[p + 2:p + 2 + ncs]
    p += 2 + ncs
    comp = body[p:p + 1 + body[p]]
    p += 1 + body[p]
    ext = body[p + 2:]
    exts = []
    while ext:
        n = int.from_bytes(ext[2:4], "big")
        exts.append(ext[:4 + n])
        ext = ext[4 + n:]
    return head, cs, comp, exts

def join(head, cs, comp, exts):
    e = b"".join(exts)
    body = head + u16(len(cs)) + cs + comp + u16(len(e)) + e
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + u16(len(hs)) + hs

rec = open("curl_h2.bin", "rb").read()
head, cs, comp, exts = split(rec[9:])
# GREASE placed as Chromium places it: a GREASE cipher suite first, GREASE
# extensions first (empty) and last (one zero byte).
grease = [b"\x3a\x3a\x00\x00"] + exts + [b"\xea\xea\x00\x01\x00"]
open("grease_synth.bin", "wb").write(
    join(head, b"\x0a\x0a" + cs, comp, grease))
# ECH outer extension (draft-ietf-tls-esni-18 layout): type outer (0),
# HPKE KDF 1 / AEAD 1, config id, a 32-byte enc and a 144-byte payload.
ech = (b"\x00" + u16(1) + u16(1) + b"\x2a" + u16(32) + bytes(range(32)) +
       u16(144) + bytes((7 * i) & 0xff for i in range(144)))
open("ech_synth.bin", "wb").write(
    join(head, cs, comp, exts + [u16(0xfe0d) + u16(len(ech)) + ech]))
print("grease_synth, ech_synth written")
PY
