"""What each resilience feature is worth (issue 39 item 3): ``what_if``, ``sensitivity``, the
figure and ``spare-theory plan --what-if``.

Each change's row is checked against the changed job planned directly with
``optimal_plan`` strategy by strategy (not through ``plan_scenario``, which
``what_if`` uses), and the properties a ranking must have: the job as given is
the best over the strategies every ``strategy:NAME`` change plans alone, so none
of them saves; the rows are ranked; halving the MTBF costs hours and doubling it
saves them.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

import spare_theory as st
from spare_theory import Job, optimal_plan
from spare_theory.cli import main
from spare_theory.reports.changes import WHAT_IF_CHANGES, parse_change
from spare_theory.reports.what_if import sensitivity, what_if, what_if_figure

# Checkpoints of a minute to storage that writes 100 GB/s, failures every few hours.
JOB = Job(
    parameters=405e9,
    gpus=512,
    gpus_per_group=32,
    gpu_mtbf_hours=3000.0,
    work_hours=50,
    storage_write_gbps=100.0,
)
STRATEGIES = ("ckpt", "rep", "spare")


def _best_hours(job: Job, strategies=STRATEGIES) -> float:
    sc = job.scenario()
    return min(optimal_plan(sc, name).hours for name in strategies)


def test_each_row_is_the_best_plan_of_the_changed_job():
    table = what_if(
        JOB, ["async_checkpoints", "gpu_mtbf_hours=6000", "strategy:rep"], strategies=STRATEGIES
    )
    rows = {row["change"]: row for row in table.to_dict("records")}
    given = _best_hours(JOB)
    assert rows["as given"]["hours"] == pytest.approx(given, rel=1e-12)
    expected = {
        "async_checkpoints": _best_hours(dataclasses.replace(JOB, checkpoint_async=True)),
        "gpu_mtbf_hours=6000": _best_hours(dataclasses.replace(JOB, gpu_mtbf_hours=6000.0)),
        "strategy:rep": _best_hours(JOB, ("rep",)),
    }
    for name, hours in expected.items():
        assert rows[name]["hours"] == pytest.approx(hours, rel=1e-12), name
        assert rows[name]["saved_hours"] == pytest.approx(given - hours, rel=1e-9, abs=1e-9)
        assert rows[name]["saved_share"] == pytest.approx((given - hours) / given, abs=1e-12)
    # A minute's checkpoint made a background write saves time; so does a longer MTBF.
    assert rows["async_checkpoints"]["saved_hours"] > 0
    assert rows["gpu_mtbf_hours=6000"]["saved_hours"] > 0


def test_a_watchdog_caps_the_hangs_and_saves_only_with_them():
    hangs = (
        st.FailureClass("crash", 0.8, "crash", 0.0),
        st.FailureClass("hang", 0.2, "hang", 30.0),
    )
    job = dataclasses.replace(JOB, failure_classes=hangs)
    table = what_if(job, ["watchdog"], strategies=STRATEGIES)
    capped = (hangs[0], dataclasses.replace(hangs[1], detect_minutes=1.0))
    expected = _best_hours(dataclasses.replace(job, failure_classes=capped))
    assert table.loc[1, "hours"] == pytest.approx(expected, rel=1e-12)
    assert table.loc[1, "saved_hours"] > 0
    # No hang class: nothing to cap, nothing saved.
    plain = what_if(JOB, ["watchdog"], strategies=STRATEGIES)
    assert plain.loc[1, "saved_hours"] == 0.0


def test_no_strategy_alone_beats_the_job_as_given_and_the_rows_are_ranked():
    table = st.what_if(JOB, objective="usd")  # the public name
    assert table.loc[0, "change"] == "as given" and table.attrs["objective"] == "usd"
    alone = table[table["change"].str.startswith("strategy:") | (table["change"] == "hot_spares")]
    assert len(alone) == len(st.registered_strategies())
    assert (alone["saved_usd"] <= 1e-9 * table.loc[0, "usd"]).all()
    saved = table["saved_usd"].iloc[1:].tolist()
    assert saved == sorted(saved, reverse=True)
    assert set(WHAT_IF_CHANGES) <= set(table["change"])
    # r is None where a strategy has none, never NaN.
    assert table.loc[table["strategy"] == "ckpt", "r"].isna().all()
    assert all(r is None or isinstance(r, int) for r in table["r"])


def test_a_scenario_takes_its_own_fields_and_strategies_only():
    sc = JOB.scenario()
    table = what_if(sc, strategies=STRATEGIES)
    assert not {"async_checkpoints", "fast_detection"} & set(table["change"])
    assert {"hot_spares", "strategy:spare"} <= set(table["change"])
    with pytest.raises(ValueError, match=r"async_checkpoints.*give a Job"):
        what_if(sc, ["async_checkpoints"])
    faster = what_if(sc, ["restart_minutes=1"], strategies=STRATEGIES)
    expected = min(
        optimal_plan(dataclasses.replace(sc, restart_minutes=1.0), n).hours for n in STRATEGIES
    )
    assert faster.loc[1, "hours"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        (["no_such_feature"], "unknown change 'no_such_feature'"),
        (["strategy:nope"], "nope"),
        (["gpu_mtbf=1"], "'gpu_mtbf' is neither a Job nor a Scenario field"),
        (["gpu_mtbf_hours=fast"], "is not a TOML value"),
        (["gpu_mtbf_hours=-5"], "gpu_mtbf_hours"),
        ([""], "non-empty"),
    ],
)
def test_bad_changes_name_what_is_wrong(changes, says):
    with pytest.raises(ValueError, match=says):
        what_if(JOB, changes, strategies=("ckpt",))


def test_parse_change_reads_fields_as_toml():
    change = parse_change("checkpoint_tier='memory',repair_minutes=30.5")
    assert change.job == (("checkpoint_tier", "memory"),)
    assert change.scenario == (("repair_minutes", 30.5),)


def test_sensitivity_moves_the_hours_the_right_way():
    table = sensitivity(JOB, strategies=STRATEGIES)
    base = table.attrs["base_hours"]
    assert base == pytest.approx(_best_hours(JOB), rel=1e-12)
    assert list(dict.fromkeys(table["input"])) == [
        "gpu_mtbf_hours",
        "restart_minutes",
        "checkpoint_minutes",
    ]  # repair_minutes is unset
    sc = JOB.scenario()
    for row in table.to_dict("records"):
        assert row["value"] == pytest.approx(getattr(sc, row["input"]) * row["factor"])
        assert row["strategy_changed"] == (row["strategy"] != table.attrs["base_strategy"])
        assert row["change"] == pytest.approx(row["hours"] / base - 1.0)
        grows = (row["input"] == "gpu_mtbf_hours") == (row["factor"] > 1)
        assert (row["change"] < 0) == grows, row  # more MTBF, cheaper restarts: fewer hours


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"factors": (0.5, 0.0)}, "factors"),
        ({"factors": (math.nan,)}, "factors"),
        ({"inputs": ["repair_minutes"]}, "'repair_minutes' is not a number of the scenario"),
        ({"inputs": ["failure_law"]}, "'failure_law'"),
    ],
)
def test_bad_sensitivity_inputs_are_named(kwargs, says):
    with pytest.raises(ValueError, match=says):
        sensitivity(JOB, strategies=("ckpt",), **kwargs)


def test_a_subject_must_be_a_job_or_a_scenario():
    with pytest.raises(ValueError, match="subject must be a Job or a Scenario"):
        what_if({"gpus": 8})


def test_the_figure_has_both_panels():
    changes = what_if(JOB, ["async_checkpoints", "strategy:ckpt"], strategies=STRATEGIES)
    sens = sensitivity(JOB, ["gpu_mtbf_hours"], strategies=STRATEGIES)
    fig = what_if_figure(changes, sens)
    assert [ax.get_title()[:20] for ax in fig.axes] == [
        "What each change sav",
        "Sensitivity (ring: t",
    ]
    assert len(fig.axes[0].patches) == 2 and len(fig.axes[1].patches) == 2


SMALL = """
[job]
parameters = 405e9
gpus = 512
gpus_per_group = 32
gpu_mtbf_hours = 3000.0
work_hours = 50
storage_write_gbps = 100.0

