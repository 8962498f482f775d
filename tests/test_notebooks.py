"""Every notebook runs top to bottom on a fresh kernel and is committed clean."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

# ``jupyter nbconvert --execute`` writes NAME.nbconvert.ipynb beside each notebook
# (ignored by git): those are outputs, not notebooks of the project.
NOTEBOOKS = sorted(
    p
    for p in (Path(__file__).parent.parent / "notebooks").glob("*.ipynb")
    if not p.name.endswith(".nbconvert.ipynb")
)


def test_the_four_notebooks_exist():
    assert [p.name for p in NOTEBOOKS] == [
        "01_endurable_failures.ipynb",
        "02_overhead_and_reordering.ipynb",
        "03_optimal_redundancy.ipynb",
        "04_gpu_scale_sweeps.ipynb",
        "05_microbatch_splitting.ipynb",
        "06_repairs_and_planned_restarts.ipynb",
        "07_failure_domains.ipynb",
        "08_published_simulator.ipynb",
        "09_real_failure_log.ipynb",
        "10_plan_a_job.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_without_error(path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    # A fresh "python3" kernel (ipykernel in this environment), cwd = notebooks/;
    # any cell that raises fails the test with its traceback.
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()


def test_nbconvert_outputs_are_ignored_by_git():
    import subprocess

    root = Path(__file__).parent.parent
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    probe = "notebooks/01_endurable_failures.nbconvert.ipynb"
    result = subprocess.run(
        ["git", "check-ignore", "-q", probe], cwd=root, capture_output=True, check=False
    )
    assert result.returncode == 0, f"{probe} is not ignored by .gitignore"
