"""The one-page gap report a user reads first, as Markdown and as self-contained HTML.

This module decides what the page says; both renderings come from the same list of
:mod:`curation.report.blocks`, drawn by :func:`curation.report.markdown.document` and
:func:`curation.report.html.page` (inline CSS, relative <img> links, no CDN), so they
never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from curation.measure._certify import Certificate
from curation.measure._posterior import Interval, MetricIntervals
from curation.measure._power import power_table
from curation.measure._resolution import Resolution
from curation.measure._summary import BenchmarkMeasures
from curation.report import html, markdown
from curation.report.blocks import Block, Bullets, Heading, Images, Paragraph, Table
from curation.report.format import EM_DASH, INFINITY, Blanks, count, fixed, percent

_BLANKS = Blanks(missing=EM_DASH, infinite=INFINITY, nonfinite=EM_DASH)
"""An unbounded max L prints as "∞"; an absent figure (or a NaN resolution) as "—"."""


def _f(value: float | None, digits: int = 3) -> str:
    return fixed(value, digits, blanks=_BLANKS)


def _pct(share: float) -> str:
    return percent(share, 0)


def _bold_if(text: str, flag: bool) -> str:
    return f"**{text}**" if flag else text


def _pair_label(c: Certificate) -> str:
    if c.d_b > 0:
        return f"{c.model_a} > {c.model_b}"
    if c.d_b < 0:
        return f"{c.model_b} > {c.model_a}"
    return f"{c.model_a} = {c.model_b}"


def _flag_names(m: BenchmarkMeasures) -> str:
    names = [
        label
        for label, on in (
            ("DDM", m.flags.ddm),
            ("Max Gap", m.flags.max_gap),
            ("Top-5", m.flags.top_5_sum),
        )
        if on
    ]
    return ", ".join(names) if names else EM_DASH


_METHOD_TEXT = {
    "bootstrap": (
        "parametric bootstrap: {n} simulated copies of the response matrix (same cells, same "
        "trials) from a smooth empirical-Bayes truth around the fit, each refitted with the "
        "same model and settings and put on its own re-derived scale, so the anchors' "
        "uncertainty is included. A metric's median simulated error is removed when it "
        "exceeds twice the errors' SD (as for gap metrics on single-trial data, where the "
        "coarse axis inflates every gap; the estimate then differs from the plug-in above); "
        "a smaller one stays in the estimate and widens the interval on both sides. "
        "Each interval then checks its own coverage at this benchmark's shape: data sets "
        "simulated from the fit on the same cells and trials for a smooth truth (the fit "
        "jittered by its standard errors) and a lattice truth (the fit itself, difficulties "
        "tied at the score levels), refitted; the share of worlds whose truth the interval "
        "holds is printed as *covers smooth / lattice*. An interval whose lower coverage is "
        "outside the band the settings give (`gaps.intervals.self_check`) has its sides "
        "rescaled until both reach the nominal level (*widened* or *narrowed*), or is "
        "withheld, with the reason."
    ),
    "posterior": "posterior quantiles over {n} NUTS draws of z; estimate: the draws' median.",
    "laplace": (
        "Laplace draws ({n} independent normal draws of each b around the MAP mode, abilities "
        "and scale anchors held fixed); estimate: the draws' median. These intervals are known "
        "not to cover on single-trial data (see `benchmarks/bench_intervals.py`); "
        "`gaps.intervals.method: bootstrap` replaces them."
    ),
}


def _interval_cell(iv: MetricIntervals, name: str) -> str:
    """ "estimate [low, high]" with its self-check, or why it is withheld."""
    interval: Interval = getattr(iv, name)
    check = (iv.self_check or {}).get(name)
    if check is None:
        return interval.label()
    covers = f"covers {check.coverage_smooth:.2f} / {check.coverage_lattice:.2f}"
    if check.status == "withheld":
        return f"{_f(interval.point)}, interval withheld: {check.reason}"
    if check.status == "ok":
        return f"{interval.label()}; {covers}"
    return f"{interval.label()}; {covers} ({check.status}; was {check.raw_coverage:.2f})"


def _interval_blocks(measures: Sequence[BenchmarkMeasures]) -> list[Block]:
    with_iv = [(m, m.intervals) for m in measures if m.intervals is not None]
    if not with_iv:
        return []
    rows = []
    methods: dict[str, int] = {}
    levels = set()
    unchecked = []
    for m, iv in with_iv:
        methods.setdefault(iv.method, iv.replicates_requested or iv.n_draws)
        levels.add(iv.ddm.level)
        method = iv.method
        if iv.replicates_requested is not None:  # cut by gaps.intervals.max_refit_cells
            method = (
                f"{iv.method}, {iv.n_draws} of {iv.replicates_requested} replicates "
                f"(max_refit_cells); Monte Carlo SE of the ends ≤ {iv.monte_carlo_se:.3f}"
            )
        if iv.self_check is not None:
            worlds = next(iter(iv.self_check.values())).worlds
            method += f", self-checked on {worlds} + {worlds} worlds"
        elif iv.method == "bootstrap":
            unchecked.append(m.name)
        rows.append(
            (
                m.name,
                method,
                *(_interval_cell(iv, k) for k in ("ddm", "max_gap", "top_3_sum", "top_5_sum")),
            )
        )
    lv = ", ".join(f"{x:.0%}" for x in sorted(levels))
    target = with_iv[0][1].target
    text = (
        f"Each metric of the true difficulties as estimate [{lv} interval]; the estimate is "
        f"always inside its interval. DDM is to the first target ({target}). Method — "
        + " ".join(f"**{k}**: " + _METHOD_TEXT.get(k, k).format(n=n) for k, n in methods.items())
    )
    blocks: list[Block] = [
        Heading(2, "Estimates with intervals"),
        Table(("Benchmark", "Method", "DDM", "Max Gap", "Top-3 Sum", "Top-5 Sum"), tuple(rows)),
        Paragraph(text),
    ]
    if unchecked:
        blocks.append(
            Paragraph(
                f"Not self-checked ({', '.join(unchecked)}): `gaps.intervals.self_check.worlds` "
                "is 0, or `max_refit_cells` left too few refits; their coverage at this shape "
                "is unknown."
            )
        )
    return blocks + _panel_blocks(with_iv)


def _panel_blocks(with_iv: Sequence[tuple[BenchmarkMeasures, MetricIntervals]]) -> list[Block]:
    """Another panel of as many similar models: resampled-panel intervals and leave-one-out."""
    rows = []
    notes = []
    for m, iv in with_iv:
        p = iv.panel
        if p is None:
            continue
        cells = []
        for name in ("ddm", "max_gap", "top_3_sum", "top_5_sum"):
            within = getattr(iv, name)
            other = (p.intervals or {}).get(name)
            cells.append(
                f"[{_f(within.low)}, {_f(within.high)}] / "
                + (f"[{_f(other.low)}, {_f(other.high)}]" if other is not None else EM_DASH)
            )
        loo = p.loo
        rows.append(
            (
                m.name,
                str(p.n_models),
                *cells,
                (
                    f"DDM {_f(loo.ranges['ddm'][0])}–{_f(loo.ranges['ddm'][1])}; "
                    f"{loo.most_influential} moves it {_f(loo.ddm_shift)}"
                )
                if loo is not None
                else EM_DASH,
            )
        )
        sentence = p.sentence()
        if sentence is not None:
            notes.append(f"**{m.name}**: {sentence}.")
        elif p.skipped:
            notes.append(f"**{m.name}**: panel bootstrap not run ({p.skipped}).")
    if not rows:
        return []
    return [
        Heading(2, "Panel uncertainty"),
        Paragraph(
            "The intervals above hold the panel fixed: they say what this panel measures. "
            "Another panel of as many similar models measures the items differently (other "
            "abilities, other scale anchors). Beside each within-panel interval, the "
            "interval over panels of the same size drawn with replacement from this one and "
            "refitted (`gaps.intervals.panel`); the last column is the range of DDM when one "
            "model is left out, and the model whose absence moves it most."
        ),
        Table(
            (
                "Benchmark",
                "Models",
                "DDM within / other panel",
                "Max Gap",
                "Top-3 Sum",
                "Top-5 Sum",
                "Leave one model out",
            ),
            tuple(rows),
        ),
        Bullets(tuple(notes)),
    ]


def _largest_gap_text(m: BenchmarkMeasures) -> str:
    """The largest gap, or the largest resolved one when the largest is one score step."""
    if not m.resolved or m.resolved[0]:
        return f"largest gap {m.max_gap.label()}"
    g = m.largest_resolved_gap
    text = f"largest gap {m.max_gap.label()} is one score step"
    return text + (f"; largest resolved gap {g.label()}" if g is not None else "")


def _resolution_notes(m: BenchmarkMeasures, r: Resolution) -> list[str]:
    """What the resolution and anchoring mean for this benchmark, and what would fix it."""
    notes = []
    p = r.panel
    if r.n_clipped_low and r.share_clipped_low >= 0.05:
        notes.append(
            f"**{m.name}**: {_pct(r.share_clipped_low)} of items ({count(r.n_clipped_low)} of "
            f"{count(r.n_items)}) sit below the panel's weakest model ({p.weakest}; clipped at "
            "z = 0): their z is only a bound, and every DDM is largely that point mass. "
            "Fix: add weaker models to the panel, spanning the clipped end."
        )
    if r.n_clipped_high and r.share_clipped_high >= 0.05:
        notes.append(
            f"**{m.name}**: {_pct(r.share_clipped_high)} of items ({count(r.n_clipped_high)} of "
            f"{count(r.n_items)}) sit above the panel's strongest model ({p.strongest}; clipped "
            "at z = 1). Fix: add stronger models to the panel, spanning the clipped end."
        )
    unresolved = [g for g, ok in zip(m.largest_gaps, m.resolved, strict=False) if not ok]
    if unresolved and len(unresolved) == len(m.largest_gaps):
        notes.append(
            f"**{m.name}**: none of the {len(m.largest_gaps)} largest gaps is wider than one "
            f"score step — with {r.n_levels} distinct z levels they are the axis's "
            "resolution, not empty stretches of difficulty."
        )
    elif unresolved:
        notes.append(
            f"**{m.name}**: {len(unresolved)} of the {len(m.largest_gaps)} largest gaps are "
            "no wider than one score step (the axis's resolution)."
        )
    t = m.thresholds.max_gap
    if r.cannot_resolve(t):
        notes.append(
            f"**{m.name}**: one score step moves an item by up to {_f(r.coarsest_step)} "
            f"(near z = {_f(r.coarsest_at, 2)}), so the data cannot resolve gaps at the "
            f"{t:.2f} flag threshold there. Fix: more trials per item (k trials per cell "
            "make the step about k times finer), or panel models near that difficulty."
        )
    elif unresolved and r.trials_per_cell <= 1:
        notes.append(
            f"**{m.name}**: to see gaps finer than {_f(r.resolution)}, collect more trials per "
            "item (k trials per cell make the step about k times finer); where a 2PL fits "
            "(`annotate.model: 2pl`), its z also depends on which models solved an item and "
            "is no longer tied to the score."
        )
    return notes


def _resolution_blocks(measures: Sequence[BenchmarkMeasures]) -> list[Block]:
    with_r = [(m, m.resolution) for m in measures if m.resolution is not None]
    if not with_r:
        return []
    rows = []
    notes: list[str] = []
    for m, r in with_r:
        p = r.panel
        rows.append(
            (
                m.name,
                f"{r.trials_per_cell:g}",
                str(r.n_levels),
                _f(r.resolution),
                _f(r.coarsest_step),
                f"{count(r.n_clipped_low)} ({_pct(r.share_clipped_low)})",
                f"{count(r.n_clipped_high)} ({_pct(r.share_clipped_high)})",
                f"{p.theta_min:.2f} to {p.theta_max:.2f} ({p.span:.2f})",
                f"{sum(m.resolved)} of {len(m.resolved)}",
            )
        )
        notes += _resolution_notes(m, r)
    blocks: list[Block] = [
        Heading(2, "Resolution and anchoring"),
        Table(
            (
                "Benchmark",
                "Trials/cell",
                "z levels",
                "Resolution",
                "Coarsest step",
                "Clipped at 0",
                "Clipped at 1",
                "Panel θ (span, logits)",
                "Largest gaps resolved",
            ),
            tuple(rows),
        ),
        Paragraph(
            "z levels: distinct values of z. Resolution: the median z change one more or one "
            "fewer correct answer makes to an item inside (0, 1) (with one trial per cell a "
            "1PL z depends only on the item's total score); coarsest step: the largest such "
            "change. Clipped at 0: items easier than the panel's weakest model (z = 0 whatever "
            "their true difficulty); clipped at 1: harder than the strongest. Panel θ: the "
            "weakest and strongest abilities, which the scale maps to z = 0 and z = 1."
        ),
    ]
    if notes:
        blocks.append(Bullets(tuple(notes)))
    return blocks


def _blocks(
    measures: Sequence[BenchmarkMeasures],
    *,
    title: str,
    figures: Mapping[str, Sequence[str]] | None,
    power: pl.DataFrame | None,
    k_gaps: int,
) -> list[Block]:
    if not measures:
        raise ValueError("measures: need at least one benchmark to report")
    flagged = [m for m in measures if m.flags.any]
    t = measures[0].thresholds
    blocks: list[Block] = [
        Heading(1, title),
        Paragraph(
            f"**{len(flagged)} of {len(measures)} benchmark(s) flagged** "
            f"(DDM ≥ {t.ddm:.2f}, Max Gap ≥ {t.max_gap:.2f} or Top-5 Sum ≥ {t.top_5_sum:.2f}). "
            "Difficulty z lies on [0, 1]. DDM is the 1-Wasserstein distance between the "
            "benchmark's items and the target (the area between their CDFs); a gap is an "
            "interval of z with no item, the ends of [0, 1] included."
        ),
    ]

    labels: list[str] = []
    for m in measures:
        for d in m.ddms:
            if d.label not in labels:
                labels.append(d.label)
    header = (
        ("Benchmark", "n")
        + tuple(f"DDM ({lab})" for lab in labels)
        + ("Max Gap", "Max Gap interval", "Top-3 Sum", "Top-5 Sum", "Flags")
    )
    rows = []
    for m in measures:
        cells = [m.name, str(m.n)]
        for lab in labels:
            match = [d for d in m.ddms if d.label == lab]
            if not match:
                cells.append(EM_DASH)
                continue
            d = match[0]
            cells.append(_bold_if(_f(d.value), d is m.ddms[0] and m.flags.ddm))
        cells.append(_bold_if(_f(m.max_gap.width), m.flags.max_gap))
        cells.append(m.max_gap.label())
        cells.append(_f(m.top_3_sum))
        cells.append(_bold_if(_f(m.top_5_sum), m.flags.top_5_sum))
        cells.append(_flag_names(m))
        rows.append(tuple(cells))
    blocks += [Heading(2, "Benchmarks"), Table(header, tuple(rows))]
    note = (
        "Values on the estimated z (the plug-in). Flagged values in bold; flags use the "
        "first target's DDM"
    )
    if any(m.resolution is not None for m in measures):
        note += " and only gaps wider than one score step (see Resolution and anchoring)"
    blocks.append(Paragraph(note + "."))
    blocks += _interval_blocks(measures)
    blocks += _resolution_blocks(measures)
    links = tuple(f"**{m.name}**: {link.label()}" for m in measures for link in m.linkings)
    if links:
        blocks += [
            Heading(2, "Panel dependence"),
            Paragraph(
                "Benchmarks that share items were measured by different panels; z is "
                "anchored on each panel, so the same item gets a different z. Linking: "
                "common-item mean–sigma on the items both fits estimated from data."
            ),
            Bullets(links),
        ]

    blocks.append(Heading(2, "Flagged benchmarks"))
    if flagged:
        blocks.append(
            Bullets(
                tuple(
                    f"**{m.name}** — " + "; ".join(m.flag_reasons()) + "; " + _largest_gap_text(m)
                    for m in flagged
                )
            )
        )
    else:
        blocks.append(Paragraph("None: every benchmark is below all three thresholds."))

    k = max(1, min(k_gaps, max(len(m.largest_gaps) for m in measures)))
    gap_rows = []
    for m in measures:
        oks = m.resolved or tuple(True for _ in m.largest_gaps)
        cells = [
            f"{g.label()} ({_f(g.width)}{'' if ok else ', one score step'})"
            for g, ok in zip(m.largest_gaps[:k], oks, strict=False)
        ]
        gap_rows.append((m.name, *cells, *([EM_DASH] * (k - len(cells)))))
    blocks += [
        Heading(2, "Largest gaps"),
        Paragraph(
            "Each gap as [z_L, z_R] (width). A single new item at a gap's midpoint shrinks "
            'it the most; these are the targets for gap filling. "One score step": the '
            "gap is no wider than the z change one more or one fewer correct answer makes "
            "for the items on its edges, so the data cannot tell it from the axis's "
            "resolution; such gaps are not flagged and not listed as blind intervals."
        ),
        Table(("Benchmark",) + tuple(f"#{i + 1}" for i in range(k)), tuple(gap_rows)),
    ]

    blocks += [
        Heading(2, "Blind intervals"),
        Paragraph(
            "Progress confined to an interval of width w that fits inside one of these gaps "
            "changes no item's success rate, so no test on this benchmark can detect it, "
            "however many re-evaluations are run (Theorem 2.3)."
        ),
        Bullets(
            tuple(
                f"**{m.name}** (w = {m.blind_width:.2f}): "
                + (
                    ", ".join(b.label() for b in m.blind)
                    if m.blind
                    else (
                        f"none resolved — {m.unresolved_blind} gap(s) this wide are one score "
                        "step (the axis's resolution)"
                        if m.unresolved_blind
                        else "none — every placement of this width touches an item"
                    )
                )
                for m in measures
            )
        ),
    ]

    blocks.append(Heading(2, "Rank certificates"))
    with_certs = [m for m in measures if m.certificates]
    if not with_certs:
        blocks.append(Paragraph("No model scores were given, so no pair was checked."))
    else:
        blocks.append(
            Paragraph(
                "Leaderboard neighbours among the top models. The benchmark's order of a pair "
                "holds under the target whenever |D_B| > L·DDM (Theorem 2.1), with L the "
                "assumed Lipschitz constant of the pair's per-difficulty difference; "
                "max L is the largest L for which the order is still certified."
            )
        )
        for m in with_certs:
            n_ok = sum(c.certified for c in m.certificates)
            blocks.append(
                Heading(
                    3,
                    f"{m.name}: {n_ok} of {len(m.certificates)} pairs certified at "
                    f"L = {m.lipschitz:g} (DDM {m.primary_ddm:.3f}, {m.primary_target})",
                )
            )
            blocks.append(
                Table(
                    ("Pair", "D_B", "L·DDM", "Certified", "max L"),
                    tuple(
                        (
                            _pair_label(c),
                            _f(abs(c.d_b)),
                            _f(c.margin),
                            "yes" if c.certified else "**no**",
                            _f(c.max_lipschitz, 2),
                        )
                        for c in m.certificates
                    ),
                )
            )

    if power is not None and power.height:
        wide = power_table(power)
        alpha = float(power["alpha"][0])
        blocks += [
            Heading(2, "Detectability (Theorem 2.3)"),
            Paragraph(
                f"Rejection rate of the progress test at α = {alpha:g} when progress of width "
                "w is centred in the largest gap, by number of re-evaluations per item."
            ),
            Table(
                tuple(wide.columns),
                tuple(
                    tuple(str(v) if isinstance(v, int) else fixed(v, blanks=_BLANKS) for v in row)
                    for row in wide.iter_rows()
                ),
            ),
        ]

    if figures:
        blocks.append(Heading(2, "Figures"))
        for name, paths in figures.items():
            if paths:
                blocks.append(Heading(3, str(name)))
                blocks.append(Images(tuple((str(p), f"{name}: {p}") for p in paths)))
    return blocks


def render_gaps_report(
    measures: Sequence[BenchmarkMeasures],
    *,
    title: str = "Gap analysis",
    figures: Mapping[str, Sequence[str]] | None = None,
    power: pl.DataFrame | None = None,
    k_gaps: int = 3,
) -> str:
    """Markdown one-pager: per-benchmark table, flags, largest gaps, blind intervals,
    certificates for the top model pairs, and optionally the power table and figures.

    ``figures`` maps a benchmark name to PNG paths relative to where the report is
    written; ``power`` is a :func:`power_curve` frame.
    """
    blocks = _blocks(measures, title=title, figures=figures, power=power, k_gaps=k_gaps)
    return markdown.document(blocks)


def render_gaps_html(
    measures: Sequence[BenchmarkMeasures],
    *,
    title: str = "Gap analysis",
    figures: Mapping[str, Sequence[str]] | None = None,
    power: pl.DataFrame | None = None,
    k_gaps: int = 3,
) -> str:
    """The same report as :func:`render_gaps_report` as one self-contained HTML page
    (inline CSS, relative <img> links, no scripts, no network)."""
    blocks = _blocks(measures, title=title, figures=figures, power=power, k_gaps=k_gaps)
    return html.page(blocks, title)