[cost]
gpu_hour_usd = 2.0
"""


def test_plan_what_if_prints_ranks_and_writes_json(tmp_path, capsys):
    path = tmp_path / "job.toml"
    path.write_text(SMALL)
    argv = ["plan", str(path), "--no-verify", "--strategy", "ckpt", "spare"]
    code = main([*argv, "--what-if", "async_checkpoints", "strategy:ckpt", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out)
    assert data["what_if"][0]["change"] == "as given"
    assert {row["change"] for row in data["what_if"]} == {
        "as given",
        "async_checkpoints",
        "strategy:ckpt",
    }
    assert {row["input"] for row in data["sensitivity"]} >= {"gpu_mtbf_hours"}
    code = main([*argv, "--what-if", "async_checkpoints"])
    out = capsys.readouterr().out
    assert code == 0 and "what each change saves" in out and "sensitivity of the best" in out


def test_plan_what_if_refuses_an_unknown_change_in_one_line(tmp_path, capsys):
    path = tmp_path / "job.toml"
    path.write_text(SMALL)
    code = main(["plan", str(path), "--no-verify", "--what-if", "teleport"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "teleport" in err


def test_verified_changes_share_their_seed_and_repeat():
    args = dict(strategies=("ckpt", "spare"), verify=True, seed=3, max_trials=64)
    first = what_if(JOB, ["async_checkpoints"], **args)
    again = what_if(JOB, ["async_checkpoints"], **args)
    assert first["hours"].tolist() == again["hours"].tolist()
    model = what_if(JOB, ["async_checkpoints"], strategies=("ckpt", "spare"))
    # The rows carry the simulated hours, not the model's.
    assert all(a != b for a, b in zip(first["hours"], model["hours"]))
