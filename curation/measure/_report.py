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
from curation.measure._posterior import Interval
from curation.measure._power import power_table
from curation.measure._summary import BenchmarkMeasures
from curation.report import html, markdown
from curation.report.blocks import Block, Bullets, Heading, Images, Paragraph, Table
from curation.report.format import EM_DASH, INFINITY, Blanks, fixed, with_interval

_BLANKS = Blanks(missing=EM_DASH, infinite=INFINITY)
"""An unbounded max L prints as "∞"; an absent figure as "—"."""


def _with_interval(value: float, interval: Interval | None) -> str:
    if interval is None:
        return fixed(value, blanks=_BLANKS)
    return with_interval(value, interval.low, interval.high, blanks=_BLANKS)


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
    has_post = any(m.posterior is not None for m in measures)
    header = (
        ("Benchmark", "n")
        + tuple(f"DDM ({lab})" for lab in labels)
        + ("Max Gap", "Max Gap interval", "Top-3 Sum", "Top-5 Sum", "Flags")
    )
    rows = []
    for m in measures:
        post = m.posterior
        cells = [m.name, str(m.n)]
        for lab in labels:
            match = [d for d in m.ddms if d.label == lab]
            if not match:
                cells.append(EM_DASH)
                continue
            d = match[0]
            primary = d is m.ddms[0]
            interval = post.ddm if post is not None and primary else None
            cells.append(_bold_if(_with_interval(d.value, interval), primary and m.flags.ddm))
        cells.append(
            _bold_if(
                _with_interval(m.max_gap.width, post.max_gap if post else None), m.flags.max_gap
            )
        )
        cells.append(m.max_gap.label())
        cells.append(_with_interval(m.top_3_sum, post.top_3_sum if post else None))
        cells.append(
            _bold_if(
                _with_interval(m.top_5_sum, post.top_5_sum if post else None), m.flags.top_5_sum
            )
        )
        cells.append(_flag_names(m))
        rows.append(tuple(cells))
    blocks += [Heading(2, "Benchmarks"), Table(header, tuple(rows))]
    note = "Flagged values in bold; flags use the first target's DDM."
    if has_post:
        levels = {m.posterior.ddm.level for m in measures if m.posterior is not None}
        lv = ", ".join(f"{lv:.0%}" for lv in sorted(levels))
        sources = {m.extra.get("draws_source", "posterior") for m in measures if m.posterior}
        if sources == {"posterior"}:
            note += f" Brackets: {lv} posterior intervals over the IRT draws of z."
        else:
            note += (
                f" Brackets: {lv} intervals over the IRT draws of z; for MAP fits these are "
                "Laplace draws (independent normal draws of each b around the mode), which "
                "fill gaps with noise, so gap intervals can sit below the point value. A NUTS "
                "fit (`annotate.method: nuts`) gives posterior intervals."
            )
    blocks.append(Paragraph(note))

    blocks.append(Heading(2, "Flagged benchmarks"))
    if flagged:
        blocks.append(
            Bullets(
                tuple(
                    f"**{m.name}** — " + "; ".join(m.flag_reasons()) + f"; largest gap "
                    f"{m.max_gap.label()}"
                    for m in flagged
                )
            )
        )
    else:
        blocks.append(Paragraph("None: every benchmark is below all three thresholds."))

    k = max(1, min(k_gaps, max(len(m.largest_gaps) for m in measures)))
    gap_rows = []
    for m in measures:
        cells = [f"{g.label()} ({fixed(g.width, blanks=_BLANKS)})" for g in m.largest_gaps[:k]]
        gap_rows.append((m.name, *cells, *([EM_DASH] * (k - len(cells)))))
    blocks += [
        Heading(2, "Largest gaps"),
        Paragraph(
            "Each gap as [z_L, z_R] (width). A single new item at a gap's midpoint shrinks "
            "it the most; these are the targets for gap filling."
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
                    else "none — every placement of this width touches an item"
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
                            fixed(abs(c.d_b), blanks=_BLANKS),
                            fixed(c.margin, blanks=_BLANKS),
                            "yes" if c.certified else "**no**",
                            fixed(c.max_lipschitz, 2, blanks=_BLANKS),
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
