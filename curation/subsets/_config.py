"""The ``subsets:`` section of params.yaml: which targets, which sizes, which reference.

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
                               # | {kind: models, models: [best, ..., worst]} | {kind: none}
  benchmarks:                  # optional per-benchmark overrides of sizes/targets/reference
    crux: {sizes: [100]}
```
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from curation.errors import ConfigError
from curation.measure import Sample, parse_target
from curation.measure._targets import Target

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
DEFAULT_SIZES = (50,)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "_", text.lower()).strip("_-")


@dataclass(frozen=True)
class TargetSpec:
    """One target of the params: a name (used in file and config names) and its measure."""

    name: str
    spec: Any
    """A parse_target spec, or the benchmark name when ``kind == "benchmark"``."""
    kind: Literal["measure", "benchmark"] = "measure"

    def resolve(self, load_z: Callable[[str], np.ndarray] | None = None) -> Target:
        """The target measure; a benchmark target reads that benchmark's z via ``load_z``."""
        if self.kind == "benchmark":
            if load_z is None:
                raise ConfigError(f"target {self.name!r} needs another benchmark's z")
            return Sample(tuple(float(v) for v in load_z(self.spec)), name=str(self.spec))
        return parse_target(self.spec)


@dataclass(frozen=True)
class ReferenceSpec:
    """Where the reference ranking comes from."""

    kind: Literal["domain", "benchmarks", "models", "none"]
    benchmarks: tuple[str, ...] = ()
    models: tuple[str, ...] = ()


@dataclass(frozen=True)
class SubsetsConfig:
    """The subsets settings for one benchmark."""

    sizes: tuple[int, ...]
    targets: tuple[TargetSpec, ...]
    reference: ReferenceSpec

    def names(self) -> list[tuple[str, TargetSpec, int]]:
        """(subset name ``<target>-<m>``, target, m) for every target x size."""
        return [(f"{t.name}-{m}", t, m) for t in self.targets for m in self.sizes]


def _target_spec(raw: Any, where: str) -> TargetSpec:
    if isinstance(raw, Mapping) and str(raw.get("kind", "")).lower() == "benchmark":
        bench = raw.get("benchmark")
        if not isinstance(bench, str) or not bench:
            raise ConfigError(f"{where}: a benchmark target needs `benchmark: NAME`")
        name = str(raw.get("name") or _slug(bench))
        spec = TargetSpec(name=name, spec=bench, kind="benchmark")
    else:
        body = dict(raw) if isinstance(raw, Mapping) else raw
        given = body.pop("name", None) if isinstance(body, dict) else None
        try:
            target = parse_target(body)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}: {exc}") from None
        spec = TargetSpec(name=str(given or target.key), spec=body)
    if not NAME_RE.match(spec.name):
        raise ConfigError(f"{where}.name: {spec.name!r} must match {NAME_RE.pattern}")
    return spec


def _reference(raw: Any, where: str) -> ReferenceSpec:
    if raw is None:
        return ReferenceSpec("domain")
    if isinstance(raw, str):
        raw = {"kind": raw}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping with `kind`")
    kind = str(raw.get("kind", "domain"))
    if kind == "benchmarks":
        names = raw.get("benchmarks")
        if not isinstance(names, list) or not names:
            raise ConfigError(f"{where}.benchmarks: list at least one benchmark")
        return ReferenceSpec("benchmarks", benchmarks=tuple(str(n) for n in names))
    if kind == "models":
        models = raw.get("models")
        if not isinstance(models, list) or len(models) < 2:
            raise ConfigError(f"{where}.models: list the models best first (at least 2)")
        return ReferenceSpec("models", models=tuple(str(m) for m in models))
    if kind in ("domain", "none"):
        return ReferenceSpec(kind)  # type: ignore[arg-type]
    raise ConfigError(f"{where}.kind: {kind!r} is not domain, benchmarks, models or none")


def subsets_config(
    params: Mapping[str, Any], benchmark: str, *, params_file: str = "params.yaml"
) -> SubsetsConfig:
    """Parse ``params['subsets']`` (with the benchmark's overrides) and check it."""
    section = params.get("subsets") or {}
    if not isinstance(section, Mapping):
        raise ConfigError(f"{params_file}: subsets: expected a mapping")
    overrides = (section.get("benchmarks") or {}).get(benchmark) or {}
    merged = {**section, **overrides}
    where = f"{params_file}: subsets"
    sizes_raw = merged.get("sizes", list(DEFAULT_SIZES))
    if isinstance(sizes_raw, int):
        sizes_raw = [sizes_raw]
    if not isinstance(sizes_raw, list) or not all(
        isinstance(m, int) and not isinstance(m, bool) and m >= 1 for m in sizes_raw
    ):
        raise ConfigError(f"{where}.sizes: expected a list of positive integers, got {sizes_raw!r}")
    targets_raw = merged.get("targets", ["uniform"])
    if not isinstance(targets_raw, list) or not targets_raw:
        raise ConfigError(f"{where}.targets: list at least one target")
    targets = tuple(_target_spec(t, f"{where}.targets[{i}]") for i, t in enumerate(targets_raw))
    names = [t.name for t in targets]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"{where}.targets: names repeat ({', '.join(dupes)}); set `name:`")
    return SubsetsConfig(
        sizes=tuple(dict.fromkeys(sizes_raw)),
        targets=targets,
        reference=_reference(merged.get("reference"), f"{where}.reference"),
    )
