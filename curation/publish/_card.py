"""The dataset card: README.md with the Hub's YAML metadata and the measurement story.

The card is rendered with placeholder tokens for the version and previous version, so
its digest (used by the patch-bump rule) changes only when its content does.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from curation.publish._card_estimation import estimation_lines
from curation.publish._card_resolution import resolution_lines
from curation.publish._card_uncertainty import uncertainty_lines
from curation.publish._layout import SPLIT
from curation.report.format import NOT_AVAILABLE, Blanks, fixed, interval
from curation.report.markdown import cell, table
from curation.report.panel import SHOWN_EXTREMES, many_models
from curation.schemas import load_schema

VERSION_TOKEN = "@@VERSION@@"
PREVIOUS_TOKEN = "@@PREVIOUS@@"

HUB_LICENSES = frozenset(
    """
    apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m
    bigscience-bloom-rail-1.0 bigcode-openrail-m afl-3.0 artistic-2.0 bsl-1.0 bsd
    bsd-2-clause bsd-3-clause bsd-3-clause-clear c-uda cc cc0-1.0 cc-by-2.0 cc-by-2.5
    cc-by-3.0 cc-by-4.0 cc-by-sa-3.0 cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0 cc-by-nc-4.0
    cc-by-nd-4.0 cc-by-nc-nd-3.0 cc-by-nc-nd-4.0 cc-by-nc-sa-2.0 cc-by-nc-sa-3.0
    cc-by-nc-sa-4.0 cdla-sharing-1.0 cdla-permissive-1.0 cdla-permissive-2.0 wtfpl ecl-2.0
    epl-1.0 epl-2.0 eupl-1.1 agpl-3.0 gfdl gpl gpl-2.0 gpl-3.0 lgpl lgpl-2.1 lgpl-3.0 isc
    lppl-1.3c ms-pl mpl-2.0 odc-by odbl openrail++ osl-3.0 postgresql ofl-1.1 ncsa unlicense
    zlib pddl lgpl-lr deepfloyd-if-license llama2 llama3 gemma unknown other
    """.split()
)
"""License ids the Hub knows; anything else is published as ``other`` with its name."""
DEFAULT_TASKS = {"math": ["question-answering"], "code": ["text-generation"]}
FIGURES = {
    "histogram": "figures/difficulty_histogram.png",
    "ecdf": "figures/difficulty_ecdf.png",
    "ddm_gaps": "figures/ddm_gaps.png",
}


def _model_list(models: list[str]) -> str:
    """Every model of a panel, or of a leaderboard (:mod:`curation.report.panel`) the
    first and last few by name: a card of 4,000 names is not read, and grows without
    bound."""
    if not many_models(len(models)):
        return ", ".join(models)
    k = SHOWN_EXTREMES
    return (
        f"{len(models):,} models, by name {', '.join(models[:k])}, … "
        f"({len(models) - 2 * k:,} more), {', '.join(models[-k:])}"
    )


def hub_license(spdx: str) -> dict[str, str]:
    """The card's license keys: a Hub license id, or ``other`` with the name."""
    lid = spdx.strip().lower()
    if lid in HUB_LICENSES:
        return {"license": lid}
    return {"license": "other", "license_name": spdx.strip()}


def size_category(n: int) -> str:
    """The Hub's size bucket of ``n`` records."""
    ladder = (
        "n<1K",
        "1K<n<10K",
        "10K<n<100K",
        "100K<n<1M",
        "1M<n<10M",
        "10M<n<100M",
        "100M<n<1B",
        "1B<n<10B",
        "10B<n<100B",
        "100B<n<1T",
    )
    for power, label in enumerate(ladder, start=3):
        if n < 10**power:
            return label
    return "n>1T"


@dataclass(frozen=True)
class ConfigInfo:
    name: str
    n: int
    n_measured: int
    description: str
    ddm_uniform: float | None
    max_gap: float | None
    top_5_sum: float | None


