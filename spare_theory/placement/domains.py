"""Failure domains and the placement that spreads every type over distinct domains.

The ``N`` groups are partitioned into *failure domains* (a rack, a
top-of-rack switch, a power shelf): :func:`failure_domains` maps each group to
its domain (contiguous blocks of ``domain_size`` groups by default, or any
array).  :func:`domain_aware_placement` puts the ``r`` hosts of every type in
``r`` distinct domains, so one domain event costs each type at most one host:
it is the modular-ruler placement with its groups and types relabelled by
``x -> a x mod N`` (``a`` a unit mod ``N``), which keeps every pair overlap,
hence the wipe-out law and the overhead under independent failures, of the
ruler.  :func:`placement_hosts` builds a placement by name (:data:`PLACEMENTS`).
:func:`domain_pair_counts` counts the pairs of types by shared domains
and shared hosts, what the wipe-out law under domain events
(:func:`spare_theory.wipeout.domains.domain_wipeout_law`) needs.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .._validation import as_choice, as_count
from .placements import (
    contiguous_placement,
    cyclic_placement,
    group_stacks,
    random_placement,
    validate_hosts,
)
from .rulers import modular_ruler

__all__ = [
    "PLACEMENTS",
    "domain_aware_placement",
    "domain_pair_counts",
    "domains_holding_a_unit",
    "failure_domains",
    "max_hosts_per_domain",
    "placement_hosts",
]

#: Placements by name: the ones compared under domain failures.
PLACEMENTS = ("ruler", "contiguous", "random", "domain_aware")


def failure_domains(N: int, domains: int | npt.ArrayLike) -> npt.NDArray[np.int64]:
    """The failure domain of every group, as ids ``0 .. D-1``.

    Parameters
    ----------
    N : int
        Number of groups.
    domains : int or array_like of int
        An int ``m``: contiguous blocks of ``m`` groups (group ``g`` in domain
        ``g // m``; the last block is smaller when ``m`` does not divide ``N``).
        An array of ``N`` integers: any labels, renumbered ``0 .. D-1`` in
        increasing order of label.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of length ``N``.

    Raises
    ------
    ValueError
        Naming ``domains``: a block size outside ``[1, N]``, an array of the
        wrong length or not of integers.

    Examples
    --------
    >>> from spare_theory.placement.domains import failure_domains
    >>> failure_domains(6, 4).tolist()
    [0, 0, 0, 0, 1, 1]
    >>> failure_domains(4, [7, 3, 7, 3]).tolist()
    [1, 0, 1, 0]
    """
    N = as_count(N, "N")
    arr = np.asarray(domains)
    if arr.ndim == 0:
        size = as_count(domains, "domains", maximum=N)
        return np.arange(N, dtype=np.int64) // size
    if arr.shape != (N,) or arr.dtype == bool or arr.dtype.kind not in "iu":
        raise ValueError(
            f"domains must be a block size or {N} integer labels, got shape {arr.shape} "
            f"and dtype {arr.dtype}"
        )
    return np.unique(arr, return_inverse=True)[1].astype(np.int64).reshape(N)


def max_hosts_per_domain(hosts: npt.ArrayLike, domains: int | npt.ArrayLike) -> int:
    """Most hosts any type has in one domain (1 for a domain-aware placement).

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        A valid placement.
    domains : int or array_like of int
        Domain block size or labels (:func:`failure_domains`).

    Returns
    -------
    int

    Examples
    --------
    >>> from spare_theory import contiguous_placement
    >>> from spare_theory.placement.domains import domain_aware_placement, max_hosts_per_domain
    >>> max_hosts_per_domain(contiguous_placement(64, 4), 8)
    4
    >>> max_hosts_per_domain(domain_aware_placement(64, 4, 8), 8)
    1
    """
    hosts = validate_hosts(hosts)
    dom = failure_domains(hosts.shape[0], domains)[hosts]
    dom.sort(axis=1)
    # Longest run of equal domain ids in each sorted row.
    r = hosts.shape[1]
    best = np.ones(hosts.shape[0], dtype=np.int64)
    run = np.ones(hosts.shape[0], dtype=np.int64)
    for k in range(1, r):
        run = np.where(dom[:, k] == dom[:, k - 1], run + 1, 1)
        np.maximum(best, run, out=best)
    return int(best.max())


def domains_holding_a_unit(
    units: npt.ArrayLike, domains: int | npt.ArrayLike
) -> npt.NDArray[np.bool_]:
    """Which domains hold every member of some unit: their event alone is a wipe-out.

    A unit (a replica set, a shard type's hosts, a lone group without
    redundancy) is wiped out when all its members are down at once; a domain
    event takes down all the domain's groups together.

    Parameters
    ----------
    units : array_like of int, shape (N, k)
        The units each group belongs to (ids ``>= 0``; a strategy's
        ``wipeout_units``).
    domains : int or array_like of int
        Domain block size or labels (:func:`failure_domains`).

    Returns
    -------
    numpy.ndarray of bool
        One entry per domain ``0 .. D-1``.

    Examples
    --------
    >>> from spare_theory.placement.domains import domains_holding_a_unit
    >>> pairs = (np.arange(8) % 4)[:, None]  # replica pairs 04, 15, 26, 37
    >>> domains_holding_a_unit(pairs, 4).tolist(), domains_holding_a_unit(pairs, 5).tolist()
    ([False, False], [True, False])
    """
    units = np.asarray(units, dtype=np.int64)
    N = units.shape[0]
    domain = failure_domains(N, domains)
    members = np.repeat(domain, units.shape[1])
    flat = units.ravel()
    lowest = np.full(int(flat.max()) + 1, domain.max() + 1, dtype=np.int64)
    highest = np.full(lowest.size, -1, dtype=np.int64)
    np.minimum.at(lowest, flat, members)
    np.maximum.at(highest, flat, members)
    held = np.zeros(int(domain.max()) + 1, dtype=bool)
    held[lowest[lowest == highest]] = True
    return held


def domain_aware_placement(N: int, r: int, domain_size: int) -> npt.NDArray[np.int64]:
    """A modular-ruler placement in which no type has two hosts in one domain.

    Domains are contiguous blocks of ``m = domain_size`` groups.  Relabelling
    groups and types by ``x -> a x mod N`` (``a`` coprime to ``N``) maps the
    ruler placement onto the cyclic placement on marks ``a g_k mod N``, with
    the same pair overlaps (two types share at most one host), so the
    wipe-out law and ``S*`` under independent failures are exactly the
    ruler's.  The first unit ``a`` that works is taken, trying in turn:

    1. *interleaved* (``m`` divides ``N``): marks distinct modulo
       ``D = N / m``, and group ``x`` relabelled to
       ``(x mod D) m + x div D``, so that domain ``x mod D`` holds the
       groups congruent to it and the ``r`` hosts ``i + a g_k`` of type ``i``
       lie in ``r`` distinct domains.  The types then use only ``D`` distinct
       sets of domains (type ``i``'s depends on ``i mod D``), which a set of
       failed domains must cover to wipe a type on its own;
    2. *spaced marks*: the sorted marks ``a g_k mod N`` have all cyclic gaps
       ``>= m``, so any ``m`` consecutive groups hold at most one host of a
       type (also when ``m`` does not divide ``N``).

    When no unit works (multiplying by a unit keeps the residues mod ``D``
    distinct or not), a seeded randomised greedy search looks for a modular
    ruler with the property, in the same order.

    Parameters
    ----------
    N : int
        Number of groups.
    r : int
        Redundancy; a modular ruler must exist at ``N``.
    domain_size : int
        Groups per domain, ``1 <= m <= N``.

    Returns
    -------
    numpy.ndarray
        ``int64`` placement of shape ``(N, r)``.

    Raises
    ------
    ValueError
        Naming ``r`` when ``r`` exceeds the number of domains
        ``ceil(N / m)`` (two hosts must then share a domain), and naming
        ``domain_size`` when no unit ``a`` gives either construction.

    Examples
    --------
    >>> from spare_theory.placement.domains import domain_aware_placement
    >>> domain_aware_placement(16, 3, 4).tolist()[:3]
    [[0, 4, 12], [4, 8, 1], [8, 12, 5]]
    """
    N = as_count(N, "N")
    r = as_count(r, "r", maximum=N)
    m = as_count(domain_size, "domain_size", maximum=N)
    D = -(-N // m)
    if r > D:
        raise ValueError(
            f"r={r} hosts cannot lie in distinct domains: there are only ceil(N/domain_size) = "
            f"{D} domains of {m} groups (N={N}); use r <= {D}, smaller domains or the "
            "ruler placement (placement='ruler')"
        )
    marks = np.asarray(modular_ruler(N, r), dtype=np.int64)
    if m == 1:
        return cyclic_placement(N, r, marks=marks)
    units = np.array([a for a in range(1, N) if math.gcd(a, N) == 1], dtype=np.int64)
    scaled = np.sort((units[:, None] * marks[None, :]) % N, axis=1)
    if N % m == 0:
        residues = np.sort(scaled % D, axis=1)
        distinct = np.flatnonzero((np.diff(residues, axis=1) > 0).all(axis=1))
        found = scaled[distinct[0]] if distinct.size else _constrained_ruler(N, r, m, "residues")
        if found is not None:
            hosts = cyclic_placement(N, r, marks=found)
            return (hosts % D) * m + hosts // D
    gaps = np.diff(np.concatenate([scaled, scaled[:, :1] + N], axis=1), axis=1)
    spaced = np.flatnonzero(gaps.min(axis=1) >= m)
    found = (
        scaled[spaced[0]] - scaled[spaced[0], 0]
        if spaced.size
        else _constrained_ruler(N, r, m, "spaced")
    )
    if found is not None:
        return cyclic_placement(N, r, marks=found)
    raise ValueError(
        f"domain_size={m}: no modular ruler found at N={N} with {r} marks that puts the "
        f"hosts of every type in distinct domains (D={D} domains); try a smaller domain_size "
        "or r"
    )


def placement_hosts(
    name: str, N: int, r: int, domain_size: int | None, *, seed: int = 0
) -> npt.NDArray[np.int64]:
    """The placement called ``name`` (one of :data:`PLACEMENTS`).

    ``"ruler"``: the cyclic modular ruler; ``"contiguous"``: marks
    ``0..r-1``; ``"random"``: :func:`~spare_theory.placement.placements.random_placement`
    with ``seed``; ``"domain_aware"``: :func:`domain_aware_placement`
    (``domain_size`` ``None`` or 1: the ruler).

    Examples
    --------
    >>> from spare_theory.placement.domains import placement_hosts
    >>> placement_hosts("domain_aware", 16, 3, 4)[:2].tolist()
    [[0, 4, 12], [4, 8, 1]]
    """
    name = as_choice(name, "placement", PLACEMENTS)
    if name == "ruler" or (name == "domain_aware" and (domain_size or 1) == 1):
        return cyclic_placement(N, r)
    if name == "contiguous":
        return contiguous_placement(N, r)
    if name == "random":
        return random_placement(N, r, seed=seed)
    return domain_aware_placement(N, r, domain_size or 1)


def _constrained_ruler(N: int, r: int, m: int, rule: str) -> np.ndarray | None:
    """A modular ruler whose marks are pairwise ``>= m`` apart cyclically (``"spaced"``)
    or distinct modulo ``N / m`` (``"residues"``): seeded randomised greedy, 200 restarts."""
    D = N // m
    rng = np.random.default_rng(20260613)
    for _ in range(200):
        marks = [0]
        used = {0}
        for x in rng.permutation(np.arange(1, N)).tolist():
            if rule == "spaced":
                if any(min((x - g) % N, (g - x) % N) < m for g in marks):
                    continue
            elif any((x - g) % D == 0 for g in marks):
                continue
            diffs = {(x - g) % N for g in marks} | {(g - x) % N for g in marks}
            if len(diffs) < 2 * len(marks) or diffs & used:
                continue
            marks.append(x)
            used |= diffs
            if len(marks) == r:
                return np.sort(np.array(marks, dtype=np.int64))
    return None


def domain_pair_counts(hosts: npt.ArrayLike, domains: int | npt.ArrayLike) -> npt.NDArray[np.int64]:
    """``counts[c, h]``: type pairs sharing ``c`` domains and ``h`` hosts.

    Two types *share a domain* when both have a host in it (shared hosts
    included).  ``counts[0, 0]`` holds the pairs with no domain in common;
    the table sums to ``C(N, 2)``.  Memory and time ``O(D C(m r, 2))`` for
    ``D`` domains of ``m`` groups (a few million pairs at ``N = 1024``,
    ``m = 64``, ``r = 10``).

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        A valid placement with at most one host of a type in each domain
        (:func:`max_hosts_per_domain` ``== 1``).
    domains : int or array_like of int
        Domain block size or labels (:func:`failure_domains`).

    Returns
    -------
    numpy.ndarray
        ``int64`` array of shape ``(r + 1, r + 1)``.

    Raises
    ------
    ValueError
        Naming ``hosts`` when a type has two hosts in one domain.

    Examples
    --------
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.placement.domains import domain_pair_counts
    >>> domain_pair_counts(cyclic_placement(7, 3), 1).tolist()  # the Fano plane
    [[0, 0, 0, 0], [0, 21, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    """
    hosts = validate_hosts(hosts)
    N, r = hosts.shape
    dom = failure_domains(N, domains)
    if max_hosts_per_domain(hosts, dom) > 1:
        raise ValueError("hosts must have at most one host of each type in every domain")
    # Types with a host in each domain: one (domain, type) pair per host.
    slot_dom = dom[hosts].ravel()
    slot_type = np.repeat(np.arange(N, dtype=np.int64), r)
    order = np.lexsort((slot_type, slot_dom))
    slot_dom, slot_type = slot_dom[order], slot_type[order]
    starts = np.flatnonzero(np.r_[True, slot_dom[1:] != slot_dom[:-1]])
    ends = np.r_[starts[1:], slot_dom.size]
    keys = []
    for start, end in zip(starts, ends):
        members = slot_type[start:end]  # sorted: members[i] < members[j] for i < j
        i, j = np.triu_indices(members.size, 1)
        keys.append(members[i] * N + members[j])
    pair_keys, shared_domains = np.unique(np.concatenate(keys), return_counts=True)
    # Shared hosts per pair, from the types stacked on each group.
    stacks = group_stacks(hosts)
    a, b = np.triu_indices(r, 1)
    lo = np.minimum(stacks[:, a], stacks[:, b]).ravel()
    hi = np.maximum(stacks[:, a], stacks[:, b]).ravel()
    host_keys, shared_hosts = np.unique(lo * N + hi, return_counts=True)
    h = np.zeros(pair_keys.size, dtype=np.int64)
    h[np.searchsorted(pair_keys, host_keys)] = shared_hosts
    counts = np.zeros((r + 1, r + 1), dtype=np.int64)
    np.add.at(counts, (shared_domains, h), 1)
    counts[0, 0] = N * (N - 1) // 2 - counts.sum()
    return counts
