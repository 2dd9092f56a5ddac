"""The Markdown report of a multidimensional IRT fit (``reports/mirt.md``).

Rendering only: every figure comes from a :class:`MirtReport` (``_report.py``), every
number is written by :mod:`curation.report.format` and every table by
:mod:`curation.report.markdown`. One function per section of the page.
"""

from __future__ import annotations

import numpy as np

from curation.irt.mirt._flips import Flip
from curation.irt.mirt._profiles import expected_scores
from curation.irt.mirt._report import MirtReport, factor_correlation
from curation.paths import MIRT_MODELS_PAGE
from curation.report.format import EN_DASH, Blanks, count, fixed, general, percent, signed
from curation.report.markdown import bullets, heading, table
from curation.report.panel import extremes, many_models

ROTATION_TEXT = {
    "varimax": "varimax (orthogonal, Kaiser-normalised): abilities stay uncorrelated",
    "oblimin": "direct oblimin (oblique, gamma = 0): abilities may correlate "
    "(see the factor correlations)",
    "none": "none (principal axes of the standardised solution)",
}

BLANKS = Blanks(missing=EN_DASH, nonfinite=EN_DASH)
"""Undefined correlations and scores (too few models, missing cells) print "–"."""
_UNOBSERVED = Blanks(missing=EN_DASH)
"""A cell the model did not answer prints "–" (an observed rate is never NaN)."""


def _points(share: float) -> str:
    """A score difference or accuracy in percentage points, "–" when undefined."""
    return percent(share, suffix="", blanks=BLANKS)


def _dims(d: int) -> list[str]:
    return [f"dim {k + 1}" for k in range(d)]


def _intro(report: MirtReport) -> list[str]:
    data, fit = report.data, report.analysis
    dropped = data.dropped
    return [
        heading(1, "Multidimensional IRT across benchmarks"),
        "",
        "Compensatory multidimensional 2PL, P(correct) = σ(a_i·θ_j − b_i), fitted jointly to "
        f"**{len(data.benchmarks)} benchmarks** ({', '.join(data.benchmarks)}): "
        f"{data.n_models} models × {data.n_items} items, {count(data.n_cells)} observed cells "
        f"({percent(data.missing_share)} missing), binomial over trials. "
        "MAP with weak Gaussian priors "
        f"(θ ~ N(0, {general(fit.priors.theta_sd)}²), a ~ N(0, {general(fit.priors.a_sd)}²), "
        f"b ~ N(0, {general(fit.priors.b_sd)}²); θ and a enter only through θ·a, so together "
        "they are a nuclear-norm penalty of weight "
        f"{general(1 / (fit.priors.theta_sd * fit.priors.a_sd))} on "
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
    ]


def _selection(report: MirtReport) -> list[str]:
    sel = report.selection
    lines = [
        heading(2, "Number of dimensions"),
        "",
        f"{general(100 * sel.holdout)}% of the observed cells ({count(sel.n_heldout)}) held out "
        f"at random (seed {sel.seed}); each d fitted on the rest and scored on them, then "
        "refitted on all cells for BIC "
        "(n = observed cells; parameters M·d + I·(d+1) − d² − d).",
        "",
    ]
    if sel.n_models_selection is not None:
        lines += [
            f"**Chosen on a sample:** the panel's {count(report.data.n_cells)} cells exceed "
            f"the selection budget (`mirt.selection_max_cells: {count(sel.max_cells or 0)}`), "
            f"so d was chosen on a seeded sample of {count(sel.n_models_selection)} of the "
            f"{count(report.data.n_models)} models (every item); the table below is the "
            "sample's. The chosen d (and d = 2) were then fitted on every model, and every "
            "section after this one uses that fit.",
            "",
        ]
    rows = []
    for r in sel.rows:
        mark = " ←" if r.d == sel.chosen else ""
        gap = (
            "best"
            if r.heldout_gap == 0
            else f"{fixed(r.heldout_gap, 4)} ± {fixed(r.heldout_gap_se, 4)}"
        )
        rows.append(
            [
                f"{r.d}{mark}",
                count(r.n_params),
                fixed(r.train_loglik, 1, grouping=True),
                fixed(r.heldout_loglik, 4),
                gap,
                fixed(r.loglik, 1, grouping=True),
                fixed(r.bic, 1, grouping=True),
            ]
        )
    header = [
        "d",
        "params",
        "train loglik",
        "held-out loglik / cell",
        "gap to best ± paired SE",
        "full loglik",
        "BIC",
    ]
    lines += table(header, rows)
    rule = f"smallest d within {general(sel.se_rule)} paired SE of the best held-out likelihood"
    lines += [
        "",
        f"Held-out rule ({rule}): **d = {sel.d_heldout}**; BIC: **d = {sel.d_bic}**; "
        f"chosen by `{sel.select}`: **d = {sel.chosen}**.",
        "",
        "BIC counts every item's loadings as free parameters (joint estimation with a small "
        "panel), so its penalty per extra dimension is large; the held-out likelihood measures "
        "what an extra dimension predicts on unseen cells and is the primary criterion.",
        "",
    ]
    if report.analysis_d != sel.chosen:
        lines += [
            f"> d = {sel.chosen} was chosen, so in the model every benchmark measures the same "
            "single dimension and no ranking can flip. The sections below use the "
            f"**d = {report.analysis_d} solution** to show how the benchmarks would separate "
            "and where rankings flip; read them as exploratory.",
            "",
        ]
    return lines


