"""What a fitted MIRT says about benchmarks and models, and its Markdown report.

* per benchmark: mean loading on each dimension (what it measures);
* benchmark x benchmark: cosine of mean loading vectors, Spearman correlation of the
  models' expected scores, and of their observed accuracies;
* per model: the ability vector;
* rank flips: a pair of models ordered one way on benchmark X and the other way on Y,
  with the items that contribute most to the flip. A model's expected score on a
  benchmark is the mean of its success probabilities over the benchmark's items, so
  the flip size (A's lead on X plus B's lead on Y) is a sum of per-item terms,
  ``(p_Ai - p_Bi) / |X|`` for items of X and ``(p_Bi - p_Ai) / |Y|`` for items of Y.
  Per dimension the split is exact too: ``p_Ai - p_Bi = s_i a_i . (theta_A - theta_B)``
  with ``s_i`` the secant slope of the logistic between the two logits.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy.special import expit
from scipy.stats import spearmanr

from curation.irt.mirt._fit import MirtData, MirtFit
from curation.irt.mirt._rotate import rotate_fit
from curation.irt.mirt._select import Selection

ROTATION_TEXT = {
    "varimax": "varimax (orthogonal, Kaiser-normalised): abilities stay uncorrelated",
    "oblimin": "direct oblimin (oblique, gamma = 0): abilities may correlate "
    "(see the factor correlations)",
    "none": "none (principal axes of the standardised solution)",
}


# --------------------------------------------------------------------------- benchmarks


@dataclass(frozen=True)
class BenchmarkProfile:
    """Which dimensions one benchmark's items load on."""

    benchmark: str
    n_items: int
    mean_loading: tuple[float, ...]
    share: tuple[float, ...]
    """Squared mean loading per dimension over their sum."""
    loads_on: tuple[int, ...]
    """1-based dimensions whose share is at least the threshold, largest first."""


def benchmark_profiles(fit: MirtFit, *, loading_share: float = 0.2) -> list[BenchmarkProfile]:
    """Mean loading of each benchmark's items on each dimension."""
    out = []
    for b, name in enumerate(fit.benchmarks):
        cols = fit.item_benchmark == b
        if not cols.any():
            continue
        mean = fit.loadings[cols].mean(axis=0)
        sq = mean**2
        share = sq / sq.sum() if sq.sum() > 0 else np.zeros_like(sq)
        order = np.argsort(-share, kind="stable")
        loads = tuple(int(k) + 1 for k in order if share[k] >= loading_share)
        out.append(
            BenchmarkProfile(
                benchmark=name,
                n_items=int(cols.sum()),
                mean_loading=tuple(float(x) for x in mean),
                share=tuple(float(x) for x in share),
                loads_on=loads,
            )
        )
    return out


def expected_scores(fit: MirtFit) -> np.ndarray:
    """Shape (n_models, n_benchmarks): mean success probability over each benchmark's items."""
    p = fit.probabilities()
    out = np.full((len(fit.models), len(fit.benchmarks)), np.nan)
    for b in range(len(fit.benchmarks)):
        cols = fit.item_benchmark == b
        if cols.any():
            out[:, b] = p[:, cols].mean(axis=1)
    return out


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    ok = ~(np.isnan(x) | np.isnan(y))
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return float("nan")
    return float(spearmanr(x[ok], y[ok]).statistic)


@dataclass(frozen=True)
class Similarity:
    """Benchmark x benchmark matrices (order of ``benchmarks``)."""

    benchmarks: tuple[str, ...]
    cosine: np.ndarray
    """Cosine of the mean loading vectors."""
    expected_spearman: np.ndarray
    """Spearman correlation of the models' expected scores (models that answered both)."""
    observed_spearman: np.ndarray
    """Spearman correlation of the models' observed accuracies (models that answered both)."""
    n_models: np.ndarray
    """Models that answered both benchmarks."""


