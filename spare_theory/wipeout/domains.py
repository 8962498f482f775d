"""Failure domains: racks and switches that take several groups down at once.

Every other module assumes that groups fail independently.  Here the ``N``
groups are partitioned into *failure domains* (a rack, a top-of-rack switch,
a power shelf): :func:`failure_domains` maps each group to its domain
(contiguous blocks of ``domain_size`` groups by default, or any array).

**Failure model** (``docs/theory.md`` section 5).  Time is dimensionless,
``u = lambda t`` with ``lambda`` the total failure rate of one group.  A share
``s`` of it comes from its domain: every domain fails as a whole at rate
``s lambda`` (all its groups at once), and every group also fails on its own
at rate ``(1 - s) lambda``.  A group's lifetime is therefore still
exponential with rate ``lambda`` (its marginal law does not depend on
``s``); only the correlation between groups does.  In a fresh cluster ``s``
is the share of group failures that come from domain events.  By ``u``

    q_I(u) = 1 - exp(-(1 - s) u)      (a group failed on its own)
    q_D(u) = 1 - exp(-s u)            (its domain failed)
    p(u)   = 1 - (1 - q_I)(1 - q_D) = 1 - exp(-u).

**Domain-aware placement** (:func:`spare_theory.placement.domains.domain_aware_placement`):
the ``r`` hosts of every type in ``r`` distinct domains, so one domain event
costs each type at most one host.

**Closed form** (:func:`domain_wipeout_law`) for a domain-aware placement
(and, up to 16 domains, for the cyclic ruler, whose hosts may share a domain):
conditioned on the number ``j`` of failed domains (``Binom(D, q_D)``; the
failed domains a uniformly random ``j``-subset), each type's wipe-out
probability and each pair's joint wipe-out probability are hypergeometric sums
in ``q_I``, and the conditional survival is the second-order
factorial-cumulant (Poisson-corrected) form of ``docs/theory.md`` section 2,
here with the pair classes counted by shared domains and shared hosts
(:func:`~spare_theory.placement.domains.domain_pair_counts`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import gammaln, logsumexp

from .._validation import NoClosedFormError, as_choice, as_count, as_real, as_real_array
from ..placement.domains import (
    domain_pair_counts,
    failure_domains,
    max_hosts_per_domain,
    placement_hosts,
)
from ..placement.placements import group_stacks
from .law import wipeout_law

__all__ = ["DomainWipeoutLaw", "domain_wipeout_law"]


def _log_binom(n: npt.ArrayLike, k: npt.ArrayLike) -> np.ndarray:
    n, k = np.broadcast_arrays(np.asarray(n, dtype=float), np.asarray(k, dtype=float))
    out = np.full(n.shape, -np.inf)
    ok = (k >= 0) & (k <= n)
    out[ok] = gammaln(n[ok] + 1) - gammaln(k[ok] + 1) - gammaln(n[ok] - k[ok] + 1)
    return out


def _coefficients(D: int, n1: int, n2: int) -> np.ndarray:
    """``C[j, k]``: given ``j`` failed domains out of ``D`` (a uniform subset), the
    probability that the not-failed domains among ``n1`` single-factor and ``n2``
    double-factor domains contribute the power ``q_I^k``.

    ``k = (n1 - a1) + 2 (n2 - a2)`` with ``(a1, a2)`` failed among them:
    multivariate hypergeometric ``C(n1,a1) C(n2,a2) C(D-n1-n2, j-a1-a2) / C(D, j)``.
    """
    j = np.arange(D + 1)
    out = np.zeros((D + 1, n1 + 2 * n2 + 1))
    rest = D - n1 - n2
    for a1 in range(n1 + 1):
        for a2 in range(n2 + 1):
            log_w = (
                _log_binom(n1, a1)
                + _log_binom(n2, a2)
                + _log_binom(rest, j - a1 - a2)
                - _log_binom(D, j)
            )
            out[:, (n1 - a1) + 2 * (n2 - a2)] += np.exp(log_w)
    return out


# Tables of the closed form by (route, N, r, domain_size, placement).
_TABLES: dict[tuple[str, int, int, int, str], Any] = {}

#: Up to this many domains the closed form enumerates every set of failed domains.
ENUMERATE_MAX_DOMAINS = 16


def _log_binomial_weights(n: int, log_q: np.ndarray, log_1mq: np.ndarray) -> np.ndarray:
    """``log Binom(j; n, q)`` for ``j = 0..n`` (rows) at every column of ``q``."""
    j = np.arange(n + 1)[:, None]
    with np.errstate(invalid="ignore"):
        out = (
            _log_binom(n, j)
            + np.where(j > 0, j * log_q[None, :], 0.0)
            + np.where(j < n, (n - j) * log_1mq[None, :], 0.0)
        )
    return out


def _histogram(bins: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Row by row, the sum of ``weights`` in each of ``size`` bins: ``out[i, bins[i, j]]``."""
    flat = (np.arange(bins.shape[0])[:, None] * size + bins).ravel()
    return np.bincount(flat, weights.ravel(), bins.shape[0] * size).reshape(-1, size)


