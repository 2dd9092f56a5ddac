"""How new items are measured: backend, panel, seed, adaptive trials, tolerance.

These are the calibration keys of params.yaml ``fill`` (BenchFill measures its
children with them, and ``curate review recalibrate`` measures reviewers' edits with
the same ones): ``backend`` (else ``collect.backend``, the one offline switch),
``seed``, ``panel``, ``adaptive`` and ``tolerance``. The rest of the section is
BenchFill's search (:func:`curation.fill.fill_settings`, which rejects unknown keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from curation.errors import ConfigError
from curation.llm import BACKENDS, BackendName, CollectSettings
from curation.settings import boolean, integer, mapping, number, parse_section, reject_unknown

SECTION: Final = "fill"
"""The params.yaml section the calibration keys live in."""
CALIBRATION_KEYS: frozenset[str] = frozenset({"backend", "seed", "panel", "adaptive", "tolerance"})


@dataclass(frozen=True)
class AdaptiveRule:
    """How panel trials are allocated to a new item (``fill.adaptive``).

    Trials go out in batches, the same number per panel model (``first_batch``, then
    ``batch``). After each batch the item is calibrated online (abilities fixed) and
    collection stops as soon as one of these holds, checked in this order:

    1. **off target** — the interval ``b ± reject_k·SE`` mapped to z lies entirely
       outside ``[z* − tolerance, z* + tolerance]``: the child cannot be the one;
    2. **on target** (outcome ``"accepted"``) — ``SE(z) ≤ se_accept``,
       ``|z − z*| ≤ tolerance`` and not bounded (some but not all trials correct):
       on target, known well enough;
    3. **measured** — ``SE(z) ≤ se_accept`` but ``|z − z*| > tolerance``: known as well
       as an on-target child would be, and not on target;
    4. **budget** — ``max_trials`` per model reached.

    SE(z) is SE(b) times the slope of the calibration's logit → z map (the unclipped
    slope, so a child beyond an end of the axis is not mistaken for a precise one).
    ``enabled: false`` gives every valid child ``max_trials`` from every model (the
    paper's fixed k); it is then on target if ``|z − z*| ≤ tolerance``.
    """

    enabled: bool = True
    first_batch: int = 2
    batch: int = 2
    max_trials: int = 32
    se_accept: float = 0.03
    reject_k: float = 2.0


@dataclass(frozen=True)
class CalibrationSettings:
    """How new items are put on a benchmark's scale (the calibration keys of ``fill``)."""

    backend: BackendName = "simulate"
    """simulate: offline panel (seeded); openai: the endpoints in params."""
    seed: int = 0
    """Sampling seed of the panel's requests (and of the simulation)."""
    panel: tuple[str, ...] | None = None
    """Panel model names (must be in the calibration); None = simulate: every
    calibration model; openai: the ``panel.models`` that are in the calibration."""
    adaptive: AdaptiveRule = field(default_factory=AdaptiveRule)
    tolerance: float = 0.01
    """|z − z*| that counts as on target."""

    @property
    def simulated(self) -> bool:
        return self.backend == "simulate"


def _adaptive(raw: Any, where: str) -> AdaptiveRule:
    section = mapping(raw, where)
    reject_unknown(section, AdaptiveRule.__dataclass_fields__, where)
    d = AdaptiveRule()
    rule = AdaptiveRule(
        enabled=boolean(section, "enabled", where, d.enabled),
        first_batch=integer(section, "first_batch", where, d.first_batch),
        batch=integer(section, "batch", where, d.batch),
        max_trials=integer(section, "max_trials", where, d.max_trials),
        se_accept=number(section, "se_accept", where, d.se_accept),
        reject_k=number(section, "reject_k", where, d.reject_k),
    )
    if rule.se_accept <= 0 or rule.reject_k < 0:
        raise ConfigError(f"{where}: se_accept must be positive and reject_k not negative")
    if rule.first_batch > rule.max_trials:
        raise ConfigError(f"{where}.first_batch: larger than max_trials ({rule.max_trials})")
    return rule


def calibration_settings(
    params: Mapping[str, Any], *, params_file: str = "params.yaml"
) -> CalibrationSettings:
    """Parse the calibration keys of ``params['fill']`` (absent ones take the defaults)."""
    where = f"{params_file}: {SECTION}"
    section = mapping(params.get(SECTION), where)
    backend = section.get("backend")
    if backend is None:
        backend = parse_section(
            CollectSettings, params.get("collect"), where=f"{params_file}: collect"
        ).backend
    if backend not in BACKENDS:
        raise ConfigError(f"{where}.backend: {backend!r} is not one of {', '.join(BACKENDS)}")
    panel = section.get("panel")
    if panel is not None:
        if not isinstance(panel, list) or not all(isinstance(p, str) for p in panel) or not panel:
            raise ConfigError(f"{where}.panel: expected a list of model names, or null")
        panel = tuple(panel)
    seed = section.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"{where}.seed: expected an integer")
    d = CalibrationSettings()
    settings = CalibrationSettings(
        backend=backend,
        seed=seed,
        panel=panel,
        adaptive=_adaptive(section.get("adaptive"), f"{where}.adaptive"),
        tolerance=number(section, "tolerance", where, d.tolerance),
    )
    if settings.tolerance < 0:
        raise ConfigError(f"{where}.tolerance: must not be negative")
    return settings
