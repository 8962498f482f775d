"""The simulation search's walk over the checkpoint interval, on hours known by construction.

``_interval_walk`` is given a deterministic ``estimate`` whose hours are a
function of ``log tau`` chosen here (a parabola, a slope falling to the top of
the range, a region where no run finishes), so what it should find is known
without a simulation, and the candidates it plays are counted: a walk across
the whole range must not cost one candidate per ``sqrt 2`` step.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from spare_theory import Scenario
from spare_theory.hourly.simulation import TrainingSamples
from spare_theory.training.resolve import resolve
from spare_theory.training.simsearch import SimulatedEstimate, _interval_walk

SCENARIO = Scenario(
    gpus=512,
    gpus_per_group=8,
    gpu_mtbf_hours=2000.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=1000,
)
JOB = resolve(SCENARIO, "rep", r=2, checkpoint_interval_minutes=60.0)
STEP = math.log(math.sqrt(2.0))
LOW, HIGH = math.log(0.5), math.log(60.0 * SCENARIO.work_hours)


def walk(hours_at_log_tau, start_minutes=None, restarts=3):
    """The walk's pick and every interval it played, for hours ``hours_at_log_tau(log tau)``.

    Every run restarts ``restarts`` times; a first look counts as a play.
    """
    played: list[float] = []

    def estimate(job, limit, look=False):
        x = math.log(job.checkpoint_interval_minutes)
        played.append(x)
        hours = float(hours_at_log_tau(x))
        runs = TrainingSamples(hours=np.full(4, hours), restarts=np.full(4, restarts))
        return SimulatedEstimate(
            "rep",
            2,
            runs,
            SCENARIO.work_hours,
            checkpoint_interval_minutes=job.checkpoint_interval_minutes,
        )

    best = _interval_walk(JOB, estimate, SCENARIO.work_hours, start_minutes=start_minutes)
    return best, played


@pytest.mark.parametrize("optimum_minutes", [3.0, 45.0, 200.0])
def test_the_walk_finds_a_parabola_vertex(optimum_minutes):
    centre = math.log(optimum_minutes)
    best, played = walk(lambda x: 20.0 + (x - centre) ** 2)
    # The parabola through three lattice points of a parabola is exact.
    assert best.checkpoint_interval_minutes == pytest.approx(optimum_minutes, rel=1e-9)
    assert len(played) == len(set(played))  # no interval is played twice


def test_a_walk_across_the_whole_range_takes_a_few_candidates():
    # Hours fall all the way to the top (a plan that never restarts): the plain
    # sqrt 2 walk from Young-Daly played one candidate per step (21 here).
    best, played = walk(lambda x: 20.0 - x)
    assert best.checkpoint_interval_minutes == pytest.approx(60.0 * SCENARIO.work_hours)
    assert best.interval_limit == "upper"
    steps = (HIGH - min(played)) / STEP
    assert steps > 18 and len(played) <= 12, (steps, len(played))


def test_a_start_near_the_optimum_saves_the_pilot():
    centre = math.log(45.0)
    hours = lambda x: 20.0 + (x - centre) ** 2  # noqa: E731
    best, played = walk(hours, start_minutes=40.0)
    assert best.checkpoint_interval_minutes == pytest.approx(45.0, rel=1e-9)
    assert len(set(played)) <= 4  # the first look's trials are the start's own
    assert math.log(40.0) == pytest.approx(played[0])


def test_a_start_where_the_plan_does_not_finish_falls_back_to_young_daly():
    # The neighbouring plan's best interval (the top) is too long for this one.
    centre = math.log(30.0)
    finite = lambda x: 20.0 + (x - centre) ** 2 if x < math.log(1000.0) else math.inf  # noqa: E731
    best, _ = walk(finite, start_minutes=60.0 * SCENARIO.work_hours)
    assert best.checkpoint_interval_minutes == pytest.approx(30.0, rel=1e-9)
    assert best.feasible


def test_no_finishing_interval_ends_the_walk_at_once():
    best, played = walk(lambda x: math.inf, start_minutes=100.0)
    assert not best.feasible
    assert len(played) <= 5  # the start, the pilot, the walk's start and its two neighbours


def test_the_halving_stays_on_the_sqrt_2_lattice_of_its_start():
    # A slope that turns at a lattice point far from the start: every interval
    # played away from the ends is the start times a power of sqrt 2 (what a plain
    # walk would have played), but the final vertex.
    start = math.log(20.0)
    turn = start + 9 * STEP
    best, played = walk(
        lambda x: 20.0 + abs(x - turn) + 0.01 * (x - turn) ** 2, start_minutes=20.0, restarts=0
    )
    lattice = [(x - start) / STEP for x in played[:-1] if LOW < x < HIGH]
    assert np.allclose(lattice, np.round(lattice), atol=1e-9)
    assert math.log(best.checkpoint_interval_minutes) == pytest.approx(turn, abs=STEP)
    assert dataclasses.is_dataclass(best)


def test_a_start_far_from_young_daly_on_its_own_restarts_is_left():
    # The neighbour's best is the top (it never restarted); this plan restarts 3
    # times a run there, so Young-Daly on its wipe-outs (sqrt(2 delta M), M = 60
    # hours / 3 minutes) is far below: the walk starts there, not at the top.
    centre = math.log(50.0)
    hours = lambda x: 20.0 + (x - centre) ** 2  # noqa: E731
    best, played = walk(hours, start_minutes=60.0 * 1000)
    assert played[0] == pytest.approx(HIGH)
    own = 0.5 * math.log(2 * 5 * 60 * hours(HIGH) / 3)
    assert own < HIGH - 2 * STEP
    assert own == pytest.approx(played[2])  # after its upper neighbour, as every walk
    assert best.checkpoint_interval_minutes == pytest.approx(50.0, rel=1e-9)
