"""The whole params.yaml as one frozen pydantic model: the source of its JSON Schema.

Every section of params.yaml is a :class:`~curation.settings.Section` declared here, so
that one model (:class:`ParamsFile`) describes the file: types, ranges, enums, required
keys and ``additionalProperties: false`` everywhere. ``schemas/params.schema.json`` is
generated from it (``curate schema --write``; a test checks the committed copy), and
:func:`validate_params` is what every stage (through ``curation.stage_main``) and
``curate validate`` run before touching an output.

Extending a section: add a field (with a docstring) to its class below and run
``curate schema --write``. Values whose meaning another module parses (measure targets,
panel-model entries) are typed here only as far as their shape; the owning parser keeps
the finer checks and its messages.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    field_validator,
)

from curation.settings import Section, parse_section

Unit = Annotated[float, Field(ge=0, le=1)]
"""A number in [0, 1] (a share, a z, a rate)."""
Backend = Literal["simulate", "openai"]
TargetSpec = str | dict[str, Any]
"""A measure target: "uniform", "beta(a, b)", or a mapping with ``kind`` (curation.measure)."""


def _regex_with_group(pattern: str | None) -> str | None:
    if pattern is None:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc})") from None
    if compiled.groups < 1:
        raise ValueError("the pattern needs one (group) around the answer")
    return pattern


def _uniform_only() -> list[TargetSpec]:
    return ["uniform"]


# ---- benchmarks ---------------------------------------------------------------------------


class ItemsEntry(Section):
    """``benchmarks.<b>.items``: where the raw items are and how their fields map."""

    path: str
    """Raw items file (JSONL, JSON, CSV, parquet) or dataset folder."""
    format: str | None = None
    split: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)
    """Target field (item, question, answer, choices, answer_type) -> source field."""
    answer_type: Literal["numeric", "exact", "choice", "code", "free"] = "exact"
    answer_pattern: Annotated[str | None, AfterValidator(_regex_with_group)] = None
    """Regex with one group that extracts the reference answer from the source text."""
    metadata_fields: list[str] | None = None
    texts: bool = True
    """False for a matrix-only benchmark: ``path`` is its response matrix (the same file
    as ``responses.path``), the items are its ids, and fill, judge and build skip it."""


class ResponsesEntry(Section):
    """``benchmarks.<b>.responses``: the response matrix to import."""

    path: str
    format: str | None = None
    layout: Literal["wide", "long"] = "wide"
    model_column: str = "model"
    columns: dict[str, str] = Field(default_factory=dict)
    """Long layout: target column (model, item, n_trials, n_correct, correct) -> source."""
    n_trials: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    """Wide layout: trials behind each cell (cells are 0/1 or success rates)."""
    aggregate: Literal["none", "sum"] = "none"
    """Long rows repeating a (model, item) cell: none = an error naming both rows; sum =
    add them up (the count is printed)."""
    source: Literal["collected", "imported", "simulated"] = "imported"
    protocol: dict[str, Any] = Field(default_factory=dict)


class BenchmarkEntry(Section):
    """``benchmarks.<b>``: one benchmark."""

    domain: str
    license: str
    source: str
    items: ItemsEntry
    responses: ResponsesEntry | None = None
    grading: dict[str, Any] | None = None
    lm_eval_tasks: list[Annotated[str, Field(min_length=1)]] | None = None
    in_domain_reference: bool = True
    citation: str | None = None
    """BibTeX of the source benchmark, printed in the dataset card's Citation section."""
    source_datasets: list[Annotated[str, Field(min_length=1)]] | None = None
    """Hub ids of the source datasets, in the dataset card's YAML header."""
    limit: Annotated[int, Field(ge=1)] | None = None
    """Keep only the first N items (ingest), e.g. to try a real local panel on a few."""


# ---- stage sections -----------------------------------------------------------------------


class WarnLimits(Section):
    """``check.warn``: when a diagnostic becomes a warning (defaults in curation.responses)."""

    item_informativeness_below: NonNegativeFloat | None = None
    model_informativeness_below: NonNegativeFloat | None = None
    model_reversal_above: NonNegativeFloat | None = None
    item_reversal_above: NonNegativeFloat | None = None
    per_model_reversal_factor: PositiveFloat | None = None
    per_item_reversal_factor: PositiveFloat | None = None


class CheckSettings(Section):
    """params.yaml ``check``."""

    list_limit: PositiveInt = 10
    """How many models/items each list in the report names."""
    warn: WarnLimits = WarnLimits()


