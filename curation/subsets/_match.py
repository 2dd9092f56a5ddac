"""Greedy quantile matching (SPEC §6): pick m items whose z follow a target measure µ.

For k = 1..m the target quantile is q_k = µ⁻¹((k − ½)/m); the pick is the unused item
whose z is closest to q_k, ties going to the lower item id (plain string order), so the
same inputs always give the same subset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray
from scipy import special

from curation.measure import Beta, Histogram, Sample, TargetLike, parse_target


def quantile_levels(m: int) -> NDArray[np.float64]:
    """The m probability levels (k − ½)/m, k = 1..m."""
    if isinstance(m, bool) or int(m) != m or m < 1:
        raise ValueError(f"subset size m must be a positive integer, got {m!r}")
    return (np.arange(1, int(m) + 1, dtype=np.float64) - 0.5) / int(m)


def target_ppf(target: TargetLike, levels: ArrayLike) -> NDArray[np.float64]:
    """The target's quantile function µ⁻¹ at ``levels`` (each in (0, 1)).

    Uniform: the identity. Beta: the inverse regularised incomplete beta. Histogram: the
    inverse of its piecewise-linear CDF (bins of zero mass are skipped). Another
    benchmark's sample: the generalised inverse inf{x : F(x) ≥ p} of its ECDF.
    """
    p = np.asarray(levels, dtype=np.float64)
    if p.ndim != 1 or ((p <= 0) | (p >= 1)).any():
        raise ValueError("levels must be a 1-D array of probabilities strictly inside (0, 1)")
    tgt = parse_target(target)
    if isinstance(tgt, Beta):
        return np.asarray(special.betaincinv(tgt.a, tgt.b, p), dtype=np.float64)
    if isinstance(tgt, Histogram):
        xs, cum = tgt.knots
        out = np.empty_like(p)
        for i, level in enumerate(p):
            j = int(np.searchsorted(cum, level, side="left"))  # cum[j-1] < level <= cum[j]
            lo, hi = cum[j - 1], cum[j]
            out[i] = xs[j - 1] + (level - lo) / (hi - lo) * (xs[j] - xs[j - 1])
        return out
    if isinstance(tgt, Sample):
        vals = np.sort(tgt.array())
        idx = np.ceil(p * vals.size).astype(np.int64) - 1
        return vals[np.clip(idx, 0, vals.size - 1)]
    raise TypeError(f"unsupported target type {type(tgt).__name__}")  # pragma: no cover


@dataclass(frozen=True)
class Subset:
    """The result of one quantile match, rows in pick order k = 1..m."""

    items: tuple[str, ...]
    z: tuple[float, ...]
    levels: tuple[float, ...]
    quantiles: tuple[float, ...]
    target_label: str

    @property
    def m(self) -> int:
        return len(self.items)

    def z_array(self) -> NDArray[np.float64]:
        return np.asarray(self.z, dtype=np.float64)

    def to_frame(self, *, benchmark: str, name: str) -> pl.DataFrame:
        """Rows of the ``subset_item`` record type."""
        m = self.m
        return pl.DataFrame(
            {
                "benchmark": [benchmark] * m,
                "subset": [name] * m,
                "target": [self.target_label] * m,
                "m": [m] * m,
                "k": list(range(1, m + 1)),
                "level": list(self.levels),
                "quantile": list(self.quantiles),
                "item": list(self.items),
                "z": list(self.z),
            },
            schema={
                "benchmark": pl.String,
                "subset": pl.String,
                "target": pl.String,
                "m": pl.Int64,
                "k": pl.Int64,
                "level": pl.Float64,
                "quantile": pl.Float64,
                "item": pl.String,
                "z": pl.Float64,
            },
        )


def match_quantiles(
    items: Sequence[str], z: ArrayLike, *, target: TargetLike = "uniform", m: int
) -> Subset:
    """Greedy quantile matching of ``items`` (with difficulties ``z``) to ``target`` at size m.

    Raises ``ValueError`` if the shapes differ, ids repeat, z is outside [0, 1] or NaN,
    or m exceeds the number of items.
    """
    ids = [str(i) for i in items]
    zs = np.asarray(z, dtype=np.float64)
    if zs.ndim != 1 or zs.shape[0] != len(ids):
        raise ValueError(f"items ({len(ids)}) and z (shape {zs.shape}) must be 1-D of equal length")
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be unique")
    if not np.isfinite(zs).all() or ((zs < 0) | (zs > 1)).any():
        raise ValueError("z must be finite and in [0, 1]")
    levels = quantile_levels(m)
    if m > len(ids):
        raise ValueError(f"subset size m={m} exceeds the {len(ids)} items available")
    quantiles = target_ppf(target, levels)
    # Items in id order, so argmin's first hit among equal distances is the lower id.
    order = sorted(range(len(ids)), key=ids.__getitem__)
    sorted_ids = [ids[i] for i in order]
    sorted_z = zs[order]
    used = np.zeros(len(ids), dtype=bool)
    picked: list[int] = []
    for q in quantiles:
        dist = np.abs(sorted_z - q)
        dist[used] = np.inf
        j = int(np.argmin(dist))
        used[j] = True
        picked.append(j)
    return Subset(
        items=tuple(sorted_ids[j] for j in picked),
        z=tuple(float(sorted_z[j]) for j in picked),
        levels=tuple(float(v) for v in levels),
        quantiles=tuple(float(v) for v in quantiles),
        target_label=parse_target(target).label,
    )