@dataclass
class CardContext:
    """Everything the card shows (see :func:`render_card`)."""

    benchmark: str
    pretty_name: str
    domain: str
    license: str
    source: str
    configs: list[ConfigInfo]
    calibration_id: str
    calibration: dict[str, Any]
    provenance: dict[str, Any]
    coverage_before: dict[str, Any]
    coverage_after: dict[str, Any]
    additions: list[dict[str, Any]]
    review: dict[str, Any]
    subsets: list[dict[str, Any]]
    problems: list[str]
    task_categories: list[str]
    language: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    repo_id: str | None = None
    bounds: dict[str, int] = field(default_factory=dict)
    """Original items whose z is only a bound: all-solved / none-solved counts."""
    citation: str | None = None
    """BibTeX of the source benchmark."""
    source_datasets: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    """Facts of the build for Uses / Limitations (panel, items at the ends, review)."""
    estimation: list[dict[str, Any]] = field(default_factory=list)
    """The ``estimate-<m>`` configs: config, design, m, weighted, estimation (the held-out
    validation block); each calibrated subset's own block is ``subsets[i]["estimation"]``."""
    resolution: dict[str, Any] = field(default_factory=dict)
    """:meth:`curation.measure.Resolution.to_metrics` of the original items, or
    ``{"unavailable": reason}`` (section "Resolution and anchoring")."""
    uncertainty: dict[str, Any] = field(default_factory=dict)
    """The gaps stage's intervals of this benchmark (metrics/gaps.json ``intervals``):
    section "Uncertainty of the difficulty figures" (:mod:`._card_uncertainty`)."""


def card_metadata(ctx: CardContext) -> dict[str, Any]:
    """The YAML front matter the Hub reads."""
    meta: dict[str, Any] = {**hub_license(ctx.license), "pretty_name": ctx.pretty_name}
    if ctx.language:
        meta["language"] = list(ctx.language)
    meta["task_categories"] = list(ctx.task_categories)
    if ctx.source_datasets:
        meta["source_datasets"] = list(ctx.source_datasets)
    meta["size_categories"] = [size_category(max((c.n for c in ctx.configs), default=0))]
    meta["tags"] = list(dict.fromkeys(["benchcurate", "irt", "difficulty", ctx.domain, *ctx.tags]))
    meta["configs"] = [
        {
            "config_name": c.name,
            **({"default": True} if i == 0 else {}),
            "data_files": [{"split": SPLIT, "path": f"data/{c.name}/*.parquet"}],
        }
        for i, c in enumerate(ctx.configs)
    ]
    return meta


_BLANKS = Blanks(missing=NOT_AVAILABLE)
"""A figure the build could not compute prints as "n/a"."""


def _gaps(cov: dict[str, Any]) -> str:
    gaps = cov.get("largest_gaps") or []
    return ", ".join(interval(lo, hi) for lo, hi in gaps) or NOT_AVAILABLE


