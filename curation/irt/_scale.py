"""The calibration: everything needed to put any item, now or later, on one z scale.

A calibration stores the panel's abilities and the logit → z map that was fixed when
the bank was fitted. :meth:`Calibration.to_z` is the only map from logits to z in the
package, so online-calibrated items land exactly where a refit would put them and no
benchmark is ever re-normalised on its own items (a per-benchmark min–max would force
the gaps at both ends to zero).
"""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from curation.errors import InputError
from curation.io import write_json
from curation.irt._numeric import expit
from curation.irt._settings import IDENTIFICATION, MODELS, SCALES, ScaleMethod, check_choice

FORMAT = "benchcurate.irt.calibration/1"
_SCALE_KEYS = {
    "panel": ("theta_min", "theta_max"),
    "items": ("b_min", "b_max"),
    "logistic": ("c", "s"),
}


@functools.cache
def package_version() -> str:
    """This package's installed version (read once: the metadata lookup costs ~4 ms)."""
    try:
        return metadata.version("benchcurate")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "unknown"


def make_scale(
    method: ScaleMethod, theta: np.ndarray, b: np.ndarray, bound: np.ndarray
) -> dict[str, str | float]:
    """Fix the logit → z map from a fit.

    * ``panel`` (default): z = clip((b − θ_min)/(θ_max − θ_min), 0, 1); 0 is "as hard
      as the weakest model's ability", 1 "as hard as the strongest's".
    * ``items``: min–max over the item bank at calibration time, excluding bounded
      (all-/none-solved) items whose b is set by the prior, not the data.
    * ``logistic``: z = σ((b − c)/s) with c the panel mid-range and s = range/4, i.e.
      tangent to the panel map at its centre but never clipping.
    """
    check_choice("scale", method, SCALES)
    t_min, t_max = float(np.min(theta)), float(np.max(theta))
    if method in ("panel", "logistic") and not t_max > t_min:
        raise ValueError(
            f"scale {method!r} needs at least 2 models with different abilities; "
            f"got {theta.size} model(s) spanning [{t_min}, {t_max}]"
        )
    if method == "panel":
        return {"method": "panel", "theta_min": t_min, "theta_max": t_max}
    if method == "logistic":
        return {"method": "logistic", "c": 0.5 * (t_min + t_max), "s": 0.25 * (t_max - t_min)}
    free = b[~bound]
    if free.size < 2 or not np.max(free) > np.min(free):
        raise ValueError(
            f"scale 'items' needs at least 2 unbounded items with different b; got {free.size} "
            f"unbounded of {b.size}"
        )
    return {"method": "items", "b_min": float(np.min(free)), "b_max": float(np.max(free))}


@dataclass(frozen=True)
class Calibration:
    """A fitted panel and its fixed logit → z map (JSON round-trip, saved atomically).

    ``abilities`` are on the fit's identified scale (``identification``); ``scale`` holds
    the method and its numbers; ``settings`` the fit settings and priors (online
    calibration reuses the b prior); ``panel`` the models in fit order.
    """

    model: str
    abilities: dict[str, float]
    scale: dict[str, Any]
    panel: tuple[str, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    identification: str = IDENTIFICATION
    benchmark: str | None = None
    created_by: str = field(default_factory=lambda: f"benchcurate {package_version()}")

    def __post_init__(self) -> None:
        check_choice("model", self.model, MODELS)
        method = str(self.scale.get("method"))
        check_choice("scale method", self.scale.get("method"), SCALES)
        for key in _SCALE_KEYS[method]:
            v = self.scale.get(key)
            if not isinstance(v, int | float) or not math.isfinite(v):
                raise ValueError(f"scale {method!r} needs a finite number {key!r}, got {v!r}")
        first, second = (self.scale[k] for k in _SCALE_KEYS[method])
        ok = second > 0 if method == "logistic" else second > first
        if not ok:
            raise ValueError(f"degenerate scale {self.scale}")
        if list(self.panel) != list(self.abilities):
            raise ValueError(
                f"panel {list(self.panel)} and abilities {list(self.abilities)} "
                "name different models (or order them differently)"
            )
        object.__setattr__(self, "panel", tuple(self.panel))

    @property
    def theta(self) -> np.ndarray:
        """Abilities in panel order."""
        return np.array([self.abilities[m] for m in self.panel], dtype=np.float64)

    def to_z(self, b: np.ndarray) -> NDArray[np.float64]:
        """Map difficulties (logits) to z ∈ [0, 1] with the stored scale (NaN stays NaN)."""
        b = np.asarray(b, dtype=np.float64)
        sc = self.scale
        if sc["method"] == "logistic":
            return expit((b - sc["c"]) / sc["s"])
        lo, hi = (sc[k] for k in _SCALE_KEYS[sc["method"]])
        z: NDArray[np.float64] = np.clip((b - lo) / (hi - lo), 0.0, 1.0)
        return z

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "benchmark": self.benchmark,
            "model": self.model,
            "abilities": dict(self.abilities),
            "scale": dict(self.scale),
            "identification": self.identification,
            "panel": list(self.panel),
            "settings": dict(self.settings),
            "created_by": self.created_by,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Calibration:
        if not isinstance(d, dict):
            raise ValueError(f"a calibration must be a JSON object, got {type(d).__name__}")
        if d.get("format") != FORMAT:
            raise ValueError(f"not a calibration of format {FORMAT!r}: format={d.get('format')!r}")
        need = ("model", "abilities", "scale", "panel")
        missing = [k for k in need if k not in d]
        if missing:
            raise ValueError(f"calibration is missing key(s) {missing}")
        panel = list(d["panel"])
        abilities = d["abilities"]
        if set(panel) != set(abilities):
            raise ValueError(f"calibration panel {panel} and abilities {sorted(abilities)} differ")
        return cls(
            model=d["model"],
            abilities={m: float(abilities[m]) for m in panel},
            scale=dict(d["scale"]),
            panel=tuple(panel),
            settings=dict(d.get("settings") or {}),
            identification=d.get("identification", IDENTIFICATION),
            benchmark=d.get("benchmark"),
            created_by=d.get("created_by", "unknown"),
        )

    def as_written(self) -> Calibration:
        """This calibration as :meth:`save` writes it: every number to the stated precision
        (:mod:`curation.io.precision`), so ``load(save(c)) == c.as_written()``. A stage that
        writes a calibration uses this one for everything else it writes, so its outputs
        agree with the file, and are the same on every machine."""
        from curation.io.precision import round_floats

        return Calibration.from_dict(round_floats(self.to_dict()))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write JSON atomically (a failed write leaves the previous file intact)."""
        write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Calibration:
        """Read a saved calibration; a damaged file is an :class:`InputError` naming it."""
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except (ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
            # json.JSONDecodeError is a ValueError
            raise InputError(
                f"not a readable calibration ({exc}); rerun the annotate stage", file=str(path)
            ) from None