def _second_order(single: np.ndarray, squares: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """``-S1 + min(pair term, S1 / 2) - sum P_i^2 / 2``, at most 0.

    The truncated series is meant where the pair term is a small correction
    to ``S1``; far in the tail it can outgrow ``S1`` and make ``Q`` rise
    again.  Capping it at ``S1 / 2`` keeps ``log Q <= -S1 / 2`` (falling with
    ``u``) and leaves the body of the law untouched.
    """
    return np.minimum(-single + np.minimum(pairs, single / 2) - squares / 2, 0.0)


@dataclass(frozen=True)
class DomainWipeoutLaw:
    """Wipe-out time of a ruler placement under domain failures (closed form).

    Built by :func:`domain_wipeout_law`; time ``u`` in units of ``1/lambda``
    (``lambda`` the total failure rate of one group), ``x = q_I(u)``.  Three
    routes, by the number of domains ``D = N / m``:

    * ``s = 0`` or ``m = 1``: failures are independent with ``p(u) = 1 - e^-u``
      (a domain of one group is the group), so
      ``Q(u) = sum_f Binom(f; N, p) P(T > f)`` with the sharp ``P(T > f)`` of
      :func:`spare_theory.wipeout.law.wipeout_law` (the placement is a modular
      ruler relabelled: its pair overlaps are the ruler's).
    * ``D <= 16``: every set ``E`` of failed domains is enumerated
      (weight ``q_D^|E| (1 - q_D)^(D - |E|)``).  Given ``E`` the other
      groups fail independently with probability ``x``; a type with
      ``e_i = r - a_i`` hosts outside ``E`` (``a_i`` its hosts inside,
      several per domain for the ruler) is wiped with probability
      ``x^e_i``, and only pairs sharing a host outside ``E`` are correlated
      (two types share at most one host):

          log Q_E = -sum_i x^e_i + sum_(pairs sharing a live host) x^(e_i + e_j - 1) (1 - x)
                    - sum_i x^(2 e_i) / 2.

    * ``D > 16``, every type's hosts in ``r`` distinct domains (always
      for the domain-aware placement): conditioned on the number ``j`` of
      failed domains only (a uniform ``j``-subset), with hypergeometric sums

          P1_j = sum_a H(a; D, j, r) x^(r - a)
          P_j(c, h) = E[x^(n1 - a1) x^(2 (n2 - a2))],  n1 = 2r - 2c + h, n2 = c - h
          log Q_j = -N P1_j + sum_(c,h) n_(c,h) (P_j(c, h) - P1_j^2) - N P1_j^2 / 2

      over the pair classes of :func:`domain_pair_counts` (``c`` shared
      domains, ``h`` shared hosts; the pairs with no domain in common
      included), and ``Q = sum_j Binom(j; D, q_D) Q_j``.

    In each, the pair term is capped at ``S1 / 2`` (it is a small correction
    where the series holds; far in the tail it would make ``Q`` rise).

    Attributes
    ----------
    N, r, domain_size : int
        Groups, redundancy, groups per domain.
    domain_failure_share : float
        Share ``s`` of a group's failure rate that comes from its domain.
    hosts : numpy.ndarray
        The placement.
    placement : str
        Its name, ``"domain_aware"`` or ``"ruler"``.

    Examples
    --------
    >>> from spare_theory.wipeout.domains import domain_wipeout_law
    >>> law = domain_wipeout_law(256, 6, 16, 0.2)
    >>> round(float(law.sf(0.3)), 4), round(law.mean(), 4)
    (0.9304, 0.5)
    """

    N: int
    r: int
    domain_size: int
    domain_failure_share: float
    hosts: np.ndarray = field(repr=False)
    placement: str = "domain_aware"

    @property
    def domains(self) -> int:
        """``D = N / domain_size`` domains."""
        return self.N // self.domain_size

    @property
    def route(self) -> str:
        """``"independent"``, ``"enumerate"`` or ``"count"`` (the class docstring)."""
        if self.domain_failure_share == 0 or self.domain_size == 1:
            return "independent"
        return "enumerate" if self.domains <= ENUMERATE_MAX_DOMAINS else "count"

    def _cached(self, name: str, build: Callable[[], Any]) -> Any:
        # The tables depend on (N, r, m, placement) only (the hosts are a
        # function of them), not on the share: shared between laws, a few kept.
        key = (name, self.N, self.r, self.domain_size, self.placement)
        if key not in _TABLES:
            if len(_TABLES) >= 32:
                _TABLES.clear()
            _TABLES[key] = build()
        return _TABLES[key]

    # -- route "count": condition on the number of failed domains ----------------
    def _count_tables(self) -> list[tuple[float, np.ndarray]]:
        def build() -> list[tuple[float, np.ndarray]]:
            D, r = self.domains, self.r
            counts = domain_pair_counts(self.hosts, self.domain_size)
            tables = [(0.0, _coefficients(D, r, 0))]
            for c, h in zip(*np.nonzero(counts)):
                if 2 * r - c <= D:
                    tables.append((float(counts[c, h]), _coefficients(D, 2 * r - 2 * c + h, c - h)))
            return tables

        return self._cached("_count", build)

    def _joint_count(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s, D = self.domain_failure_share, self.domains
        x = -np.expm1(-(1 - s) * u)
        tables = self._count_tables()
        powers = x[None, :] ** np.arange(2 * self.r + 1)[:, None]
        single = tables[0][1] @ powers[: self.r + 1]
        pairs = np.zeros(single.shape)
        for count, table in tables[1:]:
            pairs += count * (table @ powers[: table.shape[1]] - single**2)
        log_q = _second_order(self.N * single, self.N * single**2, pairs)
        with np.errstate(divide="ignore"):
            log_qd = np.log(-np.expm1(-s * u))
        j = np.arange(D + 1)
        return j * self.domain_size, _log_binomial_weights(D, log_qd, -s * u) + log_q

    # -- route "enumerate": every set of failed domains ---------------------------
    def _enumeration(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        def build() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
            D, r, N = self.domains, self.r, self.N
            dom = failure_domains(N, self.domain_size)
            # A type's hosts per domain (several on one domain for the ruler).
            per_type = np.zeros((N, D), dtype=np.int64)
            np.add.at(per_type, (np.repeat(np.arange(N), r), dom[self.hosts].ravel()), 1)
            profiles, index, mult = np.unique(
                per_type, axis=0, return_inverse=True, return_counts=True
            )
            index = index.reshape(N)
            E = np.arange(1 << D, dtype=np.int64)
            failed = (E[:, None] >> np.arange(D)[None, :]) & 1
            # hit[E, t]: hosts of a type of profile t inside the failed domains E.
            hit = failed @ profiles.T
            live = (failed == 0).astype(float)
            # Histograms over e = hosts outside E of the types, and over
            # e_i + e_j - 1 of the pairs sharing a host outside E (two types
            # share at most one host: the ruler's property).
            single = _histogram(r - hit, np.broadcast_to(mult, hit.shape), r + 1)
            stacks = group_stacks(self.hosts)
            a, b = np.triu_indices(r, 1)
            t1 = index[stacks[:, a]].ravel()
            t2 = index[stacks[:, b]].ravel()
            lo, hi = np.minimum(t1, t2), np.maximum(t1, t2)
            shared = np.repeat(dom, a.size)
            key = (lo * profiles.shape[0] + hi) * D + shared
            key, kmult = np.unique(key, return_counts=True)
            i1, i2 = np.divmod(key // D, profiles.shape[0])
            pairs = np.concatenate(
                [
                    _histogram(
                        2 * r - 1 - hit[rows][:, i1] - hit[rows][:, i2],
                        live[rows][:, key % D] * kmult,
                        2 * r,
                    )
                    for rows in np.array_split(E, max(1, E.size * key.size // 2**22))
                ]
            )
            size = np.bitwise_count(E).astype(np.int64)
            rows, weight = np.unique(
                np.concatenate([size[:, None], single, pairs], axis=1), axis=0, return_counts=True
            )
            return rows[:, 0].astype(np.int64), rows[:, 1 : r + 2], rows[:, r + 2 :], weight

        return self._cached("_enum", build)

    def _joint_enumerate(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s, D, r = self.domain_failure_share, self.domains, self.r
        size, single_h, pair_h, weight = self._enumeration()
        x = -np.expm1(-(1 - s) * u)
        powers = x[None, :] ** np.arange(2 * r + 1)[:, None]
        single = single_h @ powers[: r + 1]
        squares = single_h @ powers[::2][: r + 1]
        pairs = pair_h @ (powers[: 2 * r] * (1 - x)[None, :])
        log_q = _second_order(single, squares, pairs)
        # A type with every host in a failed domain is wiped for sure.
        log_q[single_h[:, 0] > 0] = -np.inf
        with np.errstate(divide="ignore"):
            log_qd = np.log(-np.expm1(-s * u))
        with np.errstate(invalid="ignore"):
            hit_part = np.where(size[:, None] > 0, size[:, None] * log_qd[None, :], 0.0)
        log_w = np.log(weight)[:, None] + hit_part - (D - size)[:, None] * s * u[None, :]
        return size * self.domain_size, log_w + log_q

    # -- route "independent" -------------------------------------------------------
    def _joint_independent(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        def build() -> np.ndarray:
            law = wipeout_law(self.N, self.r)
            return np.asarray(law.logsf(np.arange(self.N + 1)), dtype=float)

        log_s = self._cached("_indep", build)
        N = self.N
        f = np.arange(N + 1)
        with np.errstate(divide="ignore"):
            log_p = np.log(-np.expm1(-u))
        return f, _log_binomial_weights(N, log_p, -u) + log_s[f][:, None]

    def joint_logsf(self, u: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The terms of ``Q(u)``: ``(fixed, pool, log_terms)``.

        ``Q(u) = sum_rows exp(log_terms[row, :])``; in a row, ``fixed[row]``
        groups have failed with their domains and each of the other
        ``pool[row] = N - fixed[row]`` groups on its own with probability
        ``q_I(u)`` (route ``"independent"``: ``fixed`` = all failures, the
        pool is empty).  Used for the throughput given survival
        (:mod:`spare_theory.hourly.domains`).

        Parameters
        ----------
        u : array_like of float
            Times ``>= 0`` (units ``1/lambda``), 1-D.

        Returns
        -------
        tuple of numpy.ndarray
            ``fixed`` and ``pool`` (ints, one per row) and ``log_terms`` of
            shape ``(rows, len(u))``.

        Examples
        --------
        >>> import numpy as np
        >>> from spare_theory.wipeout.domains import domain_wipeout_law
        >>> law = domain_wipeout_law(64, 4, 8, 0.3)
        >>> fixed, pool, terms = law.joint_logsf([0.2])
        >>> bool(np.isclose(np.exp(terms).sum(), law.sf(0.2)))
        True
        """
        u = as_real_array(u, "u", minimum=0.0).ravel()
        route = {
            "independent": self._joint_independent,
            "enumerate": self._joint_enumerate,
            "count": self._joint_count,
        }[self.route]
        fixed, terms = route(u)
        pool = self.N - fixed if self.route != "independent" else np.zeros_like(fixed)
        return fixed, pool, terms

    def logsf(self, u: npt.ArrayLike) -> float | np.ndarray:
        """``log Q(u)``, ``Q(u) = P(no wipe-out by u)``; broadcasts over ``u >= 0``."""
        arr = as_real_array(u, "u", minimum=0.0)
        flat = arr.ravel()
        out = np.concatenate(
            [
                logsumexp(self.joint_logsf(flat[i : i + 256])[2], axis=0)
                for i in range(0, flat.size, 256)
            ]
            or [np.empty(0)]
        ).reshape(arr.shape)
        return float(out) if out.ndim == 0 else out

    def sf(self, u: npt.ArrayLike) -> float | np.ndarray:
        """``Q(u) = P(U* > u)``, the survival of the wipe-out time ``U*``."""
        return np.exp(self.logsf(u))

    def mean(self) -> float:
        """``E[U*] = int_0^inf Q(u) du`` (Simpson on 1,025 points up to ``Q < 1e-12``)."""
        hi = 1.0 / self.N
        while float(self.logsf(hi)) > math.log(1e-12):
            hi *= 2
        u = np.linspace(0.0, hi, 1025)
        q = np.asarray(self.sf(u))
        return float((q[0] + q[-1] + 4 * q[1:-1:2].sum() + 2 * q[2:-1:2].sum()) * (u[1] / 3))


def domain_wipeout_law(
    N: int, r: int, domain_size: int, domain_failure_share: float, placement: str = "domain_aware"
) -> DomainWipeoutLaw:
    """The closed-form wipe-out time of a ruler placement under domain failures.

    Parameters
    ----------
    N : int
        Number of groups; ``domain_size`` must divide it.
    r : int
        Redundancy (``r <= N / domain_size``).
    domain_size : int
        Groups per domain, contiguous blocks.
    domain_failure_share : float
        Share ``s`` of a group's failure rate that comes from domain events,
        ``0 <= s < 1``.
    placement : {"domain_aware", "ruler"}
        :func:`~spare_theory.placement.domains.domain_aware_placement`
        (default) or the cyclic ruler, whose hosts may share a domain.

    Returns
    -------
    DomainWipeoutLaw

    Raises
    ------
    ValueError
        Naming the argument: ``domain_size`` not dividing ``N``, ``s``
        outside ``[0, 1)``, no domain-aware placement, a ruler with two
        hosts of a type in one domain and more than 16 domains (no closed
        form: the conditioning on the number of failed domains needs
        distinct domains).

    Examples
    --------
    >>> from spare_theory.wipeout.domains import domain_wipeout_law
    >>> round(domain_wipeout_law(256, 6, 1, 0.0).mean(), 4)  # independent failures
    0.4747
    >>> round(domain_wipeout_law(64, 4, 8, 0.5, "ruler").mean(), 4)  # hosts share domains
    0.2335
    """
    N = as_count(N, "N")
    r = as_count(r, "r", maximum=N)
    m = as_count(domain_size, "domain_size", maximum=N)
    if N % m:
        raise NoClosedFormError(f"domain_size={m} must divide N={N} for the closed form")
    s = as_real(domain_failure_share, "domain_failure_share", minimum=0.0, maximum=1.0)
    if s >= 1.0:
        raise ValueError(f"domain_failure_share must be < 1, got {s}")
    placement = as_choice(placement, "placement", ("domain_aware", "ruler"))
    hosts = placement_hosts(placement, N, r, m)
    if N // m > ENUMERATE_MAX_DOMAINS and s > 0 and max_hosts_per_domain(hosts, m) > 1:
        raise NoClosedFormError(
            f"placement='ruler' puts two hosts of a type in one domain at N={N}, r={r}, "
            f"domain_size={m}: the closed form covers that up to {ENUMERATE_MAX_DOMAINS} "
            f"domains, not {N // m}; use placement='domain_aware' (simulate_training runs "
            "the ruler)"
        )
    return DomainWipeoutLaw(N, r, m, s, hosts, placement)
