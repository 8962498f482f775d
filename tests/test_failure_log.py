"""Failure logs: the contract's semantics, the shipped trace's facts, readers and bad logs.

The trace's facts are computed here from the raw JSON with plain Python
(no pandas, no code of the package), then compared with what the loader
derives.
"""

from __future__ import annotations

import fnmatch
import json
import math
import statistics
import tomllib
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from spare_theory import FailureClass
from spare_theory.traces.failure_log import (
    FailureLog,
    infinitehbd_failure_log,
    infinitehbd_trace_path,
    load_failure_log,
)
from spare_theory.traces.patterns import count_heterogeneity, failure_bursts

ROOT = Path(__file__).resolve().parents[1]


# -- the shipped trace, recomputed from the raw file ----------------------------------------


@pytest.fixture(scope="module")
def raw():
    """Events, paired faults and merged outages of the raw trace, by hand."""
    events = json.loads(infinitehbd_trace_path().read_text())
    starts, ends = defaultdict(list), defaultdict(list)
    for event in events:
        (starts if event["event_type"] == "fault_start" else ends)[event["node_id"]].append(
            event["event_time"]
        )
    faults = []
    for node in starts:
        assert len(starts[node]) == len(ends[node])  # every fault of this trace ends
        faults += [(node, a, b) for a, b in zip(sorted(starts[node]), sorted(ends[node]))]
    outages = []
    for node in starts:
        current = None
        for a, b in sorted((a, b) for n, a, b in faults if n == node):
            if current and a <= current[1]:
                current[1] = max(current[1], b)
            else:
                if current:
                    outages.append((node, *current))
                current = [a, b]
        outages.append((node, *current))
    return events, faults, outages


def test_trace_sizes(raw):
    events, faults, outages = raw
    log = infinitehbd_failure_log()
    assert len(events) == 1168
    kinds = Counter(e["event_type"] for e in events)
    assert kinds == {"fault_start": 584, "fault_end": 584}
    assert len({e["node_id"] for e in events}) == 231
    assert log.faults == len(faults) == 584
    assert log.outage_count == len(outages) == 582
    assert log.failures == 582  # none starts at day 0
    assert log.node_count == 400
    last = max(e["event_time"] for e in events)
    assert round(last, 2) == 348.98
    assert log.window_hours == pytest.approx(last * 24)


@pytest.mark.slow
def test_trace_per_node_counts(raw):
    _, _, outages = raw
    counts = Counter(node for node, _, _ in outages)
    per_node = list(counts.values()) + [0] * (400 - len(counts))
    table = infinitehbd_failure_log().node_table()
    assert sorted(table["failures"]) == sorted(per_node)
    assert per_node.count(0) == 169 and max(per_node) == 14
    ratio = statistics.variance(per_node) / statistics.mean(per_node)
    assert ratio == pytest.approx(2.6, abs=0.05)
    h = infinitehbd_failure_log().heterogeneity()
    assert (h.never_failed, h.most_failures) == (169, 14)
    assert h.dispersion_index == pytest.approx(ratio, rel=1e-12)


def test_trace_uptimes_and_weibull_shape(raw):
    _, _, outages = raw
    window = max(b for _, _, b in outages)  # the last event is an end
    by_node = defaultdict(list)
    for node, a, b in outages:
        by_node[node].append((a, b))
    durations, observed = [], []
    for spans in by_node.values():
        previous = 0.0
        for a, b in sorted(spans):
            durations.append(a - previous)
            observed.append(True)
            previous = b
        if previous < window:
            durations.append(window - previous)
            observed.append(False)
    durations += [window] * (400 - len(by_node))
    observed += [False] * (400 - len(by_node))
    x, seen = np.array(durations) * 24, np.array(observed)
    log_x, log_seen = infinitehbd_failure_log().uptimes()
    np.testing.assert_allclose(np.sort(log_x), np.sort(x), rtol=1e-12, atol=1e-9)
    assert log_seen.sum() == seen.sum() == 582
    shape, _, scale = stats.weibull_min.fit(
        stats.CensoredData(uncensored=x[seen], right=x[~seen]),
        floc=0,
        optimizer=lambda f, x0, args=(), disp=0: optimize.fmin(
            f, x0, args, xtol=1e-10, ftol=1e-10, maxiter=20_000, maxfun=40_000, disp=0
        ),
    )
    fit = infinitehbd_failure_log().fit_lifetime("weibull")
    assert fit.parameters["shape"] == pytest.approx(shape, rel=1e-6)
    assert fit.parameters["scale_hours"] == pytest.approx(scale, rel=1e-6)
    assert shape == pytest.approx(0.39, abs=0.01)


