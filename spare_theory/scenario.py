"""A training scenario: cluster size, group size, failure rate and costs.

Units live in the names (hours, minutes).  ``N = gpus // gpus_per_group``
data-parallel groups train the model; when ``gpus_per_group`` does not divide
``gpus`` the ``gpus mod gpus_per_group`` left-over GPUs sit outside every group
(they compute nothing and their failures stop nothing), which is how the
published "600k GPUs, N about 146 at 4096 GPUs per group" figures are counted.

A GPU fails at rate ``1 / gpu_mtbf_hours`` (exponential lifetimes, the only
failure law modelled), so a group of ``M`` GPUs fails at rate
``lambda = M / gpu_mtbf_hours`` per hour and the ``N M`` grouped GPUs at
``N lambda``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validation import as_choice, as_count, as_real

__all__ = ["FAILURE_LAWS", "LLAMA3_H100_GPU_MTBF_HOURS", "Scenario"]

# Llama 3 405B pre-training: 419 unexpected interruptions in 54 days on 16,384
# H100 GPUs (Dubey et al. 2024; MODEL.md section 6): 16384 * 54 * 24 / 419
# GPU-hours per failure, about 50,678.
LLAMA3_H100_GPU_MTBF_HOURS = 16384 * 54 * 24 / 419

FAILURE_LAWS = ("exponential",)


@dataclass(frozen=True)
class Scenario:
    """One training run on a cluster.

    Parameters
    ----------
    gpus : int
        GPUs available, ``G >= 1``.
    gpus_per_group : int
        GPUs per data-parallel group (one model replica), ``1 <= M <= G``.
    gpu_mtbf_hours : float
        Mean time between failures of one GPU, hours, ``> 0``.
    restart_minutes : float
        Cost ``R`` of a global restart (communicator re-initialisation and
        reload), minutes, ``>= 0``.
    checkpoint_minutes : float
        Cost ``delta`` of writing one checkpoint, minutes, ``>= 0``.
    work_hours : float
        Failure-free wall time of the run on all ``N`` groups with no
        redundancy and no checkpoints, hours, ``> 0``.
    failure_law : str
        ``"exponential"`` (independent exponential GPU lifetimes).

    Raises
    ------
    ValueError
        Naming the field: non-integer or boolean counts, ``gpus_per_group``
        larger than ``gpus``, NaN or infinite values, ``gpu_mtbf_hours <= 0``,
        negative costs, ``work_hours <= 0``, an unknown failure law.
    """

    gpus: int
    gpus_per_group: int
    gpu_mtbf_hours: float
    restart_minutes: float
    checkpoint_minutes: float
    work_hours: float
    failure_law: str = "exponential"

    def __post_init__(self):
        gpus = as_count(self.gpus, "gpus")
        per_group = as_count(self.gpus_per_group, "gpus_per_group", maximum=gpus)
        checked = {
            "gpus": gpus,
            "gpus_per_group": per_group,
            "gpu_mtbf_hours": as_real(
                self.gpu_mtbf_hours, "gpu_mtbf_hours", minimum=0.0, strict_minimum=True
            ),
            "restart_minutes": as_real(self.restart_minutes, "restart_minutes", minimum=0.0),
            "checkpoint_minutes": as_real(
                self.checkpoint_minutes, "checkpoint_minutes", minimum=0.0
            ),
            "work_hours": as_real(self.work_hours, "work_hours", minimum=0.0, strict_minimum=True),
            "failure_law": as_choice(self.failure_law, "failure_law", FAILURE_LAWS),
        }
        # Store the normalised values (ints for counts, floats for times).
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def groups(self) -> int:
        """``N = gpus // gpus_per_group`` data-parallel groups."""
        return self.gpus // self.gpus_per_group

    @property
    def group_failure_rate_per_hour(self) -> float:
        """``lambda = gpus_per_group / gpu_mtbf_hours``: failures of one group per hour."""
        return self.gpus_per_group / self.gpu_mtbf_hours

    @property
    def cluster_mtbf_minutes(self) -> float:
        """``60 / (N lambda)``: mean minutes between failures of the grouped GPUs."""
        return 60.0 / (self.groups * self.group_failure_rate_per_hour)

    @classmethod
    def published_600k(
        cls,
        gpus_per_group: int = 2048,
        *,
        checkpoint_minutes: float = 5.0,
        work_hours: float = 720.0,
        restart_minutes: float = 60.0,
    ) -> Scenario:
        """The published scenario: 600,000 H100 GPUs, Llama-3-derived per-GPU MTBF, 60 min restart.

        The cluster MTBF is ``60 * 50,678 / 600,000 = 5.07`` minutes.  The
        checkpoint cost and the work are not published; the defaults (5 min,
        720 h = 30 days) are this package's choice.
        """
        return cls(
            gpus=600_000,
            gpus_per_group=gpus_per_group,
            gpu_mtbf_hours=LLAMA3_H100_GPU_MTBF_HOURS,
            restart_minutes=restart_minutes,
            checkpoint_minutes=checkpoint_minutes,
            work_hours=work_hours,
        )

    def __str__(self) -> str:
        return (
            f"{self.gpus:,} GPUs in N={self.groups:,} groups of {self.gpus_per_group}, "
            f"GPU MTBF {self.gpu_mtbf_hours:,.0f} h (cluster {self.cluster_mtbf_minutes:.3g} min), "
            f"R={self.restart_minutes:g} min, delta={self.checkpoint_minutes:g} min, "
            f"work {self.work_hours:g} h"
        )
