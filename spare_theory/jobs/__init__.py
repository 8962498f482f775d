"""Layer 7: a training job on a cluster, from model size and bandwidths to a scenario."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "CHECKPOINT_TIERS": "job",
        "GPU_PRESETS": "job",
        "GpuPreset": "job",
        "Job": "job",
        "JobFile": "files",
        "load_job_file": "files",
        "megascale_init_seconds": "job",
    },
)