def test_trace_bursts_and_repairs(raw):
    events, _, outages = raw
    instants = Counter(e["event_time"] for e in events if e["event_type"] == "fault_start")
    assert max(instants.values()) == 8
    log = infinitehbd_failure_log()
    assert log.bursts(window_minutes=0.0).largest == 8
    repairs = sorted((b - a) * 24 for _, a, b in outages)
    durations, observed = log.repairs()
    np.testing.assert_allclose(np.sort(durations), repairs, rtol=1e-9, atol=1e-9)
    assert observed.all()
    # 14 outages begin and end at the same recorded time (8.64 s ticks); the rest run from
    # 8.6 s to 131 days, median about 20 h, mean about 5.5 days.
    assert sum(r == 0 for r in repairs) == 14 and min(r for r in repairs if r > 0) * 3600 < 9
    assert max(repairs) / 24 == pytest.approx(131, abs=0.5)
    assert statistics.median(repairs) == pytest.approx(20.4, abs=0.1)
    assert statistics.mean(repairs) / 24 == pytest.approx(5.55, abs=0.01)
    assert log.time_resolution_hours == pytest.approx(1e-4 * 24, rel=1e-6)


def test_trace_ships_with_its_licence_and_attribution():
    folder = infinitehbd_trace_path().parent
    assert "Apache License" in (folder / "LICENSE").read_text()
    readme = (folder / "README.md").read_text()
    for fact in ("stepfun-ai/InfiniteHBD-Trace", "7aacdc8", "2502.03885", "SIGCOMM 2025"):
        assert fact in readme
    # pyproject's package data globs take every file of the folder.
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["spare_theory"]
    for path in folder.iterdir():
        name = str(path.relative_to(ROOT / "spare_theory"))
        assert any(fnmatch.fnmatch(name, g) for g in globs), name


# -- semantics on small logs ----------------------------------------------------------------


def _log(rows, **kw):
    frame = pd.DataFrame(rows, columns=["node", "start", "end"])
    kw.setdefault("nodes", len(frame["node"].unique()) or 1)
    return FailureLog.from_frame(frame, **kw)


def test_overlapping_and_touching_faults_are_one_outage():
    log = _log(
        [("a", 1.0, 3.0), ("a", 2.0, 4.0), ("a", 4.0, 5.0), ("a", 8.0, 9.0), ("b", 2.0, 2.5)],
        observed_from=0.0,
        observed_until=10.0,
    )
    table = log.outages()
    assert table[table.node == "a"][["start_hours", "end_hours"]].values.tolist() == [
        [1.0, 5.0],
        [8.0, 9.0],
    ]
    assert log.faults == 5 and log.outage_count == 3 and log.failures == 3
    durations, observed = log.uptimes()
    assert sorted(zip(durations.tolist(), observed.tolist())) == [
        (1.0, False),  # a: 9..10
        (1.0, True),  # a: 0..1
        (2.0, True),  # b: 0..2
        (3.0, True),  # a: 5..8
        (7.5, False),  # b: 2.5..10
    ]