def benchmark_similarity(fit: MirtFit, data: MirtData) -> Similarity:
    profiles = {p.benchmark: np.array(p.mean_loading) for p in benchmark_profiles(fit)}
    names = fit.benchmarks
    k = len(names)
    exp = expected_scores(fit)
    obs = data.observed_scores()
    cos = np.full((k, k), np.nan)
    rho_e = np.full((k, k), np.nan)
    rho_o = np.full((k, k), np.nan)
    n = np.zeros((k, k), dtype=np.int64)
    for x, y in itertools.product(range(k), repeat=2):
        if names[x] in profiles and names[y] in profiles:
            u, v = profiles[names[x]], profiles[names[y]]
            den = np.linalg.norm(u) * np.linalg.norm(v)
            cos[x, y] = float(u @ v / den) if den > 0 else float("nan")
        both = ~(np.isnan(obs[:, x]) | np.isnan(obs[:, y]))
        n[x, y] = int(both.sum())
        rho_e[x, y] = _spearman(np.where(both, exp[:, x], np.nan), exp[:, y])
        rho_o[x, y] = _spearman(np.where(both, obs[:, x], np.nan), obs[:, y])
    return Similarity(names, cos, rho_e, rho_o, n)


# --------------------------------------------------------------------------- flips


@dataclass(frozen=True)
class FlipItem:
    """One item's part in a rank flip."""

    benchmark: str
    item: str
    contribution: float
    """Share of the flip size this item accounts for, in score points (x100 = percentage points)."""
    p_a: float
    p_b: float
    observed_a: float | None
    observed_b: float | None
    loadings: tuple[float, ...]


@dataclass(frozen=True)
class Flip:
    """Model A ahead on ``benchmark_a``, model B ahead on ``benchmark_b``."""

    model_a: str
    model_b: str
    benchmark_a: str
    benchmark_b: str
    expected: tuple[float, float, float, float]
    """Expected scores: A on X, B on X, A on Y, B on Y (X = benchmark_a, Y = benchmark_b)."""
    observed: tuple[float, float, float, float]
    lead_a: float
    """A's expected lead on X (> 0 for a flip)."""
    lead_b: float
    """B's expected lead on Y (> 0 for a flip)."""
    by_dimension_a: tuple[float, ...]
    """A's lead on X split exactly by dimension."""
    by_dimension_b: tuple[float, ...]
    """B's lead on Y split exactly by dimension."""
    ability_gap: tuple[float, ...]
    """theta_A - theta_B."""
    items: tuple[FlipItem, ...] = field(default_factory=tuple)

    @property
    def size(self) -> float:
        return self.lead_a + self.lead_b

    @property
    def is_flip(self) -> bool:
        return self.lead_a > 0 and self.lead_b > 0


def _secant(eta_a: np.ndarray, eta_b: np.ndarray) -> np.ndarray:
    diff = eta_a - eta_b
    small = np.abs(diff) < 1e-9
    p_mid = expit(0.5 * (eta_a + eta_b))
    with np.errstate(invalid="ignore", divide="ignore"):
        sec = (expit(eta_a) - expit(eta_b)) / np.where(small, 1.0, diff)
    return np.where(small, p_mid * (1 - p_mid), sec)


def item_contributions(
    fit: MirtFit, model_a: str, model_b: str, benchmark_a: str, benchmark_b: str
) -> tuple[np.ndarray, np.ndarray]:
    """Per item (all items of the fit): contribution to the flip size, and a mask of the
    items of the two benchmarks. Contributions sum to A's lead on X plus B's lead on Y."""
    ja, jb = fit.models.index(model_a), fit.models.index(model_b)
    bx, by = fit.benchmarks.index(benchmark_a), fit.benchmarks.index(benchmark_b)
    if bx == by:
        raise ValueError("a flip needs two different benchmarks")
    p = expit(fit.theta[[ja, jb]] @ fit.loadings.T - fit.difficulty)
    gap = p[0] - p[1]
    contrib = np.zeros(len(fit.items))
    x, y = fit.item_benchmark == bx, fit.item_benchmark == by
    contrib[x] = gap[x] / max(int(x.sum()), 1)
    contrib[y] = -gap[y] / max(int(y.sum()), 1)
    return contrib, x | y


