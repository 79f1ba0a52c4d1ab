#!/usr/bin/env python3
"""ask_supervisor.py: a supervisor for gk-run --ask, as an agent's would be.

    ask_supervisor.py EVENTS DECISIONS LOG ANSWER [DELAY]

Reads gk-run's --events-fd lines from the file EVENTS (a FIFO), appends
every line to LOG, and answers each {"event":"ask"} line by writing
{"id":..., "decision": ANSWER} to DECISIONS (a FIFO gk-run reads as
--decisions-fd), DELAY seconds after the question came (default 0).
ANSWER is once, run, save or deny, "none" (never answer: the question
times out), or HOST=ANSWER,... (per host; others: none). Ends at the
events' EOF (gk-run exited), or after 110 s whatever happens.
"""

import json
import os
import select
import sys
import time


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    events, decisions, log, answer = sys.argv[1:5]
    delay = float(sys.argv[5]) if len(sys.argv) == 6 else 0.0
    per_host = {}
    if "=" in answer:
        for item in answer.split(","):
            host, _, what = item.partition("=")
            per_host[host] = what
        answer = "none"
    deadline = time.monotonic() + 110
    # gk-run's side opens EVENTS for writing first, then DECISIONS for
    # reading: open them in the same order, or both sides wait forever.
    ev = os.open(events, os.O_RDONLY)
    dec = os.open(decisions, os.O_WRONLY)
    pending = []        # (due, line)
    buf = b""
    with open(log, "a", encoding="utf-8") as out:
        while time.monotonic() < deadline:
            now = time.monotonic()
            while pending and pending[0][0] <= now:
                os.write(dec, pending.pop(0)[1])
            wait = min([p[0] for p in pending] + [deadline]) - now
            ready, _, _ = select.select([ev], [], [], max(wait, 0))
            if not ready:
                continue
            chunk = os.read(ev, 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                text = line.decode("utf-8", "replace")
                out.write(text + "\n")
                out.flush()
                try:
                    e = json.loads(text)
                except ValueError:
                    continue
                if e.get("event") != "ask":
                    continue
                what = per_host.get(e.get("host"), answer)
                if what == "none":
                    continue
                reply = json.dumps({"id": e["id"], "decision": what})
                pending.append((time.monotonic() + delay,
                                (reply + "\n").encode()))
                pending.sort(key=lambda p: p[0])
    os.close(dec)
    os.close(ev)


if __name__ == "__main__":
    main()