def test_window_edges_missing_ends_and_quiet_nodes():
    log = _log(
        [("a", 0.0, 2.0), ("b", 5.0, None), ("c", 4.0, 30.0)],
        nodes=5,
        observed_from=0.0,
        observed_until=20.0,
    )
    # a: fails at the window's start (a failure, no uptime to fit before it), up 2..20
    # censored.  b: up 0..5, still down at the end.  c: up 0..4, its end is after the
    # window.  Two quiet nodes: 20 h censored each.
    assert log.failures == 3 and log.outage_count == 3 and log.left_censored == 0
    durations, observed = log.uptimes()
    assert sorted(zip(durations.tolist(), observed.tolist())) == [
        (4.0, True),
        (5.0, True),
        (18.0, False),
        (20.0, False),
        (20.0, False),
    ]
    repairs, repaired = log.repairs()
    assert sorted(zip(repairs.tolist(), repaired.tolist())) == [
        (2.0, True),
        (15.0, False),
        (16.0, False),
    ]
    assert log.exposure_hours == 67.0
    assert log.failure_rate == 3 / 67.0
    # The fit sees the two failures that end an uptime inside the window.
    assert log.fit_lifetime("exponential").parameters["rate_per_hour"] == pytest.approx(2 / 67.0)
    assert log.node_mtbf_hours == 67.0 / 3


def test_the_first_fault_counts_under_the_default_window():
    # Three faults on two nodes, window [1, 6] from the first start to the last time:
    # a fails at 0 (window hours) and 4, b at 2.  a: up 1..4 observed (nothing to fit
    # before its failure at 0, no tail: it ends at 5, the window's end); b: up 0..2
    # observed, 3..5 censored.
    frame = pd.DataFrame(
        {"node": ["a", "a", "b"], "start": [1.0, 5.0, 3.0], "end": [2.0, 6.0, 4.0]}
    )
    log = FailureLog.from_frame(frame, nodes=2)
    assert (log.faults, log.outage_count, log.failures, log.left_censored) == (3, 3, 3, 0)
    assert log.failure_times_hours().tolist() == [0.0, 2.0, 4.0]
    durations, observed = log.uptimes()
    assert sorted(zip(durations.tolist(), observed.tolist())) == [
        (2.0, False),
        (2.0, True),
        (3.0, True),
    ]
    assert log.exposure_hours == 7.0 and log.failure_rate == 3 / 7.0
    assert log.node_table()["failures"].tolist() == [2, 1]
    assert "3 failures" in log.summary() and "left-censored" not in log.summary()


def test_overlapping_faults_at_the_first_time_are_one_failure():
    # Two faults of one node, both at the log's first time: one outage, one failure,
    # and no time up in the window [0, 3].
    log = _log([("a", 0.0, 2.0), ("a", 0.0, 3.0)])
    assert (log.faults, log.outage_count, log.failures, log.left_censored) == (2, 1, 1, 0)
    assert log.exposure_hours == 0.0 and log.failure_rate == np.inf
    assert log.repairs()[0].tolist() == [3.0] and log.repairs()[1].tolist() == [True]


def test_only_an_outage_in_progress_at_observed_from_is_left_censored():
    log = _log(
        [("a", -2.0, 3.0), ("a", 5.0, 6.0), ("b", -1.0, None), ("c", 0.0, 1.0)],
        nodes=4,
        observed_from=0.0,
        observed_until=10.0,
    )
    # a: in progress at 0 until 3 (left-censored), up 3..5, fails at 5, up 6..10 censored.
    # b: in progress at 0, never back.  c: fails at the window's start (a failure), up
    # 1..10 censored.  d: quiet, 10 h censored.
    assert (log.outage_count, log.failures, log.left_censored) == (4, 2, 2)
    table = log.outages()
    assert table["left_censored"].tolist() == [True, False, True, False]
    assert table["start_hours"].tolist() == [0.0, 5.0, 0.0, 0.0]
    durations, observed = log.uptimes()
    assert sorted(zip(durations.tolist(), observed.tolist())) == [
        (2.0, True),
        (4.0, False),
        (9.0, False),
        (10.0, False),
    ]
    assert log.exposure_hours == 25.0 and log.failure_rate == 2 / 25.0
    # Repairs: a's first is censored at its 3 h in the window, b's at the window's end.
    repairs, repaired = log.repairs()
    assert sorted(zip(repairs.tolist(), repaired.tolist())) == [
        (1.0, True),
        (1.0, True),
        (3.0, False),
        (10.0, False),
    ]
    assert "2 failures, 2 left-censored" in log.summary()
    assert log.node_table()["failures"].tolist() == [1, 0, 1, 0]


