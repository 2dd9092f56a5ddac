"""The whole params.yaml as one frozen pydantic model: the object every stage uses.

Each section's model lives beside the package that uses it (``curation.fill``'s
``FillSettings``, ``curation.measure``'s ``GapsSettings`` …: type, default, constraint and
docstring declared once); this module only composes them into :class:`ParamsFile` and
exports its JSON Schema (``schemas/params.schema.json``, ``curate schema --write``; a test
checks the committed copy). :func:`read_params` is what every stage (through
``curation.stage_main``) and ``curate validate`` run before touching an output: it
validates the file once and returns the object the code then reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import Field, model_validator

from curation.benchmarks import BENCHMARK_NAME, BenchmarkName, BenchmarkSettings
from curation.calibrate import CalibrateSettings
from curation.errors import ConfigError
from curation.fill import FillSettings
from curation.irt import AnnotateSettings
from curation.irt.mirt import MirtSettings
from curation.judge import JudgeSettings
from curation.llm import CollectSettings, LLMSettings, PanelModel, PanelSettings, require_panel
from curation.measure import GapsSettings
from curation.params import load_params
from curation.plots import PlotSettings
from curation.publish import BuildSettings
from curation.responses import CheckSettings
from curation.review import ReviewSettings
from curation.settings import Section, parse_section
from curation.subsets import SubsetsSettings


class ParamsFile(Section):
    """The whole params.yaml: one section per stage plus the benchmarks they run on."""

    benchmarks: dict[BenchmarkName, BenchmarkSettings] = Field(
        min_length=1, json_schema_extra={"propertyNames": {"pattern": BENCHMARK_NAME.pattern}}
    )
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
    calibrate: CalibrateSettings = CalibrateSettings()
    """How new items are measured: BenchFill's children, reviewers' edits."""
    fill: FillSettings = FillSettings()
    """BenchFill's search (stage fill)."""
    judge: JudgeSettings = JudgeSettings()
    """The LLM judge (stage judge)."""
    review: ReviewSettings = ReviewSettings()
    """The human review queue (curate review)."""
    plots: PlotSettings = PlotSettings()
    """How figures are written: 300 dpi PNG + SVG (+ PDF)."""

    @model_validator(mode="after")
    def _panel_fits_collect(self) -> ParamsFile:
        """Collecting needs a panel, and each model's own templates must exist (messages
        ``.key: why`` name the key: :func:`curation.settings.parse_section`)."""
        if self.collect.enabled:
            require_panel(self.panel)
        if self.panel is not None:
            problem = self.collect.unknown_templates(self.panel.models)
            if problem is not None:
                raise ValueError(f".panel.models{problem}")
        return self

    @model_validator(mode="after")
    def _review_names_benchmarks(self) -> ParamsFile:
        """A per-benchmark ``review.required_reviews`` names configured benchmarks only."""
        problem = self.review.unknown_benchmarks(self.benchmarks)
        if problem is not None:
            raise ValueError(f".review{problem}")
        return self

    @model_validator(mode="after")
    def _names_are_configured(self) -> Self:
        """Benchmark names in other sections must be keys of ``benchmarks``."""
        self.mirt.check_pool(self.benchmarks)
        for section, problem in (
            ("gaps", self.gaps.unknown_benchmarks(self.benchmarks)),
            ("subsets", self.subsets.unknown_benchmarks(self.benchmarks)),
            ("build", self.build.unknown_benchmarks(self.benchmarks)),
        ):
            if problem is not None:
                raise ValueError(f".{section}{problem}")
        return self

    def benchmark(self, name: str, *, params_file: str = "params.yaml") -> BenchmarkSettings:
        """``benchmarks.<name>``; a name that is not configured is an error listing those
        that are (a ``--benchmark`` typo)."""
        entry = self.benchmarks.get(name)
        if entry is None:
            raise ConfigError(
                f"{params_file}: no benchmark {name!r}; configured: {', '.join(self.benchmarks)}"
            )
        return entry


def validate_params(params: Any, *, params_file: str = "params.yaml") -> ParamsFile:
    """Check the whole params mapping against :class:`ParamsFile` (one ConfigError, by key)."""
    return parse_section(ParamsFile, _drop_nulls(params), where=params_file)


def read_params(path: str | Path = "params.yaml") -> ParamsFile:
    """Read and validate a params file: the one object every stage takes its settings from."""
    return validate_params(load_params(path), params_file=str(path))


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


def panel_model_json_schema() -> dict[str, Any]:
    """The JSON Schema of one panel model (``schemas/panel_model.schema.json``)."""
    schema = PanelModel.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://benchcurate.dev/schemas/panel_model.schema.json",
        "title": "panel_model",
        "description": "One model of the answering panel, as declared in params.yaml "
        "`panel.models` (also `fill.rewriter`, `judge.model`). Keys are never stored: only the "
        "names of the environment variables that hold them. Generated from "
        "curation.llm.PanelModel (`curate schema --write`).",
        **{k: v for k, v in schema.items() if k not in ("title", "description")},
    }
