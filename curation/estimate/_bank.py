"""The calibrated item bank a score is estimated against: fixed item parameters and the
panel's abilities, read from the annotate stage's files or taken from a fit.

Items and abilities are on the calibration's logit scale (``Calibration.identification``:
mean panel ability 0): P(correct | theta) = sigma(a (theta - b)), a = 1 for 1PL. A
model's theta maps to the benchmark's z axis with ``Calibration.to_z``, the same map as
the items' b: z(theta) is the difficulty at which that model succeeds half the time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from numpy.typing import NDArray

from curation.errors import InputError

if TYPE_CHECKING:
    from curation.irt import Calibration, FitResult

FloatArray = NDArray[np.float64]


def expit(x: FloatArray) -> FloatArray:
    """The logistic function, without overflow."""
    out: FloatArray = 0.5 * (1.0 + np.tanh(0.5 * x))
    return out


def log_expit(x: FloatArray) -> FloatArray:
    """log sigma(x) = -softplus(-x), stable for any x."""
    out: FloatArray = -(np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0.0))
    return out


def tie_keys(x: FloatArray, tol: float = 1e-6) -> np.ndarray:
    """Integer keys that order ``x`` with values closer than ``tol`` (a chain of them)
    equal: ties that floating-point noise (a BLAS kernel, a library version, a solver's
    last step) would otherwise break go to the caller's tie rule instead."""
    order = np.argsort(x, kind="stable")
    steps = np.diff(x[order]) > tol
    keys = np.empty(x.size, dtype=np.int64)
    keys[order] = np.concatenate(([0], np.cumsum(steps)))
    return keys


def argmin_tied(x: FloatArray, rtol: float = 1e-9) -> int:
    """The first position whose value is within ``rtol`` (relative) of the minimum: ties
    up to floating-point noise go to the first position, on any machine."""
    low = float(np.min(x))
    return int(np.flatnonzero(x <= low + rtol * max(abs(low), 1e-300))[0])