def flip_attribution(
    fit: MirtFit,
    data: MirtData | None,
    model_a: str,
    model_b: str,
    benchmark_a: str,
    benchmark_b: str,
    *,
    n_items: int = 10,
) -> Flip:
    """Decompose ``model_a``'s lead on ``benchmark_a`` and ``model_b``'s on ``benchmark_b``.

    ``items`` lists the ``n_items`` items contributing most to the flip (largest
    contribution first); observed outcomes come from ``data`` when given.
    """
    ja, jb = fit.models.index(model_a), fit.models.index(model_b)
    bx, by = fit.benchmarks.index(benchmark_a), fit.benchmarks.index(benchmark_b)
    contrib, in_pair = item_contributions(fit, model_a, model_b, benchmark_a, benchmark_b)
    eta = fit.theta[[ja, jb]] @ fit.loadings.T - fit.difficulty
    p = expit(eta)
    dtheta = fit.theta[ja] - fit.theta[jb]
    per_dim = (
        _secant(eta[0], eta[1])[:, None] * fit.loadings * dtheta
    )  # (items, d), rows sum to p_a - p_b
    x, y = fit.item_benchmark == bx, fit.item_benchmark == by
    exp = (p[0][x].mean(), p[1][x].mean(), p[0][y].mean(), p[1][y].mean())
    if data is not None:
        obs_scores = data.observed_scores()
        observed = (
            obs_scores[ja, bx],
            obs_scores[jb, bx],
            obs_scores[ja, by],
            obs_scores[jb, by],
        )
    else:
        observed = (float("nan"),) * 4
    order = np.argsort(-np.where(in_pair, contrib, -np.inf), kind="stable")[:n_items]
    items = []
    for i in order:
        if not in_pair[i]:
            continue
        bench = fit.benchmarks[int(fit.item_benchmark[i])]
        oa = ob = None
        if data is not None:
            if data.trials[ja, i] > 0:
                oa = float(data.correct[ja, i] / data.trials[ja, i])
            if data.trials[jb, i] > 0:
                ob = float(data.correct[jb, i] / data.trials[jb, i])
        items.append(
            FlipItem(
                benchmark=bench,
                item=fit.items[i][len(bench) + 1 :],
                contribution=float(contrib[i]),
                p_a=float(p[0, i]),
                p_b=float(p[1, i]),
                observed_a=oa,
                observed_b=ob,
                loadings=tuple(float(v) for v in fit.loadings[i]),
            )
        )
    return Flip(
        model_a=model_a,
        model_b=model_b,
        benchmark_a=benchmark_a,
        benchmark_b=benchmark_b,
        expected=tuple(float(v) for v in exp),
        observed=tuple(float(v) for v in observed),
        lead_a=float(exp[0] - exp[1]),
        lead_b=float(exp[3] - exp[2]),
        by_dimension_a=tuple(float(v) for v in per_dim[x].mean(axis=0)),
        by_dimension_b=tuple(float(v) for v in -per_dim[y].mean(axis=0)),
        ability_gap=tuple(float(v) for v in dtheta),
        items=tuple(items),
    )


