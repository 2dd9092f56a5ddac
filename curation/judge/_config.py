"""params.yaml ``judge``: the judge model, the backend, the structured-output mode, seeds.

The judge model entry has the fields of a panel model (checked against
``schemas/panel_model.schema.json``) with judge defaults: temperature 0 and a
shorter completion limit. The backend follows ``collect.backend`` (the one offline
switch) unless ``judge.backend`` names one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from curation.candidates import CALIBRATED, INSERTED, CandidateStatus
from curation.errors import ConfigError
from curation.judge._settings import JUDGE_MODEL_DEFAULTS, JUDGE_UNUSED
from curation.llm import PanelModel, Price, collect_settings, with_role_defaults
from curation.settings import parse_section

ResponseFormat = Literal["none", "json_object", "json_schema"]
RESPONSE_FORMATS: tuple[str, ...] = ("none", "json_object", "json_schema")
JUDGED_STATUSES: tuple[CandidateStatus, ...] = (CALIBRATED, INSERTED)
"""Candidate statuses the judge stage judges; the others pass through untouched."""

_KNOWN = {"enabled", "backend", "model", "response_format", "seed", "simulation", "prompts"}


@dataclass(frozen=True)
class JudgeSimulation:
    """How the offline judge decides (``judge.simulation``).

    The simulated judge "solves" a candidate by taking its parent's reference answer
    (a simulated rewrite keeps it), so a candidate is judged correct when its answer
    equals the parent's; with probability ``false_reject_rate`` (a seeded draw per
    candidate) it errs and rejects a correct candidate, as a real judge sometimes does.
    Well-posed = a non-empty question; format kept = same answer type as the parent
    and an answer of that type's form.
    """

    false_reject_rate: float = 0.05


@dataclass(frozen=True)
class JudgeSettings:
    """Everything the judge needs, parsed before any call is made."""

    enabled: bool = True
    backend: Literal["simulate", "openai"] = "simulate"
    model: PanelModel = field(default_factory=lambda: PanelModel(**JUDGE_MODEL_DEFAULTS))
    response_format: ResponseFormat = "json_object"
    """Structured output asked of the endpoint; the answer is validated by JSON Schema anyway.
    An endpoint that refuses the setting (HTTP 400/422) is asked again without it."""
    seed: int = 0
    """Sent to the endpoint (when ``llm.send_seed``) and used by the simulated judge."""
    simulation: JudgeSimulation = field(default_factory=JudgeSimulation)
    prompts: Path | None = None
    """Folder overriding the built-in templates (system.txt, solve.txt, verdict.txt, repair.txt)."""

    @property
    def simulated(self) -> bool:
        return self.backend == "simulate"

    @property
    def model_label(self) -> str:
        """What verdicts record as the judge model."""
        return "simulated" if self.simulated else self.model.name

    def price(self) -> Price | None:
        m = self.model
        if m.input_price_per_1m is None or m.output_price_per_1m is None:
            return None
        return Price(m.input_price_per_1m, m.output_price_per_1m)


def _model(raw: Any, where: str) -> PanelModel:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping (name, model_id, base_url_env, ...)")
    for key in JUDGE_UNUSED:
        if raw.get(key) is not None:
            raise ConfigError(f"{where}.{key}: not used by the judge; remove it")
    return parse_section(PanelModel, with_role_defaults(raw, JUDGE_MODEL_DEFAULTS), where=where)


def judge_settings(params: Mapping[str, Any], *, params_file: str = "params.yaml") -> JudgeSettings:
    """Parse ``judge`` (a missing section means: enabled, with the defaults)."""
    where = f"{params_file}: judge"
    section = params.get("judge")
    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: expected a mapping")
    unknown = sorted(set(section) - _KNOWN)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown setting ({', '.join(sorted(_KNOWN))})")

    def opt(key: str, default: Any, kind: type | tuple[type, ...]) -> Any:
        value = section.get(key)
        if value is None:
            return default
        if isinstance(value, bool) and kind is not bool:
            raise ConfigError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}")
        if not isinstance(value, kind):
            raise ConfigError(
                f"{where}.{key}: expected {getattr(kind, '__name__', 'number')}, "
                f"got {type(value).__name__}"
            )
        return value

    backend = section.get("backend")
    if backend is None:
        backend = collect_settings(params, params_file=params_file).backend
    if backend not in ("simulate", "openai"):
        raise ConfigError(f"{where}.backend: {backend!r} is not simulate or openai (or null)")
    response_format = opt("response_format", "json_object", str)
    if response_format not in RESPONSE_FORMATS:
        raise ConfigError(
            f"{where}.response_format: {response_format!r} is not one of "
            f"{', '.join(RESPONSE_FORMATS)}"
        )
    sim = opt("simulation", {}, dict)
    unknown_sim = sorted(set(sim) - {"false_reject_rate"})
    if unknown_sim:
        raise ConfigError(f"{where}.simulation.{unknown_sim[0]}: unknown setting")
    rate = sim.get("false_reject_rate", 0.05)
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
        raise ConfigError(f"{where}.simulation.false_reject_rate: a number in [0, 1]")
    prompts = opt("prompts", None, str)
    return JudgeSettings(
        enabled=opt("enabled", True, bool),
        backend=backend,
        model=_model(section.get("model"), f"{where}.model"),
        response_format=response_format,
        seed=opt("seed", 0, int),
        simulation=JudgeSimulation(false_reject_rate=float(rate)),
        prompts=Path(prompts) if prompts else None,
    )
