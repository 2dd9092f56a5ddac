"""params.yaml ``subsets``: calibrated subsets (SPEC §6): which targets, sizes, reference.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``, and the stages read :class:`SubsetsSettings`
itself: the ``…_for(benchmark)`` methods apply a benchmark's overrides.

```yaml
subsets:
  sizes: [50, 100]
  targets:
    - uniform                                   # name "uniform"
    - beta(2, 5)                                # name "beta_2_5"
    - {name: mid, kind: beta, a: 4, b: 4}
    - {name: bins, kind: histogram, edges: [0, 0.5, 1], weights: [1, 3]}
    - {kind: benchmark, benchmark: math-l5}     # another benchmark's z; name "math-l5"
  reference: {kind: domain}    # | {kind: benchmarks, benchmarks: [a, b]}
                               # | {kind: models, models: [best, ..., worst]} | none
  benchmarks:                  # optional per-benchmark overrides of sizes/targets/reference
    crux: {sizes: [100]}
  estimation:                  # subsets made to estimate the full score (issue 28)
    sizes: [100]               # one estimate-<m> subset per size (a size >= the items: skipped)
    design: anchor             # and curation.estimate.EstimationSettings' other keys
```

Targets are parsed by ``curation.measure.parse_target`` (the one reader of target
specs), when the file is validated; numpy loads then, the rest of the measure package
does not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import BeforeValidator, Field, PositiveInt, field_validator, model_validator

from curation.errors import ConfigError
from curation.estimate import EstimationSettings
from curation.settings import Section, TargetSpec, default_targets, key_error

if TYPE_CHECKING:
    import numpy as np

    from curation.measure import Target

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
"""A subset target's name: it names files (``<target>-<m>.parquet``) and HF configs."""
CALIBRATED_PREFIX = "calibrated-"
"""A quantile-matched subset's HF config is ``calibrated-<target>-<m>``; its file is
data/subsets/<b>/<target>-<m>.parquet (:func:`calibrated_config`)."""
ESTIMATE_PREFIX = "estimate"
"""The estimation subsets' name stem: ``estimate-<m>`` (file and HF config); no target
may take it (its ``<target>-<m>`` files would collide)."""
ADAPTIVE_PREFIX = "adaptive"
"""The adaptive tests' name stem: ``adaptive-<m>`` (file and HF config: the start items
of an adaptive test of m items); reserved like :data:`ESTIMATE_PREFIX`."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "_", text.lower()).strip("_-")


@dataclass(frozen=True)
class SubsetTarget:
    """One entry of ``subsets.targets``, parsed: its name (in file and config names) and
    its measure (not a params section: what one target entry means)."""

    name: str
    spec: Any
    """A ``parse_target`` spec, or the benchmark name when ``kind == "benchmark"``."""
    kind: Literal["measure", "benchmark"] = "measure"

    @classmethod
    def parse(cls, raw: TargetSpec) -> SubsetTarget:
        """A params entry as a named target; ValueError says what is wrong with it."""
        from curation.measure import parse_target

        if isinstance(raw, Mapping) and str(raw.get("kind", "")).lower() == "benchmark":
            bench = raw.get("benchmark")
            if not isinstance(bench, str) or not bench:
                raise ValueError("a benchmark target needs `benchmark: NAME`")
            target = cls(name=str(raw.get("name") or _slug(bench)), spec=bench, kind="benchmark")
        else:
            body = dict(raw) if isinstance(raw, Mapping) else raw
            given = body.pop("name", None) if isinstance(body, dict) else None
            try:
                parsed = parse_target(body)
            except (ValueError, TypeError) as exc:
                raise ValueError(str(exc)) from None
            target = cls(name=str(given or parsed.key), spec=body)
        if not NAME_RE.match(target.name):
            raise ValueError(f"name {target.name!r} must match {NAME_RE.pattern}")
        if target.name in (ESTIMATE_PREFIX, ADAPTIVE_PREFIX):
            raise ValueError(
                f"name {target.name!r} is reserved for the estimation subsets "
                f"({ESTIMATE_PREFIX}-<m>, {ADAPTIVE_PREFIX}-<m>); set another `name:`"
            )
        return target

    def resolve(self, load_z: Callable[[str], np.ndarray] | None = None) -> Target:
        """The target measure; a benchmark target reads that benchmark's z via ``load_z``."""
        from curation.measure import Sample, parse_target

        if self.kind == "benchmark":
            if load_z is None:
                raise ConfigError(f"target {self.name!r} needs another benchmark's z")
            return Sample(tuple(float(v) for v in load_z(self.spec)), name=str(self.spec))
        return parse_target(self.spec)


