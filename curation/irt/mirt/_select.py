"""Choosing the number of dimensions: held-out cells and BIC, d = 1..d_max.

A seeded random share of the observed cells is held out; each d is fitted on the rest
and scored by the mean binomial log likelihood of the held-out cells (higher is
better). Each d is then refitted on all cells (warm-started) for its BIC. The held-out
rule picks the smallest d whose held-out log likelihood is within ``se_rule`` paired
standard errors of the best d (the one-standard-error rule: an extra dimension must
earn its keep); BIC picks its minimum. Both are reported; ``select`` says which
decides.

The selection costs 2 × d_max fits. Above ``max_cells`` observed cells (a leaderboard:
4,000 models × 350 items is 1.4 M) it runs on a seeded sample of the models holding
about ``max_cells`` cells, and only the chosen d (and d = 2, which the report analyses
when d = 1 wins) is then fitted on the whole panel: the time is bounded by the budget,
not the panel, and the report states the sample.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from curation.irt._heldout import keep_trainable, rank_heldout
from curation.irt.mirt._fit import MirtData, MirtFit, cell_loglik, fit_mirt
from curation.irt.mirt._settings import MirtPriorSettings
from curation.progress import progress

SELECT_RULES: tuple[str, ...] = ("heldout", "bic")


@dataclass(frozen=True)
class DimensionRow:
    """One candidate d."""

    d: int
    n_params: int
    train_loglik: float
    """Log likelihood of the training cells under the training fit."""
    heldout_loglik: float
    """Mean log likelihood per held-out cell under the training fit."""
    heldout_gap: float
    """Best d's mean held-out log likelihood minus this d's (>= 0)."""
    heldout_gap_se: float
    """Paired standard error of ``heldout_gap`` (0 for the best d)."""
    loglik: float
    """Log likelihood of all cells under the full-data fit."""
    bic: float
    converged: bool
    seconds: float


@dataclass(frozen=True)
class Selection:
    """The d-selection table, the chosen d and the full-data fit of every d."""

    rows: tuple[DimensionRow, ...]
    d_heldout: int
    d_bic: int
    chosen: int
    select: str
    se_rule: float
    holdout: float
    n_heldout: int
    seed: int
    fits: dict[int, MirtFit]
    """Full-data fit of every d; with a sample (``n_models_selection`` below the panel),
    the sample's fit for the d the report does not analyse."""
    n_models_selection: int | None = None
    """The models d was chosen on, when a sample (``max_cells``); None: the whole panel."""
    max_cells: int | None = None
    """The cell budget the sample was drawn for."""

    @property
    def fit(self) -> MirtFit:
        """The full-data fit of the chosen d (standardised, not yet rotated)."""
        return self.fits[self.chosen]


def holdout_mask(
    data: MirtData, share: float, seed: int, *, min_train_per_item: int = 2
) -> np.ndarray:
    """Boolean (models x items): observed cells held out, a seeded ``share`` of them.

    Cells are put back where an item or a model would keep fewer than
    ``min_train_per_item`` training cells.
    """
    if not 0 < share < 1:
        raise ValueError(f"holdout share must be in (0, 1), got {share}")
    present = data.present
    rng = np.random.default_rng(seed)
    drawn = present & (rng.random(present.shape) < share)
    mi, ii = np.nonzero(present)  # row-major: the order of ``drawn[present]``
    cells = keep_trainable(drawn[present], mi, ii, data.n_models, data.n_items,
                           min_train_per_item)  # fmt: skip
    held = np.zeros_like(present)
    held[present] = cells
    if not held.any():
        raise ValueError("held-out set is empty (too few cells for this holdout share)")
    return held


def sample_models(data: MirtData, max_cells: int, seed: int) -> MirtData:
    """A seeded sample of ``data``'s models (in panel order) holding about ``max_cells``
    observed cells, with every item; items the sample leaves constant stay (a fit
    handles them through the prior)."""
    per_model = data.n_cells / data.n_models
    keep_n = int(min(data.n_models, max(2, round(max_cells / per_model))))
    rng = np.random.default_rng([seed, 7])
    rows = np.sort(rng.choice(data.n_models, size=keep_n, replace=False))
    return replace(
        data,
        models=tuple(data.models[j] for j in rows),
        correct=data.correct[rows],
        trials=data.trials[rows],
    )


def select_dimension(
    data: MirtData,
    *,
    d_max: int = 4,
    holdout: float = 0.1,
    seed: int = 0,
    priors: MirtPriorSettings | None = None,
    select: str = "heldout",
    se_rule: float = 1.0,
    max_cells: int | None = None,
) -> Selection:
    """Fit d = 1..d_max, score held-out cells and BIC, and choose d (on a sample of the
    models above ``max_cells`` observed cells: module doc)."""
    if d_max < 1:
        raise ValueError(f"d_max must be >= 1, got {d_max}")
    if select not in SELECT_RULES:
        raise ValueError(f"select {select!r} is not one of {SELECT_RULES}")
    if se_rule < 0:
        raise ValueError(f"se_rule must be >= 0, got {se_rule}")
    if max_cells is not None and data.n_cells > max_cells:
        sample = sample_models(data, max_cells, seed)
        sel = select_dimension(
            sample, d_max=d_max, holdout=holdout, seed=seed, priors=priors, select=select,
            se_rule=se_rule,
        )  # fmt: skip
        analysed = {sel.chosen} | ({2} if sel.chosen == 1 and d_max >= 2 else set())
        whole = dict(sel.fits)
        for d in progress(sorted(analysed), desc="mirt: whole-panel fits", unit="fit"):
            whole[d] = fit_mirt(data, d, priors=priors)
        return replace(
            sel, fits=whole, n_models_selection=sample.n_models, max_cells=int(max_cells)
        )
    held = holdout_mask(data, holdout, seed)
    train = data.masked(data.present & ~held)
    test = data.masked(held)
    per_cell: dict[int, np.ndarray] = {}
    fits: dict[int, MirtFit] = {}
    partial = []
    for d in progress(range(1, d_max + 1), desc="mirt: choosing d", unit="d"):
        t0 = time.perf_counter()
        tfit = fit_mirt(train, d, priors=priors)
        per_cell[d] = cell_loglik(tfit.theta, tfit.loadings, tfit.difficulty, test)[held]
        full = fit_mirt(data, d, priors=priors, start=tfit)
        fits[d] = full
        partial.append((d, tfit, full, time.perf_counter() - t0))
    ranking = rank_heldout([per_cell[d] for d, *_ in partial], se_rule)
    rows = []
    for c, (d, tfit, full, seconds) in enumerate(partial):
        rows.append(
            DimensionRow(
                d=d,
                n_params=full.n_params,
                train_loglik=tfit.loglik,
                heldout_loglik=ranking.means[c],
                heldout_gap=ranking.gaps[c],
                heldout_gap_se=ranking.gap_ses[c],
                loglik=full.loglik,
                bic=full.bic(),
                converged=tfit.converged and full.converged,
                seconds=seconds,
            )
        )
    d_heldout = partial[ranking.chosen][0]
    d_bic = min(rows, key=lambda r: r.bic).d
    return Selection(
        rows=tuple(rows),
        d_heldout=d_heldout,
        d_bic=d_bic,
        chosen=d_heldout if select == "heldout" else d_bic,
        select=select,
        se_rule=float(se_rule),
        holdout=float(holdout),
        n_heldout=int(held.sum()),
        seed=int(seed),
        fits=fits,
    )