def render_card(ctx: CardContext) -> str:
    """README.md text with version placeholders (see :data:`VERSION_TOKEN`)."""
    front = yaml.safe_dump(card_metadata(ctx), sort_keys=False, allow_unicode=True).strip()
    out: list[str] = ["---", front, "---", ""]
    add = out.append
    add(f"# {ctx.pretty_name}")
    add("")
    add(
        f"`{ctx.benchmark}` ({ctx.domain}) with an IRT difficulty z ∈ [0, 1] for every item, "
        "built by benchcurate. z, its 90% interval and the IRT "
        "parameters come with the calibration they were measured on."
    )
    add("")
    add(
        f"- **Version:** {VERSION_TOKEN} (previous: {PREVIOUS_TOKEN}); see `CHANGELOG.md`. "
        f"The Hub tag of this version is `{VERSION_TOKEN}`."
    )
    add(f"- **License:** {ctx.license} (of the source benchmark)")
    add(
        f"- **Calibration:** `{ctx.calibration_id}` "
        f"({ctx.calibration.get('model', '?')}, {ctx.calibration.get('n_panel', '?')} models, "
        f"scale {ctx.calibration.get('scale', '?')})"
    )
    add("")
    if ctx.problems:
        add("> **Not publishable as built.** `curate publish` refuses this build:")
        for p in ctx.problems[:20]:
            add(f"> - {p}")
        if len(ctx.problems) > 20:
            add(f"> - … and {len(ctx.problems) - 20} more")
        add("")
    add("## Configs")
    add("")
    out += table(
        ("config", "items", "with z", "DDM (uniform)", "Max Gap", "Top-5 Sum", "what"),
        [
            (
                f"`{c.name}`",
                str(c.n),
                str(c.n_measured),
                fixed(c.ddm_uniform, blanks=_BLANKS),
                fixed(c.max_gap, blanks=_BLANKS),
                fixed(c.top_5_sum, blanks=_BLANKS),
                cell(c.description),
            )
            for c in ctx.configs
        ],
        align="lrrrrrl",
        compact=True,
    )
    add("")
    out += usage_section(ctx)
    out += uses_section(ctx)
    add("## Difficulty")
    add("")
    add(
        "DDM is the 1-Wasserstein distance between the items' z and Unif[0, 1]; a gap is an "
        "empty interval of the difficulty axis (the ends count). Flags: DDM ≥ 0.10, "
        "Max Gap ≥ 0.10, Top-5 Sum ≥ 0.30."
    )
    if ctx.bounds:
        parts = ", ".join(f"{n} {kind}" for kind, n in sorted(ctx.bounds.items()))
        add("")
        add(
            f"Bounded items ({parts}): every panel model, or none, solved them, so their z is "
            "only a bound (`bound` field); the figures and metrics use the bound's value."
        )
    add("")
    out += resolution_lines(ctx.resolution)  # "Resolution and anchoring" (_card_resolution)
    out += uncertainty_lines(ctx.uncertainty)  # within-panel and another panel
    add(f"![Difficulty histogram]({FIGURES['histogram']})")
    add("")
    add(f"![ECDF against uniform]({FIGURES['ecdf']})")
    add("")
    add("### Before and after filling")
    add("")
    add(f"![DDM and gaps before and after filling]({FIGURES['ddm_gaps']})")
    add("")
    out += table(
        ("", "items with z", "DDM (uniform)", "Max Gap", "Top-5 Sum", "largest gaps"),
        [
            (
                label,
                str(cov.get("n", 0)),
                fixed(cov.get("ddm_uniform"), blanks=_BLANKS),
                fixed(cov.get("max_gap"), blanks=_BLANKS),
                fixed(cov.get("top_5_sum"), blanks=_BLANKS),
                _gaps(cov),
            )
            for label, cov in (("original", ctx.coverage_before), ("filled", ctx.coverage_after))
        ],
        align="lrrrrl",
        compact=True,
        pad_empty=False,
    )
    add("")
    if ctx.subsets:
        add("### Calibrated subsets")
        add("")
        add(
            "Greedy quantile matching: for k = 1..m the item whose z is closest to the target "
            "quantile µ⁻¹((k − ½)/m). Kendall τ compares the model ranking on the items with "
            "the reference ranking."
        )
        add("")
        header = ("config", "target", "m", "DDM to target", "full benchmark's", "τ", "full τ")
        out += table(
            (*header, "reference"),
            [
                (
                    f"`{s['config']}`",
                    cell(s["target"]),
                    str(s["m"]),
                    fixed(s.get("ddm_target"), blanks=_BLANKS),
                    fixed(s.get("full_ddm_target"), blanks=_BLANKS),
                    fixed(s.get("tau"), 2, blanks=_BLANKS),
                    fixed(s.get("full_tau"), 2, blanks=_BLANKS),
                    cell(s.get("reference") or "none"),
                )
                for s in ctx.subsets
            ],
            align="llrrrrrl",
            compact=True,
        )
        add("")
        # why τ is missing (e.g. no other benchmark of the domain to rank models against)
        for note in dict.fromkeys(
            s["tau_note"] for s in ctx.subsets if s.get("tau") is None and s.get("tau_note")
        ):
            add(f"Kendall τ is not available: {cell(note)}.")
            add("")
    out += estimation_lines(ctx.benchmark, ctx.subsets, ctx.estimation)
    add("## Provenance")
    add("")
    add(f"- **Source benchmark:** {cell(ctx.source)}")
    for src, n in ctx.provenance.get("item_sources", {}).items():
        add(f"- items from `{cell(src)}`: {n}")
    resp = ctx.provenance.get("responses", {})
    add(
        f"- **Responses:** {resp.get('n_models', 0)} models, {resp.get('n_cells', 0)} "
        f"(model, item) cells; sources: "
        + (", ".join(f"{k} {v}" for k, v in resp.get("sources", {}).items()) or "none")
    )
    for proto in resp.get("protocols", []):
        add(f"  - protocol: {cell(json.dumps(proto, sort_keys=True))}")
    if resp.get("models"):
        add(f"  - models: {_model_list(resp['models'])}")
    add("")
    add("## Added items")
    add("")
    if not ctx.additions:
        add(
            "No BenchFill item has been accepted by a human reviewer yet, so `filled` equals "
            "`original`."
        )
    else:
        add(
            "Every added item was generated to fill a gap and accepted by a human reviewer; its "
            "z is an estimated z (never a simulation's truth: simulated items are not "
            "published), from online calibration on the same scale; for a BenchFill item, "
            "the confirmation estimate from fresh panel trials after it was selected."
        )
        add("")
        out += table(
            ("item", "origin", "z", "calibration", "reviewer", "lineage"),
            [
                (
                    f"`{cell(a['item'])}`",
                    str(a["origin"]),
                    fixed(a.get("z"), blanks=_BLANKS),
                    f"`{cell(a.get('calibration'))}`",
                    cell(a.get("reviewer") or NOT_AVAILABLE),
                    f"`{cell(a.get('lineage'))}`",
                )
                for a in ctx.additions
            ],
            align="llrlll",
            compact=True,
        )
    add("")
    add("## Review")
    add("")
    review = ctx.review
    if review.get("accepted_file"):
        by_status = ", ".join(f"{k} {v}" for k, v in review.get("by_status", {}).items())
        add(
            f"- reviewed additions offered: {review.get('offered', 0)} ({by_status or 'none'}) "
            f"from `{review['accepted_file']}`"
        )
        by_origin = ", ".join(f"{k} {v}" for k, v in review.get("accepted_by_origin", {}).items())
        add(f"- accepted into `filled`: {by_origin or 'none'}")
        overrules = sum(1 for a in ctx.additions if _overrules_judge(a.get("lineage")))
        add(f"- accepted over the LLM judge's rejection (reviewer overrule): {overrules}")
    else:
        add("- no reviewed additions were offered to this build (no accepted-items file)")
    if review.get("n_decisions") is not None:
        add(f"- decision log `{review.get('decisions_file')}`: {review['n_decisions']} decision(s)")
    add("")
    out += limitations_section(ctx)
    add("## Fields")
    add("")
    out += table(
        ("field", "description"),
        [
            (f"`{key}`", cell(prop.get("description", "")))
            for key, prop in load_schema("published_item")["properties"].items()
        ],
        align="ll",
        compact=True,
    )
    add("")
    out += citation_section(ctx)
    return "\n".join(out)