class AnnotateSettings(Section):
    """params.yaml ``annotate``: which IRT model, how it is fitted, how z is anchored."""

    model: Literal["1pl", "2pl", "auto"] = "auto"
    """1pl | 2pl | auto (choose by BIC per benchmark)."""
    method: Literal["map", "nuts"] = "map"
    scale: Literal["panel", "items", "logistic"] = "panel"
    seed: NonNegativeInt = 0
    loo: bool = True
    """Leave-one-model-out stability of z."""
    laplace_draws: PositiveInt = 1000
    """Draws of b written beside a MAP fit (the gap intervals use them)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Priors and solver settings passed to the fit (see ``curation.irt`` Settings)."""


class GapThresholds(Section):
    """``gaps.thresholds``: when a benchmark is flagged (SPEC §2)."""

    ddm: Unit = 0.10
    max_gap: Unit = 0.10
    top_5_sum: Annotated[float, Field(ge=0, le=5)] = 0.30


class IntervalSettings(Section):
    """``gaps.intervals``: where the intervals of DDM and the gap metrics come from."""

    method: Literal["bootstrap", "draws", "none"] = "bootstrap"
    """bootstrap: parametric bootstrap of the MAP fit (calibrated on simulation); draws: the
    annotate stage's draws (NUTS posterior, or Laplace draws for MAP, which do not cover);
    none: no intervals. A NUTS fit always uses its posterior draws."""
    replicates: Annotated[int, Field(ge=2)] = 200
    """Bootstrap replicates per benchmark (each is one refit of the whole matrix)."""
    seed: NonNegativeInt = 0


class GapsSettings(Section):
    """params.yaml ``gaps``: DDM, gaps, certificates and blind intervals."""

    targets: list[TargetSpec] = Field(default_factory=_uniform_only, min_length=1)
    """The first is primary (flags, certificates); also "benchmark:<name>"."""
    lipschitz: PositiveFloat = 1.0
    blind_width: Annotated[float, Field(gt=0, le=1)] = 0.10
    k_gaps: PositiveInt = 5
    n_pairs: NonNegativeInt = 5
    level: Annotated[float, Field(gt=0, lt=1)] = 0.9
    """Credible level of the intervals from the draws of z."""
    thresholds: GapThresholds = GapThresholds()
    intervals: IntervalSettings = IntervalSettings()
    resolution_floor: bool = True
    """Gaps no wider than one score step are not flagged; false treats z as continuous."""


class MirtPriors(Section):
    """``mirt.priors``: weak Gaussian priors of the joint fit (all > 0)."""

    theta_sd: PositiveFloat = 1.0
    a_sd: PositiveFloat = 0.25
    b_sd: PositiveFloat = 3.0


class MirtSettings(Section):
    """params.yaml ``mirt``: the joint multidimensional fit over several benchmarks."""

    benchmarks: list[str] | None = None
    """Benchmarks to pool (default: every benchmark in ``benchmarks``; at least two)."""
    d_max: PositiveInt = 4
    holdout: Annotated[float, Field(gt=0, lt=1)] = 0.1
    seed: NonNegativeInt = 0
    select: Literal["heldout", "bic"] = "heldout"
    se_rule: NonNegativeFloat = 1.0
    rotation: Literal["varimax", "oblimin", "none"] = "varimax"
    common_models: bool = True
    min_models_per_item: PositiveInt = 5
    drop_constant_items: bool = True
    priors: MirtPriors = MirtPriors()
    loading_share: Annotated[float, Field(ge=0, lt=1)] = 0.2
    n_flips: NonNegativeInt = 3
    n_flip_items: PositiveInt = 10


class SubsetsOverride(Section):
    """``subsets.benchmarks.<b>``: one benchmark's overrides."""

    sizes: list[PositiveInt] | PositiveInt | None = None
    targets: list[TargetSpec] | None = None
    reference: str | dict[str, Any] | None = None


class SubsetsSettings(Section):
    """params.yaml ``subsets``: calibrated subsets by quantile matching (SPEC §6)."""

    sizes: list[PositiveInt] | PositiveInt = Field(default_factory=lambda: [50, 100])
    """Subset sizes; each must not exceed the benchmark's number of items."""
    targets: list[TargetSpec] = Field(default_factory=_uniform_only, min_length=1)
    reference: str | dict[str, Any] | None = None
    """{kind: domain} | {kind: benchmarks, benchmarks: [...]} | {kind: models, ...} | none."""
    benchmarks: dict[str, SubsetsOverride] = Field(default_factory=dict)


class CardSettings(Section):
    """``build.card``: dataset-card fields."""

    language: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    task_categories: list[str] | dict[str, list[str]] | None = None
    pretty_name: str | dict[str, str] | None = None


SemVer = Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")]


class BuildSettings(Section):
    """params.yaml ``build``: the versioned HF dataset of each benchmark."""

    version: Literal["auto"] | SemVer | dict[str, Literal["auto"] | SemVer] = "auto"
    initial_version: SemVer = "1.0.0"
    dist: str = "dist"
    accepted: str | None = None
    decisions: str | None = None
    max_shard_rows: PositiveInt = 100_000
    card: CardSettings = CardSettings()
    repo_id: str | dict[str, str] | None = None
    subsets: bool = True