def test_unsorted_rows_give_the_same_log():
    rows = [("a", 1.0, 2.0), ("b", 3.0, 3.5), ("a", 6.0, 7.0), ("c", 0.5, 9.0), ("b", 8.0, 8.2)]
    one = _log(rows, observed_from=0.0, observed_until=12.0)
    two = _log(rows[::-1], observed_from=0.0, observed_until=12.0)
    pd.testing.assert_frame_equal(one.outages(), two.outages())
    np.testing.assert_array_equal(one.uptimes()[0], two.uptimes()[0])


def test_default_window_and_nodes_warn():
    frame = pd.DataFrame({"node": ["a", "b"], "start": [2.0, 5.0], "end": [3.0, 6.0]})
    with pytest.warns(UserWarning, match="never failed are then missing"):
        log = FailureLog.from_frame(frame)
    # Window from the first start (2) to the last time (6): a's fault is at its start
    # and counts.
    assert log.window_hours == 4.0 and log.node_count == 2 and log.failures == 2


def test_time_units_and_dates():
    rows = [("a", 1.0, 2.0), ("b", 3.0, None)]
    days = _log(rows, observed_from=0.0, observed_until=4.0, time_unit="days")
    hours = _log(
        [(n, s * 24, None if e is None else e * 24) for n, s, e in rows],
        observed_from=0.0,
        observed_until=96.0,
    )
    pd.testing.assert_frame_equal(days.outages(), hours.outages())
    dated = _log(
        [("a", "2024-03-31T00:00", "2024-04-01T00:00"), ("b", "2024-04-02T00:00", None)],
        observed_from="2024-03-30",
        observed_until="2024-04-03",
    )
    pd.testing.assert_frame_equal(days.outages(), dated.outages())


def test_empty_log_with_nodes_and_window_says_nothing_failed():
    log = _log([], nodes=10, observed_from=0.0, observed_until=100.0)
    assert log.failures == 0 and log.exposure_hours == 1000.0 and log.failure_rate == 0.0
    assert log.node_mtbf_hours == math.inf
    fit = log.fit_lifetime()
    assert not fit.failed and fit.rate_upper_bound_per_hour == pytest.approx(-math.log(0.05) / 1e3)
    with pytest.raises(ValueError, match="no outages"):
        log.fit_repair()


def test_node_table_and_heterogeneity():
    log = _log(
        [("a", 1.0, 2.0), ("a", 3.0, 4.0), ("a", 5.0, 6.0), ("b", 7.0, 8.0)],
        nodes=4,
        observed_from=0.0,
        observed_until=10.0,
    )
    table = log.node_table()
    assert table["failures"].tolist() == [3, 1, 0, 0]
    assert table["exposure_hours"].tolist() == [7.0, 9.0, 10.0, 10.0]
    assert table["node"][:2].tolist() == ["a", "b"] and table["node"][2:].isna().all()
    h = log.heterogeneity()
    assert h.failures == 4 and h.rate_per_hour == pytest.approx(4 / 36.0)


