"""Item Response Theory for benchmark difficulty (SPEC §3.3–3.4).

* :func:`fit` — 1PL/2PL by MAP (block Newton, Laplace intervals) or NUTS (posterior
  draws, R̂/ESS/divergences); returns a :class:`FitResult` with a :class:`Calibration`.
* :class:`Calibration` — abilities plus the fixed logit → z map (``to_z``), saved as
  JSON; the only way any item gets a z.
* :func:`calibrate_items` — online calibration of new items, abilities held fixed;
  :func:`calibrate_counts` the same from count sequences (no frame to validate).
* :func:`choose_model` — 1PL / 2PL / 3PL by held-out likelihood (cell-wise K-fold), BIC
  beside it, degenerate fits set aside (:class:`ModelChoice`, :class:`ModelChoiceSettings`);
  :func:`floors_of_items` — each item's guessing floor from its record (3PL).
* :func:`bic_compare`, :func:`loo_stability` — BIC alone and panel sensitivity.
* :func:`panel_bootstrap`, :func:`leave_one_model_out_z` — z refitted on resampled and
  leave-one-out panels (what another panel of the same kind would measure).
* :func:`simulate_responses` — data from known parameters for recovery tests;
  :func:`simulate_leaderboard` — a multiple-choice leaderboard with a 1PL/2PL/3PL truth.
* :func:`parametric_bootstrap` — refit simulated copies of the data (smooth empirical-Bayes
  truth, re-derived scale) for calibrated intervals of any z metric.
* :func:`score_steps` — each item's b with one more / one fewer correct answer.
* The building blocks other packages measure with: :class:`Cells` (:func:`encode`,
  :func:`check_responses`) — a response table as index arrays; :class:`FitSettings` — priors
  and solver settings; :func:`fit_map` — one MAP fit; :func:`z_on_fitted_scale`,
  :func:`bounded_items` — z on the scale a fit fixes; :func:`kernel_threads` — BLAS
  threads pinned for a fit.

Identification: mean ability 0, and for 2PL/3PL mean log a = 0 (an average item's slope
is 1, so no prior can trade the abilities' spread against the discriminations). Priors
(weak, documented in ``FitSettings``): θ ~ N(0, 3²), b ~ N(0, 3²), log a ~ N(0, 0.5²)
around that mean; a 3PL floor the item records do not give ~ Beta(2, 8).
Importing this package never imports JAX; only ``method="nuts"`` does. Exports resolve
lazily (numpy, polars and scipy load on first use), so ``import curation.irt`` is cheap.
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.irt._bootstrap import (
        BootstrapReplicates,
        Truth,
        bounded_items,
        parametric_bootstrap,
        z_on_fitted_scale,
    )
    from curation.irt._calibrate import calibrate_counts, calibrate_items
    from curation.irt._checks import bic_compare, loo_stability
    from curation.irt._choice import ModelChoice, choose_model
    from curation.irt._data import Cells, encode
    from curation.irt._fit import FitResult, fit, fit_map
    from curation.irt._floor import floors_of_items
    from curation.irt._panel import PanelRefits, leave_one_model_out_z, panel_bootstrap
    from curation.irt._resolution import score_steps
    from curation.irt._rows import check_responses
    from curation.irt._scale import Calibration
    from curation.irt._settings import AnnotateSettings, FitSettings, ModelChoiceSettings
    from curation.irt._simulate import simulate_leaderboard, simulate_responses
    from curation.irt._threads import kernel_threads

_EXPORTS = {
    "AnnotateSettings": "_settings",
    "BootstrapReplicates": "_bootstrap",
    "Calibration": "_scale",
    "Cells": "_data",
    "FitResult": "_fit",
    "FitSettings": "_settings",
    "ModelChoice": "_choice",
    "ModelChoiceSettings": "_settings",
    "PanelRefits": "_panel",
    "Truth": "_bootstrap",
    "bic_compare": "_checks",
    "bounded_items": "_bootstrap",
    "calibrate_counts": "_calibrate",
    "calibrate_items": "_calibrate",
    "check_responses": "_rows",
    "choose_model": "_choice",
    "encode": "_data",
    "fit": "_fit",
    "fit_map": "_fit",
    "floors_of_items": "_floor",
    "kernel_threads": "_threads",
    "leave_one_model_out_z": "_panel",
    "loo_stability": "_checks",
    "panel_bootstrap": "_panel",
    "parametric_bootstrap": "_bootstrap",
    "score_steps": "_resolution",
    "simulate_leaderboard": "_simulate",
    "simulate_responses": "_simulate",
    "z_on_fitted_scale": "_bootstrap",
}

__all__ = [
    "AnnotateSettings",
    "BootstrapReplicates",
    "Calibration",
    "Cells",
    "FitResult",
    "FitSettings",
    "ModelChoice",
    "ModelChoiceSettings",
    "PanelRefits",
    "Truth",
    "bic_compare",
    "bounded_items",
    "calibrate_counts",
    "calibrate_items",
    "check_responses",
    "choose_model",
    "encode",
    "fit",
    "fit_map",
    "floors_of_items",
    "kernel_threads",
    "leave_one_model_out_z",
    "loo_stability",
    "panel_bootstrap",
    "parametric_bootstrap",
    "score_steps",
    "simulate_leaderboard",
    "simulate_responses",
    "z_on_fitted_scale",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
