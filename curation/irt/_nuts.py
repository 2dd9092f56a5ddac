"""Full Bayesian fits by NUTS (numpyro on JAX's CPU backend), diagnostics by arviz.

Nothing here is imported until a NUTS fit is requested, so ``import curation.irt``
never starts JAX. JAX reads its device count once, when its backend starts; to run
chains in parallel on a CPU we ask for one host device per chain *before* that
(``XLA_FLAGS=--xla_force_host_platform_device_count``, what
``numpyro.set_host_device_count`` does), but only if JAX has not started yet and the
user has not set the flag. Otherwise chains run vectorised in one device. This is the
one process-wide side effect of the package, and it only happens on the NUTS path.

Model: the same likelihood and priors as the MAP fit. Abilities are sampled on the
sum-to-zero subspace (``theta = Q phi``), which identifies the location exactly;
without it theta and b slide together and the effective sample size collapses.
Difficulties use the centred parameterisation: the likelihood dominates (12 models ×
32 trials pin each b to ±0.1), where non-centring would only hurt.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from curation.irt._data import Cells
from curation.irt._map import MapFit, sum_zero_basis
from curation.irt._settings import FitSettings

INSTALL_HINT = "NUTS fits need numpyro, jax and arviz: pip install 'benchcurate[bayes]'"
RHAT_MAX = 1.01
ESS_MIN_PER_CHAIN = 100


@dataclass(frozen=True)
class NutsFit:
    theta: np.ndarray  # (draws, models)
    b: np.ndarray  # (draws, items)
    a: np.ndarray | None  # (draws, items)
    diagnostics: dict[str, Any]


def _start_jax(chains: int) -> Any:
    """Import jax/numpyro, first asking for ``chains`` CPU devices if still possible."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    started = False
    if "jax" in sys.modules:
        try:
            from jax._src.xla_bridge import backends_are_initialized

            started = bool(backends_are_initialized())
        except (ImportError, AttributeError):  # private API moved: assume the worst
            started = True
    flags = os.environ.get("XLA_FLAGS", "")
    if not started and "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={chains}".strip()
    try:
        import jax
        import numpyro  # noqa: F401
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return jax


def _arviz() -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            import arviz
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return arviz


def fit_nuts(
    cells: Cells, settings: FitSettings, *, model: str, seed: int, start: MapFit
) -> NutsFit:
    """Sample the posterior.

    Chains start from the MAP point plus jitter (sd 0.5 logits, several posterior sds),
    which shortens warmup yet leaves the chains dispersed enough for R-hat to mean
    something.
    """
    jax = _start_jax(settings.chains)
    az = _arviz()
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    two_pl = model == "2pl"
    m, n_items = cells.n_models, cells.n_items
    q = sum_zero_basis(m)
    mi, ii = jnp.asarray(cells.mi), jnp.asarray(cells.ii)
    k, n = jnp.asarray(cells.k, dtype=jnp.float32), jnp.asarray(cells.n, dtype=jnp.float32)
    qj = jnp.asarray(q, dtype=jnp.float32)

    def irt_model() -> None:
        phi = numpyro.sample("phi", dist.Normal(0.0, settings.theta_sd).expand([m - 1]).to_event(1))
        b = numpyro.sample("b", dist.Normal(0.0, settings.b_sd).expand([n_items]).to_event(1))
        eta = (qj @ phi)[mi] - b[ii]
        if two_pl:  # the scale identified as in the MAP fit: mean log a = 0
            raw = numpyro.sample(
                "log_a_raw", dist.Normal(0.0, settings.log_a_sd).expand([n_items]).to_event(1)
            )
            log_a = numpyro.deterministic("log_a", raw - jnp.mean(raw))
            eta = jnp.exp(log_a)[ii] * eta
        numpyro.factor("loglik", jnp.sum(k * eta - n * jax.nn.softplus(eta)))

    chains = settings.chains
    method = settings.chain_method
    if method == "auto":
        method = "parallel" if jax.local_device_count() >= chains else "vectorized"
    rng = np.random.default_rng(seed)
    init = {
        "phi": q.T @ start.theta + rng.normal(0, 0.5, (chains, m - 1)),
        "b": start.b + rng.normal(0, 0.5, (chains, n_items)),
    }
    if two_pl:
        log_a0 = np.log(start.a) if start.a is not None else np.zeros(n_items)
        init["log_a_raw"] = log_a0 + rng.normal(0, 0.2, (chains, n_items))
    init = {key: jnp.asarray(v, dtype=jnp.float32) for key, v in init.items()}
    kernel = NUTS(
        irt_model, target_accept_prob=settings.target_accept, max_tree_depth=settings.max_tree_depth
    )
    mcmc = MCMC(
        kernel,
        num_warmup=settings.warmup,
        num_samples=settings.draws,
        num_chains=chains,
        chain_method=method,
        progress_bar=False,
    )
    mcmc.run(jax.random.PRNGKey(seed), init_params=init, extra_fields=("diverging",))
    s = {
        key: np.asarray(v, dtype=np.float64)
        for key, v in mcmc.get_samples(group_by_chain=True).items()
    }
    divergences = int(np.asarray(mcmc.get_extra_fields(group_by_chain=True)["diverging"]).sum())
    theta = s["phi"] @ q.T  # (chains, draws, models)
    posterior = {"theta": theta, "b": s["b"]}
    if two_pl:
        posterior["log_a"] = s["log_a"]
    ds = az.convert_to_dataset(posterior)
    rhat = az.rhat(ds)
    ess_bulk = az.ess(ds, method="bulk")
    ess_tail = az.ess(ds, method="tail")

    def _reduce(stat: Any, fn: Any) -> float:
        return float(fn([float(fn(stat[v].values)) for v in stat.data_vars]))

    max_rhat = _reduce(rhat, np.nanmax)
    min_bulk, min_tail = _reduce(ess_bulk, np.nanmin), _reduce(ess_tail, np.nanmin)
    ess_min = ESS_MIN_PER_CHAIN * chains
    diagnostics = {
        "max_rhat": max_rhat,
        "min_ess_bulk": min_bulk,
        "min_ess_tail": min_tail,
        "divergences": divergences,
        "chains": chains,
        "draws": settings.draws,
        "warmup": settings.warmup,
        "chain_method": method,
        "converged": bool(
            max_rhat <= RHAT_MAX and divergences == 0 and min(min_bulk, min_tail) >= ess_min
        ),
        "convergence_rule": f"max_rhat <= {RHAT_MAX}, divergences == 0, min ESS >= {ess_min}",
    }
    flat = {key: v.reshape(-1, *v.shape[2:]) for key, v in posterior.items()}
    return NutsFit(
        theta=flat["theta"],
        b=flat["b"],
        a=np.exp(flat["log_a"]) if two_pl else None,
        diagnostics=diagnostics,
    )
