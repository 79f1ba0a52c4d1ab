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

# ---- TLS 1.3 HelloRetryRequest -------------------------------------------
# A second nginx on PK_HRR_PORT serves github.com and evil.example (the
# same certificate) and takes only secp256r1 key shares: a client whose
# first ClientHello offers only an x25519 one gets a HelloRetryRequest.
# hrr_client.py then sends a second ClientHello naming what it likes.
PK_HRR_PORT=9443

# pk_hrr_nginx ERR DIR NSPID VAR ADDR: that nginx in the netns of NSPID
# (VAR gets its pid), DIR/pki's certificate; ready when curl offering
# X25519 first gets "hello from github.com" from ADDR (bounded: 10 s).
pk_hrr_nginx() {
	local err=$1 dir=$2 nspid=$3 var=$4 addr=$5 c=$2/nginx-hrr.conf n i
	mkdir -p "$dir/nginx-hrr-tmp" || return 1
	{
		cat <<CONF
daemon off;
master_process on;
worker_processes 1;
user root;
pid $dir/nginx-hrr.pid;
error_log $dir/nginx-hrr-error.log info;
events { worker_connections 64; }
http {
	access_log $dir/nginx-hrr-access.log;
	client_body_temp_path $dir/nginx-hrr-tmp/body;
	proxy_temp_path $dir/nginx-hrr-tmp/proxy;
	fastcgi_temp_path $dir/nginx-hrr-tmp/fastcgi;
	uwsgi_temp_path $dir/nginx-hrr-tmp/uwsgi;
	scgi_temp_path $dir/nginx-hrr-tmp/scgi;
	default_type text/plain;
	ssl_certificate $dir/pki/server.crt;
	ssl_certificate_key $dir/pki/server.key;
	ssl_protocols TLSv1.3;
	ssl_ecdh_curve prime256v1;
	server {
		listen $PK_HRR_PORT ssl default_server;
		server_name _;
		return 421 "no such site\n";
	}
CONF
		for n in github.com evil.example; do
			printf '\tserver {\n\t\tlisten %s ssl;\n\t\tserver_name %s;\n' \
				"$PK_HRR_PORT" "$n"
			printf '\t\treturn 200 "hello from %s\\n";\n\t}\n' "$n"
		done
		echo "}"
	} >"$c"
	inet_bg "$var" "$nspid" "$dir/nginx-hrr.stderr" \
		nginx -p "$dir/" -c "$c" -e "$dir/nginx-hrr-error.log"
	for ((i = 0; i < 100; i++)); do
		if ! kill -0 "${!var}" 2>/dev/null; then
			"$err" "nginx (HelloRetryRequest) exited:"
			tail -n 20 "$dir/nginx-hrr.stderr" "$dir/nginx-hrr-error.log" >&2
			return 1
		fi
		if curl -sf --noproxy '*' --max-time 2 --cacert "$dir/ca.crt" \
		    --curves X25519:P-256 \
		    --resolve "github.com:$PK_HRR_PORT:$addr" -o /dev/null \
		    "https://github.com:$PK_HRR_PORT/" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	"$err" "nginx (HelloRetryRequest) did not answer within 10 s"
	return 1
}
