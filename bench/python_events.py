#!/usr/bin/env python3
"""Events per second through the Python package: iterate N events (default 10 M) of a trace
written with uscope.Writer, and print the rate.

    USCOPE_LIBRARY=build/release/libuscope.so PYTHONPATH=python python3 bench/python_events.py [N] [trace]

The trace (default: /tmp/uscope_python_events_<N>.uscope) is written once and reused: 4
events per cycle, each with a 12-byte payload (u32 id, u64 address), 1 ns clock, a segment
every 10,000 cycles, plus one slot_set per cycle so that the replay also skips ops. Writing
it makes one ctypes call per event; the figure measured is the reading only: Trace.events()
pulls 8,192 items per uscope_replay_fill call and builds the (time_ps, type, payload)
tuples without a Python statement per event.
"""
import os
import struct
import sys
import time

import uscope

EVENTS_PER_CYCLE = 4


def write(path, n):
    s = uscope.Schema()
    s.add_clock("clk", 1000)
    s.add_scope("top")
    rob = s.add_storage("rob", [("pc", "u64")], num_slots=16)
    ev = s.add_event("retire", [("id", "u32"), ("addr", "u64")])
    pack = struct.Struct("<IQ").pack
    cycles = (n + EVENTS_PER_CYCLE - 1) // EVENTS_PER_CYCLE
    tmp = path + ".tmp"
    with uscope.Writer(tmp, s, checkpoint_interval_ps=10_000_000) as w:
        k = 0
        for c in range(cycles):
            w.begin_cycle(c * 1000)
            w.slot_set(rob, c & 15, 0, 0x80000000 + 4 * c)
            for _ in range(min(EVENTS_PER_CYCLE, n - k)):
                w.event(ev, pack(k, 0x1000 + 8 * k))
                k += 1
            w.end_cycle()
    os.replace(tmp, path)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    path = sys.argv[2] if len(sys.argv) > 2 else "/tmp/uscope_python_events_%d.uscope" % n
    if not os.path.exists(path):
        t = time.perf_counter()
        write(path, n)
        print("wrote %s (%d events) in %.1f s" % (path, n, time.perf_counter() - t))
    with uscope.Trace(path) as tr:
        best = None
        for _ in range(3):
            t = time.perf_counter()
            count = 0
            last = None
            for ev in tr.events():
                count += 1
                last = ev
            dt = time.perf_counter() - t
            best = dt if best is None else min(best, dt)
        assert count == n, (count, n)
        assert struct.unpack("<IQ", last[2])[0] == n - 1
        print("python events: %d events in %.3f s (best of 3): %.2f M events/s"
              % (count, best, count / best / 1e6))


if __name__ == "__main__":
    main()