def _benchmarks(report: MirtReport) -> list[str]:
    fit, d_an = report.analysis, report.analysis_d
    dims = _dims(fit.d)
    lines = [
        heading(2, f"What each benchmark measures (d = {d_an})"),
        "",
        "Mean loading of the benchmark's items on each dimension; share = squared mean loading "
        "over their sum; a benchmark *loads on* a dimension with share ≥ "
        f"{general(report.loading_share)}.",
        "",
    ]
    rows = []
    for p in report.profiles[d_an]:
        on = ", ".join(
            f"dim {k}" + (" (−)" if p.mean_loading[k - 1] < 0 else "") for k in p.loads_on
        )
        rows.append(
            [p.benchmark, str(p.n_items)]
            + [
                f"{fixed(m)} ({percent(s, 0)})"
                for m, s in zip(p.mean_loading, p.share, strict=True)
            ]
            + [on or EN_DASH]
        )
    lines += table(["benchmark", "items", *dims, "loads on"], rows, align="lr" + "r" * fit.d + "l")
    corr = factor_correlation(fit)
    if fit.d > 1 and not np.allclose(corr, np.eye(fit.d)):
        lines += ["", "Factor correlations (oblique rotation):", ""]
        lines += table(["", *dims], [[dims[i]] + [fixed(v) for v in corr[i]] for i in range(fit.d)])
    lines += ["", "Mean loadings for every d (same rotation):", ""]
    rows = [
        [str(d), p.benchmark, "  ".join(signed(m) for m in p.mean_loading)]
        for d, profs in sorted(report.profiles.items())
        for p in profs
    ]
    lines += table(["d", "benchmark", "mean loading per dimension"], rows, align="rll")
    return lines


def _relations(report: MirtReport) -> list[str]:
    sim = report.similarity
    names = list(sim.benchmarks)
    lines = [
        "",
        heading(2, f"How the benchmarks relate (d = {report.analysis_d})"),
        "",
        "Cosine of mean loading vectors (1 = the same direction) | Spearman ρ of the models' "
        "expected scores | Spearman ρ of observed accuracies (models that answered both; n in "
        "brackets).",
        "",
    ]
    rows = [
        [
            f"{a} × {b}",
            fixed(sim.cosine[i, j], blanks=BLANKS),
            fixed(sim.expected_spearman[i, j], blanks=BLANKS),
            f"{fixed(sim.observed_spearman[i, j], blanks=BLANKS)} ({sim.n_models[i, j]})",
        ]
        for i, a in enumerate(names)
        for j, b in enumerate(names)
        if j > i
    ]
    lines += table(["pair", "cosine of loadings", "ρ expected", "ρ observed (n)"], rows)
    return lines


def ability_rows(report: MirtReport, order: list[int] | None = None) -> list[list[str]]:
    """Rows of the ability table (model, θ per dimension, observed / expected accuracy
    per benchmark), strongest on dim 1 first; ``order``: only these models, in this order."""
    fit = report.analysis
    obs = report.data.observed_scores()
    exp = expected_scores(fit)
    n_bench = len(report.similarity.benchmarks)
    if order is None:
        order = [int(j) for j in np.argsort(-fit.theta[:, 0], kind="stable")]
    return [
        [fit.models[j]]
        + [signed(v) for v in fit.theta[j]]
        + [f"{_points(obs[j, b])} / {_points(exp[j, b])}" for b in range(n_bench)]
        for j in order
    ]


def ability_header(report: MirtReport) -> list[str]:
    """The ability table's header."""
    return ["model", *_dims(report.analysis.d), *report.similarity.benchmarks]


def _abilities(report: MirtReport) -> list[str]:
    fit = report.analysis
    n = len(fit.models)
    what = (
        "θ on the panel scale (mean 0, SD 1 per dimension); per benchmark: observed / expected "
        "accuracy (%, over the fitted items)."
    )
    head = ["", heading(2, f"Model ability vectors (d = {report.analysis_d})"), ""]
    if not many_models(n):
        return [*head, what, "", *table(ability_header(report), ability_rows(report))]
    keep = extremes(fit.theta[:, 0])
    rows = ability_rows(report, keep)
    top = len(keep) // 2
    gap = [f"… {count(n - len(keep))} more"] + [""] * (len(rows[0]) - 1)
    return [
        *head,
        f"{what} {count(n)} models: the {top} strongest and {len(keep) - top} weakest on "
        f"dim 1 are listed; every model's vector is in `metrics/mirt.json` (`abilities`) and, "
        f"searchable, in `{MIRT_MODELS_PAGE.as_posix()}`.",
        "",
        *table(ability_header(report), [*rows[:top], gap, *rows[top:]]),
    ]


