"""A training job on a cluster: from model size and bandwidths to a scenario and a cost model.

A planner knows the model size, the parallel layout, the GPU type, the
storage and network bandwidths and the price of a GPU-hour; a
:class:`~spare_theory.hourly.scenario.Scenario` asks for the restart and
checkpoint costs those imply.  :class:`Job` derives them, exactly, with
``state = parameters x bytes_per_parameter`` bytes:

- ``restart_minutes = (detect_seconds + schedule_seconds + init_seconds +
  restore) / 60``, ``restore = state / (storage_read_gbps x 1e9)`` for a
  ``"persistent"`` checkpoint tier, ``state / (gpus_per_group x network_gbps
  x 1e9)`` for ``"memory"`` (copies in peer groups' host memory, restored
  from a live peer, as torchft and Gemini do);
- ``checkpoint_minutes = state / (storage_write_gbps x 1e9) / 60`` for a
  synchronous persistent checkpoint, ``state / (gpus_per_group x
  host_copy_gbps x 1e9) / 60`` when ``checkpoint_async`` or the tier is
  ``"memory"`` (the stall is the copy to host memory).

The GPU presets (:data:`GPU_PRESETS`) give a per-GPU MTBF and the busy and
idle power, each with its source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .._validation import as_choice, as_count, as_real
from ..hourly.scenario import LLAMA3_H100_GPU_MTBF_HOURS, Scenario
from ..lifetimes.classes import CRASH, FailureClass, check_failure_classes
from ..planning.bill import CostModel

__all__ = [
    "CHECKPOINT_TIERS",
    "GPU_PRESETS",
    "GpuPreset",
    "Job",
    "megascale_init_seconds",
]

#: Where checkpoints live: shared storage, or peer groups' host memory.
CHECKPOINT_TIERS = ("persistent", "memory")


@dataclass(frozen=True)
class GpuPreset:
    """A GPU type's per-GPU MTBF and power, with where each figure comes from.

    Attributes
    ----------
    mtbf_hours : float
        Mean time between failures of one GPU (all causes that interrupt a
        job, counted per GPU), hours.
    busy_watts, idle_watts : float
        Power of a computing and of a waiting GPU, watts.
    source : str
        The sources, in words.
    """

    mtbf_hours: float
    busy_watts: float
    idle_watts: float
    source: str


# Idle power: a seventh of the board power (100 W for a 700 W board), this
# package's assumption: NVIDIA's datasheets give only the maximum (TDP), and a
# GPU waiting through a restart keeps its memory and clocks up.
_IDLE_SHARE = 1.0 / 7.0
# Meta's RSC-1 (16k A100): 6.50 failures per 1,000 node-days of 8 GPUs
# (Kokolis et al., HPCA 2025, arXiv:2410.21680), i.e. 8 x 1000 / 6.5 days per GPU.
_A100_MTBF_HOURS = 8 * 1000 / 6.50 * 24

#: The GPU presets of :class:`Job` (``gpu=``): MTBF and power with their sources.
GPU_PRESETS: dict[str, GpuPreset] = {
    "h100": GpuPreset(
        LLAMA3_H100_GPU_MTBF_HOURS,
        700.0,
        700.0 * _IDLE_SHARE,
        "MTBF 50,677 h: 419 unexpected interruptions in a 54-day snapshot of pre-training on "
        "16,384 H100 GPUs (Dubey et al. 2024, The Llama 3 Herd of Models, section 3.3.4 and "
        "Table 4); 700 W: the H100 SXM's maximum TDP (NVIDIA H100 datasheet; Llama 3 section "
        "3.3.1: each GPU at 700 W TDP); idle a seventh of it (this package's assumption)",
    ),
    "h200": GpuPreset(
        LLAMA3_H100_GPU_MTBF_HOURS,
        700.0,
        700.0 * _IDLE_SHARE,
        "MTBF: the H100's (this package's assumption: no published H200 fleet figure; the "
        "same Hopper GPU with HBM3e memory); 700 W: the H200 SXM's maximum TDP (NVIDIA H200 "
        "datasheet); idle a seventh of it (this package's assumption)",
    ),
    "b200": GpuPreset(
        LLAMA3_H100_GPU_MTBF_HOURS,
        1000.0,
        1000.0 * _IDLE_SHARE,
        "MTBF: the H100's (this package's assumption: no published B200 fleet figure); "
        "1,000 W: a B200's TDP in HGX B200 (NVIDIA Blackwell/HGX B200 specifications); idle "
        "a seventh of it (this package's assumption)",
    ),
    "a100": GpuPreset(
        _A100_MTBF_HOURS,
        400.0,
        400.0 * _IDLE_SHARE,
        "MTBF 29,538 h: 6.50 failures per 1,000 node-days of 8 A100 GPUs on Meta's RSC-1 "
        "(Kokolis et al., HPCA 2025, Revisiting Reliability in Large-Scale Machine Learning "
        "Research Clusters, arXiv:2410.21680; the same rate gives their projected MTTF of "
        "1.8 h at 16,384 GPUs); 400 W: the A100 SXM's maximum TDP (NVIDIA A100 datasheet); "
        "idle a seventh of it (this package's assumption)",
    ),
}

# MegaScale (Jiang et al., NSDI 2024, section 3.5): after their fixes,
# communicator initialisation takes "under 5 seconds on 2048 GPUs".
_MEGASCALE_GPUS, _MEGASCALE_SECONDS = 2048, 5.0


def megascale_init_seconds(gpus: int) -> float:
    """Communicator and process-group initialisation of an optimised stack, seconds.

    ``5 G / 2048``, linear in the GPU count ``G``.  MegaScale (Jiang et
    al., NSDI 2024, section 3.5) measured Megatron-LM's NCCL communicator
    initialisation on 2,048 GPUs at about 1,047 s; replacing
    ``torch.distributed``'s TCPStore with Redis brought it to 361 s, and
    ordering the group initialisations to cut the global barrier from
    O(n^2) to O(n) to "under 5 seconds on 2048 GPUs, and to under 30
    seconds on more than 10,000 GPUs".  The line takes both bounds at their
    value: 5 s at 2,048 GPUs and 30 s at 12,288, the largest job of the
    paper; the linear growth follows the paper's O(n) barrier, and reading
    the bounds as values is this package's assumption (an upper estimate).
    The default of :attr:`Job.init_seconds`: it is the world of today's
    large runs (Llama 3's 419 interruptions in 54 days left more than 90 %
    effective training time, which restarts of a few minutes allow and a
    17-minute initialisation would not).  For the world before such fixes,
    pass ``init_seconds=1047`` (MegaScale's figure at 2,048 GPUs) or a
    function of your own.

    Parameters
    ----------
    gpus : int
        GPUs of the job, ``>= 1``.

    Returns
    -------
    float

    Examples
    --------
    >>> megascale_init_seconds(2048), megascale_init_seconds(12_288), megascale_init_seconds(16_384)
    (5.0, 30.0, 40.0)
    """
    return _MEGASCALE_SECONDS * as_count(gpus, "gpus") / _MEGASCALE_GPUS


@dataclass(frozen=True, kw_only=True)
class Job:
    """A training job: the model, the layout, the GPU and the bandwidths (module docstring).

    Parameters
    ----------
    parameters : float
        Model parameters, ``> 0``.
    bytes_per_parameter : float
        Checkpointed state per parameter, bytes, ``> 0``.  Default 14:
        16-bit weights (2) plus the optimizer state of mixed-precision Adam,
        an fp32 copy of the weights, momentum and variance (12); ZeRO
        (Rajbhandari et al., SC 2020, section 3.1) counts these model states
        as 2 + 2 + 12 = 16 bytes, the other 2 being the 16-bit gradients,
        which a checkpoint leaves out (this package's reading).
    gpus : int
        GPUs of the job, ``>= 1``.
    gpus_per_group : int
        GPUs of one model replica (tensor x pipeline parallel), ``1 <= M <= gpus``.
    gpus_per_node : int
        GPUs per node, ``>= 1`` (default 8).
    gpu : {"h100", "h200", "b200", "a100"}
        A preset of :data:`GPU_PRESETS` (default ``"h100"``).
    gpu_mtbf_hours, busy_watts_per_gpu, idle_watts_per_gpu : float, optional
        Override the preset's MTBF (hours, ``> 0``) and powers (watts).
    work_hours : float
        Failure-free wall time of the run, hours, ``> 0``.
    storage_write_gbps, storage_read_gbps : float
        Aggregate bandwidth of the shared checkpoint storage, GB/s, ``> 0``.
        Default 2,000: the sustained throughput of the Tectonic storage that
        Llama 3 checkpointed to (Dubey et al. 2024, section 3.3.1, Storage:
        240 PB on 7,500 servers, 2 TB/s sustained, 7 TB/s peak).
    host_copy_gbps : float
        Device-to-host copy bandwidth per GPU, GB/s, ``> 0``.  Default 25:
        this package's assumption, about 40 % of a PCIe Gen 5 x16 link's
        64 GB/s per direction (the H100 SXM datasheet gives 128 GB/s for
        both directions), allowing for pinned-memory copies beside training
        traffic.
    network_gbps : float
        Network bandwidth per GPU, GB/s, ``> 0``.  Default 50: 400 Gb/s per
        GPU, Llama 3's RoCE and InfiniBand clusters' "400 Gbps interconnects
        between GPUs" (Dubey et al. 2024, section 3.3.1, Network).
    detect_seconds : float
        Time to detect a failure, seconds, ``>= 0``.  Default 60: the default
        ``timeout=timedelta(seconds=60)`` of torchft's ``Manager``, the
        timeout of its collectives and RPCs (``torchft/manager.py``).
    schedule_seconds : float
        Time to get replacement nodes into the job, seconds, ``>= 0``.
        Default 60: a warm standby (ByteRobust, SOSP 2025, keeps warm
        standbys), this package's allowance.
    init_seconds : float or callable
        Communicator and process-group initialisation, seconds, ``>= 0``, or
        a function of the GPU count; default :func:`megascale_init_seconds`.
    checkpoint_tier : {"persistent", "memory"}
        Where checkpoints live (default ``"persistent"``).
    checkpoint_async : bool
        Whether a persistent checkpoint is written in the background after a
        copy to host memory (default False).
    failure_classes : tuple of FailureClass
        The classes of the failures, passed to the scenario
        (:attr:`Scenario.failure_classes
        <spare_theory.hourly.scenario.Scenario.failure_classes>`); default
        one crash noticed at once.  A class's ``detect_minutes`` is the time
        a failure goes unnoticed before the restart's own detection
        (``detect_seconds``) starts: a hang until its timeout.

    Raises
    ------
    ValueError
        Naming the field: a negative, zero or NaN size or bandwidth, an
        unknown ``gpu`` or ``checkpoint_tier``, a group larger than the job.


    Notes
    -----
    Fields read only with another: alone they leave a front door's answer
    exactly as it is (a test checks it), because what they describe does not
    arise without the other.

    - ``host_copy_gbps``: only with ``checkpoint_tier="memory"`` or
      ``checkpoint_async``; a synchronous persistent checkpoint is written
      from the GPUs to storage.
    - ``network_gbps``: only with ``checkpoint_tier="memory"``; the other
      tier does not send checkpoints to peers.

    Examples
    --------
    >>> job = Job(parameters=405e9, gpus=16_384, gpus_per_group=128, work_hours=1000)
    >>> round(job.state_bytes / 1e12, 2), round(job.restart_minutes, 3)
    (5.67, 2.714)
    >>> round(job.checkpoint_minutes * 60, 3), job.gpu_mtbf == job.scenario().gpu_mtbf_hours
    (2.835, True)
    """

    parameters: float
    bytes_per_parameter: float = 14.0
    gpus: int
    gpus_per_group: int
    gpus_per_node: int = 8
    gpu: str = "h100"
    gpu_mtbf_hours: float | None = None
    busy_watts_per_gpu: float | None = None
    idle_watts_per_gpu: float | None = None
    work_hours: float
    storage_write_gbps: float = 2000.0
    storage_read_gbps: float = 2000.0
    host_copy_gbps: float = 25.0
    network_gbps: float = 50.0
    detect_seconds: float = 60.0
    schedule_seconds: float = 60.0
    init_seconds: float | Callable[[int], float] = megascale_init_seconds
    checkpoint_tier: str = "persistent"
    checkpoint_async: bool = False
    failure_classes: tuple[FailureClass, ...] = (CRASH,)

    def __post_init__(self) -> None:
        positive = ("parameters", "bytes_per_parameter", "work_hours")
        bandwidths = ("storage_write_gbps", "storage_read_gbps", "host_copy_gbps", "network_gbps")
        checked: dict[str, Any] = {
            name: as_real(getattr(self, name), name, minimum=0.0, strict_minimum=True)
            for name in (*positive, *bandwidths)
        }
        for name in ("detect_seconds", "schedule_seconds"):
            checked[name] = as_real(getattr(self, name), name, minimum=0.0)
        checked["gpus"] = as_count(self.gpus, "gpus")
        checked["gpus_per_group"] = as_count(
            self.gpus_per_group, "gpus_per_group", maximum=checked["gpus"]
        )
        checked["gpus_per_node"] = as_count(self.gpus_per_node, "gpus_per_node")
        checked["gpu"] = as_choice(self.gpu, "gpu", tuple(GPU_PRESETS))
        checked["checkpoint_tier"] = as_choice(
            self.checkpoint_tier, "checkpoint_tier", CHECKPOINT_TIERS
        )
        checked["failure_classes"] = check_failure_classes(self.failure_classes)
        if not isinstance(self.checkpoint_async, bool):
            raise ValueError(f"checkpoint_async must be a bool, got {self.checkpoint_async!r}")
        if self.gpu_mtbf_hours is not None:
            checked["gpu_mtbf_hours"] = as_real(
                self.gpu_mtbf_hours, "gpu_mtbf_hours", minimum=0.0, strict_minimum=True
            )
        for name in ("busy_watts_per_gpu", "idle_watts_per_gpu"):
            if getattr(self, name) is not None:
                checked[name] = as_real(getattr(self, name), name, minimum=0.0)
        if callable(self.init_seconds):  # its value at this job's size, checked once
            as_real(self.init_seconds(checked["gpus"]), "init_seconds", minimum=0.0)
        else:
            checked["init_seconds"] = as_real(self.init_seconds, "init_seconds", minimum=0.0)
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def preset(self) -> GpuPreset:
        """The GPU preset (:data:`GPU_PRESETS`)."""
        return GPU_PRESETS[self.gpu]

    @property
    def gpu_mtbf(self) -> float:
        """Per-GPU MTBF, hours: ``gpu_mtbf_hours`` or the preset's."""
        return self.preset.mtbf_hours if self.gpu_mtbf_hours is None else self.gpu_mtbf_hours

    @property
    def state_bytes(self) -> float:
        """``parameters x bytes_per_parameter``: the checkpointed state, bytes."""
        return self.parameters * self.bytes_per_parameter

    @property
    def init(self) -> float:
        """``init_seconds`` at this job's GPU count, seconds (checked ``>= 0``)."""
        if callable(self.init_seconds):
            return as_real(self.init_seconds(self.gpus), "init_seconds", minimum=0.0)
        return float(self.init_seconds)

    @property
    def restore_seconds(self) -> float:
        """Reading the state back: from storage, or from a live peer group's host memory."""
        if self.checkpoint_tier == "memory":
            return self.state_bytes / (self.gpus_per_group * self.network_gbps * 1e9)
        return self.state_bytes / (self.storage_read_gbps * 1e9)

    @property
    def restart_minutes(self) -> float:
        """``(detect_seconds + schedule_seconds + init_seconds + restore) / 60``, minutes."""
        return (self.detect_seconds + self.schedule_seconds + self.init + self.restore_seconds) / 60

    @property
    def checkpoint_minutes(self) -> float:
        """The stall of one checkpoint, minutes: a write to storage or a copy to host memory."""
        if self.checkpoint_async or self.checkpoint_tier == "memory":
            return self.state_bytes / (self.gpus_per_group * self.host_copy_gbps * 1e9) / 60
        return self.state_bytes / (self.storage_write_gbps * 1e9) / 60

    def _notes(self) -> dict[str, str]:
        """The sentence of each derived field (the scenario's provenance)."""
        tb = self.state_bytes / 1e12
        state = (
            f"{tb:.4g} TB of state ({self.parameters:.4g} parameters x "
            f"{self.bytes_per_parameter:g} bytes)"
        )
        if self.checkpoint_tier == "memory":
            restore = (
                f"restore {self.restore_seconds:.4g} s: {state} from a live peer over "
                f"{self.gpus_per_group} GPUs x {self.network_gbps:g} GB/s"
            )
        else:
            restore = (
                f"restore {self.restore_seconds:.4g} s: {state} read at "
                f"{self.storage_read_gbps:g} GB/s"
            )
        init = (
            f"{self.init_seconds.__name__}({self.gpus})" if callable(self.init_seconds) else "given"
        )
        if self.checkpoint_async or self.checkpoint_tier == "memory":
            why = "asynchronous" if self.checkpoint_async else "in peers' host memory"
            ckpt = (
                f"{state} copied to host memory ({why}) over {self.gpus_per_group} GPUs x "
                f"{self.host_copy_gbps:g} GB/s: {self.checkpoint_minutes * 60:.4g} s"
            )
        else:
            ckpt = (
                f"{state} written synchronously at {self.storage_write_gbps:g} GB/s: "
                f"{self.checkpoint_minutes * 60:.4g} s"
            )
        mtbf = (
            f"the {self.gpu} preset: {self.preset.source}"
            if self.gpu_mtbf_hours is None
            else "given"
        )
        return {
            "restart_minutes": (
                f"(detect {self.detect_seconds:g} s + schedule {self.schedule_seconds:g} s + "
                f"init {self.init:.4g} s ({init}) + {restore}) / 60"
            ),
            "checkpoint_minutes": ckpt,
            "gpu_mtbf_hours": mtbf,
        }

    def scenario(self, *, failure_log: Any = None, **overrides: Any) -> Scenario:
        """The job's :class:`~spare_theory.hourly.scenario.Scenario`, each derived field explained.

        ``restart_minutes``, ``checkpoint_minutes`` and ``gpu_mtbf_hours`` come
        from the job (module docstring), with their sentences in
        ``provenance``; ``gpus``, ``gpus_per_group``, ``gpus_per_node`` and
        ``work_hours`` are the job's.

        Parameters
        ----------
        failure_log : FailureLog, optional
            Take the failure fields from this log instead
            (:meth:`FailureLog.scenario
            <spare_theory.traces.failure_log.FailureLog.scenario>`, whose
            keywords ``law``, ``renewal``, ``lemons``, ``bursts``,
            ``repair_law`` pass through ``overrides``); its provenance is kept.
        **overrides
            Scenario fields that replace the job's (their sentences are dropped).

        Returns
        -------
        Scenario

        Raises
        ------
        ValueError
            Naming the field, as the Scenario (or the log's scenario) does.

        Notes
        -----
        Fields with no effect here:

        - ``busy_watts_per_gpu``, ``idle_watts_per_gpu``: powers, which
          :meth:`cost_model` prices; a scenario has no power field.

        Examples
        --------
        >>> job = Job(parameters=70e9, gpus=2048, gpus_per_group=64, work_hours=500)
        >>> sc = job.scenario(restart_minutes=10)
        >>> sc.groups, sc.restart_minutes, round(sc.checkpoint_minutes * 60, 3)
        (32, 10.0, 0.49)
        >>> sorted(dict(sc.provenance))
        ['checkpoint_minutes', 'gpu_mtbf_hours']
        """
        notes = self._notes()
        fields: dict[str, Any] = {
            "gpus": self.gpus,
            "gpus_per_group": self.gpus_per_group,
            "gpus_per_node": self.gpus_per_node,
            "work_hours": self.work_hours,
            "restart_minutes": self.restart_minutes,
            "checkpoint_minutes": self.checkpoint_minutes,
            "failure_classes": self.failure_classes,
        }
        if failure_log is None:
            fields["gpu_mtbf_hours"] = self.gpu_mtbf
            fields.update(overrides)
            notes = {k: v for k, v in notes.items() if k not in overrides}
            return Scenario(**fields, provenance=tuple(sorted(notes.items())))
        notes.pop("gpu_mtbf_hours")
        fields.update(overrides)
        notes = {k: v for k, v in notes.items() if k not in overrides}
        sc = failure_log.scenario(**fields)
        return replace(sc, provenance=tuple(sorted({**dict(sc.provenance), **notes}.items())))

    def cost_model(self, **fields: Any) -> CostModel:
        """A :class:`~spare_theory.planning.bill.CostModel` with this job's GPU powers.

        The busy and idle watts are the job's (the preset's unless
        overridden); ``fields`` set the others (``gpu_hour_usd``, ``pue``,
        ``kg_co2_per_kwh``) or override the watts.

        Notes
        -----
        Fields with no effect here:

        - ``parameters``, ``bytes_per_parameter``, ``gpus``, ``gpus_per_group``,
          ``gpus_per_node``, ``gpu_mtbf_hours``, ``work_hours``,
          ``storage_write_gbps``, ``storage_read_gbps``, ``host_copy_gbps``,
          ``network_gbps``, ``detect_seconds``, ``schedule_seconds``,
          ``init_seconds``, ``checkpoint_tier``, ``checkpoint_async``,
          ``failure_classes``: they describe the run (:meth:`scenario`); a cost
          model holds prices and powers per GPU, which a bill multiplies by the
          run's hours and GPUs.

        Examples
        --------
        >>> job = Job(parameters=7e9, gpus=64, gpus_per_group=8, work_hours=10, gpu="a100")
        >>> cost = job.cost_model(gpu_hour_usd=1.5)
        >>> cost.busy_watts_per_gpu, round(cost.idle_watts_per_gpu, 2), cost.gpu_hour_usd
        (400.0, 57.14, 1.5)
        """
        watts = {
            "busy_watts_per_gpu": self.preset.busy_watts
            if self.busy_watts_per_gpu is None
            else self.busy_watts_per_gpu,
            "idle_watts_per_gpu": self.preset.idle_watts
            if self.idle_watts_per_gpu is None
            else self.idle_watts_per_gpu,
        }
        return CostModel(**{**watts, **fields})
