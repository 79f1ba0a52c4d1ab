#!/bin/bash
# Regenerate the captured DNS messages in this directory: dnsmasq serves
# local records on 127.0.0.1:$PORT, a small python3 UDP relay on
# 127.0.0.1:$RELAY records the raw bytes of each dig query and of
# dnsmasq's reply as <case>.query.bin / <case>.answer.bin.
# Loopback only; dnsmasq is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")"
PORT=${PORT:-53531}	# recursive-style answers (CNAME chains followed)
AUTH=${AUTH:-53533}	# authoritative answers (SOA in NXDOMAIN/NODATA)
RELAY=${RELAY:-53532}

big=()
for i in $(seq 1 12); do
	big+=(--txt-record=big.example.test,"$(printf 'record%02d-%0200d' "$i" 0)")
done

records=(--host-record=web.example.test,10.0.0.5,fd00::5
    --host-record=other.example.test,10.9.9.9
    --cname=www.example.test,alias.example.test
    --cname=alias.example.test,web.example.test
    --txt-record=txt.example.test,"hello world"
    "${big[@]}")
common=(--keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts
    --pid-file= --listen-address=127.0.0.1 --bind-interfaces
    --local-ttl=300 --edns-packet-max=4096)
dnsmasq "${common[@]}" --port="$PORT" "${records[@]}" &
pids=($!)
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true' EXIT
dnsmasq "${common[@]}" --port="$AUTH" "${records[@]}" \
    --auth-server=ns.example.test,127.0.0.1 --auth-zone=example.test \
    --auth-soa=2024010101,hostmaster.example.test,1200,180,1209600 \
    --auth-ttl=300 &
pids+=($!)
sleep 0.5

python3 - "$PORT" "$AUTH" "$RELAY" <<'PY'
import socket, subprocess, sys

port, auth, relay = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
cases = [
    ("a_web", ["web.example.test", "A"]),
    ("aaaa_web", ["web.example.test", "AAAA"]),
    ("cname_chain", ["www.example.test", "A"]),
    ("cname_chain_aaaa", ["www.example.test", "AAAA"]),
    ("nxdomain", ["nope.example.test", "A"], auth),
    ("nodata", ["web.example.test", "MX"], auth),
    ("cname_auth", ["www.example.test", "A"], auth),
    ("txt", ["txt.example.test", "TXT"]),
    ("txt_big", ["big.example.test", "TXT", "+bufsize=4096", "+ignore"]),
    ("noedns", ["web.example.test", "A", "+noedns"]),
    ("edns512", ["web.example.test", "A", "+bufsize=512", "+nocookie"]),
    ("edns4096", ["web.example.test", "A", "+bufsize=4096"]),
    ("edns_v1", ["web.example.test", "A", "+edns=1", "+noednsneg"]),
    ("mixed_case", ["WeB.ExAmPle.TeSt", "A"]),
    ("any", ["web.example.test", "ANY", "+notcp"]),
    ("https", ["web.example.test", "TYPE65"], auth),
    ("opcode_status", ["web.example.test", "A", "+opcode=status"]),
]
up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
up.settimeout(2)
srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
srv.bind(("127.0.0.1", relay))
srv.settimeout(5)
for case in cases:
    name, args, server = case[0], case[1], case[2] if len(case) > 2 else port
    dig = subprocess.Popen(["dig", "@127.0.0.1", "-p", str(relay),
                            "+tries=1", "+time=2"] + args,
                           stdout=subprocess.DEVNULL)
    query, client = srv.recvfrom(65535)
    open(name + ".query.bin", "wb").write(query)
    up.sendto(query, ("127.0.0.1", server))
    try:
        answer = up.recv(65535)
        open(name + ".answer.bin", "wb").write(answer)
        srv.sendto(answer, client)
    except socket.timeout:
        print(name + ": no answer")
    dig.wait()
    print("%-18s query %4d bytes" % (name, len(query)))
PY
