"""What a plan costs: GPU-hours, dollars, energy, carbon and the lost time by cause.

A :class:`CostModel` prices a GPU-hour and says how much power a GPU draws
busy and idle; :func:`make_bill` turns a run's wall time, split into useful
work and *badput* by cause, into a :class:`Bill`.  Every estimate, plan and
simulation result has a ``bill(cost)`` method that calls it with its own
breakdown (``hourly.renewal.TrainingEstimate``, ``steps.estimate.StepEstimate``,
``planning.plan.Plan``, ``hourly.simulation.TrainingSamples``,
``steps.trials.StepSimulation``), so this module knows no strategy.

With ``G_r`` the reserved GPUs (the scenario's GPUs plus the spare nodes'
GPUs), ``G_c`` the GPUs in data-parallel groups (``N M``; left-over GPUs and
spare nodes never compute) and ``h`` the wall time in hours, exactly:

- ``gpu_hours = G_r h``; ``usd = gpu_hours x gpu_hour_usd``;
- ``busy_gpu_hours = G_c (useful_hours + sum of the busy causes)``, the busy
  causes being :data:`BUSY_CAUSES` (checkpoint writes, work lost at a
  rollback or a corruption's rollback further back, redundant compute, the
  steps a straggler slows: the GPUs compute at full power); restarts,
  reconfiguration stalls, the waits until a failure is noticed, the shrunken
  batch of an elastic job (its down groups) and hot spares waiting idle;
- ``energy_mwh = pue (busy_gpu_hours x busy_watts_per_gpu + (gpu_hours -
  busy_gpu_hours) x idle_watts_per_gpu) / 1e6``; ``co2_tonnes = energy_mwh x
  kg_co2_per_kwh``;
- ``useful_hours + sum(badput_hours.values()) == hours``.

The badput hours are wall time in the units of the estimates' breakdowns
(hours of the whole cluster), so a cause that idles only part of the cluster
(the spare groups of hot spares, an elastic job's down groups) is charged as
the wall time the whole cluster would need for the same loss: ``G_c`` times
it is the GPU-hours the part idles.  An approximation: the groups that SPARe
and Rep have lost since the last restart (masked until it) count as busy
while the others compute.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._samples import TrialSamples
from .._validation import as_count, as_real

__all__ = [
    "BADPUT_CAUSES",
    "BUSY_CAUSES",
    "Bill",
    "BillSamples",
    "CostModel",
    "make_bill",
    "split_redundancy",
]

#: The causes of lost time, in the shape goodput tools use (the ``BadputType``
#: of Google's ml-goodput-measurement has unproductive checkpoint save and
#: restore time, wasted progress from disruption and infrastructure recovery
#: from disruption, among others).  The last three come from failure classes
#: (:class:`~spare_theory.lifetimes.classes.FailureClass`): ``detection``, the
#: wall time until a failure is noticed (before a restart, or a stall of a job
#: that survives it); ``slowdown``, the compute time a straggler's slowed steps
#: add to the work kept; ``rollback``, the work a corruption sends back beyond the
#: last checkpoint (the rest of the work lost at a wipe-out is ``wasted_progress``).
BADPUT_CAUSES = (
    "checkpoint_save",
    "wasted_progress",
    "restart",
    "redundant_compute",
    "reconfiguration",
    "skipped_samples",
    "idle_spares",
    "detection",
    "slowdown",
    "rollback",
)

#: The causes during which the computing GPUs draw their busy power.
BUSY_CAUSES = frozenset(
    {"checkpoint_save", "wasted_progress", "redundant_compute", "slowdown", "rollback"}
)


@dataclass(frozen=True, kw_only=True)
class CostModel:
    """The price of a GPU-hour and the power a GPU draws.

    Parameters
    ----------
    gpu_hour_usd : float
        Price of one GPU for one hour, US dollars, ``>= 0``.  Default 2.99:
        this package's assumption of a typical on-demand H100 SXM price,
        within the $1.50-4 per GPU-hour that price comparisons of 2026 list
        across providers.  It was first cited as Lambda's price of an
        H100 in an 8-GPU instance, which no copy of lambda.ai/pricing at hand
        confirms; prices move often and differ by provider, so set your own.
    busy_watts_per_gpu : float
        Power of a computing GPU, watts, ``>= 0``.  Default 700: the maximum
        TDP of an H100 SXM ("up to 700 W (configurable)", NVIDIA H100 Tensor
        Core GPU datasheet; Llama 3's H100s ran "at 700W TDP", Dubey et al.
        2024, section 3.3.1).
    idle_watts_per_gpu : float
        Power of a reserved GPU that waits (restart, stall, spare), watts,
        ``0 <= idle <= busy``.  Default 100: a seventh of the board power,
        this package's assumption (NVIDIA's datasheets give only the maximum;
        a waiting GPU keeps its memory and clocks up).
    pue : float
        Power usage effectiveness of the data centre (facility energy over IT
        energy), ``>= 1``.  Default 1.10: the average annual PUE of Google's
        data centres in 2023, against an industry average of 1.58 (Google,
        "Our 2024 Environmental Report", blog.google, July 2024).
    kg_co2_per_kwh : float
        Carbon intensity of the electricity, kg CO2 per kWh, ``>= 0``.
        Default 0.3734: the US national average CO2 output emission rate of
        EPA eGRID2022 (2022 data), 823.1 lb/MWh x 0.45359237 kg/lb, as EPA's
        Greenhouse Gas Equivalencies Calculator ("Calculations and
        References") uses it.

    Raises
    ------
    ValueError
        Naming the field: a negative or non-finite value, ``pue < 1``, an
        idle power above the busy power.

    Examples
    --------
    >>> cost = CostModel(gpu_hour_usd=2.0)
    >>> cost.gpu_hour_usd, cost.busy_watts_per_gpu, cost.pue
    (2.0, 700.0, 1.1)
    >>> CostModel(pue=0.9)
    Traceback (most recent call last):
    ...
    ValueError: pue must be >= 1.0, got 0.9
    """

    gpu_hour_usd: float = 2.99
    busy_watts_per_gpu: float = 700.0
    idle_watts_per_gpu: float = 100.0
    pue: float = 1.10
    kg_co2_per_kwh: float = 0.3734

    def __post_init__(self) -> None:
        for name in ("gpu_hour_usd", "busy_watts_per_gpu", "idle_watts_per_gpu", "kg_co2_per_kwh"):
            object.__setattr__(self, name, as_real(getattr(self, name), name, minimum=0.0))
        object.__setattr__(self, "pue", as_real(self.pue, "pue", minimum=1.0))
        if self.idle_watts_per_gpu > self.busy_watts_per_gpu:
            raise ValueError(
                f"idle_watts_per_gpu={self.idle_watts_per_gpu:g} must not exceed "
                f"busy_watts_per_gpu={self.busy_watts_per_gpu:g}"
            )


@dataclass(frozen=True)
class Bill:
    """What one run costs (module docstring: the formulas).

    Attributes
    ----------
    hours : float
        Wall time, hours.
    gpu_hours : float
        Every reserved GPU (the scenario's GPUs plus spare nodes' GPUs) for
        the whole wall time.
    busy_gpu_hours : float
        GPU-hours spent computing or checkpointing.
    usd : float
        ``gpu_hours x gpu_hour_usd``, US dollars.
    energy_mwh : float
        ``pue (busy_gpu_hours x busy_watts + idle GPU-hours x idle_watts) / 1e6``, MWh.
    co2_tonnes : float
        ``energy_mwh x kg_co2_per_kwh``, tonnes of CO2.
    useful_hours : float
        The failure-free work, hours.
    badput_hours : dict of str to float
        Lost wall time by cause (:data:`BADPUT_CAUSES`, zero where a cause
        does not apply): ``useful_hours + sum(badput_hours.values()) == hours``.

    Examples
    --------
    >>> bill = make_bill(CostModel(), hours=10.0, useful_hours=8.0,
    ...                  badput_hours={"restart": 1.5, "checkpoint_save": 0.5},
    ...                  reserved_gpus=16, grouped_gpus=16)
    >>> bill.gpu_hours, bill.busy_gpu_hours, round(bill.usd, 2)
    (160.0, 136.0, 478.4)
    >>> round(bill.energy_mwh, 6), bill.badput_hours["restart"], bill.badput_hours["idle_spares"]
    (0.10736, 1.5, 0.0)
    """

    hours: float
    gpu_hours: float
    busy_gpu_hours: float
    usd: float
    energy_mwh: float
    co2_tonnes: float
    useful_hours: float
    badput_hours: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        """The bill as plain data (``badput_hours`` a nested dict), for JSON."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["badput_hours"] = dict(self.badput_hours)
        return out


@dataclass(frozen=True)
class BillSamples(TrialSamples):
    """The bill of every trial of a simulation: one array entry per trial.

    ``mean(name)`` and ``standard_error(name)`` over trials for each field
    (the causes as ``<cause>_hours``); :meth:`trial` is one trial's
    :class:`Bill` and :meth:`mean_bill` the bill of the means (the identities
    hold for it: they are linear).

    Examples
    --------
    >>> import numpy as np
    >>> bills = make_bill(CostModel(), hours=np.array([10.0, 12.0]),
    ...                   useful_hours=np.array([8.0, 8.0]),
    ...                   badput_hours={"restart": np.array([2.0, 4.0])},
    ...                   reserved_gpus=8, grouped_gpus=8)
    >>> bills.trials, bills.mean("usd"), bills.mean("restart_hours")
    (2, 263.12, 3.0)
    >>> bills.mean_bill().badput_hours["restart"], bills.trial(1).hours
    (3.0, 12.0)
    """

    hours: np.ndarray
    gpu_hours: np.ndarray
    busy_gpu_hours: np.ndarray
    usd: np.ndarray
    energy_mwh: np.ndarray
    co2_tonnes: np.ndarray
    useful_hours: np.ndarray
    checkpoint_save_hours: np.ndarray
    wasted_progress_hours: np.ndarray
    restart_hours: np.ndarray
    redundant_compute_hours: np.ndarray
    reconfiguration_hours: np.ndarray
    skipped_samples_hours: np.ndarray
    idle_spares_hours: np.ndarray
    detection_hours: np.ndarray
    slowdown_hours: np.ndarray
    rollback_hours: np.ndarray

    def _bill(self, pick: Any) -> Bill:
        values = {f.name: pick(getattr(self, f.name)) for f in fields(self)}
        badput = {cause: values.pop(f"{cause}_hours") for cause in BADPUT_CAUSES}
        return Bill(**values, badput_hours=badput)

    def trial(self, i: int) -> Bill:
        """The bill of trial ``i``."""
        i = as_count(i, "i", minimum=0, maximum=self.trials - 1)
        return self._bill(lambda a: float(a[i]))

    def mean_bill(self) -> Bill:
        """The bill of the means over trials (every field the mean of its trials)."""
        return self._bill(lambda a: float(np.mean(a)))


def split_redundancy(
    useful_hours: ArrayLike,
    redundancy_hours: ArrayLike,
    samples_skipped: ArrayLike,
    idle_share: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split an estimate's redundancy time into skipped samples, idle spares and the rest.

    An elastic job computing with ``A`` of ``N`` groups at most trains, over
    the work kept ``U``, the batch it would have had at ``A`` groups,
    ``B = U / (1 - s)`` (``s`` the share of samples skipped); at ``A`` groups
    the cluster runs at ``A / N`` of its rate, so (``i = 1 - A / N``):

    - ``skipped_samples = B - U``;
    - ``idle_spares = B i / (1 - i)``;
    - the rest, ``redundancy - skipped - idle``: the strategy's own (redundant
      compute for Rep and SPARe, reconfiguration stalls for elastic jobs).

    Parameters
    ----------
    useful_hours, redundancy_hours : array_like
        ``U`` and the estimate's redundancy time, hours.
    samples_skipped : array_like
        ``s``, ``0 <= s < 1``.
    idle_share : float
        ``i``, the share of the groups held idle as spares, ``0 <= i < 1``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(skipped, idle, rest)``, hours; they add up to ``redundancy_hours``.

    Examples
    --------
    >>> [round(float(x), 6) for x in split_redundancy(100.0, 30.0, 0.1, 0.05)]
    [11.111111, 5.847953, 13.040936]
    """
    U = np.asarray(useful_hours, dtype=float)
    s = np.asarray(samples_skipped, dtype=float)
    i = as_real(idle_share, "idle_share", minimum=0.0, maximum=1.0)
    batch = U / (1.0 - s)
    skipped = batch - U
    idle = batch * (i / (1.0 - i))
    return skipped, idle, np.asarray(redundancy_hours, dtype=float) - skipped - idle


def make_bill(
    cost: CostModel,
    *,
    hours: ArrayLike,
    useful_hours: ArrayLike,
    badput_hours: Mapping[str, ArrayLike],
    reserved_gpus: int,
    grouped_gpus: int,
) -> Any:
    """The :class:`Bill` of a run (a :class:`BillSamples` for arrays of trials).

    Parameters
    ----------
    cost : CostModel
        Prices and powers.
    hours, useful_hours : float or array_like
        Wall time and useful work, hours (one entry per trial for a simulation).
    badput_hours : mapping of str to float or array_like
        Lost wall time by cause; keys among :data:`BADPUT_CAUSES` (missing
        causes are zero).  With ``useful_hours`` they must add up to
        ``hours`` (the estimates' breakdowns do).
    reserved_gpus : int
        GPUs reserved for the run, ``G_r >= 1``.
    grouped_gpus : int
        GPUs that compute (in groups), ``1 <= G_c <= G_r``.

    Returns
    -------
    Bill or BillSamples
        A :class:`Bill` for scalar hours, a :class:`BillSamples` otherwise.

    Raises
    ------
    ValueError
        Naming the argument: an unknown cause, infinite or NaN hours (a run
        that never finishes has no bill), a negative cause, GPU counts out
        of range.

    Examples
    --------
    >>> b = make_bill(CostModel(gpu_hour_usd=1.0), hours=3.0, useful_hours=2.0,
    ...               badput_hours={"redundant_compute": 1.0}, reserved_gpus=10,
    ...               grouped_gpus=8)
    >>> b.gpu_hours, b.busy_gpu_hours, b.usd
    (30.0, 24.0, 30.0)
    """
    if not isinstance(cost, CostModel):
        raise ValueError(f"cost must be a CostModel, got {type(cost).__name__}")
    unknown = sorted(set(badput_hours) - set(BADPUT_CAUSES))
    if unknown:
        raise ValueError(f"badput_hours: unknown cause(s) {unknown}, known: {list(BADPUT_CAUSES)}")
    reserved = as_count(reserved_gpus, "reserved_gpus")
    grouped = as_count(grouped_gpus, "grouped_gpus", maximum=reserved)
    scalar = np.ndim(hours) == 0
    h = np.atleast_1d(np.asarray(hours, dtype=float))
    arrays = {"hours": h, "useful_hours": np.asarray(useful_hours, dtype=float)}
    for cause in BADPUT_CAUSES:
        arrays[f"{cause}_hours"] = np.asarray(badput_hours.get(cause, 0.0), dtype=float)
    arrays = {k: np.broadcast_to(v, h.shape).astype(float) for k, v in arrays.items()}
    for name, values in arrays.items():
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{name} must be finite (a run that never finishes has no bill)")
        # Parts split from a total may round a hair below zero.
        if np.any(values < -1e-9 * h):
            raise ValueError(f"{name} must be >= 0, got {values.min():g}")
    busy_hours = arrays["useful_hours"] + sum(arrays[f"{c}_hours"] for c in sorted(BUSY_CAUSES))
    gpu_hours = reserved * h
    busy = grouped * busy_hours
    energy = (
        cost.pue
        * (busy * cost.busy_watts_per_gpu + (gpu_hours - busy) * cost.idle_watts_per_gpu)
        / 1e6
    )
    arrays.update(
        gpu_hours=gpu_hours,
        busy_gpu_hours=busy,
        usd=gpu_hours * cost.gpu_hour_usd,
        energy_mwh=energy,
        co2_tonnes=energy * cost.kg_co2_per_kwh,
    )
    samples = BillSamples(**arrays)
    return samples.trial(0) if scalar else samples
