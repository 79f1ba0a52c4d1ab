#!/usr/bin/env python3
"""gkrun_phases.py: where a gk-run start goes, from `perf trace` files.

    gkrun_phases.py LABEL FILE...

Each FILE is the output of one
    perf trace --no-syscalls -e sched:sched_process_exec,\
        sched:sched_process_exit,syscalls:sys_enter_unshare,\
        syscalls:sys_exit_unshare,syscalls:sys_enter_pivot_root -- gk-run ...
run. Prints, for LABEL, the median over the files of each step, from
gk-run's exec to its exit (ms):

  start     gk-run's exec to its child's unshare (options, the view's plan)
  netns     the child's unshare of its user and network namespaces
  cage      from there to bwrap's exec (gated: gatekeeperd's cage over the
            control socket; the keeper; the seccomp filters)
  bwrap-ns  bwrap's exec to its first pivot_root (its namespaces)
  mounts    bwrap's first pivot_root to its second (the view's mounts)
  bwrap-go  from there to the command's exec (seccomp, status, block fd)
  command   the command's exec to its exit (/bin/true)
  end       the command's exit to gk-run's (teardown, reports)
  total     gk-run's exec to its exit
A file that lacks one of the events is skipped (said on stderr).
"""
import re
import statistics
import sys

LINE = re.compile(r"^\s*([0-9.]+)\s+(\S+)/(\d+)\s+([a-z_]+:[a-z_]+)\((.*)\)")
STEPS = ("start", "netns", "cage", "bwrap-ns", "mounts", "bwrap-go",
         "command", "end", "total")


def parse(path):
    ev = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m:
                ev.append((float(m.group(1)), m.group(2), int(m.group(3)),
                           m.group(4), m.group(5)))
    ev.sort(key=lambda e: e[0])
    main = next(e[2] for e in ev if e[3] == "sched:sched_process_exec")
    t = {}
    pivots = []
    for ts, comm, pid, name, args in ev:
        if name == "sched:sched_process_exec":
            if "gk-run" in args and "exec" not in t:
                t["exec"] = ts
            elif args.startswith('filename: "/usr/bin/bwrap"'):
                t.setdefault("bwrap", ts)
            elif "bwrap" in t and "cmd" not in t:
                t["cmd"] = ts
                t["cmdpid"] = pid
        elif name == "syscalls:sys_enter_unshare" and pid != main:
            t.setdefault("unshare", ts)
        elif name == "syscalls:sys_exit_unshare" and "unshare" in t:
            t.setdefault("unshared", ts)
        elif name == "syscalls:sys_enter_pivot_root":
            pivots.append(ts)
        elif name == "sched:sched_process_exit":
            if pid == t.get("cmdpid"):
                t.setdefault("cmdexit", ts)
            if pid == main:
                t["end"] = ts
    if len(pivots) < 2:
        raise ValueError("no two pivot_root calls")
    t["pivot1"], t["pivot2"] = pivots[0], pivots[1]
    marks = ("exec", "unshare", "unshared", "bwrap", "pivot1", "pivot2",
             "cmd", "cmdexit", "end")
    missing = [k for k in marks if k not in t]
    if missing:
        raise ValueError("missing " + ",".join(missing))
    out = [t[b] - t[a] for a, b in zip(marks, marks[1:])]
    out.append(t["end"] - t["exec"])
    return out


def main():
    label, files = sys.argv[1], sys.argv[2:]
    rows = []
    for p in files:
        try:
            rows.append(parse(p))
        except (ValueError, StopIteration) as e:
            print("gkrun_phases: %s: %s" % (p, e), file=sys.stderr)
    if not rows:
        print("  %s: no complete trace" % label)
        return 1
    med = [statistics.median(col) for col in zip(*rows)]
    print("  %-6s %s  (medians of %d, ms)" % (label, "  ".join(
        "%s %.2f" % (s, v) for s, v in zip(STEPS, med)), len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