# --- usage, uses, limitations and citation (one function per section) ---------------

METHOD_BIBTEX = """@article{sun2026benchmark,
  title={Your Benchmark Is an Empirical Measure Over Difficulty},
  author={Sun, Yifan and Yu, Naicheng and Gong, Jiawen and Shen, Jingyan and Zhang, Huan},
  journal={arXiv preprint arXiv:2610.29927},
  year={2026}
}"""
"""The method behind z, DDM, gaps and BenchFill (SPEC's source paper)."""
PLACEHOLDER_REPO = "ORG/NAME"


def usage_section(ctx: CardContext) -> list[str]:
    """The loading example, naming the real repository when the build knows it
    (``build.repo_id``, or the one ``curate publish --repo-id`` recorded)."""
    repo = ctx.repo_id or PLACEHOLDER_REPO
    lines = [
        "```python",
        "from datasets import load_dataset",
        f'ds = load_dataset("{repo}", "{ctx.configs[0].name}", split="{SPLIT}", '
        f'revision="{VERSION_TOKEN}")',
        "```",
        "",
    ]
    if ctx.repo_id is None:
        lines[-1:] = [
            "",
            f"(`{PLACEHOLDER_REPO}`: set `build.repo_id` in params.yaml, or publish once with "
            "`curate publish --repo-id`, and rebuild.)",
            "",
        ]
    return lines


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else NOT_AVAILABLE