def _by_dimension(split: tuple[float, ...]) -> str:
    return ", ".join(f"dim {k + 1} {signed(100 * v, 1)}" for k, v in enumerate(split))


def _flip(f: Flip) -> list[str]:
    lines = [
        heading(3, f"{f.model_a} vs {f.model_b}: {f.benchmark_a} vs {f.benchmark_b}"),
        "",
        f"On **{f.benchmark_a}** {f.model_a} leads by {_points(f.lead_a)} points expected "
        f"(observed {_points(f.observed[0])} vs {_points(f.observed[1])}); on "
        f"**{f.benchmark_b}** {f.model_b} leads by {_points(f.lead_b)} points (observed "
        f"{_points(f.observed[3])} vs {_points(f.observed[2])}). "
        f"Ability gap θ_A − θ_B = ({', '.join(signed(v) for v in f.ability_gap)}).",
        "",
        "Exact split of each lead by dimension (points): "
        f"{f.benchmark_a}: {_by_dimension(f.by_dimension_a)}; "
        f"{f.benchmark_b}: {_by_dimension(f.by_dimension_b)}.",
        "",
        f"Items contributing most to the flip (contribution in points of the flip size "
        f"{_points(f.size)}; P = model-implied success; obs = observed outcome):",
        "",
    ]
    rows = [
        [
            it.benchmark,
            f"`{it.item}`",
            fixed(100 * it.contribution),
            f"{fixed(it.p_a, 2)} / {fixed(it.p_b, 2)}",
            f"{general(it.observed_a, blanks=_UNOBSERVED)} / "
            f"{general(it.observed_b, blanks=_UNOBSERVED)}",
            "  ".join(signed(v) for v in it.loadings),
        ]
        for it in f.items
    ]
    header = ["benchmark", "item", "contribution", f"P {f.model_a} / {f.model_b}", "obs"]
    lines += table([*header, "loadings"], rows, align="llrrrl")
    return [*lines, ""]


def _flips(report: MirtReport) -> list[str]:
    lines = ["", heading(2, f"Rank flips (d = {report.analysis_d})"), ""]
    if not report.flips:
        lines += [
            "No pair of models is ordered one way on one benchmark and the other way on another, "
            "in both the model and the data.",
            "",
        ]
    for f in report.flips:
        lines += _flip(f)
    return lines


def _caveats(report: MirtReport) -> list[str]:
    lines = [
        heading(2, "Caveats"),
        "",
        *bullets(
            [
                "Dimensions are latent statistical directions of this panel and item pool; "
                'naming them ("math", "code") is an interpretation, not an output of the model.',
                "With a few dozen models every item's loadings rest on a few dozen responses; "
                "per-item loadings are noisy, benchmark means much less so.",
                "Items every model solved or failed are left out, so accuracies here are over "
                "the fitted items.",
            ],
            marker="*",
        ),
        "",
    ]
    if report.timings:
        lines += [heading(2, "Timings"), ""]
        lines += [", ".join(f"{k} {fixed(v, 1)} s" for k, v in report.timings.items()), ""]
    return lines


def render_models_html(report: MirtReport) -> str:
    """Every model's ability vector and accuracies, one searchable HTML table
    (``reports/mirt-models.html``): what the Markdown report lists only the extremes of for a
    leaderboard."""
    from curation.report.blocks import Block, Paragraph, Table
    from curation.report.blocks import Heading as H
    from curation.report.html import page

    n = len(report.analysis.models)
    blocks: list[Block] = [
        H(1, f"Model ability vectors (d = {report.analysis_d}), {count(n)} models"),
        Paragraph(
            "θ on the panel scale (mean 0, SD 1 per dimension), strongest on dim 1 first; per "
            "benchmark: observed / expected accuracy (%, over the fitted items). The full "
            "report: mirt.md."
        ),
        Table(
            tuple(ability_header(report)),
            tuple(tuple(r) for r in ability_rows(report)),
            searchable=True,
        ),
    ]
    return page(blocks, "MIRT model abilities")


def render_mirt_markdown(report: MirtReport) -> str:
    """The Markdown report (reports/mirt.md)."""
    sections = (_intro, _selection, _benchmarks, _relations, _abilities, _flips, _caveats)
    return "\n".join(line for section in sections for line in section(report))