class PanelModelEntry(Section):
    """A model at an endpoint (``schemas/panel_model.schema.json`` holds the finer checks)."""

    name: str = Field(min_length=1)
    model_id: str = Field(min_length=1)
    base_url_env: str | None = None
    api_key_env: str | None = None
    revision: str | None = None
    temperature: NonNegativeFloat | None = None
    max_tokens: PositiveInt | None = None
    trials: PositiveInt | None = None
    system_prompt: str | None = None
    prompt_templates: dict[str, str] | None = None
    concurrency: PositiveInt | None = None
    top_p: Unit | None = None
    stream: bool | None = None
    input_price_per_1m: NonNegativeFloat | None = None
    output_price_per_1m: NonNegativeFloat | None = None
    ability: float | None = None


class PartialModelEntry(PanelModelEntry):
    """A panel-model entry whose name and model id have defaults (rewriter, judge)."""

    name: str = Field("model", min_length=1)
    model_id: str = Field("model", min_length=1)


class PanelSettings(Section):
    """params.yaml ``panel``: the answering panel, weakest first."""

    models: list[PanelModelEntry] = Field(min_length=1)


class CollectSimulation(Section):
    difficulties: str | None = None
    """File item -> b (JSON, or CSV/parquet with item, b); null = hash-based."""
    difficulty_scale: PositiveFloat = 1.5


class CollectSettings(Section):
    """params.yaml ``collect``: import (false) or ask the panel (true)."""

    enabled: bool = False
    backend: Backend = "simulate"
    seed: NonNegativeInt = 0
    progress: bool = True
    simulation: CollectSimulation = CollectSimulation()
    templates: dict[str, str] = Field(default_factory=dict)
    template_for: dict[str, str] = Field(default_factory=dict)
    sandbox: None = None


class LLMSettings(Section):
    """params.yaml ``llm``: client, retries and cache."""

    timeout_s: PositiveFloat = 120.0
    connect_timeout_s: PositiveFloat = 10.0
    max_retries: NonNegativeInt = 6
    backoff_base_s: NonNegativeFloat = 0.5
    backoff_max_s: NonNegativeFloat = 30.0
    max_retry_after_s: NonNegativeFloat = 120.0
    cache: str = ".llm-cache/completions.sqlite"
    send_seed: bool = True
    stream_usage: bool = True
    default_concurrency: PositiveInt = 8
    processes: PositiveInt = 1
    """Worker processes answering calls (each a share of every endpoint's concurrency)."""


class AdaptiveSettings(Section):
    """``fill.adaptive``: stop collecting trials once SE(z) is small enough."""

    enabled: bool = True
    first_batch: PositiveInt = 2
    batch: PositiveInt = 2
    max_trials: PositiveInt = 32
    se_accept: PositiveFloat = 0.03
    reject_k: PositiveFloat = 2.0


class RewriteSimulation(Section):
    skill: Literal["none", "weak", "good"] | None = None
    eta: float = 0.7
    sigma: NonNegativeFloat = 0.25
    free_sigma: NonNegativeFloat = 1.0


class WorldSettings(Section):
    """``fill.world``: how far the simulated truth sits from the fitted calibration."""

    theta_sd: NonNegativeFloat = 0.15
    a_sd: NonNegativeFloat = 0.2
    b_sd: NonNegativeFloat = 0.1
    interaction_sd: NonNegativeFloat = 0.4


class RefineSettings(Section):
    """``fill.refine``: sequential re-measurement of each round's best children."""

    finalists: NonNegativeInt = 3
    batch: PositiveInt = 8
    max_trials: NonNegativeInt = 96
    screen_trials: PositiveInt = 8


class FillSettings(Section):
    """params.yaml ``fill``: BenchFill (SPEC §4); curation.fill parses the details."""

    backend: Backend | None = None
    seed: NonNegativeInt = 0
    panel: list[str] | None = None
    adaptive: AdaptiveSettings = AdaptiveSettings()
    tolerance: Annotated[float, Field(gt=0, le=1)] = 0.01
    insertions: NonNegativeInt = 3
    targets: Literal["largest", "top_k"] | list[Unit] = "largest"
    rounds: PositiveInt = 8
    parents: PositiveInt = 4
    children: PositiveInt = 4
    references: NonNegativeInt = 16
    reference_chars: PositiveInt = 600
    duplicate_similarity: Unit = 0.9
    rewriter: PartialModelEntry | None = None
    simulation: RewriteSimulation = RewriteSimulation()
    confirm_trials: NonNegativeInt = 16
    refine: RefineSettings = RefineSettings()
    world: WorldSettings = WorldSettings()
    judge: str | None = None
    baseline: bool = True
    oracle: bool = True
    prompts: dict[str, str] = Field(default_factory=dict)


