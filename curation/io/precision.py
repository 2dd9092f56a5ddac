"""The stated precision of every number a stage writes: 10 significant digits.

Why round at all: the same wheel computes different last bits on different CPUs.
OpenBLAS picks its kernels by CPU (SkylakeX on an AVX-512 machine, Haswell or
Sandybridge elsewhere) and each sums in its own order, so a fitted difficulty moved by
about one unit in the last place (1e-16) from one machine to the next. DVC hashes every
output into dvc.lock, and worse, later stages hash their inputs into simulation seeds:
one ulp in ``data/difficulty`` gave BenchFill another random stream and changed its
headline figures (BenchFill's GSM8K Top-3 reduction read 9.6% on one machine and
21.6% on another). Rounding each float to :data:`SIGNIFICANT_DIGITS` where it leaves the process
(parquet tables, JSON, .npz draws) makes two machines write the same bytes unless a
value lies within 1e-16 of a rounding boundary (about one chance in 10^6 per value),
and 10 digits is far below any statistical error the project reports (difficulty SEs
are 0.05 or more).

The rounding uses only exact operations and IEEE multiply/divide (no ``log10``/``pow``,
whose last bits also vary by CPU), so it is itself the same on every machine.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

SIGNIFICANT_DIGITS = 10
"""Significant decimal digits of every float written to a stage's outputs."""

_POW10 = {k: float(f"1e{k}") for k in range(-340, 310)}
"""Correctly rounded powers of ten (Python's own decimal parser, the same everywhere)."""
_LOG10_2 = 0.30102999566398120


def round_array(values: np.ndarray, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits (NaN, inf and 0 unchanged).

    A float array comes back in its own dtype (a float32 one is rounded in float64 and
    cast back); anything else is returned as it is.
    """
    arr = np.asarray(values)
    if arr.dtype.kind != "f" or arr.size == 0:
        return arr
    x = arr.astype(np.float64, copy=True)
    finite = np.isfinite(x) & (x != 0.0)
    if not finite.any():
        return x.astype(arr.dtype, copy=False)
    v = x[finite]
    _, exp2 = np.frexp(v)  # exact: |v| in [2**(e-1), 2**e)
    # the decimal exponent: the estimate from the exact binary exponent is the true one
    # or one less, and one comparison with an exact power of ten settles it
    exp10 = np.floor((exp2.astype(np.float64) - 1.0) * _LOG10_2).astype(np.int64)
    uniq, where = np.unique(exp10, return_inverse=True)
    next_power = np.array([_POW10.get(int(e) + 1, np.inf) for e in uniq])
    exp10 += np.abs(v) >= next_power[where]
    decimals = digits - 1 - exp10
    out = v.copy()  # |v| below 1e-290 keeps its value (its scale would overflow)
    for d in np.unique(decimals):
        k = int(d)
        if k > 300:
            continue
        sel = decimals == d
        # n / 10**k is correctly rounded where 10**k is exact (|k| <= 22: every value
        # between 1e-13 and 1e31), so those print with at most `digits` digits
        if k >= 0:
            out[sel] = np.rint(v[sel] * _POW10[k]) / _POW10[k]
        else:
            out[sel] = np.rint(v[sel] / _POW10[-k]) * _POW10[-k]
    x[finite] = out
    return x.astype(arr.dtype, copy=False)


def round_float(value: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    """One float rounded like :func:`round_array`."""
    if not math.isfinite(value) or value == 0.0:
        return value
    return float(round_array(np.array([value]), digits)[0])


def round_floats(obj: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """``obj`` (JSON-like: dicts, lists, tuples, numbers, strings) with every float rounded.

    Ints and bools are left alone; tuples come back as lists (as JSON writes them).
    """
    if isinstance(obj, bool) or not isinstance(obj, float | dict | list | tuple):
        return obj
    if isinstance(obj, float):
        return round_float(obj, digits)
    if isinstance(obj, dict):
        return {k: round_floats(v, digits) for k, v in obj.items()}
    return [round_floats(v, digits) for v in obj]


def round_frame(df: pl.DataFrame, digits: int = SIGNIFICANT_DIGITS) -> pl.DataFrame:
    """``df`` with every float column rounded to ``digits`` (nulls stay null).

    The record tables hold no list-of-float columns; such a column would pass unchanged.
    """
    changes = []
    for name, dtype in df.schema.items():
        if dtype not in (pl.Float64, pl.Float32) or df.height == 0:
            continue
        col = df[name]
        rounded = pl.Series(name, round_array(col.to_numpy(), digits), dtype=dtype)
        if col.null_count():
            rounded = pl.select(
                pl.when(col.is_null()).then(None).otherwise(rounded).alias(name)
            ).to_series()
        changes.append(rounded)
    return df.with_columns(changes) if changes else df