@dataclass(frozen=True)
class ItemBank:
    """Fixed item parameters (b, a, and a 3PL's floors c) and the panel they were
    calibrated on. ``b`` is each item curve's own location: P = c + (1 − c) σ(a (θ − b))
    (for a 3PL calibration the difficulty table's ``b_curve``; its ``b`` is the axis
    location, which the curve does not use).

    ``panel_scores``: each panel model's full-benchmark accuracy (as
    ``curation.subsets.model_scores`` defines it) in ``panel`` order: what a new model is
    ranked against; when the responses are not at hand, the calibration's prediction
    mean_i p_i(theta_j) stands in (:meth:`with_panel_scores` replaces it).
    """

    items: tuple[str, ...]
    b: FloatArray
    a: FloatArray
    model: str
    panel: tuple[str, ...]
    theta: FloatArray
    panel_scores: FloatArray
    calibration: Calibration | None = None
    benchmark: str | None = None
    source: str = "calibration"
    """Where the bank came from (a file name, for messages)."""
    c: FloatArray | None = None
    """3PL: each item's guessing floor; None for 1PL/2PL."""

    def __post_init__(self) -> None:
        n = len(self.items)
        if n == 0:
            raise ValueError("an item bank needs at least one item with a difficulty b")
        if self.b.shape != (n,) or self.a.shape != (n,):
            raise ValueError(f"b and a must have one value per item ({n})")
        if not (np.all(np.isfinite(self.b)) and np.all(np.isfinite(self.a))):
            raise ValueError("b and a must be finite")
        if len(set(self.items)) != n:
            raise ValueError("item ids repeat in the bank")
        if self.theta.size < 2:
            raise ValueError("the panel needs at least 2 models (its abilities set the prior)")
        if self.panel_scores.shape != self.theta.shape:
            raise ValueError("panel_scores must have one value per panel model")

    @property
    def n_items(self) -> int:
        return len(self.items)

    def index(self) -> dict[str, int]:
        """Item id -> position (cached)."""
        cached: dict[str, int] | None = self.__dict__.get("_index")
        if cached is None:
            cached = {item: i for i, item in enumerate(self.items)}
            object.__setattr__(self, "_index", cached)
        return cached

    def id_order(self) -> np.ndarray:
        """Positions in the order of the item ids (cached): random draws and ties are
        taken in this order, so a design depends on the items, not on the order a fit
        (or a library version) happened to list them in."""
        cached: np.ndarray | None = self.__dict__.get("_id_order")
        if cached is None:
            cached = np.array(sorted(range(self.n_items), key=self.items.__getitem__))
            object.__setattr__(self, "_id_order", cached)
        return cached

    def in_id_order(self) -> ItemBank:
        """The same bank with its items in id order (:meth:`id_order`)."""
        order = self.id_order()
        if np.array_equal(order, np.arange(self.n_items)):
            return self
        return replace(
            self,
            items=tuple(self.items[i] for i in order),
            b=self.b[order],
            a=self.a[order],
            c=None if self.c is None else self.c[order],
        )

    def p(self, theta: FloatArray) -> FloatArray:
        """P(correct) of every item at each ``theta`` (len(theta) x n_items)."""
        t = np.asarray(theta, dtype=np.float64).reshape(-1, 1)
        return self.p_of(self.a * (t - self.b))

    def slope_info(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(dP_i/dθ, Fisher information of item i) at each ``theta`` (len(theta) x
        n_items): a² P (1 − P) for 1PL/2PL; with a floor (3PL) dP/dθ = a (1 − c) s (1 − s)
        on the curve s without its floor, information (dP/dθ)² / (P (1 − P))."""
        t = np.asarray(theta, dtype=np.float64).reshape(-1, 1)
        s = expit(self.a * (t - self.b))
        if self.c is None:
            dp: FloatArray = self.a * s * (1.0 - s)
            return dp, self.a * dp
        dp = self.a * (1.0 - self.c) * s * (1.0 - s)
        p = self.c + (1.0 - self.c) * s
        info: FloatArray = dp**2 / np.maximum(p * (1.0 - p), 1e-300)
        return dp, info

    def p_of(self, eta: FloatArray, idx: np.ndarray | None = None) -> FloatArray:
        """P(correct) at logits ``eta`` = a (θ − b) of the items ``idx`` (all: None),
        the floor applied (3PL)."""
        p = expit(eta)
        if self.c is None:
            return p
        c = self.c if idx is None else self.c[idx]
        out: FloatArray = c + (1.0 - c) * p
        return out

    def log_p_of(
        self, eta: FloatArray, idx: np.ndarray | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """(log P, log(1 − P)) at logits ``eta`` of the items ``idx`` (all: None)."""
        if self.c is None:
            return log_expit(eta), log_expit(-eta)
        c = self.c if idx is None else self.c[idx]
        log_q: FloatArray = np.log1p(-c) + log_expit(-eta)
        log_p: FloatArray = np.log(c + (1.0 - c) * expit(eta))
        return log_p, log_q

    def z_of(self, theta: float) -> float | None:
        """``theta`` on the benchmark's z axis (None without a calibration)."""
        if self.calibration is None:
            return None
        return float(self.calibration.to_z(np.array([theta]))[0])

    def with_panel_scores(self, scores: Mapping[str, float]) -> ItemBank:
        """The same bank, ranked against ``scores`` (model -> full accuracy); panel
        models missing from ``scores`` keep the calibration's prediction."""
        new = self.panel_scores.copy()
        for j, name in enumerate(self.panel):
            if name in scores:
                new[j] = float(scores[name])
        return replace(self, panel_scores=new)

    @classmethod
    def build(
        cls,
        *,
        items: Sequence[str],
        b: Sequence[float] | FloatArray,
        theta: Mapping[str, float],
        a: Sequence[float] | FloatArray | None = None,
        calibration: Calibration | None = None,
        benchmark: str | None = None,
        source: str = "calibration",
        c: Sequence[float] | FloatArray | None = None,
    ) -> ItemBank:
        """A bank from its parts (``a`` None: 1PL; ``c`` given: 3PL); panel scores from
        the model."""
        b_arr = np.asarray(b, dtype=np.float64)
        a_arr = np.ones_like(b_arr) if a is None else np.asarray(a, dtype=np.float64)
        panel = tuple(theta)
        th = np.array([theta[m] for m in panel], dtype=np.float64)
        model = "1pl" if a is None else "2pl" if c is None else "3pl"
        bank = cls(
            items=tuple(str(i) for i in items),
            b=b_arr,
            a=a_arr,
            model=model,
            panel=panel,
            theta=th,
            panel_scores=np.zeros_like(th),
            calibration=calibration,
            benchmark=benchmark,
            source=source,
            c=None if c is None else np.asarray(c, dtype=np.float64),
        )
        return replace(bank, panel_scores=bank.p(th).mean(axis=1))

    @classmethod
    def from_calibration(
        cls,
        calibration: Calibration,
        difficulty: pl.DataFrame,
        *,
        source: str = "difficulty table",
    ) -> ItemBank:
        """The annotate stage's outputs: a calibration and its difficulty table (item, b,
        and a for 2PL; a, c and b_curve for 3PL). Items whose b is missing are left out
        (they have no place on the scale)."""
        for col in ("item", "b"):
            if col not in difficulty.columns:
                raise InputError("required column missing", file=source, field=col)
        two_pl = calibration.model != "1pl"
        three = calibration.model == "3pl"
        if two_pl and "a" not in difficulty.columns:
            raise InputError("a 2PL calibration needs column a", file=source, field="a")
        for col in ("c", "b_curve") if three else ():
            if col not in difficulty.columns:
                raise InputError("a 3PL calibration needs column " + col, file=source, field=col)
        cols = ["item", "b", "a"] if two_pl else ["item", "b"]
        df = difficulty.select(cols + (["c", "b_curve"] if three else []))
        df = df.filter(pl.col("b").is_not_null() & pl.col("b").is_not_nan())
        if two_pl:
            bad = df.filter(pl.col("a").is_null() | pl.col("a").is_nan() | (pl.col("a") <= 0))
            if bad.height:
                raise InputError(
                    f"item {bad['item'][0]!r} has no positive discrimination a",
                    file=source,
                    field="a",
                )
        if df.height == 0:
            raise InputError("no item has a difficulty b", file=source, field="b")
        return cls.build(
            items=df["item"].cast(pl.String).to_list(),
            b=df["b_curve" if three else "b"].to_numpy(),
            a=df["a"].to_numpy() if two_pl else None,
            c=df["c"].to_numpy() if three else None,
            theta=calibration.abilities,
            calibration=calibration,
            benchmark=calibration.benchmark,
            source=source,
        )

    @classmethod
    def from_fit(cls, result: FitResult, *, benchmark: str | None = None) -> ItemBank:
        """A bank straight from :func:`curation.irt.fit` (validation calibrates this way)."""
        bank = cls.from_calibration(
            result.calibration, result.items, source=f"fit of {benchmark or 'a benchmark'}"
        )
        return bank if benchmark is None else replace(bank, benchmark=benchmark)

    @classmethod
    def load(
        cls,
        benchmark: str,
        *,
        calibration: str | Path | None = None,
        difficulty: str | Path | None = None,
        responses: str | Path | None = None,
    ) -> ItemBank:
        """A benchmark's bank from the current project: data/calibration/<b>.json and
        data/difficulty/<b>.parquet; the panel's full scores from
        data/responses/<b>.parquet when it exists (else the calibration's prediction)."""
        from curation.io.tables import read_table
        from curation.irt import Calibration
        from curation.paths import calibration_path, difficulty_path, responses_path
        from curation.subsets import model_scores

        cal_file = Path(calibration) if calibration else calibration_path(benchmark)
        diff_file = Path(difficulty) if difficulty else difficulty_path(benchmark)
        if not cal_file.is_file():
            raise InputError(
                f"no calibration of benchmark {benchmark!r}; run the annotate stage "
                f"(dvc repro annotate@{benchmark})",
                file=str(cal_file),
            )
        cal = Calibration.load(cal_file)
        table = read_table(diff_file, produced_by=f"annotate@{benchmark}")
        bank = cls.from_calibration(cal, table, source=str(diff_file))
        bank = replace(bank, benchmark=benchmark)
        resp_file = Path(responses) if responses else responses_path(benchmark)
        if resp_file.is_file():
            panel = read_table(resp_file, produced_by=f"responses@{benchmark}")
            panel = panel.filter(pl.col("item").is_in(list(bank.items)))
            bank = bank.with_panel_scores(model_scores(panel))
        return bank