@pytest.mark.slow
def test_two_class_fit_recovers_lemons_within_three_standard_errors():
    # R independent clusters of 1,500 nodes, 10 % lemons failing 6x as often; the mean
    # estimate over R is within k = 3 SE of the truth (SE from the spread of the estimates).
    shares, factors, rates = [], [], []
    for i in range(12):
        rng = np.random.default_rng(i)
        exposure = rng.uniform(2000.0, 8000.0, 1500)
        lemon = rng.random(1500) < 0.1
        counts = rng.poisson(np.where(lemon, 6.0, 1.0) * 2e-4 * exposure)
        h = count_heterogeneity(counts, exposure)
        shares.append(h.lemon_fraction)
        factors.append(h.lemon_rate_factor)
        rates.append(h.base_rate_per_hour)
    for values, truth in ((shares, 0.1), (factors, 6.0), (rates, 2e-4)):
        se = np.std(values, ddof=1) / math.sqrt(len(values))
        assert abs(np.mean(values) - truth) <= 3 * se, (np.mean(values), se, truth)


@pytest.mark.slow
def test_poisson_counts_show_no_heterogeneity():
    rng = np.random.default_rng(3)
    counts = rng.poisson(2.0, 3000)
    h = count_heterogeneity(counts, np.full(3000, 1e4))
    assert h.pearson_p_value > 0.001 and h.aic_lemons > h.aic_poisson - 2


def test_bursts_chain_within_the_window():
    b = failure_bursts([0.0, 0.05, 0.1, 1.0, 5.0, 5.0], window_minutes=4.0, span_hours=10.0)
    assert b.sizes == {1: 1, 2: 1, 3: 1} and b.largest == 3 and b.bursts == 2
    assert b.share == pytest.approx(5 / 6) and b.bursts_per_hour == pytest.approx(0.2)
    assert failure_bursts([], window_minutes=1.0, span_hours=1.0).failures == 0


# -- readers --------------------------------------------------------------------------------

ROWS = pd.DataFrame({"node": ["x", "y", "x"], "start": [1.0, 2.0, 5.0], "end": [1.5, None, 6.0]})
WINDOW = dict(nodes=3, observed_from=0.0, observed_until=10.0)


def _same(path):
    expected = FailureLog.from_frame(ROWS, **WINDOW).outages()
    pd.testing.assert_frame_equal(load_failure_log(path, **WINDOW).outages(), expected)


def test_reads_csv_jsonl_and_json(tmp_path):
    ROWS.to_csv(tmp_path / "log.csv", index=False)
    ROWS.to_csv(tmp_path / "log.csv.gz", index=False)
    ROWS.to_json(tmp_path / "log.jsonl", orient="records", lines=True)
    ROWS.to_json(tmp_path / "log.json", orient="records")
    for name in ("log.csv", "log.csv.gz", "log.jsonl", "log.json"):
        _same(tmp_path / name)


def test_reads_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    ROWS.to_parquet(tmp_path / "log.parquet")
    _same(tmp_path / "log.parquet")


def test_parquet_without_pyarrow_says_so(tmp_path):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        (tmp_path / "log.parquet").write_bytes(b"PAR1")
        with pytest.raises(ValueError, match="pyarrow"):
            load_failure_log(tmp_path / "log.parquet")
    else:
        pytest.skip("pyarrow is installed")


def test_stepfun_events_in_json_and_jsonl(tmp_path):
    events = [
        {"node_id": "x", "event_time": 5.0, "event_type": "fault_start"},
        {"node_id": "x", "event_time": 1.0, "event_type": "fault_start"},
        {"node_id": "y", "event_time": 2.0, "event_type": "fault_start"},
        {"node_id": "x", "event_time": 1.5, "event_type": "fault_end"},
        {"node_id": "x", "event_time": 6.0, "event_type": "fault_end"},
    ]
    (tmp_path / "trace.json").write_text(json.dumps(events))
    pd.DataFrame(events).to_json(tmp_path / "trace.jsonl", orient="records", lines=True)
    _same(tmp_path / "trace.json")
    _same(tmp_path / "trace.jsonl")


