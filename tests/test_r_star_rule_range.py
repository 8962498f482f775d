"""Where the published r* rule holds: the range its docstring and the README state."""

import pytest

from spare_theory import Scenario, optimal_plan, r_star_rule, time_to_train


def _loss(N, cluster_mtbf_minutes, restart_minutes):
    gpus = 8 * N
    sc = Scenario(
        gpus=gpus,
        gpus_per_group=8,
        gpu_mtbf_hours=cluster_mtbf_minutes / 60 * gpus,
        restart_minutes=restart_minutes,
        checkpoint_minutes=5,
        work_hours=720,
    )
    best = optimal_plan(sc, "spare")
    return best.r, time_to_train(sc, "spare", r=r_star_rule(N)).hours / best.hours - 1


@pytest.mark.parametrize(("N", "mtbf", "restart"), [(256, 30, 20), (4096, 5, 60), (12500, 30, 20)])
def test_rule_costs_at_most_1_2_percent_when_failures_are_frequent(N, mtbf, restart):
    r_best, loss = _loss(N, mtbf, restart)
    assert r_best > 1 and 0 <= loss <= 0.012


def test_rule_does_not_apply_where_plain_checkpointing_is_best():
    r_best, loss = _loss(256, 120, 20)
    assert r_best == 1 and r_star_rule(256) == 8 and loss > 0.1