def _parsed_targets(value: list[TargetSpec]) -> tuple[SubsetTarget, ...]:
    """Every entry parsed, names distinct (ValueError ``[i]: why`` names the entry)."""
    out = []
    for i, raw in enumerate(value):
        try:
            out.append(SubsetTarget.parse(raw))
        except ValueError as exc:
            raise ValueError(f"[{i}]: {exc}") from None
    names = [t.name for t in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"names repeat ({', '.join(dupes)}); set `name:`")
    return tuple(out)


class ReferenceSettings(Section):
    """``subsets.reference``: the model ranking that Kendall τ compares a subset's with.
    Written ``{kind: ...}``, or the kind alone (``none``, ``domain``)."""

    kind: Literal["domain", "benchmarks", "models", "none"] = "domain"
    """domain: the mean rank over the other benchmarks of this one's domain (those with
    ``in_domain_reference``); benchmarks: over ``benchmarks``; models: the order
    ``models``; none: no τ."""
    benchmarks: list[str] = Field(default_factory=list)
    """With ``kind: benchmarks``: the benchmarks whose mean rank is the reference."""
    models: list[str] = Field(default_factory=list)
    """With ``kind: models``: the models, best first (at least 2)."""

    @model_validator(mode="after")
    def _lists_fit_the_kind(self) -> Self:
        if self.kind == "benchmarks" and not self.benchmarks:
            raise key_error(type(self), "benchmarks", "list at least one benchmark", [])
        if self.kind == "models" and len(self.models) < 2:
            raise key_error(
                type(self), "models", "list the models best first (at least 2)", self.models
            )
        for key in ("benchmarks", "models"):
            if getattr(self, key) and self.kind != key:
                raise key_error(type(self), key, f"only read with kind: {key}", getattr(self, key))
        return self


def _kind_alone(value: Any) -> Any:
    return {"kind": value} if isinstance(value, str) else value


Reference = Annotated[
    ReferenceSettings,
    BeforeValidator(
        _kind_alone, json_schema_input_type=ReferenceSettings | Literal["domain", "none"]
    ),
]
"""``subsets.reference``: a mapping, or the kind alone."""
Sizes = list[PositiveInt] | PositiveInt
"""Subset sizes m: a list, or one size."""


class BenchmarkSubsetsSettings(Section):
    """``subsets.benchmarks.<b>``: one benchmark's overrides (a key left out: the
    section's)."""

    sizes: Sizes | None = None
    """This benchmark's sizes; a size above its number of measured items is an error
    (a shared size is skipped instead)."""
    targets: list[TargetSpec] | None = Field(default=None, min_length=1)
    """This benchmark's targets."""
    reference: Reference | None = None
    """This benchmark's reference ranking."""

    @field_validator("targets")
    @classmethod
    def _targets_parse(cls, value: list[TargetSpec] | None) -> list[TargetSpec] | None:
        if value is not None:
            _parsed_targets(value)
        return value


class SubsetEstimationSettings(EstimationSettings):
    """``subsets.estimation``: the subsets made to estimate a new model's full-benchmark
    score (``estimate-<m>``, design ``design``, with weights), and the leave-models-out
    validation the stage runs on every published subset (issue 28). The other keys are
    :class:`curation.estimate.EstimationSettings`'."""

    sizes: Sizes = Field(default_factory=lambda: [100])
    """Sizes m of the ``estimate-<m>`` subsets (one per size). A size at or above a
    benchmark's number of calibrated items is skipped, with its reason in the metrics
    (the full benchmark needs no estimate)."""
    adaptive: bool = True
    """Also make an adaptive test of each size (``adaptive-<m>``: its
    ``adaptive_start`` start items; ``curate estimate --next`` chooses the rest for each
    model), validated beside the fixed subsets. On the bundled benchmarks it halved
    random items' excess error where models spread over the difficulty range (math-l5,
    crux) and did not help where almost every item is solved (GSM8K); the stage
    recommends, per size, whichever estimated the held-out models better."""

    def sizes_list(self) -> tuple[int, ...]:
        """The sizes, each once."""
        sizes = self.sizes
        return tuple(dict.fromkeys([sizes] if isinstance(sizes, int) else sizes))


