"""params.yaml ``calibrate``: how new items are measured on a benchmark's scale.

BenchFill measures its children with these settings, and ``curate review recalibrate``
measures reviewers' edits with the same ones, so they have a section of their own
(they used to be keys of ``fill:``; ``FillSettings`` names the new key path when an
old file still has them there). Declared once here (type, default, constraint,
docstring); ``curation.params_model`` composes the sections into ``ParamsFile``.
:class:`WorldSettings` is the type of ``fill.world``: the simulated panel's truth is
built by this package (:class:`~curation.calibrate.SimulatedWorld`), but only
BenchFill's offline evaluation asks for one, so the key stays BenchFill's.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    model_validator,
)

from curation.settings import BackendName, Section, key_error


class AdaptiveSettings(Section):
    """How panel trials are allocated to a new item (``calibrate.adaptive``).

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
    """false: every valid child gets ``max_trials`` trials per model (the paper's fixed k)."""
    first_batch: PositiveInt = 2
    """Trials per panel model in the first batch (at most ``max_trials``)."""
    batch: PositiveInt = 2
    """Trials per panel model in each later batch."""
    max_trials: PositiveInt = 32
    """Trials per panel model at most (the budget)."""
    se_accept: PositiveFloat = 0.03
    """SE(z) at or below which an item is known well enough (on target, or measured)."""
    reject_k: PositiveFloat = 2.0
    """Off target once ``b ± reject_k·SE``, mapped to z, lies outside z* ± tolerance."""

    @model_validator(mode="after")
    def _first_batch_fits(self) -> AdaptiveSettings:
        if self.first_batch > self.max_trials:
            raise key_error(
                type(self),
                "first_batch",
                f"must be at most max_trials ({self.max_trials})",
                self.first_batch,
            )
        return self


class CalibrateSettings(Section):
    """params.yaml ``calibrate``: the panel, backend, seed and trial rule that put new
    items on a benchmark's scale (BenchFill's children, reviewers' edits)."""

    backend: BackendName | None = None
    """simulate: the seeded offline panel; openai: the endpoints in params; null =
    ``collect.backend`` (the one offline switch)."""
    seed: NonNegativeInt = 0
    """Sampling seed of the panel's requests (and of the simulated panel's draws)."""
    panel: Annotated[list[str], Field(min_length=1)] | None = None
    """Panel model names (must be in the calibration); null = simulate: every
    calibration model; openai: the ``panel.models`` that are in the calibration."""
    adaptive: AdaptiveSettings = AdaptiveSettings()
    """How trials are allocated to a new item (:class:`AdaptiveSettings`)."""
    tolerance: Annotated[float, Field(ge=0, le=1)] = 0.01
    """|z − z*| that counts as on target (and only when the SE agrees)."""

    def backend_or(self, fallback: BackendName) -> BackendName:
        """``backend``, or ``fallback`` (``collect.backend``) when the file leaves it null."""
        return self.backend if self.backend is not None else fallback


class WorldSettings(Section):
    """``fill.world`` (simulation only): how far the simulated truth sits from the
    fitted calibration (:class:`~curation.calibrate.SimulatedWorld`).

    All zero gives the circular simulation (truth = fit, a 1PL panel with θ̂).
    """

    theta_sd: NonNegativeFloat = 0.15
    """SD of the true abilities around the fitted θ̂ (centred over the panel)."""
    a_sd: NonNegativeFloat = 0.2
    """SD of the log of a new item's true discrimination (the panel answers by a 2PL
    while calibration stays 1PL)."""
    b_sd: NonNegativeFloat = 0.1
    """SD of the original items' true b around their fitted b (in the true frame)."""
    interaction_sd: NonNegativeFloat = 0.4
    """SD of the model × item effects on the logit."""
