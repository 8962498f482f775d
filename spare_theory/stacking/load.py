"""The micro-batch load model ``E[min_load | f failures]`` and its window scan.

With each shard cut into ``m`` pieces that any surviving host of its type may
compute (:func:`spare_theory.stacking.stacks.min_load`), the cost of a state
is the load of the busiest host, ``ceil(m rho*) / m``, not the stack count
``S*``.  :func:`expected_load` models its mean on the cyclic ruler placement:
the counting bound ``ceil(m N / (N - f)) / m`` plus the chance that some run
of consecutive types breaks each higher level, from a Lindley walk along the
ring (the *window scan*, ``docs/theory.md`` section 7).  The tables are
computed once per ``(N, r, m)`` (:func:`load_table`); ``m = 1`` is the stacks
model :func:`~spare_theory.stacking.overhead.expected_stacks` exactly, the
counting bound ``ceil(N / (N - f))``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .._caching import cached
from .._jit import compiled
from .._validation import as_count, as_count_array
from ..placement.rulers import modular_ruler
from .stacks import load_lower_bound, stacks_lower_bound

__all__ = ["expected_load"]


def expected_load(
    N: npt.ArrayLike, r: npt.ArrayLike, failures: npt.ArrayLike, *, microbatches: int = 1
) -> float | npt.NDArray[np.float64]:
    """Model of ``E[min_load | f failures]`` with ``m`` pieces per shard (cyclic ruler placement).

    ``min_load = ceil(m rho*) / m`` with ``rho* = max_X |X| / |H(X)|`` over
    sets of types ``X`` and their surviving hosts ``H(X)``
    (:mod:`spare_theory.stacking.stacks`), so with ``lambda_k = k / m``

        E[L_f] = k_f / m + (1/m) sum_{k >= k_f} P(rho* > k / m),
        k_f = ceil(m N / (N - f))   (the counting bound, X = all types).

    **Window scan** (``docs/theory.md`` section 7).  For ``w`` consecutive
    types the surviving hosts are those of a window of ``n = w + L`` hosts
    (``L`` the ruler's largest mark), so such a set breaks load ``lambda``
    iff ``F(n) - (1 - 1/lambda) n > L / lambda`` (``F(n)`` failed hosts in
    the window).  In steps of ``1/(k g)`` (``g = gcd(m, k - m)``) that is a
    random walk ``+m/g`` per failed host, ``-(k-m)/g`` per surviving one,
    and ``P(no window breaks lambda_k)`` is the survival of its Lindley
    (reflected) walk below ``L m / g`` along the ring.  With failures
    independent with ``p = f / N`` the survival over ``N`` hosts is
    ``gamma_k(p)^N``, ``gamma_k`` the killed walk's per-host decay rate
    (quasi-stationary power iteration, ``min(N, 512)`` burn-in and
    measuring steps), computed on a grid of 24 failure counts and
    interpolated in ``log(-log P)``; ``P(rho* > k/m) = 1 - gamma_k^N``.
    Assumptions: Bernoulli instead of exactly ``f`` failures, no
    conditioning on the absence of a wipe-out, and only windows of
    consecutive types (the closure of a window, types whose outside hosts
    all failed, adds about 20 % more excess at ``r = 4``); the last two
    errors have opposite signs.  **Measured** (``spare-theory table
    microbatch``): the average overhead is within about 1 % of the exact-load
    simulation at ``N = 256, r = 4`` (high) and within 0.3-0.7 % elsewhere
    on the table's grid, against 1-5 % low for the counting bound.  Tables
    are cached per ``(N, r, m)`` (about 0.1-4 s to build); above ``m = 16``
    the scan's excess over the bound is the one at ``m = 16``, and rulers
    with ``L min(m, 16) > 600`` (``r >= 9`` at ``m = 16``) keep the counting bound, whose
    error there is under 0.5 %.  ``m = 1`` is
    :func:`~spare_theory.stacking.overhead.expected_stacks` exactly.

    Parameters
    ----------
    N : int or array_like
        Number of groups, ``N >= 1``.
    r : int or array_like
        Redundancy, ``1 <= r <= N``.
    failures : int or array_like
        ``f >= 0`` with ``ceil(N/(N-f)) <= r`` (beyond, a wipe-out is certain).
    microbatches : int, default 1
        Pieces per shard ``m >= 1``.

    Returns
    -------
    float or numpy.ndarray
        Load in shard units (step cost relative to a failure-free step).
        Without a modular ruler (``N < r(r-1)+1``) the counting bound
        ``ceil(m N/(N-f))/m``.

    Examples
    --------
    >>> from spare_theory import expected_load
    >>> expected_load(292, 8, [0, 1, 40, 100], microbatches=8).round(4).tolist()
    [1.0, 1.125, 1.25, 1.6252]
    >>> expected_load(100, 3, [0, 49, 50, 60]).tolist()  # m = 1: expected_stacks
    [1.0, 2.0, 2.0, 3.0]
    """
    m = as_count(microbatches, "microbatches", minimum=1)
    N_arr, r_arr, f_arr = np.broadcast_arrays(
        as_count_array(N, "N"),
        as_count_array(r, "r"),
        as_count_array(failures, "failures", minimum=0),
    )
    if np.any(r_arr > N_arr):
        raise ValueError("r must be <= N")
    if np.any(f_arr >= N_arr):
        raise ValueError("failures must be < N")
    stacks = np.asarray(stacks_lower_bound(N_arr, f_arr), dtype=float)
    if np.any(stacks > r_arr):
        raise ValueError(
            "failures must leave ceil(N/(N-f)) <= r: more failures make a wipe-out certain"
        )
    if m == 1:
        return float(stacks) if stacks.ndim == 0 else stacks
    out = np.asarray(load_lower_bound(N_arr, f_arr, m), dtype=float)
    scanned = (r_arr > 1) & (N_arr >= r_arr * (r_arr - 1) + 1)  # a modular ruler exists
    for n_, r_ in set(zip(N_arr[scanned].tolist(), r_arr[scanned].tolist())):
        at = scanned & (N_arr == n_) & (r_arr == r_)
        out[at] = load_table(n_, r_, m)[f_arr[at]]
    return float(out) if out.ndim == 0 else out


# Failure counts at which the scan's decay rate is computed (interpolated between).
_SCAN_GRID = 24
# Burn-in and measuring steps of the quasi-stationary power iteration (at most N each).
_SCAN_STEPS = 512
# Pieces per shard above which the scan's excess over the bound is taken from this m.
_SCAN_MAX_M = 16
# Walks with more states (L m, large r) use the counting bound: within 0.5 % from r = 8 on.
_SCAN_MAX_STATES = 600
# Levels whose break probability fell below this at a grid point are not raised further there.
_SCAN_NEGLIGIBLE = 1e-10


def _scan_log_rate(L: int, m: int, k: int, p: np.ndarray, steps: int) -> np.ndarray:
    """Per-host log-survival ``log gamma_k(p)`` of the killed Lindley walk of the window scan.

    States ``0..L m / g`` (``g = gcd(m, k - m)``): a failed host adds
    ``m / g``, a surviving one subtracts ``(k - m) / g`` (reflected at 0);
    leaving the top kills.  After ``steps`` steps of burn-in the mass lost
    per step over ``steps`` more is the decay rate (power iteration on
    the killed transfer matrix, one row per ``p``; compiled, ``_scan_rows``).
    """
    g = math.gcd(m, k - m)
    return _scan_rows(m // g, (k - m) // g, L * m // g, np.asarray(p, dtype=np.float64), steps)


@compiled
def _scan_rows(up: int, down: int, top: int, p: np.ndarray, steps: int) -> np.ndarray:
    """The power iteration of :func:`_scan_log_rate`, one walk per entry of ``p``.

    One fused pass per step: a failed host moves a state ``up`` (killed past
    the top), a surviving one ``down`` (reflected at 0), and the previous
    step's normalisation ``1 / mass`` is applied on the way.
    """
    out = np.zeros(p.size)
    for row in range(p.size):
        q = p[row]
        v = np.zeros(top + 1)
        new = np.zeros(top + 1)
        v[0] = 1.0
        scale = 1.0
        log_mass = 0.0
        for i in range(2 * steps):
            reflected = 0.0
            for j in range(down + 1):
                reflected += v[j]
            new[0] = (1.0 - q) * reflected * scale
            mass = new[0]
            for j in range(1, top + 1):
                x = 0.0
                if j >= up:
                    x += q * v[j - up]
                if j + down <= top:
                    x += (1.0 - q) * v[j + down]
                new[j] = x * scale
                mass += new[j]
            v, new = new, v
            scale = 1.0 / mass
            if i >= steps:
                log_mass += math.log(mass)
        out[row] = log_mass / steps
    return out


@cached(maxsize=128, shared=True)
def load_table(N: int, r: int, m: int) -> npt.NDArray[np.float64]:
    """``E[L_f]`` of :func:`expected_load` for ``f = 0..f_max`` (read-only; window scan).

    Above ``_SCAN_MAX_M`` pieces the scan's excess over the counting bound is
    taken from ``m = _SCAN_MAX_M`` (the excess converges as ``m`` grows; the
    walk's state count and the number of levels both grow like ``m``).
    Cached per ``(N, r, m)``; ``f_max`` is the last ``f`` with
    ``ceil(N/(N-f)) <= r`` (states beyond make a wipe-out certain).

    Examples
    --------
    >>> from spare_theory.stacking.load import load_table
    >>> table = load_table(292, 8, 8)
    >>> table.size, table[[0, 1, 40, 100]].round(4).tolist()
    (256, [1.0, 1.125, 1.25, 1.6252])
    """
    f = np.arange(N)
    kb = -(-(m * N) // (N - f))
    f = f[kb <= m * r]
    kb = kb[: f.size]
    e = kb / m
    if m > _SCAN_MAX_M:
        coarse = load_table(N, r, _SCAN_MAX_M)
        n = min(coarse.size, e.size)
        fine = coarse[:n] - load_lower_bound(N, f[:n], _SCAN_MAX_M) + e[:n]
        out = np.minimum(np.concatenate([fine, e[n:]]), r)
        out.flags.writeable = False
        return out
    L = int(max(modular_ruler(N, r)))
    if L * min(m, _SCAN_MAX_M) > _SCAN_MAX_STATES:  # long rulers: the bound (< 0.5 % low)
        out = np.minimum(e, r)
        out.flags.writeable = False
        return out
    base = np.unique(np.linspace(0, f[-1], _SCAN_GRID).round().astype(np.int64))
    steps = min(N, _SCAN_STEPS)
    last: dict[int, float] = {}
    for k in range(m, m * r):
        crit = int(np.searchsorted(kb, k, side="right")) - 1  # last f with k_f <= k
        if crit < 0:
            continue
        if k == m:  # rho* > 1 whenever f >= 1: the bound's own level
            continue
        keep = [x for x in base.tolist() if kb[x] <= k and last.get(x, 1.0) > _SCAN_NEGLIGIBLE]
        pts = np.unique(np.array([*keep, crit], dtype=np.int64))
        broken = -np.expm1(N * _scan_log_rate(L, m, k, pts / N, steps))
        last.update(zip(pts.tolist(), broken.tolist()))
        # log(-log P(no break)) is close to linear in f between grid points.
        rate = np.log(np.maximum(-np.log1p(-np.minimum(broken, 1.0 - 1e-16)), 1e-300))
        inside = (f >= pts[0]) & (f <= crit)
        estimate = -np.expm1(-np.exp(np.interp(f, pts, rate)))
        e += np.where(inside, estimate, 0.0) / m
    out = np.minimum(e, r)
    out.flags.writeable = False
    return out