# -- bad logs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "kwargs", "match"),
    [
        ([("a", 5.0, 4.0)], {}, r"row 0, column 'end': end 4.0 is before its start 5.0"),
        ([("a", 1.0, 2.0), ("b", None, 3.0)], {}, r"row 1, column 'start': missing"),
        (
            [("a", 1.0, 2.0), ("b", "soon", 3.0)],
            {},
            r"row 1, column 'start': 'soon' cannot be read",
        ),
        ([("a", 1.0, "x")], {}, r"row 0, column 'end': cannot read 'x'"),
        ([("a", 1.0, float("inf"))], {}, r"row 0, column 'end'.*infinite"),
        ([(None, 1.0, 2.0)], {}, r"row 0, column 'node': missing"),
        ([("a", 1.0, 2.0), ("b", 1.0, 2.0)], {"nodes": 1}, r"nodes must be >= 2"),
        ([("a", 1.0, 2.0)], {"time_unit": "fortnights"}, r"time_unit must be one of"),
        # Over before the window starts (at or before observed_from), or after it ends.
        *[
            ([("a", 1.0, 2.0)], window, r"row 0, column 'start'.*outside the window")
            for window in (
                {"observed_from": 2.5, "observed_until": 9.0},
                {"observed_from": 2.0, "observed_until": 9.0},
                {"observed_from": 0.0, "observed_until": 0.5},
            )
        ],
        ([("a", 1.0, 2.0), ("b", "2024-01-01", 3.0)], {}, r"row 1, column 'start'.*date among"),
        ([("a", 1.0, 2.0)], {"observed_until": 0.5}, r"window is empty"),
        ([("a", 1.0, "2024-01-01")], {}, r"both be numbers or both dates"),
        ([], {}, r"the log is empty"),
    ],
)
def test_bad_logs_name_the_row_and_column(rows, kwargs, match):
    frame = pd.DataFrame(rows, columns=["node", "start", "end"])
    kwargs = {"nodes": 2, **kwargs} if rows else kwargs
    with warnings.catch_warnings(), pytest.raises(ValueError, match=match):
        warnings.simplefilter("ignore")
        FailureLog.from_frame(frame, **kwargs)


def test_a_missing_column_is_named():
    with pytest.raises(ValueError, match="no column 'down'"):
        FailureLog.from_frame(ROWS, start="down", nodes=3)


@pytest.mark.parametrize(
    ("events", "match"),
    [
        ([("x", 1.0, "fault_end")], r"event 0, column 'event_type': fault_end of node 'x'.*no"),
        (
            [
                ("x", 1.0, "fault_start"),
                ("x", 2.0, "fault_end"),
                ("x", 3.0, "fault_end"),
                ("x", 4.0, "fault_start"),
            ],
            r"event 2, column 'event_time': fault_end of node 'x' at day 3 is before",
        ),
        ([("x", 1.0, "fault_begin")], r"event 0, column 'event_type': 'fault_begin'"),
        ([("x", "noon", "fault_start")], r"event 0, column 'event_time'"),
    ],
)
def test_bad_stepfun_events_name_the_event(tmp_path, events, match):
    rows = [dict(node_id=n, event_time=t, event_type=k) for n, t, k in events]
    (tmp_path / "bad.json").write_text(json.dumps(rows))
    with pytest.raises(ValueError, match=match):
        load_failure_log(tmp_path / "bad.json", nodes=1)


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("log.txt", "node,start,end\n", "unknown format"),
        ("missing.csv", None, "not a file"),
        ("log.json", '{"node": "a"}', "array of rows"),
        ("log.json", "[{", "cannot read"),
    ],
)
def test_unreadable_files(tmp_path, name, content, match):
    if content is not None:
        (tmp_path / name).write_text(content)
    with pytest.raises(ValueError, match=match):
        load_failure_log(tmp_path / name)


