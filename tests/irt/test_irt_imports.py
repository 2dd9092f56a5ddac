"""The 1PL/2PL fitting path loads numpy and polars only: scipy (≈0.4 s per subpackage to
import, more than a real panel's fit) stays unloaded, so a short `curate` run or a
notebook fit does not pay for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys
import curation.irt
assert not any(m.startswith(("numpy", "polars")) for m in sys.modules), "eager import"
from curation.irt import fit, simulate_responses
df, _ = simulate_responses(n_models=8, n_items=60, n_trials=2, seed=1)
for model in ("1pl", "2pl"):
    cal = fit(df, model=model)
    assert cal.items.height == 60
print(sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy.")))
"""


def test_fitting_never_imports_scipy() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout
