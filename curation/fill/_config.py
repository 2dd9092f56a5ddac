"""params.yaml ``fill``: targets, search shape, rewriter, simulation, judge — and calibration.

Everything is parsed into frozen dataclasses before any call is made, so a typo
fails in a second, not after an hour of rewriting. The calibration keys (``backend``,
``seed``, ``panel``, ``adaptive``, ``tolerance``) are parsed by
:func:`curation.calibrate.calibration_settings`, so BenchFill and
``curate review recalibrate`` read them the same way; the backend follows
``collect.backend`` (the one offline switch) unless ``fill.backend`` names one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from curation.calibrate import (
    CALIBRATION_KEYS,
    AdaptiveRule,
    BackendName,
    CalibrationSettings,
    WorldSettings,
    calibration_settings,
)
from curation.errors import ConfigError
from curation.fill._settings import REWRITER_DEFAULTS
from curation.llm import PanelModel, with_role_defaults
from curation.settings import boolean, integer, mapping, number, parse_section, reject_unknown

TargetMode = Literal["largest", "top_k"]
TARGET_MODES: tuple[str, ...] = ("largest", "top_k")
PROMPT_NAMES: tuple[str, ...] = ("system", "benchfill", "baseline", "reference")

_KNOWN = CALIBRATION_KEYS | {
    "insertions",
    "targets",
    "rounds",
    "parents",
    "children",
    "references",
    "reference_chars",
    "tolerance",
    "duplicate_similarity",
    "rewriter",
    "simulation",
    "judge",
    "baseline",
    "oracle",
    "prompts",
    "confirm_trials",
    "refine",
    "world",
}
SKILLS: dict[str, tuple[float, float]] = {
    "none": (0.0, 1.0),
    "weak": (0.35, 0.5),
    "good": (0.7, 0.25),
}
"""Simulated rewriter skill presets, as (eta, sigma): ``none`` moves difficulty at
random with no pull towards the target, ``good`` is the default model below."""


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
    skill: str | None = None
    """A preset of :data:`SKILLS` (none, weak, good) that sets eta and sigma; None =
    the eta and sigma given."""


@dataclass(frozen=True)
class RefineRule:
    """Sequential re-measurement of a round's best children (``fill.refine``).

    The adaptive rule measures every child only until it is clearly off target or its
    SE reaches ``se_accept``; at the ends of the axis, where the largest gaps sit and
    one trial says little, that SE is wider than the tolerance, so the child chosen
    by it is often not the one closest on the truth. After the round's screening the
    ``finalists`` children with the smallest expected squared deviation from z* get
    ``batch`` more trials per model each (fresh sample indices), the ranking is
    redone, and so on until the leader's root expected squared deviation is at most
    tolerance/2, or each finalist has had ``max_trials`` extra trials per model.
    Trials go only where they can change the choice. ``finalists: 0`` turns it off.
    """

    finalists: int = 3
    batch: int = 8
    max_trials: int = 160
    screen_trials: int = 8
    """With refinement on, the adaptive screening of a round's children stops at this
    many trials per model (the finalists get the rest): at most ``adaptive.max_trials``."""

    @property
    def enabled(self) -> bool:
        return self.finalists > 0 and self.max_trials > 0


@dataclass(frozen=True)
class FillSettings:
    """Everything BenchFill needs, parsed from params.yaml ``fill``."""

    backend: BackendName = "simulate"
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
    rewriter: PanelModel = field(default_factory=lambda: PanelModel(**REWRITER_DEFAULTS))
    adaptive: AdaptiveRule = field(default_factory=AdaptiveRule)
    simulation: RewriteSimulation = field(default_factory=RewriteSimulation)
    judge: str | None = None
    """``module:factory`` returning a :class:`~curation.candidates.Judge`; None = no judge."""
    baseline: bool = True
    oracle: bool = True
    prompts: Mapping[str, Path] = field(default_factory=dict)
    """Override of a prompt template file: system, benchfill, baseline or reference."""
    confirm_trials: int = 16
    """Confirmation round: the selected child is re-measured with this many *fresh*
    trials per panel model and its reported z (and target dev) is that estimate,
    independent of the selection (no winner's curse); 0 = none (the selection's z)."""
    world: WorldSettings = field(default_factory=WorldSettings)
    """Simulation only: how far the simulated truth sits from the fitted calibration."""
    refine: RefineRule = field(default_factory=RefineRule)
    """Sequential re-measurement of each round's finalists (:class:`RefineRule`)."""

    @property
    def screening(self) -> AdaptiveRule:
        """The adaptive rule a round's children are measured by: ``adaptive``, capped at
        ``refine.screen_trials`` per model when refinement follows."""
        if not self.refine.enabled:
            return self.adaptive
        cap = min(self.refine.screen_trials, self.adaptive.max_trials)
        return replace(
            self.adaptive,
            max_trials=cap,
            first_batch=min(self.adaptive.first_batch, cap),
        )

    @property
    def confirm_first_sample(self) -> int:
        """The first sample index of the confirmation: past every index the search
        (adaptive screening, then refinement) can have used, so its trials are fresh."""
        return self.adaptive.max_trials + (self.refine.max_trials if self.refine.enabled else 0)

    @property
    def calibration(self) -> CalibrationSettings:
        """The calibration keys, as :mod:`curation.calibrate` takes them."""
        return CalibrationSettings(
            backend=self.backend,
            seed=self.seed,
            panel=self.panel,
            adaptive=self.adaptive,
            tolerance=self.tolerance,
        )

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
        d["rewriter"] = self.rewriter.model_dump(exclude={"concurrency"})
        d["prompts"] = {k: str(v) for k, v in self.prompts.items()}
        d["targets"] = list(self.targets) if not isinstance(self.targets, str) else self.targets
        d["panel"] = list(self.panel) if self.panel is not None else None
        return d


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
    return parse_section(
        PanelModel, with_role_defaults(mapping(raw, where), REWRITER_DEFAULTS), where=where
    )


def _simulation(raw: Any, where: str) -> RewriteSimulation:
    section = mapping(raw, where)
    reject_unknown(section, RewriteSimulation.__dataclass_fields__, where)
    d = RewriteSimulation()
    skill = section.get("skill")
    if skill is not None and skill not in SKILLS:
        raise ConfigError(f"{where}.skill: {skill!r} is not one of {', '.join(SKILLS)} or null")
    if skill is not None and ("eta" in section or "sigma" in section):
        raise ConfigError(f"{where}: give skill or eta/sigma, not both")
    eta, sigma = SKILLS[skill] if skill is not None else (d.eta, d.sigma)
    sim = RewriteSimulation(
        eta=number(section, "eta", where, eta),
        sigma=number(section, "sigma", where, sigma),
        free_sigma=number(section, "free_sigma", where, d.free_sigma),
        skill=skill,
    )
    if sim.sigma < 0 or sim.free_sigma < 0:
        raise ConfigError(f"{where}: sigma and free_sigma must not be negative")
    return sim


def _refine(raw: Any, where: str) -> RefineRule:
    section = mapping(raw, where)
    reject_unknown(section, RefineRule.__dataclass_fields__, where)
    d = RefineRule()
    rule = RefineRule(
        finalists=integer(section, "finalists", where, d.finalists, low=0),
        batch=integer(section, "batch", where, d.batch),
        max_trials=integer(section, "max_trials", where, d.max_trials, low=0),
        screen_trials=integer(section, "screen_trials", where, d.screen_trials),
    )
    if rule.enabled and rule.max_trials % rule.batch:
        raise ConfigError(f"{where}.max_trials: must be a multiple of batch ({rule.batch})")
    return rule


def _world(raw: Any, where: str) -> WorldSettings:
    section = mapping(raw, where)
    reject_unknown(section, WorldSettings.__dataclass_fields__, where)
    d = WorldSettings()
    world = WorldSettings(**{k: number(section, k, where, getattr(d, k)) for k in asdict(d)})
    if min(asdict(world).values()) < 0:
        raise ConfigError(f"{where}: standard deviations must not be negative")
    return world


def fill_settings(params: Mapping[str, Any], *, params_file: str = "params.yaml") -> FillSettings:
    """Parse and check ``params['fill']`` (an absent section gives the defaults)."""
    where = f"{params_file}: fill"
    section = mapping(params.get("fill"), where)
    reject_unknown(section, _KNOWN, where, list_valid=True)
    cal = calibration_settings(params, params_file=params_file)
    judge = section.get("judge")
    if judge is not None and not isinstance(judge, str):
        raise ConfigError(f"{where}.judge: expected 'module:factory' or null")
    prompts = {}
    for name, path in mapping(section.get("prompts"), f"{where}.prompts").items():
        if name not in PROMPT_NAMES:
            raise ConfigError(f"{where}.prompts.{name}: not one of {', '.join(PROMPT_NAMES)}")
        if not isinstance(path, str) or not Path(path).is_file():
            raise ConfigError(f"{where}.prompts.{name}: {path!r} is not a file")
        prompts[name] = Path(path)
    d = FillSettings()
    settings = FillSettings(
        backend=cal.backend,
        seed=cal.seed,
        insertions=integer(section, "insertions", where, d.insertions),
        targets=_targets(section.get("targets"), f"{where}.targets"),
        rounds=integer(section, "rounds", where, d.rounds),
        parents=integer(section, "parents", where, d.parents),
        children=integer(section, "children", where, d.children),
        references=integer(section, "references", where, d.references, low=0),
        reference_chars=integer(section, "reference_chars", where, d.reference_chars, low=20),
        tolerance=cal.tolerance,
        duplicate_similarity=number(section, "duplicate_similarity", where, d.duplicate_similarity),
        panel=cal.panel,
        rewriter=_rewriter(section.get("rewriter"), f"{where}.rewriter"),
        adaptive=cal.adaptive,
        simulation=_simulation(section.get("simulation"), f"{where}.simulation"),
        judge=judge,
        baseline=boolean(section, "baseline", where, True),
        oracle=boolean(section, "oracle", where, True),
        prompts=prompts,
        confirm_trials=integer(section, "confirm_trials", where, d.confirm_trials, low=0),
        world=_world(section.get("world"), f"{where}.world"),
        refine=_refine(section.get("refine"), f"{where}.refine"),
    )
    if not 0 < settings.duplicate_similarity <= 1:
        raise ConfigError(f"{where}.duplicate_similarity: must be in (0, 1]")
    return settings