def uses_section(ctx: CardContext) -> list[str]:
    """What the configs are for, with this build's panel."""
    f = ctx.facts
    subsets = ", ".join(f"`{s['config']}`" for s in ctx.subsets) or "none in this build"
    estimates = ", ".join(f"`{e['config']}`" for e in ctx.estimation)
    estimate_use = (
        [
            f"- **Estimate a new model's full score cheaply:** {estimates} (subsets chosen "
            "for it): run the model on one, then `curate estimate --subset <config>` gives "
            "the full score with a 90% interval (its held-out error next to random items' is "
            "under Estimating the full score from a subset)."
        ]
        if ctx.estimation
        else []
    )
    return [
        "## Uses",
        "",
        f"- **Evaluate with a known difficulty profile:** `original` is the source benchmark "
        f"item for item; every item carries z ∈ [0, 1], measured on a panel of "
        f"{_n(f.get('n_panel'))} models, so scores can be broken down by difficulty.",
        "- **Compare models where the benchmark has holes:** `filled` adds human-accepted "
        "items aimed at the largest gaps of the difficulty axis.",
        f"- **Cheaper evaluation with a chosen difficulty distribution:** the calibrated "
        f"subsets ({subsets}) match a target distribution; their DDM to the target and "
        "ranking agreement (Kendall τ) are under Calibrated subsets. Their plain accuracy "
        "is not the full-benchmark score.",
        *estimate_use,
        "- **Place a new item on the same scale:** z comes with its calibration "
        f"(`{ctx.calibration_id}`), so online calibration of new items lands on this axis.",
        "- **Not for:** training data (these are test items), or comparing z across "
        "benchmarks calibrated on different panels.",
        "",
    ]


def limitations_section(ctx: CardContext) -> list[str]:
    """Limitations stated with this build's numbers: the panel that defines the axis,
    items it cannot resolve, what was excluded, how much a human reviewed."""
    f = ctx.facts
    lines = ["## Limitations", ""]
    span = f.get("theta_span")
    if f.get("weakest") and span is not None:
        lines.append(
            f"- **The difficulty axis is relative to the panel.** z = 0 is the ability of the "
            f"weakest of {_n(f.get('n_panel'))} panel models (`{cell(f['weakest'])}`), "
            f"z = 1 that of the strongest (`{cell(f['strongest'])}`), {span:.2f} logits apart "
            f"(scale `{f.get('scale') or NOT_AVAILABLE}`). Another panel gives another axis; "
            "a much stronger model sees most items near z = 0."
        )
    floor, ceiling = f.get("n_at_floor"), f.get("n_at_ceiling")
    if floor is not None and ceiling is not None:
        lines.append(
            f"- **Items outside the panel's range are clipped.** {_n(floor)} of "
            f"{_n(f.get('n_items'))} items sit at z = 0 (easier than the weakest model) and "
            f"{_n(ceiling)} at z = 1 (harder than the strongest); their order among "
            "themselves is not measured (all-solved / none-solved items are among them), and DDM "
            "and gaps treat them as ties at the ends."
        )
    if f.get("n_unmeasured"):
        lines.append(f"- {_n(f['n_unmeasured'])} items have no z (no usable response).")
    lines.append(
        "- **Simulated data is excluded.** Items or responses from the offline simulation "
        "backend are never published (`curate publish` refuses a build holding one); this "
        f"build's responses hold {_n(f.get('n_simulated_cells'))} simulated cells."
    )
    offered, accepted = f.get("n_offered"), f.get("n_accepted")
    decisions = f.get("n_decisions")
    lines.append(
        f"- **Review coverage.** {_n(offered)} reviewed additions were offered to this build, "
        f"{_n(accepted)} accepted into `filled`"
        + (f", from {_n(decisions)} logged review decisions" if decisions is not None else "")
        + ". The original items were not re-reviewed: their labels are the source's."
    )
    lines.append(
        "- **Responses are single-protocol.** z reflects the prompt and grading protocol "
        "listed under Provenance; another protocol can move items."
    )
    lines.append("")
    return lines


def citation_section(ctx: CardContext) -> list[str]:
    """BibTeX of the source benchmark (from params) and of the method."""
    lines = ["## Citation", ""]
    if ctx.citation:
        lines += [
            "The source benchmark:",
            "",
            "```bibtex",
            ctx.citation.strip(),
            "```",
            "",
        ]
    else:
        lines += [
            "The source benchmark's citation is not configured "
            f"(`benchmarks.{ctx.benchmark}.citation` in params.yaml).",
            "",
        ]
    lines += ["The difficulty measure, gaps and BenchFill:", "", "```bibtex", METHOD_BIBTEX,
              "```", ""]  # fmt: skip
    return lines


def finalize_card(text: str, *, version: str, previous: str | None) -> str:
    return text.replace(VERSION_TOKEN, version).replace(PREVIOUS_TOKEN, previous or "none")


def card_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _overrules_judge(lineage: object) -> bool:
    """Whether an added item's lineage says its reviewer overruled the judge."""
    try:
        review = json.loads(str(lineage or "{}")).get("review") or {}
    except (ValueError, AttributeError):
        return False
    return bool(review.get("overrules_judge"))
