"""What a fit's Jacobian says: each parameter's uncertainty (the covariance of the weighted
least-squares problem, scaled by the reduced χ² when that exceeds 1), whether the targets
identify it (its column, its uncertainty beside its range, its collinearity with the others),
how well the model fits (χ²/dof, its p-value, the worst residuals) and whether a profile along
each parameter agrees with the quadratic picture.

Everything here works in the scaled coordinates the fit uses (each parameter as a fraction
``x`` of its range, or of its log-range), where "uncertainty above 0.5" means "±σ spans more
than the whole range" and a Jacobian column's norm is the change of the normalised residuals
when the parameter crosses its whole range."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: A column whose norm is below this (χ² changes by less than 1 over the whole range): the
#: targets do not see the parameter.
NO_EFFECT = 1.0
#: A scaled σ above this: ±σ spans the parameter's whole range.
WIDE = 0.5
#: An eigen-direction of JᵀJ this weak (σ along it above WIDE) that involves a parameter by
#: at least this weight names it as part of a degenerate combination.
INVOLVED = 0.3
#: The profile agrees when the χ² rise at ±σ is within this factor of the quadratic one.
PROFILE_FACTOR = 2.0
#: A fit is poor when the p-value of its χ² is below this, or a residual exceeds POOR_RESIDUAL.
POOR_P = 0.01
POOR_RESIDUAL = 3.0


@dataclass
class Identifiability:
    """Per parameter: whether the targets identify it, and in words why not."""

    identifiable: list[bool]
    status: list[str]  # identified, no effect, collinear, wide
    notes: list[str]
    combinations: list[dict[str, Any]] = field(default_factory=list)
    condition: float = math.nan


def covariance(jac: np.ndarray, chi2: float, dof: int) -> tuple[np.ndarray, float]:
    """The covariance of the scaled parameters, (JᵀJ)⁻¹ (a pseudo-inverse: directions the
    targets do not see get an infinite variance), times the reduced χ² when it is above 1;
    and that factor."""
    factor = max(1.0, chi2 / dof) if dof > 0 else 1.0
    values, vectors = np.linalg.eigh(jac.T @ jac)
    tol = max(float(values.max()) if values.size else 0.0, 1.0) * 1e-12
    good = values > tol
    cov = (vectors[:, good] / values[good]) @ vectors[:, good].T
    # a direction of no information makes every parameter in it infinitely uncertain
    for k in np.flatnonzero(~good):
        for i in np.flatnonzero(np.abs(vectors[:, k]) > 1e-6):
            cov[i, :] = np.nan
            cov[:, i] = np.nan
            cov[i, i] = np.inf
    return cov * factor, factor


def identifiability(jac: np.ndarray, cov: np.ndarray, names: Sequence[str]) -> Identifiability:
    """Which parameters the targets identify: a column of (nearly) zero (no effect), an
    uncertainty wider than the range, or a weak direction of JᵀJ shared with others
    (collinear: only a combination is determined)."""
    p = jac.shape[1]
    norms = np.linalg.norm(jac, axis=0)
    sigma = np.sqrt(np.abs(np.diag(cov)))
    fisher = jac.T @ jac
    values, vectors = np.linalg.eigh(fisher)
    scale = np.where(norms > 0, norms, 1.0)
    normalised = fisher / np.outer(scale, scale)
    seen = norms >= NO_EFFECT
    sub = normalised[np.ix_(seen, seen)]
    ev = np.linalg.eigvalsh(sub) if sub.size else np.array([1.0])
    condition = float(ev.max() / ev.min()) if ev.min() > 0 else math.inf
    out = Identifiability([True] * p, ["identified"] * p, [""] * p, condition=condition)
    for i in range(p):
        if not seen[i]:
            out.identifiable[i] = False
            out.status[i] = "no effect"
            out.notes[i] = (
                "the targets do not see it: across its whole range χ² changes by "
                f"{norms[i] ** 2:.2g} (< 1)"
            )
    # weak directions among the parameters the targets see
    for k, lam in enumerate(values):
        weak = lam <= 0 or 1 / math.sqrt(lam) > WIDE
        v = vectors[:, k]
        group = [i for i in range(p) if seen[i] and abs(v[i]) >= INVOLVED]
        if not weak or len(group) < 2:
            continue
        block = fisher[np.ix_(group, group)]
        _, bv = np.linalg.eigh(block)
        strong = bv[:, -1] * (1 if bv[0, -1] >= 0 else -1)
        text = " + ".join(f"{w:.2f}·{names[i]}" for w, i in zip(strong, group, strict=True))
        out.combinations.append(
            {
                "parameters": [names[i] for i in group],
                "determined": {names[i]: float(w) for w, i in zip(strong, group, strict=True)},
                "undetermined": {names[i]: float(v[i]) for i in group},
            }
        )
        for i in group:
            if out.status[i] == "identified" and sigma[i] > WIDE:
                others = ", ".join(names[j] for j in group if j != i)
                out.identifiable[i] = False
                out.status[i] = "collinear"
                out.notes[i] = (
                    f"collinear with {others}: the targets fix {text} (each as a fraction of "
                    "its range), not each"
                )
    for i in range(p):
        if out.status[i] == "identified" and not sigma[i] <= WIDE:
            out.identifiable[i] = False
            out.status[i] = "wide"
            out.notes[i] = "poorly determined: ±σ spans more than its whole range"
    return out


def profile_check(
    chi2: float,
    plus: float | None,
    minus: float | None,
    step_plus: float,
    step_minus: float,
    curvature: float,
    factor: float,
) -> tuple[bool, str]:
    """Whether the χ² re-evaluated at x̂ ± step (the others fixed) rises as the Jacobian says
    (``curvature``: (JᵀJ)ᵢᵢ, the rise being step²·curvature), within :data:`PROFILE_FACTOR`;
    and the note that says how it does."""
    rises = []
    for value, step in ((minus, step_minus), (plus, step_plus)):
        if value is None or step <= 0:
            continue
        expected = step * step * curvature
        rises.append((value - chi2, expected))
    if not rises:
        return True, "no profile: the parameter is at both bounds"
    text = "; ".join(f"Δχ² {got:.3g} (quadratic {want:.3g})" for got, want in rises)
    if any(got < -0.5 * factor for got, _ in rises):
        return False, f"a lower χ² lies within ±σ: the fit stopped short ({text})"
    ok = all(
        want > 0 and 1 / PROFILE_FACTOR <= max(got, 1e-12) / want <= PROFILE_FACTOR
        for got, want in rises
    )
    if ok:
        return True, f"the profile agrees ({text})"
    return False, f"the χ² is not quadratic over ±σ, so σ is approximate ({text})"


def fit_quality(
    residuals: np.ndarray, dof: int, names: Sequence[str]
) -> tuple[float, float, bool, list[str]]:
    """χ², its p-value (NaN with no degree of freedom), whether the fit is poor and why."""
    from scipy import stats

    chi2 = float(np.sum(residuals**2))
    p_value = float(stats.chi2.sf(chi2, dof)) if dof > 0 else math.nan
    reasons = []
    if dof > 0 and p_value < POOR_P:
        reasons.append(
            f"χ²/dof = {chi2 / dof:.3g} (p = {p_value:.2g} < {POOR_P:g}): the model cannot meet "
            "the targets within their uncertainties"
        )
    for r, name in zip(residuals, names, strict=True):
        if abs(r) > POOR_RESIDUAL:
            reasons.append(f'"{name}" is {r:+.1f}σ off')
    return chi2, p_value, bool(reasons), reasons
