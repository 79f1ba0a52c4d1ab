# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the sourcing scripts
#
# peek_lib.sh: what the proxy integration tests (test_proxy_peek.sh
# through SOCKS5 and HTTP CONNECT, test_transparent_peek.sh on the
# transparent path) write into a tunnel to github.com to get a foreign
# Host or server name past gatekeeperd's peek: prefixes servers skip
# before a request line (blank bytes, PROXY protocol headers), requests
# after the first one on a kept-alive connection, and hellos no server
# name can be read from.
# Each is a socks_client.py --send string (backslash escapes \r \n \xNN).
#
# In both test internets nginx serves github.com and evil.example as
# name-based virtual hosts on every address: a request to github.com's
# address with "Host: evil.example" answers "hello from evil.example",
# the proof of an escape.

PK_GOOD='GET /index.html HTTP/1.1\r\nHost: github.com\r\nUser-Agent: peek\r\n\r\n'
PK_EVIL='GET /index.html HTTP/1.1\r\nHost: evil.example\r\nUser-Agent: peek\r\n\r\n'
PK_BLANK32='\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n'
PK_PROXY1='PROXY TCP4 192.0.2.1 192.0.2.10 50000 80\r\n'
# v2: signature, v2 PROXY over TCP4, 12 address bytes
PK_PROXY2='\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c\xc0\x00\x02\x01\xc0\x00\x02\x0a\xc3\x50\x00\x50'
PK_CHUNKED='POST /index.html HTTP/1.1\r\nHost: github.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'
PK_HTTP09='GET /index.html\r\n'
PK_PRI='PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
PK_CONNECT='CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n'
PK_H2C='GET /index.html HTTP/1.1\r\nHost: github.com\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n'
# An SSLv2-format ClientHello (RFC 5246 E.2) as TLS 1.0 clients sent it;
# no Debian 12 client can send one, so it is written out here.
PK_SSL2='\x80\x2e\x01\x03\x01\x00\x15\x00\x00\x00\x10\x00\x00\x39\x00\x00\x38\x00\x00\x35\x00\x00\x33\x00\x00\x32\x00\x00\x2f\x00\x00\xff\x5a\x17\x33\x0e\xc1\x42\x9d\x01\x6e\xb8\x04\x2c\x91\x7f\x20\xd3'
# A warning alert record (what some servers skip before a hello).
PK_ALERT='\x15\x03\x03\x00\x02\x01\x00'
# A line protocol's first line (on a port other than 80 it passes).
PK_LINE='EHLO client.example\r\n'

# pk_hexesc FILE: the file's bytes as \xNN escapes (a captured hello).
pk_hexesc() {
	"$PYTHON" -c 'import sys
print("".join("\\x%02x" % b for b in open(sys.argv[1], "rb").read()))' "$1"
}
