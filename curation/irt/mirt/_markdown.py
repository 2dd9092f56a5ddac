"""The Markdown report of a multidimensional IRT fit (``reports/mirt.md``).

Rendering only: every figure comes from a :class:`MirtReport` (``_report.py``).
"""

from __future__ import annotations

import numpy as np

from curation.irt.mirt._profiles import expected_scores
from curation.irt.mirt._report import MirtReport, factor_correlation

ROTATION_TEXT = {
    "varimax": "varimax (orthogonal, Kaiser-normalised): abilities stay uncorrelated",
    "oblimin": "direct oblimin (oblique, gamma = 0): abilities may correlate "
    "(see the factor correlations)",
    "none": "none (principal axes of the standardised solution)",
}


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
    corr = factor_correlation(fit)
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