class SubsetsSettings(Section):
    """params.yaml ``subsets``: calibrated subsets by quantile matching (SPEC §6)."""

    sizes: Sizes = Field(default_factory=lambda: [50])
    """Subset sizes m (one subset per target and size). A size above a benchmark's number
    of measured items is skipped, with its reason in the metrics."""
    targets: list[TargetSpec] = Field(default_factory=default_targets, min_length=1)
    """Target measures: "uniform", "beta(a, b)", a mapping with ``kind`` (uniform, beta,
    histogram, sample) and an optional ``name``, or ``{kind: benchmark, benchmark: B}``
    (B's z). Names (default: the target's key) must differ."""
    reference: Reference = ReferenceSettings()
    """The reference ranking Kendall τ is computed against."""
    benchmarks: dict[str, BenchmarkSubsetsSettings] = Field(default_factory=dict)
    """Per-benchmark overrides of ``sizes``, ``targets`` and ``reference``."""
    estimation: SubsetEstimationSettings = SubsetEstimationSettings()
    """The estimation subsets (``estimate-<m>``) and the held-out validation of every
    subset: a score on the subset as an estimate of the full-benchmark score."""

    @field_validator("targets")
    @classmethod
    def _targets_parse(cls, value: list[TargetSpec]) -> list[TargetSpec]:
        _parsed_targets(value)
        return value

    def _override(self, benchmark: str) -> BenchmarkSubsetsSettings:
        return self.benchmarks.get(benchmark) or BenchmarkSubsetsSettings()

    def sizes_for(self, benchmark: str) -> tuple[int, ...]:
        """The benchmark's sizes (its override, else the section's), each once."""
        sizes = self._override(benchmark).sizes
        sizes = self.sizes if sizes is None else sizes
        return tuple(dict.fromkeys([sizes] if isinstance(sizes, int) else sizes))

    def sizes_set_for(self, benchmark: str) -> bool:
        """True when ``subsets.benchmarks.<benchmark>.sizes`` is set (by name)."""
        return self._override(benchmark).sizes is not None

    def targets_for(self, benchmark: str) -> tuple[SubsetTarget, ...]:
        """The benchmark's targets, parsed (validated with the file)."""
        targets = self._override(benchmark).targets
        return _parsed_targets(self.targets if targets is None else targets)

    def reference_for(self, benchmark: str) -> ReferenceSettings:
        """The benchmark's reference ranking setting."""
        reference = self._override(benchmark).reference
        return self.reference if reference is None else reference

    def names_for(self, benchmark: str) -> list[tuple[str, SubsetTarget, int]]:
        """(subset name ``<target>-<m>``, target, m) for every target x size."""
        sizes = self.sizes_for(benchmark)
        return [(f"{t.name}-{m}", t, m) for t in self.targets_for(benchmark) for m in sizes]

    def unknown_benchmarks(self, configured: Collection[str]) -> str | None:
        """``.key: why`` for the first benchmark named here that is not configured: an
        override's key, a benchmark target, or a reference benchmark (ParamsFile runs
        this, so ``curate validate`` refuses what the stage would)."""
        listed = ", ".join(configured)
        for name in self.benchmarks:
            if name not in configured:
                return f".benchmarks.{name}: not a benchmark of params.yaml (benchmarks: {listed})"
        sections: list[tuple[str, SubsetsSettings | BenchmarkSubsetsSettings]] = [
            ("", self),
            *((f".benchmarks.{b}", o) for b, o in self.benchmarks.items()),
        ]
        for where, section in sections:
            for i, raw in enumerate(section.targets or []):
                target = SubsetTarget.parse(raw)
                if target.kind == "benchmark" and target.spec not in configured:
                    return (
                        f"{where}.targets[{i}].benchmark: {target.spec!r} is not a benchmark "
                        f"of params.yaml (benchmarks: {listed})"
                    )
            reference = section.reference
            missing = [
                b for b in (reference.benchmarks if reference else []) if b not in configured
            ]
            if missing:
                return f"{where}.reference.benchmarks: unknown {missing}"
        return None
