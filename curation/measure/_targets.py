"""Target measures µ on the difficulty axis [0, 1] that a benchmark is compared against.

Uniform is the neutral default (SPEC §2, Theorem 2.2) but never the only choice: a user
may care about a Beta-shaped band, a histogram read off a deployment log, or another
benchmark's items. Every target exposes its CDF on [0, 1], which is all W1 needs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from curation.measure._validate import as_unit_sample


@dataclass(frozen=True)
class Beta:
    """Beta(a, b) on [0, 1]: a smooth target concentrated where the user's tasks are."""

    a: float
    b: float

    def __post_init__(self) -> None:
        for key in ("a", "b"):
            value = float(getattr(self, key))
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"Beta.{key} must be a finite number > 0, got {value!r}")
            object.__setattr__(self, key, value)

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        """Regularised incomplete beta I_x(a, b), with x clipped to [0, 1]."""
        from scipy import special  # here: params validation parses targets without scipy

        cdf: NDArray[np.float64] = special.betainc(
            self.a, self.b, np.clip(np.asarray(x, dtype=np.float64), 0, 1)
        )
        return cdf

    @property
    def label(self) -> str:
        return f"Beta({self.a:g}, {self.b:g})"

    @property
    def key(self) -> str:
        return _slug(f"beta_{self.a:g}_{self.b:g}")


@dataclass(frozen=True)
class Histogram:
    """Piecewise-uniform density: bin ``k`` spans ``[edges[k], edges[k+1]]`` with mass
    ``weights[k] / sum(weights)`` spread uniformly over it.

    ``weights`` are masses per bin (not densities) and are normalised here, so counts can
    be passed directly. Edges lie in [0, 1]; mass outside them is zero.
    """

    edges: tuple[float, ...]
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        edges = np.asarray(self.edges, dtype=np.float64)
        weights = np.asarray(self.weights, dtype=np.float64)
        if edges.ndim != 1 or edges.size < 2:
            raise ValueError(f"Histogram.edges: need at least 2 edges, got shape {edges.shape}")
        if weights.shape != (edges.size - 1,):
            raise ValueError(
                f"Histogram.weights: expected {edges.size - 1} weights for {edges.size} edges, "
                f"got shape {weights.shape}"
            )
        if not (np.isfinite(edges).all() and np.isfinite(weights).all()):
            raise ValueError("Histogram: edges and weights must be finite")
        if edges[0] < 0.0 or edges[-1] > 1.0:
            raise ValueError(
                f"Histogram.edges must lie in [0, 1], got [{edges[0]!r}, {edges[-1]!r}]"
            )
        if not (np.diff(edges) > 0).all():
            raise ValueError("Histogram.edges must be strictly increasing")
        if (weights < 0).any() or weights.sum() <= 0:
            raise ValueError("Histogram.weights must be >= 0 with a positive sum")
        object.__setattr__(self, "edges", tuple(float(e) for e in edges))
        object.__setattr__(self, "weights", tuple(float(w) for w in weights))

    @property
    def probabilities(self) -> NDArray[np.float64]:
        """Bin masses normalised to sum to 1."""
        w = np.asarray(self.weights)
        p: NDArray[np.float64] = w / w.sum()
        return p

    @property
    def knots(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(x, F(x))`` at the edges: the CDF is linear between consecutive knots."""
        cum = np.concatenate([[0.0], np.cumsum(self.probabilities)])
        cum[-1] = 1.0
        return np.asarray(self.edges), cum

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        xs, cum = self.knots
        return np.interp(np.asarray(x, dtype=np.float64), xs, cum, left=0.0, right=1.0)

    @property
    def is_uniform(self) -> bool:
        return self.edges == (0.0, 1.0)

    @property
    def label(self) -> str:
        if self.is_uniform:
            return "uniform"
        return f"histogram({len(self.weights)} bins)"

    @property
    def key(self) -> str:
        return "uniform" if self.is_uniform else f"histogram_{len(self.weights)}"


@dataclass(frozen=True)
class Sample:
    """Another benchmark's empirical measure (its items' z), optionally named."""

    values: tuple[float, ...]
    name: str | None = None

    def __post_init__(self) -> None:
        arr = as_unit_sample(self.values, name="Sample.values")
        object.__setattr__(self, "values", tuple(float(v) for v in arr))

    def array(self) -> NDArray[np.float64]:
        return np.asarray(self.values, dtype=np.float64)

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        vals = np.sort(self.array())
        return np.searchsorted(vals, np.asarray(x, dtype=np.float64), side="right") / vals.size

    @property
    def label(self) -> str:
        if self.name:
            return f"{self.name} (n={len(self.values)})"
        return f"sample (n={len(self.values)})"

    @property
    def key(self) -> str:
        return _slug(f"sample_{self.name}") if self.name else "sample"


def _slug(text: str) -> str:
    """A metric key safe for DVC (which splits nested keys on '.')."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", text.replace(".", "p")).strip("_").lower()


Target: TypeAlias = Beta | Histogram | Sample
TargetLike: TypeAlias = Literal["uniform"] | str | Beta | Histogram | Sample | ArrayLike

UNIFORM = Histogram((0.0, 1.0), (1.0,))
"""Unif[0, 1] as a one-bin histogram: the neutral target of Theorem 2.2."""

_BETA_RE = re.compile(r"^\s*beta\s*[\(:]\s*([^,\s]+)\s*,\s*([^,\s\)]+)\s*\)?\s*$", re.IGNORECASE)


def parse_target(spec: Any) -> Target:
    """Turn a config value into a target.

    Accepted: ``"uniform"``; ``"beta(2, 5)"`` or ``"beta:2,5"``; a mapping with ``kind``
    in ``uniform | beta (a, b) | histogram (edges, weights) | sample (values[, name])``;
    a target object; or an array of z (read as a sample).
    """
    if isinstance(spec, Beta | Histogram | Sample):
        return spec
    if isinstance(spec, str):
        if spec.strip().lower() == "uniform":
            return UNIFORM
        match = _BETA_RE.match(spec)
        if match:
            try:
                return Beta(float(match.group(1)), float(match.group(2)))
            except ValueError as exc:
                raise ValueError(f"target {spec!r}: {exc}") from None
        raise ValueError(
            f"unknown target {spec!r}: use 'uniform', 'beta(a, b)', a histogram or a sample"
        )
    if isinstance(spec, Mapping):
        kind = str(spec.get("kind", "")).lower()
        try:
            if kind == "uniform":
                return UNIFORM
            if kind == "beta":
                return Beta(float(spec["a"]), float(spec["b"]))
            if kind == "histogram":
                return Histogram(tuple(spec["edges"]), tuple(spec["weights"]))
            if kind == "sample":
                return Sample(tuple(spec["values"]), spec.get("name"))
        except KeyError as exc:
            raise ValueError(f"target of kind {kind!r} is missing key {exc}") from None
        raise ValueError(
            f"target mapping needs kind in uniform|beta|histogram|sample, got {kind!r}"
        )
    return Sample(tuple(as_unit_sample(spec, name="target sample")))


def target_label(target: TargetLike) -> str:
    """Short human label of a target ("uniform", "Beta(2, 5)", ...)."""
    return parse_target(target).label


def target_key(target: TargetLike) -> str:
    """Metric-safe key of a target ("uniform", "beta_2_5", "histogram_4", "sample_x")."""
    return parse_target(target).key


def target_cdf(target: TargetLike, x: ArrayLike) -> NDArray[np.float64]:
    """The target's CDF evaluated at ``x``."""
    return parse_target(target).cdf(x)
