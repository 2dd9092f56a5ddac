"""params.yaml ``fill``: targets, search shape, rewriter, adaptive trials, simulation, judge.

Everything is parsed into frozen dataclasses before any call is made, so a typo
fails in a second, not after an hour of rewriting. The backend follows
``collect.backend`` (the one offline switch) unless ``fill.backend`` names one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from curation.errors import ConfigError
from curation.llm import PanelModel, collect_settings
from curation.schemas import load_schema, validate_record

TargetMode = Literal["largest", "top_k"]
TARGET_MODES: tuple[str, ...] = ("largest", "top_k")
BACKENDS: tuple[str, ...] = ("simulate", "openai")
PROMPT_NAMES: tuple[str, ...] = ("system", "benchfill", "baseline", "reference")

_REWRITER_DEFAULTS: dict[str, Any] = {
    "name": "rewriter",
    "model_id": "Qwen/Qwen2.5-72B-Instruct",
    "base_url_env": "BENCHCURATE_BASE_URL",
    "api_key_env": "BENCHCURATE_API_KEY",
    "temperature": 1.0,
    "max_tokens": 2048,
}
_KNOWN = {
    "backend",
    "seed",
    "insertions",
    "targets",
    "rounds",
    "parents",
    "children",
    "references",
    "reference_chars",
    "tolerance",
    "duplicate_similarity",
    "panel",
    "rewriter",
    "adaptive",
    "simulation",
    "judge",
    "baseline",
    "oracle",
    "prompts",
}


@dataclass(frozen=True)
class AdaptiveRule:
    """How panel trials are allocated to a child (``fill.adaptive``).

    Trials go out in batches, the same number per panel model (``first_batch``, then
    ``batch``). After each batch the child is calibrated online (abilities fixed) and
    collection stops as soon as one of these holds, checked in this order:

    1. **off target** — the interval ``b ± reject_k·SE`` mapped to z lies entirely
       outside ``[z* − tolerance, z* + tolerance]``: the child cannot be the one;
    2. **accepted** — ``SE(z) ≤ se_accept``, ``|z − z*| ≤ tolerance`` and not bounded
       (some but not all trials correct): on target, known well enough;
    3. **measured** — ``SE(z) ≤ se_accept`` but ``|z − z*| > tolerance``: known as well
       as an accepted child would be, and not on target;
    4. **budget** — ``max_trials`` per model reached.

    SE(z) is SE(b) times the slope of the calibration's logit → z map (the unclipped
    slope, so a child beyond an end of the axis is not mistaken for a precise one).
    ``enabled: false`` gives every valid child ``max_trials`` from every model (the
    paper's fixed k); it is then accepted if ``|z − z*| ≤ tolerance``.
    """

    enabled: bool = True
    first_batch: int = 2
    batch: int = 2
    max_trials: int = 32
    se_accept: float = 0.03
    reject_k: float = 2.0


@dataclass(frozen=True)
class RewriteSimulation:
    """The offline rewriter's model of how a rewrite moves difficulty (``fill.simulation``).

    On the logit scale, with b_p the parent's latent difficulty and b* the target's:

    * steered (BenchFill: the prompt carries reference items around the target, so
      the rewriter can judge the size of the step):
      ``b_child = b_p + eta·(b* − b_p) + eps``, ``eps ~ N(0, sigma²)``;
    * unsteered (baseline: no references, so a number like "z* = 0.55" gives no
      scale): ``b_child = b_p + s·|N(0, free_sigma²)|`` with a random sign ``s``.

    Draws are seeded by (``fill.seed``, the request's cache key). The child's text is
    the parent's behind a header that says it is a simulated rewrite and states its
    latent b (the panel simulation answers from it); its answer is the parent's.
    """

    eta: float = 0.7
    sigma: float = 0.25
    free_sigma: float = 1.0


@dataclass(frozen=True)
class FillSettings:
    """Everything BenchFill needs, parsed from params.yaml ``fill``."""

    backend: Literal["simulate", "openai"] = "simulate"
    """simulate: offline rewriter and panel (seeded); openai: the endpoints in params."""
    seed: int = 0
    insertions: int = 3
    """Items inserted per benchmark (ignored when ``targets`` lists z values)."""
    targets: TargetMode | tuple[float, ...] = "largest"
    """largest: midpoint of the current largest gap, recomputed after each insertion;
    top_k: midpoints of the ``insertions`` largest gaps at the start; or explicit z*."""
    rounds: int = 8
    parents: int = 4
    children: int = 4
    """Children per parent per round."""
    references: int = 16
    """At most this many (item, z) pairs in the prompt, half below and half above z*."""
    reference_chars: int = 600
    """Each reference question is cut to this many characters in the prompt."""
    tolerance: float = 0.01
    """|z − z*| that counts as on target; stops the search for this target."""
    duplicate_similarity: float = 0.9
    """difflib ratio of normalised question tokens at or above which a child with the
    same answer and the same numbers as a memory item is a near-duplicate."""
    panel: tuple[str, ...] | None = None
    """Panel model names (must be in the calibration); None = simulate: every
    calibration model; openai: the ``panel.models`` that are in the calibration."""
    rewriter: PanelModel = field(default_factory=lambda: PanelModel(**_REWRITER_DEFAULTS))
    adaptive: AdaptiveRule = field(default_factory=AdaptiveRule)
    simulation: RewriteSimulation = field(default_factory=RewriteSimulation)
    judge: str | None = None
    """``module:factory`` returning a :class:`~curation.fill.Judge`; None = no judge."""
    baseline: bool = True
    oracle: bool = True
    prompts: Mapping[str, Path] = field(default_factory=dict)
    """Override of a prompt template file: system, benchfill, baseline or reference."""

    @property
    def children_per_round(self) -> int:
        return self.parents * self.children

    def fixed_budget(self, panel_size: int) -> int:
        """Panel trials per inserted item under the paper's allocation (the cost bar):
        rounds × children per round × panel size × max trials."""
        return self.rounds * self.children_per_round * panel_size * self.adaptive.max_trials

    def fingerprint_dict(self) -> dict[str, Any]:
        """Every setting that changes an output (the resume journal checks it)."""
        d = asdict(self)
        d["rewriter"] = {k: v for k, v in asdict(self.rewriter).items() if k != "concurrency"}
        d["prompts"] = {k: str(v) for k, v in self.prompts.items()}
        d["targets"] = list(self.targets) if not isinstance(self.targets, str) else self.targets
        d["panel"] = list(self.panel) if self.panel is not None else None
        return d


def _num(section: Mapping[str, Any], key: str, where: str, default: float) -> float:
    value = section.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}.{key}: expected a number, got {value!r}")
    return float(value)


def _int(section: Mapping[str, Any], key: str, where: str, default: int, *, low: int = 1) -> int:
    value = section.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}.{key}: expected an integer, got {value!r}")
    if value < low:
        raise ConfigError(f"{where}.{key}: must be at least {low}, got {value}")
    return value


def _bool(section: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    value = section.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key}: expected true or false, got {value!r}")
    return value


def _mapping(raw: Any, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping")
    return raw


def _targets(raw: Any, where: str) -> TargetMode | tuple[float, ...]:
    if raw is None:
        return "largest"
    if isinstance(raw, str):
        if raw not in TARGET_MODES:
            raise ConfigError(
                f"{where}: {raw!r} is not one of {', '.join(TARGET_MODES)} or a list of z values"
            )
        return raw  # type: ignore[return-value]
    if isinstance(raw, list) and raw:
        out = []
        for i, v in enumerate(raw):
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= v <= 1.0:
                raise ConfigError(f"{where}[{i}]: a target z must be a number in [0, 1], got {v!r}")
            out.append(float(v))
        return tuple(out)
    raise ConfigError(f"{where}: expected largest, top_k or a non-empty list of z values")


def _rewriter(raw: Any, where: str) -> PanelModel:
    entry = {**_REWRITER_DEFAULTS, **_mapping(raw, where)}
    problem = validate_record(entry, "panel_model")
    if problem is not None:
        raise ConfigError(f"{where}.{problem[0]}: {problem[1]}")
    props = load_schema("panel_model")["properties"]
    values = {k: entry.get(k, props[k].get("default")) for k in props if k in entry}
    values["prompt_templates"] = dict(entry.get("prompt_templates") or {})
    values["concurrency"] = entry.get("concurrency")
    return PanelModel(**values)


def _adaptive(raw: Any, where: str) -> AdaptiveRule:
    section = _mapping(raw, where)
    unknown = sorted(set(section) - set(AdaptiveRule.__dataclass_fields__))
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown setting")
    d = AdaptiveRule()
    rule = AdaptiveRule(
        enabled=_bool(section, "enabled", where, d.enabled),
        first_batch=_int(section, "first_batch", where, d.first_batch),
        batch=_int(section, "batch", where, d.batch),
        max_trials=_int(section, "max_trials", where, d.max_trials),
        se_accept=_num(section, "se_accept", where, d.se_accept),
        reject_k=_num(section, "reject_k", where, d.reject_k),
    )
    if rule.se_accept <= 0 or rule.reject_k < 0:
        raise ConfigError(f"{where}: se_accept must be positive and reject_k not negative")
    if rule.first_batch > rule.max_trials:
        raise ConfigError(f"{where}.first_batch: larger than max_trials ({rule.max_trials})")
    return rule


def _simulation(raw: Any, where: str) -> RewriteSimulation:
    section = _mapping(raw, where)
    unknown = sorted(set(section) - set(RewriteSimulation.__dataclass_fields__))
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown setting")
    d = RewriteSimulation()
    sim = RewriteSimulation(
        eta=_num(section, "eta", where, d.eta),
        sigma=_num(section, "sigma", where, d.sigma),
        free_sigma=_num(section, "free_sigma", where, d.free_sigma),
    )
    if sim.sigma < 0 or sim.free_sigma < 0:
        raise ConfigError(f"{where}: sigma and free_sigma must not be negative")
    return sim


def fill_settings(params: Mapping[str, Any], *, params_file: str = "params.yaml") -> FillSettings:
    """Parse and check ``params['fill']`` (an absent section gives the defaults)."""
    where = f"{params_file}: fill"
    section = _mapping(params.get("fill"), where)
    unknown = sorted(set(section) - _KNOWN)
    if unknown:
        raise ConfigError(
            f"{where}.{unknown[0]}: unknown setting; valid: {', '.join(sorted(_KNOWN))}"
        )
    backend = section.get("backend")
    if backend is None:
        backend = collect_settings(params, params_file=params_file).backend
    if backend not in BACKENDS:
        raise ConfigError(f"{where}.backend: {backend!r} is not one of {', '.join(BACKENDS)}")
    panel = section.get("panel")
    if panel is not None:
        if not isinstance(panel, list) or not all(isinstance(p, str) for p in panel) or not panel:
            raise ConfigError(f"{where}.panel: expected a list of model names, or null")
        panel = tuple(panel)
    judge = section.get("judge")
    if judge is not None and not isinstance(judge, str):
        raise ConfigError(f"{where}.judge: expected 'module:factory' or null")
    prompts = {}
    for name, path in _mapping(section.get("prompts"), f"{where}.prompts").items():
        if name not in PROMPT_NAMES:
            raise ConfigError(f"{where}.prompts.{name}: not one of {', '.join(PROMPT_NAMES)}")
        if not isinstance(path, str) or not Path(path).is_file():
            raise ConfigError(f"{where}.prompts.{name}: {path!r} is not a file")
        prompts[name] = Path(path)
    seed = section.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"{where}.seed: expected an integer")
    d = FillSettings()
    settings = FillSettings(
        backend=backend,
        seed=seed,
        insertions=_int(section, "insertions", where, d.insertions),
        targets=_targets(section.get("targets"), f"{where}.targets"),
        rounds=_int(section, "rounds", where, d.rounds),
        parents=_int(section, "parents", where, d.parents),
        children=_int(section, "children", where, d.children),
        references=_int(section, "references", where, d.references, low=0),
        reference_chars=_int(section, "reference_chars", where, d.reference_chars, low=20),
        tolerance=_num(section, "tolerance", where, d.tolerance),
        duplicate_similarity=_num(section, "duplicate_similarity", where, d.duplicate_similarity),
        panel=panel,
        rewriter=_rewriter(section.get("rewriter"), f"{where}.rewriter"),
        adaptive=_adaptive(section.get("adaptive"), f"{where}.adaptive"),
        simulation=_simulation(section.get("simulation"), f"{where}.simulation"),
        judge=judge,
        baseline=_bool(section, "baseline", where, True),
        oracle=_bool(section, "oracle", where, True),
        prompts=prompts,
    )
    if settings.tolerance < 0:
        raise ConfigError(f"{where}.tolerance: must not be negative")
    if not 0 < settings.duplicate_similarity <= 1:
        raise ConfigError(f"{where}.duplicate_similarity: must be in (0, 1]")
    return settings
