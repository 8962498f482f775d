"""A replayed log's fault stream against a heap of every slot's next fault, at 600k GPUs.

``hourly.sources.LogFaults`` sorts a window of faults at a time; the baseline
is what it replaced, a heap of ``(time, slot)`` holding each live slot's
next fault (about 43,000 live slots of the shipped trace's bootstrap copies at
75,000 nodes), one ``heapreplace`` per fault.  Both in this process, over the
faults of one window; the sequences must agree.  Measured 5-7x on a
loaded 2-core machine (the heap's cost is cache misses, so it varies).

Run: ``PYTHONPATH=. python bench/bench_log_faults.py``.
"""

from __future__ import annotations

import heapq
import time

import numpy as np

import spare_theory as st
from spare_theory.hourly.sources import LogFaults
from spare_theory.traces.pools import fault_table

SLOTS = 75_000  # 600,000 GPUs, 8 a node


def heap_faults(table, slots: int, rng: np.random.Generator, count: int) -> list:
    """Baseline: ``count`` faults popped from a heap of each live slot's next fault."""
    node, shift = table.slot_histories(slots, "bootstrap", rng, table.window_hours)
    starts, W = table.starts.tolist(), table.window_hours
    first, end, state, heap = {}, {}, {}, []
    for s in np.flatnonzero(table.counts[node] > 0).tolist():
        a = int(table.offsets[node[s]])
        b = a + int(table.counts[node[s]])
        k = a + int(np.searchsorted(table.starts[a:b], shift[s]))
        base = (W if k == b else 0.0) - float(shift[s])
        first[s], end[s], state[s] = a, b, [a if k == b else k, base]
        heap.append((starts[state[s][0]] + base, s))
    heapq.heapify(heap)
    out = []
    for _ in range(count):
        s = heap[0][1]
        k, base = state[s]
        out.append((s, table.durations[k]))
        k += 1
        if k == end[s]:
            k, base = first[s], base + W
        state[s] = [k, base]
        heapq.heapreplace(heap, (starts[k] + base, s))
    return out


def stream_faults(table, slots: int, rng: np.random.Generator, count: int) -> list:
    faults = LogFaults(table, slots, "bootstrap", rng)
    return [faults.pop() for _ in range(count)]


def main() -> None:
    table = fault_table(st.infinitehbd_failure_log())
    count = table.outages * -(-SLOTS // table.nodes)  # one window of every copy
    timings = {}
    results = {}
    for func in (heap_faults, stream_faults, heap_faults, stream_faults):
        start = time.process_time()
        results[func.__name__] = func(table, SLOTS, np.random.default_rng(0), count)
        elapsed = time.process_time() - start
        timings[func.__name__] = min(elapsed, timings.get(func.__name__, np.inf))
    assert results["heap_faults"] == results["stream_faults"], "the stream is not the heap's"
    heap_s, stream_s = timings["heap_faults"], timings["stream_faults"]
    print(
        f"{count} faults of {SLOTS} slots: heap {heap_s:.2f} s, stream {stream_s:.2f} s, "
        f"ratio {heap_s / stream_s:.1f}x"
    )


if __name__ == "__main__":
    main()
