"""params.yaml ``fill``: BenchFill's search (SPEC §4) — targets, rounds, rewriter,
simulation, refinement, confirmation, judge.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``, and the fill stage reads this model. How a
child is *measured* (backend, panel, seed, adaptive trials, tolerance) is the
``calibrate`` section (:class:`curation.calibrate.CalibrateSettings`), which ``curate
review recalibrate`` reads too; the methods below that depend on it take it as an
argument. An old file with those keys under ``fill:`` is told where they went.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from curation.calibrate import AdaptiveSettings, CalibrateSettings, WorldSettings
from curation.errors import ConfigError
from curation.llm import PanelModel, with_role_defaults
from curation.settings import BackendName, Section, Unit, key_error, transport_fields

REWRITER_DEFAULTS: dict[str, Any] = {
    "name": "rewriter",
    "model_id": "Qwen/Qwen2.5-72B-Instruct",
    "base_url_env": "BENCHCURATE_BASE_URL",
    "api_key_env": "BENCHCURATE_API_KEY",
    "temperature": 1.0,
    "max_tokens": 2048,
}
"""What ``fill.rewriter`` keys the file leaves out default to (a rewriter samples at 1.0)."""

SKILLS: Final[dict[str, tuple[float, float]]] = {
    "none": (0.0, 1.0),
    "weak": (0.35, 0.5),
    "good": (0.7, 0.25),
}
"""Simulated rewriter skill presets, as (eta, sigma): ``none`` moves difficulty at
random with no pull towards the target, ``good`` is the default model."""

Skill = Literal["none", "weak", "good"]
"""A key of :data:`SKILLS`."""
PromptName = Literal["system", "benchfill", "baseline", "reference"]
"""A rewriter prompt template that ``fill.prompts`` can replace by a file."""
PROMPT_NAMES: Final[tuple[PromptName, ...]] = get_args(PromptName)
TargetMode = Literal["largest", "top_k"]
"""largest: midpoint of the current largest gap; top_k: of the k largest at the start."""

MOVED_TO_CALIBRATE: Final = ("backend", "panel", "adaptive", "tolerance")
"""Keys that used to be under ``fill:`` and now live under ``calibrate:`` (``seed`` is
in both: ``fill.seed`` seeds the rewriter and the simulated world, ``calibrate.seed``
the panel)."""


class RewriteSimulationSettings(Section):
    """The offline rewriter's model of how a rewrite moves difficulty (``fill.simulation``).

    On the logit scale, with b_p the parent's latent difficulty and b* the target's:

    * steered (BenchFill: the prompt carries reference items around the target, so
      the rewriter can judge the size of the step):
      ``b_child = b_p + eta·(b* − b_p) + bias + eps``, ``eps ~ N(0, sigma²)``;
    * unsteered (baseline: no references, so a number like "z* = 0.55" gives no
      scale): ``b_child = b_p + bias + s·|N(0, free_sigma²)|`` with a random sign ``s``.

    b* is the difficulty the request asks for (BenchFill corrects it by what it has
    learnt of the rewriter, ``fill.correction``), so eta and bias are the rewriter's
    scale and offset that the search has to find out.

    Draws are seeded by (``fill.seed``, the request's cache key). The child's text is
    the parent's behind a header that says it is a simulated rewrite and states its
    latent b (the panel simulation answers from it); its answer is the parent's.
    """

    skill: Skill | None = None
    """A preset of :data:`SKILLS` (none, weak, good) that sets eta and sigma; null =
    the eta and sigma given (give one or the other, not both)."""
    eta: float = 0.7
    """Share of the way from the parent's b to the target's that a steered rewrite moves."""
    sigma: NonNegativeFloat = 0.25
    """SD of a steered rewrite's error (logit scale)."""
    free_sigma: NonNegativeFloat = 1.0
    """SD of an unsteered (baseline) rewrite's step (logit scale)."""
    bias: float = 0.0
    """Logits every rewrite lands above what was asked (> 0: every child harder than
    asked, steered or not); 0 = a rewriter without a systematic offset."""

    @model_validator(mode="before")
    @classmethod
    def _skill_sets_eta_and_sigma(cls, value: Any) -> Any:
        if not isinstance(value, Mapping) or value.get("skill") not in SKILLS:
            return value  # no preset (or not one: the field reports it)
        if "eta" in value or "sigma" in value:
            raise ValueError("give skill or eta/sigma, not both")
        eta, sigma = SKILLS[value["skill"]]
        return {**value, "eta": eta, "sigma": sigma}


class RefineSettings(Section):
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

    finalists: NonNegativeInt = 3
    """Children re-measured per step (the best by expected squared deviation); 0 = off."""
    batch: PositiveInt = 8
    """Fresh trials per model a finalist gets per step."""
    max_trials: NonNegativeInt = 320
    """Extra trials per model a finalist gets at most (a multiple of ``batch``); 0 = off.
    160, not 96: on the true z the "good" rewriter's share of the oracle went
    0.76-0.83 -> 0.85-0.90; 320, not 160: GSM8K's gaps at the floor of the axis, where
    a trial says least, went 0.85 / 0.70 / 0.80 -> 0.91 / 0.79 / 0.98 in the project's,
    the a log-SD 0.5 and the ability-noise world (8 seeds, benchmarks/bench_fill.py);
    refinement stops earlier wherever the leader is known sooner."""
    screen_trials: PositiveInt = 8
    """With refinement on, the adaptive screening of a round's children stops at this
    many trials per model (the finalists get the rest): at most
    ``calibrate.adaptive.max_trials``."""

    @property
    def enabled(self) -> bool:
        """Whether refinement runs (finalists and extra trials both positive)."""
        return self.finalists > 0 and self.max_trials > 0

    @model_validator(mode="after")
    def _whole_batches(self) -> RefineSettings:
        if self.enabled and self.max_trials % self.batch:
            raise key_error(
                type(self),
                "max_trials",
                f"must be a multiple of batch ({self.batch})",
                self.max_trials,
            )
        return self


class CorrectionSettings(Section):
    """What the search learns about its rewriter, and how it corrects its requests
    (``fill.correction``; :mod:`curation.fill._correction`).

    Every BenchFill round refits, on all the run's measured children so far, how far a
    rewrite moves from its parent against how far it was asked to (logits):
    ``b_child − b_p = offset + scale · (b_request − b_p)``, with a normal prior centred on
    a rewriter that does what it is asked (offset 0, scale 1). The next request for
    target b* from parent b_p is then ``b_p + (b* − b_p − offset) / scale`` (as a z in the
    prompt, within [0, 1]); the references shown are the items around that request.
    """

    enabled: bool = True
    """Correct the requests (false: always ask for the target itself)."""
    offset_sd: PositiveFloat = 1.0
    """Prior SD of the rewriter's offset (logits)."""
    scale_sd: PositiveFloat = 0.5
    """Prior SD of the rewriter's scale around 1."""
    tau: PositiveFloat = 0.5
    """SD of a rewrite's own error assumed until three children are measured (logits)."""
    tau_min: PositiveFloat = 0.05
    """Floor of that SD when it is estimated from the residuals (logits)."""
    scale_min: PositiveFloat = 0.3
    """A request never divides by a smaller scale (a rewriter that barely moves
    would otherwise be asked for ever larger steps)."""
    max_shift: PositiveFloat = 2.0
    """A request lies at most this far from the target (logits)."""


class FillIntervalSettings(Section):
    """How a fill run's intervals account for the panel's ability error
    (``fill.intervals``; :mod:`curation.fill._uncertainty`).

    Online calibration holds the panel's fitted abilities fixed. After the search, the
    children's counts say how far those abilities are off for the new items (a shift
    per model beyond its sampling noise); abilities are drawn around the fitted ones
    with that spread, every item is moved into each draw's frame, and the per-item 90%
    intervals and the Top-3 reduction's 90% interval are taken over the draws (the
    reduction's also over each inserted item's own measurement error).
    """

    ability_error: bool = True
    """Widen the intervals by the estimated ability error (false: trials only)."""
    draws: Annotated[int, Field(ge=20)] = 400
    """Ability draws (and draws of the inserted items' b) behind the intervals."""


class FillSettings(Section):
    """params.yaml ``fill``: BenchFill's search (SPEC §4); its children are measured as
    ``calibrate`` says (:class:`~curation.calibrate.CalibrateSettings`)."""

    seed: NonNegativeInt = 0
    """Seed of the simulated rewriter, of the simulated world and of the baseline's
    parent draws (the panel's is ``calibrate.seed``)."""
    insertions: PositiveInt = 3
    """Items inserted per benchmark (ignored when ``targets`` lists z values)."""
    targets: TargetMode | Annotated[list[Unit], Field(min_length=1)] = "largest"
    """largest: midpoint of the current largest gap, recomputed after each insertion;
    top_k: midpoints of the ``insertions`` largest gaps at the start; or explicit z*."""
    rounds: PositiveInt = 8
    """Rounds per target at most."""
    parents: PositiveInt = 4
    """Memory items closest to z* rewritten per round."""
    children: PositiveInt = 4
    """Children per parent per round."""
    references: NonNegativeInt = 16
    """At most this many (item, z) pairs in the prompt, half below and half above z*."""
    reference_chars: Annotated[int, Field(ge=20)] = 600
    """Each reference question is cut to this many characters in the prompt."""
    duplicate_similarity: Annotated[float, Field(gt=0, le=1)] = 0.9
    """difflib ratio of normalised question tokens at or above which a child with the
    same answer and the same numbers as a memory item is a near-duplicate."""
    rewriter: PanelModel = Field(default_factory=lambda: PanelModel(**REWRITER_DEFAULTS))
    """The rewriter's endpoint; keys not given take the rewriter's defaults
    (:data:`REWRITER_DEFAULTS`: temperature 1.0, max_tokens 2048, …)."""
    simulation: RewriteSimulationSettings = RewriteSimulationSettings()
    """The offline rewriter's model (:class:`RewriteSimulationSettings`)."""
    confirm_trials: NonNegativeInt = 16
    """Confirmation round: the selected child is re-measured with this many *fresh*
    trials per panel model and its reported z (and target dev) is that estimate,
    independent of the selection (no winner's curse); 0 = none (the selection's z)."""
    refine: RefineSettings = RefineSettings()
    """Sequential re-measurement of each round's finalists (:class:`RefineSettings`)."""
    intervals: FillIntervalSettings = FillIntervalSettings()
    """How the intervals include the panel's ability error (:class:`FillIntervalSettings`)."""
    correction: CorrectionSettings = CorrectionSettings()
    """The rewriter's offset and scale, learnt online, and the corrected requests
    (:class:`CorrectionSettings`)."""
    world: WorldSettings = WorldSettings()
    """Simulation only: how far the simulated truth sits from the fitted calibration."""
    judge: str | None = None
    """``module:factory`` returning a :class:`~curation.candidates.Judge` (called with
    the ``ParamsFile``); null = no judge."""
    baseline: bool = True
    """Run the uniform-parent best-of-N baseline with the same rewriter budget."""
    oracle: bool = True
    """Place the oracle's exact points at the targets (a reference, never an item)."""
    prompts: dict[PromptName, str] = Field(default_factory=dict)
    """Override of a prompt template by a file: system, benchfill, baseline or reference."""

    @model_validator(mode="before")
    @classmethod
    def _moved_to_calibrate(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        moved = [key for key in value if key in MOVED_TO_CALIBRATE]
        if moved:
            raise ValidationError.from_exception_data(
                cls.__name__,
                [
                    InitErrorDetails(
                        type=PydanticCustomError("moved", "{message}", {"message": _moved(key)}),
                        loc=(key,),
                        input=value[key],
                    )
                    for key in moved
                ],
            )
        return value

    @field_validator("targets", mode="before")
    @classmethod
    def _each_target_a_z(cls, value: Any) -> Any:
        """A list of z*: each a number in [0, 1], reported by its index."""
        if isinstance(value, list):
            for i, z in enumerate(value):
                if isinstance(z, bool) or not isinstance(z, int | float) or not 0 <= z <= 1:
                    raise ValidationError.from_exception_data(
                        cls.__name__,
                        [
                            InitErrorDetails(
                                type=PydanticCustomError(
                                    "value_error", "a target z must be a number in [0, 1]"
                                ),
                                loc=(i,),
                                input=z,
                            )
                        ],
                    )
        return value

    @field_validator("rewriter", mode="before")
    @classmethod
    def _rewriter_defaults(cls, value: Any) -> Any:
        return with_role_defaults(value, REWRITER_DEFAULTS)

    @property
    def children_per_round(self) -> int:
        """Rewrites per round: ``parents`` × ``children``."""
        return self.parents * self.children

    def screening(self, adaptive: AdaptiveSettings) -> AdaptiveSettings:
        """The adaptive rule a round's children are measured by: ``adaptive``, capped at
        ``refine.screen_trials`` per model when refinement follows."""
        if not self.refine.enabled:
            return adaptive
        cap = min(self.refine.screen_trials, adaptive.max_trials)
        return adaptive.model_copy(
            update={"max_trials": cap, "first_batch": min(adaptive.first_batch, cap)}
        )

    def confirm_first_sample(self, adaptive: AdaptiveSettings) -> int:
        """The first sample index of the confirmation: past every index the search
        (adaptive screening, then refinement) can have used, so its trials are fresh."""
        return adaptive.max_trials + (self.refine.max_trials if self.refine.enabled else 0)

    def fixed_budget(self, panel_size: int, adaptive: AdaptiveSettings) -> int:
        """Panel trials per inserted item under the paper's allocation (the cost bar):
        rounds × children per round × panel size × max trials."""
        return self.rounds * self.children_per_round * panel_size * adaptive.max_trials

    def prompt_files(self, *, params_file: str = "params.yaml") -> dict[PromptName, Path]:
        """The override files of ``prompts``, each checked to be a file (``curate
        validate`` and the stage both call this, with the same message)."""
        files = {}
        for name, path in self.prompts.items():
            if not Path(path).is_file():
                raise ConfigError(f"{params_file}: fill.prompts.{name}: {path!r} is not a file")
            files[name] = Path(path)
        return files

    def fingerprint_dict(
        self, calibrate: CalibrateSettings, *, backend: BackendName
    ) -> dict[str, Any]:
        """Every setting that changes an output (the resume journal checks it): the
        rewriter's transport keys (:data:`curation.settings.Transport`) are left out.

        The calibration keys are in it under their old names (``backend`` resolved), so
        a file whose two seeds agree keeps the fingerprint (and the journal) it had when
        they were one key; a panel seed of its own is one more key, ``calibrate_seed``.
        """
        d = self.model_dump()
        d["rewriter"] = self.rewriter.model_dump(exclude=set(transport_fields(PanelModel)))
        d["prompts"] = {k: str(Path(v)) for k, v in self.prompts.items()}
        d.update(
            backend=backend,
            panel=list(calibrate.panel) if calibrate.panel is not None else None,
            adaptive=calibrate.adaptive.model_dump(),
            tolerance=calibrate.tolerance,
        )
        if calibrate.seed != self.seed:
            d["calibrate_seed"] = calibrate.seed
        return d


def _moved(key: str) -> str:
    return (
        f"moved to calibrate.{key} (how new items are measured has its own section, "
        "calibrate: backend, seed, panel, adaptive, tolerance; fill.seed still seeds the "
        "rewriter, calibrate.seed the panel)"
    )
