"""The fit: :func:`calibrate` — scipy's bounded trust-region least squares ('trf') on the
weighted residuals (predicted − measured)/σ_total, σ_total² = σ² + (the simulation's standard
error over the seeds)², with a Jacobian of forward differences whose candidates run in one
batch; then the uncertainties, identifiability, a profile along each parameter and the
validation points, at the optimum."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from irqlab.calibration.analysis import (
    covariance,
    fit_quality,
    identifiability,
    profile_check,
)
from irqlab.calibration.model import BudgetSpent, Model, Prediction, Progress, check_measured
from irqlab.calibration.result import Calibration, Parameter, write_outputs
from irqlab.calibration.spec import Entry, TargetsSpec, parse_targets, point_text
from irqlab.errors import ConfigError, option

#: Stopping tolerances of the optimiser, in the scaled coordinates (each parameter's range is
#: 1): a step below XTOL (0.1 % of the range) or a relative fall of χ² below FTOL ends the fit.
XTOL = 1e-3
FTOL = 1e-4
GTOL = 1e-4
#: A residual where the model measured nothing (NaN) during the fit, in σ: steers away.
MISSING_RESIDUAL = 1e3


class _Fit:
    """The residual function and its Jacobian, each candidate evaluated once.

    The simulation's standard error in σ_total is frozen for a stage of the fit (taken at the
    stage's start point): were it taken at each candidate, the optimiser could lower χ² by
    making the model noisier (an overloaded point's latency) rather than closer.
    """

    def __init__(self, spec: TargetsSpec, model: Model) -> None:
        self.spec = spec
        self.model = model
        self.values = np.array([e.value for e in spec.targets])
        self.sigma = np.array([e.sigma for e in spec.targets])
        self.se = np.zeros(len(spec.targets))
        self.seen: dict[tuple[float, ...], Prediction] = {}
        self.best: tuple[float, np.ndarray] = (math.inf, np.array([]))

    def residuals(self, pred: Prediction, se: np.ndarray | None = None) -> np.ndarray:
        total = np.sqrt(self.sigma**2 + (self.se if se is None else se) ** 2)
        r = (pred.mean - self.values) / total
        return np.where(np.isfinite(r), r, MISSING_RESIDUAL)

    def freeze(self, x: np.ndarray) -> float:
        """Freezes the simulation's standard errors at ``x`` (evaluated); returns the largest
        change of a weight, relative."""
        se = self.at(x).se
        old = np.sqrt(self.sigma**2 + self.se**2)
        new = np.sqrt(self.sigma**2 + se**2)
        self.se = se
        self.best = (math.inf, np.array([]))
        for key, pred in self.seen.items():
            cost = float(np.sum(self.residuals(pred) ** 2))
            if cost < self.best[0]:
                self.best = (cost, np.array(key))
        return float(np.max(np.abs(new - old) / old, initial=0.0))

    def at(self, x: np.ndarray) -> Prediction:
        return self.seen[_key(x)]

    def batch(self, xs: Sequence[np.ndarray], budget: bool = True) -> list[np.ndarray]:
        """The residuals at each of ``xs``; the new candidates run in one batch."""
        new = [x for x in dict.fromkeys(_key(x) for x in xs) if x not in self.seen]
        if budget and self.model.evaluations + len(new) > self.spec.max_evaluations:
            raise BudgetSpent
        if new:
            thetas = [self.spec.theta(x) for x in new]
            preds = self.model.predict(thetas, [self.spec.targets] * len(new))
            self.model.evaluations += len(new)
            for x, pred in zip(new, preds, strict=True):
                self.seen[x] = pred
                cost = float(np.sum(self.residuals(pred) ** 2))
                if cost < self.best[0]:
                    self.best = (cost, np.array(x))
        return [self.residuals(self.seen[_key(x)]) for x in xs]

    def fun(self, x: np.ndarray) -> np.ndarray:
        return self.batch([x])[0]

    def steps(self, x: np.ndarray) -> list[float]:
        """Each parameter's finite-difference step: forward, or backward at the upper bound."""
        h = self.spec.step
        return [h if xi + h <= 1.0 else -h for xi in x]

    def jac(self, x: np.ndarray, budget: bool = True) -> np.ndarray:
        steps = self.steps(x)
        xs = [np.array(x, dtype=float)]
        for j, h in enumerate(steps):
            xj = np.array(x, dtype=float)
            xj[j] = xj[j] + h
            xs.append(xj)
        r = self.batch(xs, budget)
        return np.column_stack([(r[j + 1] - r[0]) / h for j, h in enumerate(steps)])


def _key(x: Sequence[float] | np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in x)


#: Stages of the fit at most, each with the standard errors frozen at its start; another stage
#: runs when a weight changed by more than STAGE_CHANGE.
STAGES = 3
STAGE_CHANGE = 0.2


def calibrate(
    targets: str | os.PathLike[str] | Mapping[str, Any] | TargetsSpec,
    *,
    out: str | os.PathLike[str] | None = None,
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
    max_evaluations: int | None = None,
    progress: Progress | None = None,
) -> Calibration:
    """Fits the free parameters of a targets file to its targets (docs/calibrate.md).

    ``targets``: the file's path, a dict shaped like it, or a parsed :class:`TargetsSpec`.
    ``out``: the folder for the fitted preset, residuals.csv, calibration.json, the figure
    and the journal (default: calibrate.out in the file; none: nothing is written and
    nothing is kept). Rerunning into the same folder replays the fit from the runs kept
    there. ``executor``/``workers``/``scheduler`` as for :func:`irqlab.sweep`;
    ``progress(done, total)`` is called as the runs of each batch finish.
    """
    from scipy.optimize import least_squares

    from irqlab.experiments.executors import check as check_executor
    from irqlab.files import own_folder, writable_folder

    started = time.monotonic()
    spec = targets if isinstance(targets, TargetsSpec) else parse_targets(targets)
    if max_evaluations is not None:
        if isinstance(max_evaluations, bool) or not isinstance(max_evaluations, int):
            raise ConfigError(f"max_evaluations = {max_evaluations!r}: must be an integer", None)
        if max_evaluations < 1:
            raise ConfigError(f"max_evaluations = {max_evaluations}: must be at least 1", None)
        spec.max_evaluations = max_evaluations
    check_executor(executor, workers)
    target = Path(out) if out is not None else spec.out
    if target is not None:
        own_folder(target, "calibration", option("--out", "out="))
        writable_folder(target, option("--out", "out="))
    names = [f.key for f in spec.free]
    x0 = np.array([f.scaled(f.start) for f in spec.free])
    with Model(
        spec, target, executor=executor, workers=workers, scheduler=scheduler, progress=progress
    ) as model:
        fit = _Fit(spec, model)
        fit.batch([x0])
        check_measured(spec.targets, fit.at(x0))
        fit.freeze(x0)
        start = fit.residuals(fit.at(x0))
        x_hat, message, stopped = x0, "", ""
        if not spec.free:
            message = "nothing to fit: the base compared with the validation points"
        try:
            for _ in range(STAGES if spec.free else 0):
                res = least_squares(
                    fit.fun,
                    x_hat,
                    jac=fit.jac,
                    bounds=(np.zeros(len(x0)), np.ones(len(x0))),
                    method="trf",
                    x_scale=1.0,
                    xtol=XTOL,
                    ftol=FTOL,
                    gtol=GTOL,
                )
                x_hat = np.clip(np.asarray(res.x, dtype=float), 0.0, 1.0)
                fit.batch([x_hat])
                if float(np.sum(fit.residuals(fit.at(x_hat)) ** 2)) > fit.best[0]:
                    x_hat = fit.best[1]  # the best candidate the stage saw
                message = str(res.message)
                stopped = message if res.status <= 0 else ""
                if fit.freeze(x_hat) <= STAGE_CHANGE:
                    break
        except BudgetSpent:
            x_hat = fit.best[1]
            message = f"stopped after calibrate.max_evaluations = {spec.max_evaluations}"
            stopped = message
            fit.freeze(x_hat)
        result = _analyse(spec, model, fit, x_hat, names, start)
        result.message, result.stopped = message, stopped
        result.evaluations = model.evaluations
        result.runs_new, result.runs_cached = model.new_runs, model.cached_runs
    result.wall_s = time.monotonic() - started
    result.out = target
    if target is not None:
        result.files = write_outputs(result, target)
    return result


def _analyse(
    spec: TargetsSpec,
    model: Model,
    fit: _Fit,
    x_hat: np.ndarray,
    names: list[str],
    start: np.ndarray,
) -> Calibration:
    """Uncertainties, identifiability, fit quality, the profile and the validation points at
    ``x_hat``; the profile's and validation's runs in one batch."""
    jac = fit.jac(x_hat, budget=False) if names else np.zeros((len(spec.targets), 0))
    r_hat = fit.batch([x_hat], budget=False)[0]
    n, p = len(spec.targets), len(spec.free)
    dof = n - p
    chi2, p_value, poor, reasons = fit_quality(r_hat, dof, [e.name for e in spec.targets])
    cov, factor = covariance(jac, chi2, dof)
    ident = identifiability(jac, cov, names)
    sigma_x = np.sqrt(np.abs(np.diag(cov)))
    # the profile: χ² at x̂ ± σ along each parameter the targets see, the others fixed
    probes: list[tuple[int, int, np.ndarray, float]] = []
    if spec.profile:
        for j in range(p):
            if ident.status[j] == "no effect" or not math.isfinite(sigma_x[j]):
                continue
            for sign in (-1, 1):
                xj = np.array(x_hat)
                xj[j] = min(1.0, max(0.0, xj[j] + sign * sigma_x[j]))
                step = abs(xj[j] - x_hat[j])
                if step > 1e-9:  # not at the bound on this side
                    probes.append((j, sign, xj, step))
    theta_hat = spec.theta(_key(x_hat))
    new_x = [x for _, _, x, _ in probes]
    valid_pred: Prediction | None = None
    if spec.validation or new_x:
        # the validation points and the profile's candidates in one batch
        unseen = list(dict.fromkeys(_key(x) for x in new_x))
        unseen = [x for x in unseen if x not in fit.seen]
        thetas = [theta_hat] + [spec.theta(x) for x in unseen]
        groups = [spec.validation] + [spec.targets] * len(unseen)
        preds = model.predict(thetas, groups)
        valid_pred = preds[0] if spec.validation else None
        for x, pred in zip(unseen, preds[1:], strict=True):
            fit.seen[x] = pred
    profiles: dict[int, dict[str, Any]] = {}
    for j in range(p):
        sides = {sign: (x, step) for jj, sign, x, step in probes if jj == j}
        got = {sign: float(np.sum(fit.residuals(fit.at(x)) ** 2)) for sign, (x, _) in sides.items()}
        if not sides:
            continue
        agrees, note = profile_check(
            chi2,
            got.get(1),
            got.get(-1),
            sides[1][1] if 1 in sides else 0.0,
            sides[-1][1] if -1 in sides else 0.0,
            float((jac.T @ jac)[j, j]),
            factor,
        )
        profiles[j] = {
            "agrees": agrees,
            "note": note,
            "chi2_minus": got.get(-1),
            "chi2_plus": got.get(1),
        }
    params = []
    for j, f in enumerate(spec.free):
        slope = f.slope(float(x_hat[j]))
        sig = float(sigma_x[j] * slope) if math.isfinite(sigma_x[j]) else math.inf
        at_bound = x_hat[j] <= 1e-3 or x_hat[j] >= 1 - 1e-3
        params.append(
            Parameter(
                key=f.key,
                start=f.start,
                value=float(theta_hat[f.key]),
                sigma=sig,
                lo=f.lo,
                hi=f.hi,
                log=f.log,
                identifiable=ident.identifiable[j],
                status=ident.status[j],
                note=ident.notes[j],
                at_bound=bool(at_bound),
                effect=float(np.linalg.norm(jac[:, j])),
                profile=profiles.get(j),
            )
        )
    best = fit.at(x_hat)
    rows = _rows(spec.targets, best, r_hat, fit.sigma)
    if valid_pred is not None:
        sig_v = np.array([e.sigma for e in spec.validation])
        vals = np.array([e.value for e in spec.validation])
        r_v = (valid_pred.mean - vals) / np.sqrt(sig_v**2 + valid_pred.se**2)
        rows += _rows(spec.validation, valid_pred, r_v, sig_v)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.sqrt(np.diag(cov))
        corr = cov / np.outer(d, d)
    return Calibration(
        spec=spec,
        parameters=params,
        rows=rows,
        chi2=chi2,
        dof=dof,
        p_value=p_value,
        poor=poor,
        poor_reasons=reasons,
        chi2_start=float(np.sum(start**2)),
        error_scale=factor,
        condition=ident.condition,
        combinations=ident.combinations,
        correlation=[[float(v) for v in row] for row in corr],
        jacobian=[[float(v) for v in row] for row in jac],
    )


def _rows(
    entries: Sequence[Entry], pred: Prediction, residuals: np.ndarray, sigma: np.ndarray
) -> list[dict[str, Any]]:
    out = []
    for e, mean, se, r, s in zip(entries, pred.mean, pred.se, residuals, sigma, strict=True):
        out.append(
            {
                "role": e.role,
                "name": e.name,
                "metric": e.metric,
                "point": point_text(e.point),
                "measured": e.value,
                "sigma": float(s),
                "predicted": float(mean),
                "predicted_se": float(se),
                "residual": float(mean - e.value),
                "normalised": float(r),
            }
        )
    return out
