"""The simulated world's own truth, separate from the calibration the method fits.

Offline evaluation is circular if the simulated panel answers with the calibration's
own abilities under the same 1PL that calibrates: the online estimate then converges
to exactly the b the simulation was told, and "true" figures only measure sampling
noise. A :class:`SimulatedWorld` (seeded) is drawn *around* the fit instead:

* true abilities θ_j = θ̂_j + N(0, theta_sd²) (noise centred over the panel, so the
  location of the scale is kept) — online calibration still uses θ̂;
* every new item has a true discrimination a_i = exp(N(0, a_sd²)) — the panel answers
  by a **2PL** while calibration stays 1PL;
* a model × item effect δ_ji ~ N(0, interaction_sd²) on the logit;
* original items' true difficulty b_i = T(b̂_i) + N(0, b_sd²) (what a rewrite of them
  starts from), T the translation of a calibration-frame b into the true panel's
  frame: the b with the same expected panel score, Σ_j σ(θ_j − T(b)) = Σ_j σ(θ̂_j − b).
  (In a joint fit the items' errors follow the abilities' errors; T keeps that, so
  the world's ability noise does not by itself move every new item off its gap.)

P(model j solves item i) = σ(a_i (θ_j − b_i) + δ_ji), b_i the item's latent location
(a simulated child states it in its header). Its **true z** is its *1PL-equivalent*
difficulty for the true panel, b_eq with Σ_j σ(θ_j − b_eq) = Σ_j P(j solves i), on the
calibration's stored logit → z map: the difficulty this panel really finds, on the
axis the benchmark's items are reported on. So the estimate's error against the
truth is everything a real run suffers that the world can model — finite trials, the
abilities' own error (θ̂ ≠ θ), selection among noisy estimates — while the world does
not pretend a 1PL axis could recover a 2PL location parameter. Draws are hashes of
(seed, what), so they do not depend on call order.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from curation.calibrate._frame import equal_score_b
from curation.calibrate._settings import WorldSettings
from curation.hashing import hashed_normal
from curation.irt import Calibration
from curation.llm import SimulatedBackend


class SimulatedWorld:
    """True abilities, item parameters and model × item effects (see the module doc)."""

    def __init__(
        self,
        calibration: Calibration,
        fitted_b: Mapping[str, float],
        *,
        settings: WorldSettings,
        seed: int,
        models: Sequence[str] | None = None,
    ) -> None:
        self.calibration = calibration
        self.settings = settings
        self.seed = seed
        names = list(models or calibration.abilities)
        noise = np.array([settings.theta_sd * hashed_normal("theta", seed, m) for m in names])
        if noise.size > 1:
            noise -= noise.mean()
        self.theta = {
            m: float(calibration.abilities[m]) + float(e) for m, e in zip(names, noise, strict=True)
        }
        self._theta = np.array([self.theta[m] for m in names])
        self.models = tuple(names)
        self._theta_hat = np.array([float(calibration.abilities[m]) for m in names])
        items = list(fitted_b)
        self.translated = dict(
            zip(items, self.translate(np.array([fitted_b[i] for i in items])), strict=True)
        )
        """Original items: their fitted b in the true panel's frame (no estimation error)."""
        self.b = {
            item: float(self.translated[item]) + settings.b_sd * hashed_normal("b", seed, item)
            for item in items
        }
        blob = json.dumps(
            {"seed": seed, "settings": settings.model_dump(), "theta": sorted(self.theta.items())},
            sort_keys=True,
        )
        self.fingerprint = hashlib.sha256(blob.encode()).hexdigest()[:16]

    def translate(self, b: np.ndarray) -> np.ndarray:
        """T(b): Σ_j σ(θ_j − T(b)) = Σ_j σ(θ̂_j − b) (:func:`equal_score_b`)."""
        b = np.asarray(b, dtype=np.float64)
        if b.size == 0:
            return b
        return equal_score_b(b, self._theta_hat, self._theta)

    def a(self, item: str) -> float:
        """The item's true discrimination."""
        if self.settings.a_sd == 0:
            return 1.0
        return math.exp(self.settings.a_sd * hashed_normal("a", self.seed, item))

    def delta(self, model: str, item: str) -> float:
        """The model × item effect on the logit."""
        if self.settings.interaction_sd == 0:
            return 0.0
        return self.settings.interaction_sd * hashed_normal("delta", self.seed, model, item)

    def logit(self, model: str, item: str, b: float) -> float:
        """a_i (θ_j − b) + δ_ji for an item of latent location ``b``."""
        return self.a(item) * (self.theta[model] - b) + self.delta(model, item)

    def p_correct(self, item: str, b: float) -> np.ndarray:
        """P(each panel model solves ``item``), in :attr:`models` order."""
        a = self.a(item)
        d = np.array([self.delta(m, item) for m in self.models])
        return 1.0 / (1.0 + np.exp(-(a * (self._theta - b) + d)))

    def equivalent_b(self, item: str, b: float) -> float:
        """The 1PL difficulty with the same expected panel score under the true abilities."""
        target = float(self.p_correct(item, b).sum())
        n = len(self.models)
        target = min(max(target, 1e-9), n - 1e-9)

        def gap(x: float) -> float:
            return float((1.0 / (1.0 + np.exp(-(self._theta - x)))).sum()) - target

        from scipy.optimize import brentq  # ~0.5 s import: only when a world is solved

        return float(brentq(gap, -60.0, 60.0, xtol=1e-10))

    def axis_z(self, b: float) -> float:
        """A calibration-frame b (e.g. a target's) in the true frame, on the map: T then z."""
        return self.z_of(float(self.translate(np.array([b]))[0]))

    def true_b(self, item: str, default: float) -> float:
        """An original item's true b (``default`` for an item the world does not list)."""
        return self.b.get(item, default)

    def z_of(self, b: float) -> float:
        """A (1PL-equivalent) b on the calibration's stored map."""
        return float(self.calibration.to_z(np.array([b]))[0])

    def true_z(self, item: str, b: float) -> float:
        """A new item's true z: its 1PL-equivalent difficulty on the calibration's map."""
        return self.z_of(self.equivalent_b(item, b))

    def describe(self) -> dict[str, Any]:
        """What the lineage and metrics record of the world."""
        return {"seed": self.seed, **self.settings.model_dump(), "fingerprint": self.fingerprint}


class WorldBackend(SimulatedBackend):
    """The seeded simulated panel answering from a :class:`SimulatedWorld`.

    Same interface and draws as :class:`curation.llm.SimulatedBackend` (records say
    ``source = simulated``); only the probability differs: the world's 2PL with model ×
    item effects and true abilities, not σ(θ̂_j − b).
    """

    def __init__(self, *, benchmark: str, world: SimulatedWorld, seed: int) -> None:
        super().__init__(benchmark=benchmark, truths={}, abilities=world.theta, seed=seed)
        self.world = world
        self._namespace = f"{self._namespace}:world:{world.fingerprint}"
        self._p: dict[tuple[str, str, float], float] = {}

    def p_correct(self, model: str, item: str) -> float:
        """σ(a_i (θ_j − b_i) + δ_ji) (memoised: every trial of a cell draws from it)."""
        key = (model, item, self.difficulties[item])
        p = self._p.get(key)
        if p is None:
            p = 1.0 / (1.0 + math.exp(-self.world.logit(model, item, key[2])))
            self._p[key] = p
        return p