def find_flips(fit: MirtFit, data: MirtData, *, n: int = 3, n_items: int = 10) -> list[Flip]:
    """The clearest flip for each pair of benchmarks, clearest first (at most ``n``).

    A flip must hold in the model (expected scores) and in the data (observed accuracy,
    both models having answered both benchmarks); its strength is the smaller of the
    two expected leads.
    """
    exp = expected_scores(fit)
    obs = data.observed_scores()
    found = []
    for bx, by in itertools.combinations(range(len(fit.benchmarks)), 2):
        best, best_key = None, 0.0
        for ja, jb in itertools.permutations(range(len(fit.models)), 2):
            if np.isnan(obs[[ja, jb]][:, [bx, by]]).any():
                continue
            lead_x = exp[ja, bx] - exp[jb, bx]
            lead_y = exp[jb, by] - exp[ja, by]
            if lead_x <= 0 or lead_y <= 0:
                continue
            if not (obs[ja, bx] > obs[jb, bx] and obs[jb, by] > obs[ja, by]):
                continue
            strength = min(lead_x, lead_y)
            if strength > best_key:
                best, best_key = (ja, jb), strength
        if best is not None:
            ja, jb = best
            found.append(
                (
                    best_key,
                    flip_attribution(
                        fit,
                        data,
                        fit.models[ja],
                        fit.models[jb],
                        fit.benchmarks[bx],
                        fit.benchmarks[by],
                        n_items=n_items,
                    ),
                )
            )
    found.sort(key=lambda t: -t[0])
    return [f for _, f in found[:n]]


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class MirtReport:
    """Everything the stage writes, computed once."""

    data: MirtData
    selection: Selection
    rotation: str
    fits: dict[int, MirtFit]
    """Rotated full-data fit of every d."""
    analysis_d: int
    """The d the detailed sections use: the chosen d, or 2 if d = 1 was chosen."""
    profiles: dict[int, list[BenchmarkProfile]]
    similarity: Similarity
    flips: list[Flip]
    loading_share: float
    timings: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def chosen(self) -> int:
        return self.selection.chosen

    @property
    def fit(self) -> MirtFit:
        """The rotated fit of the chosen d."""
        return self.fits[self.chosen]

    @property
    def analysis(self) -> MirtFit:
        return self.fits[self.analysis_d]

    def metrics(self) -> dict[str, Any]:
        """The JSON metrics record (schemas/mirt_metrics.schema.json)."""
        fit, sel, sim = self.analysis, self.selection, self.similarity
        names = list(sim.benchmarks)

        def _num(v: float) -> float | None:
            return None if not np.isfinite(v) else round(float(v), 6)

        def _matrix(m: np.ndarray) -> dict[str, dict[str, float | None]]:
            return {a: {b: _num(m[i, j]) for j, b in enumerate(names)} for i, a in enumerate(names)}

        return {
            "benchmarks": names,
            "n_models": self.data.n_models,
            "n_items": self.data.n_items,
            "n_cells": self.data.n_cells,
            "missing_share": round(self.data.missing_share, 6),
            "dropped": {k: int(v) for k, v in self.data.dropped.items()},
            "d_max": len(sel.rows),
            "d_chosen": sel.chosen,
            "d_heldout": sel.d_heldout,
            "d_bic": sel.d_bic,
            "d_analysis": self.analysis_d,
            "select": sel.select,
            "se_rule": sel.se_rule,
            "holdout_share": sel.holdout,
            "n_heldout_cells": sel.n_heldout,
            "seed": sel.seed,
            "rotation": self.rotation,
            "converged": all(r.converged for r in sel.rows),
            "selection": [
                {
                    "d": r.d,
                    "n_params": r.n_params,
                    "train_loglik": round(r.train_loglik, 3),
                    "heldout_loglik_per_cell": round(r.heldout_loglik, 6),
                    "heldout_gap": round(r.heldout_gap, 6),
                    "heldout_gap_se": round(r.heldout_gap_se, 6),
                    "loglik": round(r.loglik, 3),
                    "bic": round(r.bic, 3),
                }
                for r in sel.rows
            ],
            "benchmark_loadings": {
                p.benchmark: [round(v, 6) for v in p.mean_loading]
                for p in self.profiles[self.analysis_d]
            },
            "benchmark_dimensions": {
                p.benchmark: list(p.loads_on) for p in self.profiles[self.analysis_d]
            },
            "benchmark_cosine": _matrix(sim.cosine),
            "expected_score_spearman": _matrix(sim.expected_spearman),
            "observed_score_spearman": _matrix(sim.observed_spearman),
            "factor_correlation": [[round(float(v), 6) for v in row] for row in _corr(fit)],
            "abilities": {
                m: [round(float(v), 6) for v in fit.theta[j]] for j, m in enumerate(fit.models)
            },
            "flips": [
                {
                    "model_a": f.model_a,
                    "model_b": f.model_b,
                    "benchmark_a": f.benchmark_a,
                    "benchmark_b": f.benchmark_b,
                    "lead_a": round(f.lead_a, 6),
                    "lead_b": round(f.lead_b, 6),
                    "top_items": [f"{it.benchmark}/{it.item}" for it in f.items],
                }
                for f in self.flips
            ],
        }


def _corr(fit: MirtFit) -> np.ndarray:
    return fit.factor_corr if fit.factor_corr is not None else np.eye(fit.d)