def test_a_category_column_gives_the_classes_shares():
    # Counts per category follow the outages (overlapping faults of a node are one, with
    # its first fault's category); every category must map to a class.
    frame = pd.DataFrame(
        {
            "node": ["a", "a", "b", "c", "d"],
            "start": [1.0, 1.2, 2.0, 3.0, 4.0],
            "end": [1.5, 1.6, 2.5, 3.5, 4.5],
            "cause": ["gpu", "nccl", "nccl", "gpu", "sdc"],
        }
    )
    log = FailureLog.from_frame(frame, nodes=4, observed_from=0.0, category="cause")
    assert log.category_counts().to_dict() == {"gpu": 2, "nccl": 1, "sdc": 1}
    classes = [
        FailureClass("crash", 1.0),
        FailureClass("hang", 1.0, "hang", 10.0),
        FailureClass("sdc", 1.0, "corruption", 60.0, rollback_checkpoints=2),
        FailureClass("slow", 1.0, "straggler", 30.0, slowdown=2.0),  # no failure: left out
    ]
    found = log.failure_classes({"gpu": "crash", "nccl": "hang", "sdc": "sdc"}, classes)
    assert [(c.name, c.share) for c in found] == [("crash", 0.5), ("hang", 0.25), ("sdc", 0.25)]
    with pytest.raises(ValueError, match=r"categories \['sdc'\] have no class"):
        log.failure_classes({"gpu": "crash", "nccl": "hang"}, classes)
    with pytest.raises(ValueError, match="no class named 'meteor'"):
        log.failure_classes({"gpu": "crash", "nccl": "meteor", "sdc": "sdc"}, classes)
    with pytest.raises(ValueError, match="column 'kind'"):
        FailureLog.from_frame(frame, nodes=4, category="kind")
    missing = frame.assign(cause=["gpu", None, "nccl", "gpu", "sdc"])
    with pytest.raises(ValueError, match="row 1, column 'cause': missing"):
        FailureLog.from_frame(missing, nodes=4, category="cause")
    with pytest.raises(ValueError, match="without a category column"):
        FailureLog.from_frame(frame, nodes=4).category_counts()


def test_each_class_has_its_repair_law():
    # Two categories repaired after exponential times of known means (30 and 300 min),
    # drawn here: each class's fitted mean within 4 standard errors (mean / sqrt(n) for
    # n uncensored exponential times), and all of them the pooled mean of the draws.
    rng = np.random.default_rng(5)
    n = 400
    fast, slow = rng.exponential(0.5, n), rng.exponential(5.0, n)
    frame = pd.DataFrame(
        {
            "node": np.arange(2 * n),
            "start": np.zeros(2 * n) + 1.0,
            "end": 1.0 + np.concatenate([fast, slow]),
            "cause": ["nccl"] * n + ["gpu"] * n,
        }
    )
    log = FailureLog.from_frame(frame, nodes=2 * n, observed_from=0.0, category="cause")
    table = log.repairs_by_class({"nccl": "hang", "gpu": "crash"}, law="exponential")
    assert table.index.tolist() == ["hang", "crash", "all"]
    for name, mean in (("hang", 30.0), ("crash", 300.0)):
        assert abs(table.loc[name, "mean_minutes"] - mean) < 4 * mean / np.sqrt(n)
    pooled = 60.0 * np.concatenate([fast, slow]).mean()
    assert table.loc["all", "mean_minutes"] == pytest.approx(pooled, rel=1e-9)
    assert table["outages"].tolist() == [n, n, 2 * n]
    with pytest.raises(ValueError, match=r"categories \['gpu'\] have no class"):
        log.repairs_by_class({"nccl": "hang"})
    with pytest.raises(ValueError, match="categories: no outage of"):
        log.fit_repair(categories="sdc")
    with pytest.raises(ValueError, match="categories: the log was read without"):
        FailureLog.from_frame(frame, nodes=2 * n).fit_repair(categories="gpu")


def test_the_shipped_trace_has_its_fault_classes():
    log = infinitehbd_failure_log()
    counts = log.category_counts()
    assert counts.sum() == log.failures and counts.index[0] == "GPU"
