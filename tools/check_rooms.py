#!/usr/bin/python3
"""Fails when a source file includes a room above its own, or rooms include each other in a cycle.

    tools/check_rooms.py [--root DIR]     check the checkout (exit 1 and list each offence)
    tools/check_rooms.py --self-test      prove the check fails on planted offences

The rooms and their order (README, "Architecture"): a room may include its
own files and the rooms below it, never one above it nor a peer on its own
level — peers that include each other are how cycles start.

    level 0  common
    level 1  db, index, encoder,       (peers: none includes another)
             clients                   (the C++ client library: proto and common only)
    level 2  engine, adapt             (peers: adapt trains and measures on a
                                        collection without the engine)
    level 3  cluster                   (shards and replicas over the engine, on
                                        NATS JetStream)
    level 4  api
    level 5  tools, research           (the CLI and what users and CI run; research
                                        and data building: peers, neither includes
                                        the other)
    level 6  tests, bench              (may include anything below)

proto/ is generated code every room may include. Includes are the quoted
ones (`#include "room/..."`); system headers are not rooms. A file outside
every room is an error too, so a new top-level folder must be placed here
before its code can land.
"""

import argparse
import os
import re
import sys
import tempfile

ROOMS = [
    ("common", "common", 0),
    ("db", "db", 1),
    ("index", "index", 1),
    ("encoder", "encoder", 1),
    ("clients", "clients", 1),
    ("engine", "engine", 2),
    ("adapt", "adapt", 2),
    ("cluster", "cluster", 3),
    ("api", "api", 4),
    ("tools", "tools", 5),
    ("research", "research", 5),
    ("tests", "tests", 6),
    ("bench", "bench", 6),
]
SHARED = ("proto",)  # generated stubs: includable from anywhere
SOURCES = (".h", ".cc", ".cu", ".cuh", ".hpp", ".cpp")
SKIP_DIRS = {".git", "third_party"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(path):
    for prefix, name, level in ROOMS:
        if path == prefix or path.startswith(prefix + "/"):
            return name, level
    return None


def sources(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS
                             and not (rel_dir == "." and d.startswith("build")))
        for f in sorted(filenames):
            if f.endswith(SOURCES):
                yield os.path.normpath(os.path.join(rel_dir, f))


def check(root):
    offences, edges = [], {}
    for path in sources(root):
        if path.split(os.sep)[0] in SHARED:
            continue
        own = room_of(path)
        if own is None:
            offences.append("%s: in no room (add its folder to tools/check_rooms.py)" % path)
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or "/" not in m.group(1) or m.group(1).split("/")[0] in SHARED:
                    continue
                target = room_of(m.group(1))
                if target is None or target[0] == own[0]:
                    continue
                edges.setdefault(own[0], set()).add(target[0])
                if target[1] > own[1] or (target[1] == own[1] and own[1] < 5):
                    offences.append("%s:%d: %s (level %d) includes %s from %s (level %d)" % (
                        path, lineno, own[0], own[1], m.group(1), target[0], target[1]))
    for cycle in cycles(edges):
        offences.append("include cycle between rooms: " + " -> ".join(cycle + cycle[:1]))
    return offences


def cycles(edges):
    """Every strongly connected set of more than one room (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def self_test():
    """The check passes a clean tree and names each planted offence."""
    cases = {
        "clean": ({"common/a.h": "", "index/b.cc": '#include "common/a.h"\n',
                   "engine/c.cc": '#include "index/b.h"\n#include "proto/x.pb.h"\n',
                   "api/d.cc": '#include "engine/c.h"\n', "tests/t.cc": '#include "api/d.h"\n'},
                  []),
        "upward": ({"common/a.cc": '#include "encoder/encoder.h"\n'},
                   ["common (level 0) includes encoder/encoder.h"]),
        "engine into api": ({"engine/e.cc": '#include "api/server.h"\n'},
                            ["engine (level 2) includes api/server.h"]),
        "peers": ({"db/s.cc": '#include "index/metric.h"\n',
                   "index/metric.cc": '#include "db/s.h"\n'},
                  ["db (level 1) includes index/metric.h", "index (level 1) includes db/s.h",
                   "include cycle between rooms: db -> index"]),
        "product into tools": ({"api/x.cc": '#include "tools/neodb/a.h"\n'},
                               ["api (level 4) includes tools/neodb/a.h"]),
        "engine into cluster": ({"engine/k.cc": '#include "cluster/shard_log.h"\n'},
                                ["engine (level 2) includes cluster/shard_log.h"]),
        "adapt beside engine": ({"adapt/j.cc": '#include "engine/database.h"\n'},
                                ["adapt (level 2) includes engine/database.h"]),
        "client into server": ({"clients/cpp/c.cc": '#include "api/grpc_status.h"\n'},
                               ["clients (level 1) includes api/grpc_status.h"]),
        "no room": ({"newroom/x.cc": ""}, ["newroom/x.cc: in no room"]),
    }
    failed = 0
    for name, (files, expected) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            for path, text in files.items():
                os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(text)
            got = check(root)
        ok = len(got) == len(expected) and all(any(e in g for g in got) for e in expected)
        print("%-20s %s" % (name, "ok" if ok else "FAILED: got %s" % got))
        failed += not ok
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    offences = check(a.root)
    for o in offences:
        print(o)
    print("check_rooms: %d files, %d offences" % (sum(1 for _ in sources(a.root)), len(offences)))
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