def build_report(
    data: MirtData,
    selection: Selection,
    *,
    rotation: str = "varimax",
    loading_share: float = 0.2,
    n_flips: int = 3,
    n_flip_items: int = 10,
    timings: dict[str, float] | None = None,
    settings: dict[str, Any] | None = None,
) -> MirtReport:
    """Rotate every d's fit and compute profiles, similarities and flips."""
    fits = {d: rotate_fit(f, rotation) for d, f in selection.fits.items()}
    analysis_d = selection.chosen if selection.chosen >= 2 or 2 not in fits else 2
    analysis = fits[analysis_d]
    return MirtReport(
        data=data,
        selection=selection,
        rotation=rotation,
        fits=fits,
        analysis_d=analysis_d,
        profiles={d: benchmark_profiles(f, loading_share=loading_share) for d, f in fits.items()},
        similarity=benchmark_similarity(analysis, data),
        flips=find_flips(analysis, data, n=n_flips, n_items=n_flip_items)
        if analysis.d >= 2
        else [],
        loading_share=loading_share,
        timings=dict(timings or {}),
        settings=dict(settings or {}),
    )


def _f(v: float | None, nd: int = 3) -> str:
    if v is None or not np.isfinite(v):
        return "–"
    return f"{v:.{nd}f}"


def _pct(v: float) -> str:
    return "–" if not np.isfinite(v) else f"{100 * v:.1f}"


