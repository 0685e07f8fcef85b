"""L-BFGS: a quasi-Newton method that rebuilds the inverse Hessian from a short history
of steps and gradient changes, with an optional strong-Wolfe line search."""
from __future__ import annotations

import math

import numpy as np

from .. import backend, grad_mode
from ..tensor import Tensor, bump_version
from .optimizer import Optimizer, as_float

__all__ = ["LBFGS"]


def _scalar(value, dtype):
    """A reduction's result as a host NumPy scalar of ``dtype``: the scalar arithmetic of
    the search then rounds as PyTorch's 0-d tensors of the parameter's dtype do."""
    if isinstance(value, Tensor):
        value = value._host()
    elif not isinstance(value, (np.ndarray, np.generic)):
        value = backend.move(value, backend.device_of_array(value), backend.CPU)
    return np.asarray(value, dtype=dtype)[()]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1, g1), (x2, f2, g2), within ``bounds``."""
    if bounds is not None:
        low, high = bounds
    else:
        low, high = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square) if isinstance(d2_square, np.generic) else math.sqrt(d2_square)
        if x1 <= x2:
            position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(position, low), high)
    return (low + high) / 2.0


def _strong_wolfe(evaluate, x, t, d, f, g, gtd, dtype, c1=1e-4, c2=0.9,
                  tolerance_change=1e-9, max_ls=25):
    """A line search along ``d`` from step ``t`` for a point with sufficient decrease
    (``c1``) and curvature (``c2``). Returns (loss, flat gradient, step, evaluations)."""
    xp = backend.xp_of(d)
    d_norm = _scalar(xp.max(xp.abs(d)), dtype)
    g = g.copy()
    f_new, g_new = evaluate(x, t, d)
    evaluations = 1
    gtd_new = _scalar(g_new @ d, dtype)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # bracket an interval that holds a point satisfying the conditions
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        previous = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new.copy(), gtd_new
        f_new, g_new = evaluate(x, t, d)
        evaluations += 1
        gtd_new = _scalar(g_new @ d, dtype)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    # zoom into the bracket
    insufficient_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # keep the trial point away from the bracket's ends
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(x, t, d)
        evaluations += 1
        gtd_new = _scalar(g_new @ d, dtype)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], evaluations


class LBFGS(Optimizer):
    r"""L-BFGS (Nocedal, 1980; after minFunc), as PyTorch implements it.

    ``step(closure)`` runs up to ``max_iter`` iterations (``max_eval`` closure calls,
    default ``max_iter * 5 // 4``): each takes the direction from the last
    ``history_size`` step/gradient-change pairs (two-loop recursion) and moves ``lr``
    along it, or as far as a strong-Wolfe line search finds
    (``line_search_fn='strong_wolfe'``). It stops early when the largest gradient entry
    is at most ``tolerance_grad`` or the step or loss changes by less than
    ``tolerance_change``. The closure must clear the gradients, compute the loss, call
    ``backward()`` and return the loss. All parameters form one group on one device.

    >>> w = ember.tensor([1.5, -0.5], requires_grad=True)
    >>> opt = ember.optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 1) ** 2).sum() + (w[0] * w[1]) ** 2
    ...     loss.backward()
    ...     return loss
    >>> loss = opt.step(closure)
    >>> w.detach()
    tensor([0.6823, 0.6823])
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval=None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn=None) -> None:
        as_float(lr, "lr")  # a Tensor lr stays in the groups, as in PyTorch
        if not 0.0 <= as_float(lr, "lr"):
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"only 'strong_wolfe' is supported as line_search_fn, but got "
                             f"{line_search_fn!r}")
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        devices = {p._device for p in self._params}
        if len(devices) > 1:
            raise RuntimeError("LBFGS needs all parameters on one device, but got "
                               + ", ".join(sorted(str(d) for d in devices)))

    def add_param_group(self, param_group: dict) -> None:
        if getattr(self, "_params", None) is not None:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # ----------------------------------------------------------------- flat views
    def _flat_grad(self):
        xp = backend.xp_of(self._params[0]._data)
        views = [xp.zeros(p._data.size, p._data.dtype) if p._grad is None
                 else p._grad._data.reshape(-1) for p in self._params]
        return xp.concatenate(views)

    def _add_to_params(self, step_size, direction) -> None:
        offset = 0
        for p in self._params:
            size = p._data.size
            p._data += step_size * direction[offset:offset + size].reshape(p._data.shape)
            bump_version(p)
            offset += size

    def _evaluate(self, closure, x, t, d):
        """Loss and flat gradient at ``x + t d``; the parameters are put back to ``x``."""
        self._add_to_params(t, d)
        loss = float(closure())
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p._data[...] = saved
            bump_version(p)
        return loss, flat_grad

    def step(self, closure):
        """Run the iterations of one optimization step; ``closure`` is required. Returns
        the loss of the first closure call."""
        if closure is None:
            raise RuntimeError("LBFGS.step() needs a closure that re-evaluates the model and "
                               "returns the loss")

        def evaluate():
            with grad_mode.enable_grad():
                return closure()

        group = self.param_groups[0]
        lr = as_float(group["lr"], "lr")
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        dtype = self._params[0]._data.dtype
        xp = backend.xp_of(self._params[0]._data)

        def scalar(value):
            return _scalar(value, dtype)

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if scalar(xp.max(xp.abs(flat_grad))) <= tolerance_grad:
            return orig_loss

        d, t = _array(state.get("d")), _number(state.get("t"))
        old_dirs = [_array(v) for v in state.get("old_dirs") or []]
        old_stps = [_array(v) for v in state.get("old_stps") or []]
        ro = [_number(v) for v in state.get("ro") or []]
        H_diag = _number(state.get("H_diag"))
        prev_flat_grad = _array(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # the direction from the two-loop recursion over the history
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = scalar(y @ s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / scalar(y @ y)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = scalar(old_stps[i] @ q) * ro[i]
                    q += (-al[i]) * old_dirs[i]
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = scalar(old_dirs[i] @ r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / scalar(xp.sum(xp.abs(flat_grad)))) * lr
            else:
                t = lr
            gtd = scalar(flat_grad @ d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            evaluations = 0
            if group["line_search_fn"] is not None:
                x_init = [p._data.copy() for p in self._params]

                def along(x, step, direction):
                    return self._evaluate(evaluate, x, step, direction)

                loss, flat_grad, t, evaluations = _strong_wolfe(
                    along, x_init, t, d, loss, flat_grad, gtd, dtype,
                    max_ls=max_eval - current_evals)
                self._add_to_params(t, d)
                opt_cond = scalar(xp.max(xp.abs(flat_grad))) <= tolerance_grad
            else:
                self._add_to_params(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(evaluate())
                    flat_grad = self._flat_grad()
                    opt_cond = scalar(xp.max(xp.abs(flat_grad))) <= tolerance_grad
                    evaluations = 1
            current_evals += evaluations
            state["func_evals"] += evaluations

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if scalar(xp.max(xp.abs(d * t))) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        device = self._params[0]._device
        state["d"] = _tensor(d, device)
        state["t"] = _tensor(t, device)
        state["old_dirs"] = [_tensor(v, device) for v in old_dirs]
        state["old_stps"] = [_tensor(v, device) for v in old_stps]
        state["ro"] = [_tensor(v, device) for v in ro]
        state["H_diag"] = _tensor(H_diag, device)
        state["prev_flat_grad"] = _tensor(prev_flat_grad, device)
        state["prev_loss"] = prev_loss
        if "al" in state:
            state["al"] = [_tensor(v, device) for v in state["al"]]
        return orig_loss


# The state holds Tensors (so it saves and loads like other optimizers' state); the
# iterations work on arrays and host scalars. A NumPy scalar is a reduction's result, a
# 0-d tensor in PyTorch (np.float64 is a float subclass, so it is tested first); plain
# Python numbers (``t = lr``, ``H_diag = 1``) stay numbers, as there.
def _tensor(value, device):
    if isinstance(value, np.generic):
        return Tensor._make(np.asarray(value), backend.CPU, False)
    if value is None or isinstance(value, (int, float, Tensor)):
        return value
    return Tensor._make(value, device, False)


def _array(value):
    return value._data if isinstance(value, Tensor) else value


def _number(value):
    if isinstance(value, Tensor):
        return value._host()[()]
    return value
