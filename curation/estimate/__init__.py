"""A new model's full-benchmark score from a subset of items, with intervals (issue 28).

* :class:`ItemBank` — the stored calibration as fixed item parameters (b, a) and the
  panel's abilities and full scores (:meth:`ItemBank.load` reads a project's files).
* :func:`estimate` → :class:`ScoreEstimate` — θ posterior on a grid (item parameters
  fixed, prior from the panel), the full-benchmark accuracy (observed + IRT prediction
  of the unseen items) with an interval holding θ's uncertainty and the unseen items'
  Bernoulli noise, θ, z and the rank among the panel; :func:`estimate_models` for a
  frame of several models.
* :func:`select` → :class:`Design` — the items a new model should answer: random,
  anchor (cluster medoids, weighted), stratified (on b, weighted), information.
* :func:`next_items` — an adaptive test's next items for a model, from its answers so
  far (:func:`run_adaptive` plays a whole test from recorded answers).
* :func:`validate` → :class:`Validation` — leave-models-out figures of a design and its
  estimators beside random subsets' (:func:`make_folds`, :func:`random_baseline` share
  work between designs and sizes); :func:`ideal_folds` redraws the held-out models from
  the bank itself (the figures no IRT estimator can beat with that subset).
* :func:`estimate_table` → :class:`EstimateReport` — every model of a response table
  against a bank, as ``curate estimate`` prints it (:meth:`EstimateReport.render`) and
  writes it (:func:`write_report`: estimate.json, schemas/estimate.schema.json).
* :func:`load_subset` → :class:`SubsetItems` — a published subset's items and weights
  (``curate estimate --subset``: a config name or a table with item and weight).
* :class:`EstimationSettings` — the knobs (level, draws, design, folds, seed, ...).
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.estimate._adaptive import next_items, run_adaptive
    from curation.estimate._bank import ItemBank
    from curation.estimate._design import Design, select
    from curation.estimate._estimate import (
        Observed,
        ScoreEstimate,
        estimate,
        estimate_models,
        estimate_observed,
        observed_of,
    )
    from curation.estimate._report import EstimateReport, estimate_table, write_report
    from curation.estimate._settings import (
        DESIGNS,
        ESTIMATORS,
        DesignName,
        EstimationSettings,
        EstimatorName,
    )
    from curation.estimate._subset import SubsetItems, load_subset
    from curation.estimate._validate import (
        Fold,
        Metrics,
        ModelResult,
        Validation,
        ideal_folds,
        make_folds,
        random_baseline,
        validate,
    )

_EXPORTS = {
    "DESIGNS": "_settings",
    "Design": "_design",
    "DesignName": "_settings",
    "ESTIMATORS": "_settings",
    "EstimateReport": "_report",
    "EstimationSettings": "_settings",
    "EstimatorName": "_settings",
    "Fold": "_validate",
    "ItemBank": "_bank",
    "Metrics": "_validate",
    "ModelResult": "_validate",
    "Observed": "_estimate",
    "ScoreEstimate": "_estimate",
    "SubsetItems": "_subset",
    "Validation": "_validate",
    "estimate": "_estimate",
    "estimate_models": "_estimate",
    "estimate_observed": "_estimate",
    "estimate_table": "_report",
    "ideal_folds": "_validate",
    "load_subset": "_subset",
    "make_folds": "_validate",
    "next_items": "_adaptive",
    "observed_of": "_estimate",
    "random_baseline": "_validate",
    "run_adaptive": "_adaptive",
    "select": "_design",
    "validate": "_validate",
    "write_report": "_report",
}

__all__ = [
    "DESIGNS",
    "Design",
    "DesignName",
    "ESTIMATORS",
    "EstimateReport",
    "EstimationSettings",
    "EstimatorName",
    "Fold",
    "ItemBank",
    "Metrics",
    "ModelResult",
    "Observed",
    "ScoreEstimate",
    "SubsetItems",
    "Validation",
    "estimate",
    "estimate_models",
    "estimate_observed",
    "estimate_table",
    "ideal_folds",
    "load_subset",
    "make_folds",
    "next_items",
    "observed_of",
    "random_baseline",
    "run_adaptive",
    "select",
    "validate",
    "write_report",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