def _table(header: list[str], rows: list[list[str]], align: str | None = None) -> list[str]:
    align = align or "l" + "r" * (len(header) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _obs(v: float | None) -> str:
    return "–" if v is None else f"{v:g}"


def render_mirt_markdown(report: MirtReport) -> str:
    """The Markdown report (reports/mirt.md)."""
    data, sel, fit = report.data, report.selection, report.analysis
    d_an = report.analysis_d
    dims = [f"dim {k + 1}" for k in range(fit.d)]
    lines = ["# Multidimensional IRT across benchmarks", ""]
    dropped = data.dropped
    lines += [
        "Compensatory multidimensional 2PL, P(correct) = σ(a_i·θ_j − b_i), fitted jointly to "
        f"**{len(data.benchmarks)} benchmarks** ({', '.join(data.benchmarks)}): "
        f"{data.n_models} models × {data.n_items} items, {data.n_cells:,} observed cells "
        f"({100 * data.missing_share:.1f}% missing), binomial over trials. "
        "MAP with weak Gaussian priors "
        f"(θ ~ N(0, {fit.priors.theta_sd:g}²), a ~ N(0, {fit.priors.a_sd:g}²), "
        f"b ~ N(0, {fit.priors.b_sd:g}²); θ and a enter only through θ·a, so together they are "
        f"a nuclear-norm penalty of weight {1 / (fit.priors.theta_sd * fit.priors.a_sd):g} on "
        "the logit matrix). Abilities are then standardised on the panel (mean 0, identity "
        "covariance; loadings rescale accordingly) and the loadings rotated.",
        "",
        f"Left out before fitting: {dropped.get('models_not_common', 0)} models not common to "
        f"all benchmarks, {dropped.get('items_constant', 0)} items every model solved or every "
        "model failed (no information about dimensions), "
        f"{dropped.get('items_few_models', 0)} items answered by too few models. "
        "Items are keyed `<benchmark>/<item>`.",
        "",
        f"**Rotation:** {ROTATION_TEXT.get(report.rotation, report.rotation)}. "
        "A rotation changes no prediction, only how the axes are drawn. "
        "**The dimensions are statistical, not named skills**: they are whatever directions "
        "best explain which models solve which items in this panel.",
        "",
        "## Number of dimensions",
        "",
        f"{100 * sel.holdout:g}% of the observed cells ({sel.n_heldout:,}) held out at random "
        f"(seed {sel.seed}); each d fitted on the rest and scored on them, then refitted on all "
        "cells for BIC "
        "(n = observed cells; parameters M·d + I·(d+1) − d² − d).",
        "",
    ]
    rows = []
    for r in sel.rows:
        mark = " ←" if r.d == sel.chosen else ""
        gap = "best" if r.heldout_gap == 0 else f"{r.heldout_gap:.4f} ± {r.heldout_gap_se:.4f}"
        rows.append(
            [
                f"{r.d}{mark}",
                f"{r.n_params:,}",
                f"{r.train_loglik:,.1f}",
                f"{r.heldout_loglik:.4f}",
                gap,
                f"{r.loglik:,.1f}",
                f"{r.bic:,.1f}",
            ]
        )
    lines += _table(
        [
            "d",
            "params",
            "train loglik",
            "held-out loglik / cell",
            "gap to best ± paired SE",
            "full loglik",
            "BIC",
        ],
        rows,
    )
    rule = f"smallest d within {sel.se_rule:g} paired SE of the best held-out likelihood"
    lines += [
        "",
        f"Held-out rule ({rule}): **d = {sel.d_heldout}**; BIC: **d = {sel.d_bic}**; "
        f"chosen by `{sel.select}`: **d = {sel.chosen}**.",
        "",
        "BIC counts every item's loadings as free parameters (joint estimation with a small "
        "panel), "
        "so its penalty per extra dimension is large; the held-out likelihood measures what an "
        "extra "
        "dimension predicts on unseen cells and is the primary criterion.",
        "",
    ]
    if d_an != sel.chosen:
        lines += [
            f"> d = {sel.chosen} was chosen, so in the model every benchmark measures the same "
            "single "
            f"dimension and no ranking can flip. The sections below use the **d = {d_an} "
            "solution** to show "
            "how the benchmarks would separate and where rankings flip; read them as exploratory.",
            "",
        ]

    lines += [f"## What each benchmark measures (d = {d_an})", ""]
    lines += [
        "Mean loading of the benchmark's items on each dimension; share = squared mean loading "
        "over "
        f"their sum; a benchmark *loads on* a dimension with share ≥ {report.loading_share:g}.",
        "",
    ]
    rows = []
    for p in report.profiles[d_an]:
        on = ", ".join(
            f"dim {k}" + (" (−)" if p.mean_loading[k - 1] < 0 else "") for k in p.loads_on
        )
        rows.append(
            [p.benchmark, str(p.n_items)]
            + [f"{m:.3f} ({100 * s:.0f}%)" for m, s in zip(p.mean_loading, p.share, strict=True)]
            + [on or "–"]
        )
    lines += _table(["benchmark", "items", *dims, "loads on"], rows, "lr" + "r" * fit.d + "l")
    corr = _corr(fit)
    if fit.d > 1 and not np.allclose(corr, np.eye(fit.d)):
        lines += ["", "Factor correlations (oblique rotation):", ""]
        lines += _table(
            ["", *dims], [[dims[i]] + [f"{v:.3f}" for v in corr[i]] for i in range(fit.d)]
        )
    lines += ["", "Mean loadings for every d (same rotation):", ""]
    rows = []
    for d, profs in sorted(report.profiles.items()):
        for p in profs:
            rows.append([str(d), p.benchmark, "  ".join(f"{m:+.2f}" for m in p.mean_loading)])
    lines += _table(["d", "benchmark", "mean loading per dimension"], rows, "rll")

    sim = report.similarity
    names = list(sim.benchmarks)
    lines += ["", f"## How the benchmarks relate (d = {d_an})", ""]
    lines += [
        "Cosine of mean loading vectors (1 = the same direction) | Spearman ρ of the models' "
        "expected "
        "scores | Spearman ρ of observed accuracies (models that answered both; n in brackets).",
        "",
    ]
    rows = []
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if j <= i:
                continue
            rows.append(
                [
                    f"{a} × {b}",
                    _f(sim.cosine[i, j]),
                    _f(sim.expected_spearman[i, j]),
                    f"{_f(sim.observed_spearman[i, j])} ({sim.n_models[i, j]})",
                ]
            )
    lines += _table(["pair", "cosine of loadings", "ρ expected", "ρ observed (n)"], rows)

    lines += ["", f"## Model ability vectors (d = {d_an})", ""]
    obs = data.observed_scores()
    exp = expected_scores(fit)
    order = np.argsort(-fit.theta[:, 0], kind="stable")
    rows = []
    for j in order:
        rows.append(
            [fit.models[j]]
            + [f"{v:+.2f}" for v in fit.theta[j]]
            + [f"{_pct(obs[j, b])} / {_pct(exp[j, b])}" for b in range(len(names))]
        )
    lines += [
        "θ on the panel scale (mean 0, SD 1 per dimension); per benchmark: observed / expected "
        "accuracy "
        "(%, over the fitted items).",
        "",
    ]
    lines += _table(["model", *dims, *names], rows)

    lines += ["", f"## Rank flips (d = {d_an})", ""]
    if not report.flips:
        lines += [
            "No pair of models is ordered one way on one benchmark and the other way on another, "
            "in both the model and the data.",
            "",
        ]
    for f in report.flips:
        lines += [
            f"### {f.model_a} vs {f.model_b}: {f.benchmark_a} vs {f.benchmark_b}",
            "",
            f"On **{f.benchmark_a}** {f.model_a} leads by {_pct(f.lead_a)} points expected "
            f"(observed {_pct(f.observed[0])} vs {_pct(f.observed[1])}); on **{f.benchmark_b}** "
            f"{f.model_b} "
            f"leads by {_pct(f.lead_b)} points (observed {_pct(f.observed[3])} vs "
            f"{_pct(f.observed[2])}). "
            f"Ability gap θ_A − θ_B = ({', '.join(f'{v:+.2f}' for v in f.ability_gap)}).",
            "",
            "Exact split of each lead by dimension (points): "
            f"{f.benchmark_a}: "
            f"{', '.join(f'dim {k + 1} {100 * v:+.1f}' for k, v in enumerate(f.by_dimension_a))}; "
            f"{f.benchmark_b}: "
            f"{', '.join(f'dim {k + 1} {100 * v:+.1f}' for k, v in enumerate(f.by_dimension_b))}.",
            "",
            f"Items contributing most to the flip (contribution in points of the flip size "
            f"{_pct(f.size)}; P = model-implied success; obs = observed outcome):",
            "",
        ]
        rows = [
            [
                it.benchmark,
                f"`{it.item}`",
                f"{100 * it.contribution:.3f}",
                f"{it.p_a:.2f} / {it.p_b:.2f}",
                f"{_obs(it.observed_a)} / {_obs(it.observed_b)}",
                "  ".join(f"{v:+.2f}" for v in it.loadings),
            ]
            for it in f.items
        ]
        lines += _table(
            [
                "benchmark",
                "item",
                "contribution",
                f"P {f.model_a} / {f.model_b}",
                "obs",
                "loadings",
            ],
            rows,
            "llrrrl",
        )
        lines.append("")

    lines += [
        "## Caveats",
        "",
        "* Dimensions are latent statistical directions of this panel and item pool; naming them "
        '("math", "code") is an interpretation, not an output of the model.',
        "* With a few dozen models every item's loadings rest on a few dozen responses; per-item "
        "loadings "
        "are noisy, benchmark means much less so.",
        "* Items every model solved or failed are left out, so accuracies here are over the "
        "fitted items.",
        "",
    ]
    if report.timings:
        lines += ["## Timings", ""]
        lines += [", ".join(f"{k} {v:.1f} s" for k, v in report.timings.items()), ""]
    return "\n".join(lines)


def loadings_frame(fit: MirtFit, data: MirtData | None = None) -> pl.DataFrame:
    """One row per item: benchmark, item, difficulty b, loadings a1..ad (the fit's
    rotation), communality (sum of squared loadings), primary dimension (1-based, the
    largest |loading|) and, with ``data``, the number of models that answered it."""
    bench = [fit.benchmarks[int(b)] for b in fit.item_benchmark]
    cols: dict[str, Any] = {
        "benchmark": bench,
        "item": [key[len(b) + 1 :] for key, b in zip(fit.items, bench, strict=True)],
        "difficulty": fit.difficulty.astype(float),
    }
    for k in range(fit.d):
        cols[f"a{k + 1}"] = fit.loadings[:, k].astype(float)
    cols["communality"] = np.sum(fit.loadings**2, axis=1)
    cols["primary_dimension"] = (np.argmax(np.abs(fit.loadings), axis=1) + 1).astype(np.int64)
    if data is not None:
        cols["n_models"] = (data.trials > 0).sum(axis=0).astype(np.int64)
    frame = pl.DataFrame(cols)
    return frame.with_columns(
        pl.lit(fit.rotation).alias("rotation"), pl.lit(fit.d).cast(pl.Int64).alias("d")
    )
