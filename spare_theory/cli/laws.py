"""Laws (``failure_law``, ``repair_law``) written as text on the command line and in TOML.

A bare name is left for the scenario class to check (``"weibull"``,
``"fixed"``); ``exponential:mean=M`` and ``weibull:mean=M,shape=K`` are
:func:`spare_theory.lifetime_law`; ``DIST:KEY=VALUE,...`` is any continuous
``scipy.stats`` distribution, frozen with those keywords.  :func:`law_text`
writes a law back in the same syntax.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import real

__all__ = ["LAW_SYNTAX", "law_text", "parse_law"]

#: How a law (``failure_law``, ``repair_law``) is written on the command line and in TOML.
LAW_SYNTAX = """\
laws (--failure-law, --repair-law; TOML: the same strings):
  NAME                    a law the scenario names itself: failure_law exponential or
                          weibull (hour level: mean --gpu-mtbf-hours, shape --weibull-shape;
                          --paper N: the paper's law, mean 300 N s, shape 0.78), repair_law
                          exponential or fixed (mean --repair-minutes / --repair-seconds)
  exponential:mean=M      the named law with mean M in the field's unit (hours for the
  weibull:mean=M,shape=K  hour-level failure_law, minutes for its repair_law, seconds at
                          step level): spare_theory.lifetime_law
  DIST:KEY=VALUE,...      any continuous scipy.stats distribution by its scipy name and
                          keywords, in the field's unit: lognorm:s=1.2,scale=30,
                          gamma:a=2,scale=15, weibull_min:c=0.5,scale=40000"""


def parse_law(text: str) -> Any:
    """A law from the command line: a name, or a distribution (see :data:`LAW_SYNTAX`).

    Parameters
    ----------
    text : str
        ``NAME``, ``exponential:mean=M``, ``weibull:mean=M,shape=K`` or
        ``DIST:KEY=VALUE,...`` (a continuous ``scipy.stats`` distribution).

    Returns
    -------
    str or frozen scipy.stats distribution
        A bare name is returned as is, for the scenario to check.

    Raises
    ------
    argparse.ArgumentTypeError
        For an unknown distribution, a malformed keyword or parameters scipy
        refuses.

    Examples
    --------
    >>> parse_law("weibull")
    'weibull'
    >>> law = parse_law("lognorm:s=1.2,scale=30")
    >>> law.dist.name, round(float(law.median()), 6)
    ('lognorm', 30.0)
    >>> round(float(parse_law("weibull:mean=60000,shape=0.78").mean()))
    60000
    """
    name, colon, rest = text.strip().partition(":")
    if not colon:
        return name
    params: dict[str, float] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, equals, value = item.partition("=")
        if not equals:
            raise argparse.ArgumentTypeError(f"{text!r}: {item!r} is not KEY=VALUE")
        params[key.strip()] = real(value)
    return _law(name, params, text)


def _law(name: str, params: dict[str, float], text: str) -> Any:
    from scipy import stats

    from ..lifetimes.laws import LIFETIME_LAWS, lifetime_law

    try:
        if name in LIFETIME_LAWS:
            if set(params) - {"mean", "shape"} or "mean" not in params:
                raise ValueError(f"{name} takes mean=M (required) and shape=K")
            return lifetime_law(name, mean_seconds=params["mean"], shape=params.get("shape"))
        dist = getattr(stats, name, None)
        if not isinstance(dist, stats.rv_continuous):
            raise ValueError(
                "not a continuous scipy.stats distribution (nor exponential or weibull)"
            )
        return dist(**params)
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"law {text!r}: {exc}") from None


def law_text(value: Any) -> str:
    """A law as :func:`parse_law` reads it: the name, or ``dist:key=value,...``.

    Examples
    --------
    >>> from scipy import stats
    >>> law_text("fixed"), law_text(stats.weibull_min(0.78, scale=51979.3))
    ('fixed', 'weibull_min:c=0.78,scale=51979.3')
    """
    if isinstance(value, str):
        return value
    shapes = (value.dist.shapes or "").replace(" ", "").split(",")
    keywords = dict(zip(shapes, value.args)) | dict(value.kwds)
    return f"{value.dist.name}:" + ",".join(f"{k}={float(v):g}" for k, v in keywords.items())
