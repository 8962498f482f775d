"""Run independent tasks serially or on any ``concurrent.futures.Executor``.

Every task carries its own seed (derived from the user's seed and the task's
index with :func:`spare_theory._validation.child_seed`), so results are
identical serially, in a process pool or on a Dask cluster
(``dask.distributed.Client(...).get_executor()``): where a task runs never
changes what it computes.  Results come back in task order.
"""

from __future__ import annotations

import concurrent.futures as cf
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tqdm.auto import tqdm

__all__ = ["map_tasks", "progress_bar"]


def progress_bar(total: int, desc: str, progress: bool = True) -> tqdm:
    """A tqdm bar on stderr that disappears when done; hidden when ``progress`` is false.

    Parameters
    ----------
    total : int
        Number of steps.
    desc : str
        Label.
    progress : bool
        Show the bar.

    Returns
    -------
    tqdm.auto.tqdm
        A context manager; call ``.update(1)`` per step.

    Examples
    --------
    >>> from spare_theory._parallel import progress_bar
    >>> with progress_bar(3, "cells", progress=False) as bar:
    ...     for _ in range(3):
    ...         _ = bar.update(1)
    >>> bar.total, bar.disable
    (3, True)
    """
    return tqdm(total=total, desc=desc, disable=not progress, file=sys.stderr, leave=False)


def map_tasks(
    func: Callable[..., Any],
    tasks: Sequence[Any] | Iterable[Any],
    *,
    executor: cf.Executor | None = None,
    desc: str = "",
    progress: bool = True,
) -> list[Any]:
    """``[func(task) for task in tasks]``, optionally on ``executor``, with a progress bar.

    Parameters
    ----------
    func : callable
        A picklable function of one argument (a module-level function).
    tasks : sequence
        Arguments, one per task; each should carry its own seed.
    executor : concurrent.futures.Executor, optional
        Where to run; ``None`` runs serially in this process.
    desc : str
        Label of the progress bar.
    progress : bool
        Show a progress bar on stderr.

    Returns
    -------
    list
        ``func(task)`` for every task, in task order.

    Examples
    --------
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> from spare_theory._parallel import map_tasks
    >>> map_tasks(abs, [-2, 3, -5], progress=False)
    [2, 3, 5]
    >>> with ThreadPoolExecutor(2) as pool:
    ...     map_tasks(abs, [-2, 3, -5], executor=pool, progress=False)
    [2, 3, 5]
    """
    tasks = list(tasks)
    results: list[Any] = [None] * len(tasks)
    with progress_bar(len(tasks), desc, progress) as bar:
        if executor is None:
            for i, task in enumerate(tasks):
                results[i] = func(task)
                bar.update(1)
            return results
        futures = {executor.submit(func, task): i for i, task in enumerate(tasks)}
        for future in cf.as_completed(futures):
            results[futures[future]] = future.result()
            bar.update(1)
    return results