class JudgeSimulation(Section):
    false_reject_rate: Unit = 0.05


class JudgeSettings(Section):
    """params.yaml ``judge``: the LLM judge of candidates."""

    enabled: bool = True
    backend: Backend | None = None
    model: PartialModelEntry | None = None
    response_format: Literal["none", "json_object", "json_schema"] = "json_object"
    seed: NonNegativeInt = 0
    simulation: JudgeSimulation = JudgeSimulation()
    prompts: str | None = None


class ReviewSettings(Section):
    """params.yaml ``review``: the human review queue (curation.review parses the details)."""

    db: str | None = None
    candidates: str | list[str] | None = None
    items: str | None = None
    seed_statuses: list[str] | None = None
    seed_methods: list[str] | None = None
    decisions: str | None = None
    accepted: str | None = None
    edited: str | None = None
    recalibrated: str | None = None
    host: str | None = None
    port: Annotated[int, Field(ge=0, le=65535)] | None = None
    required_reviews: PositiveInt | dict[str, PositiveInt] | None = None
    users: str | None = None
    guidelines: str | None = None


FigureFormat = Literal["png", "svg", "pdf"]


def _default_formats() -> list[FigureFormat]:
    return ["png", "svg"]


class PlotSettings(Section):
    """params.yaml ``plots``: how every figure is written (curation/plots/_style.py)."""

    format: list[FigureFormat] = Field(default_factory=_default_formats, min_length=1)
    """Files written per figure, beside each other (same stem). png and svg are required:
    dvc.yaml declares both as outputs, and the README, reports and cards link the PNGs;
    pdf is optional. Not a DVC params dependency (a format change must not refit
    anything): after adding pdf, `dvc repro -f -s <stage>` writes the PDFs."""

    @field_validator("format")
    @classmethod
    def _declared_outputs(cls, value: list[str]) -> list[str]:
        missing = [f for f in ("png", "svg") if f not in value]
        if missing:
            raise ValueError(f"must include {' and '.join(missing)} (declared outputs in dvc.yaml)")
        return list(dict.fromkeys(value))


class ParamsFile(Section):
    """The whole params.yaml: one section per stage plus the benchmarks they run on."""

    benchmarks: dict[str, BenchmarkEntry] = Field(min_length=1)
    """Benchmark name -> its items, responses and provenance; every stage runs per entry."""
    check: CheckSettings = CheckSettings()
    """Response-matrix diagnostics (stage check)."""
    annotate: AnnotateSettings = AnnotateSettings()
    """The IRT fit and the map to z (stage annotate)."""
    gaps: GapsSettings = GapsSettings()
    """DDM, gaps, certificates, blind intervals (stage gaps)."""
    mirt: MirtSettings = MirtSettings()
    """Multidimensional IRT over several benchmarks (stage mirt)."""
    subsets: SubsetsSettings = SubsetsSettings()
    """Calibrated subsets by quantile matching (stage subsets)."""
    build: BuildSettings = BuildSettings()
    """The versioned HF datasets (stage build)."""
    panel: PanelSettings | None = None
    """The answering panel (collection, BenchFill calibration)."""
    collect: CollectSettings = CollectSettings()
    """Import or collect responses (stage responses)."""
    llm: LLMSettings = LLMSettings()
    """Client, retries and cache of every model call."""
    fill: FillSettings = FillSettings()
    """BenchFill (stage fill)."""
    judge: JudgeSettings = JudgeSettings()
    """The LLM judge (stage judge)."""
    review: ReviewSettings = ReviewSettings()
    """The human review queue (curate review)."""
    plots: PlotSettings = PlotSettings()
    """How figures are written: 300 dpi PNG + SVG (+ PDF)."""


def validate_params(params: Any, *, params_file: str = "params.yaml") -> ParamsFile:
    """Check the whole params mapping against :class:`ParamsFile` (one ConfigError, by key)."""
    return parse_section(ParamsFile, _drop_nulls(params), where=params_file)


def _drop_nulls(value: Any) -> Any:
    """An explicit ``key: null`` means "the default" in params.yaml, as the parsers read it."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def params_json_schema() -> dict[str, Any]:
    """The JSON Schema of params.yaml (``schemas/params.schema.json``)."""
    schema = ParamsFile.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "params.schema.json",
        "title": "params",
        "description": "benchcurate params.yaml: every section, every benchmark entry. "
        "Generated from curation/params_model.py (`curate schema --write`).",
        **{k: v for k, v in schema.items() if k != "title"},
    }
