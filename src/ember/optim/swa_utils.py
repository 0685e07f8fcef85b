"""Weight averaging: stochastic weight averaging (SWA) and exponential moving averages
(EMA) of a model's parameters, the SWA learning-rate schedule, and ``update_bn`` to
recompute batch-norm statistics for the averaged weights.

>>> model = ember.nn.Linear(2, 1)
>>> swa_model = ember.optim.swa_utils.AveragedModel(model)
>>> opt = ember.optim.SGD(model.parameters(), lr=0.1)
>>> for _ in range(3):
...     opt.zero_grad()
...     model(ember.ones(4, 2)).sum().backward()
...     opt.step()
...     swa_model.update_parameters(model)
>>> int(swa_model.n_averaged)
3
"""
from __future__ import annotations

import copy
import itertools
import math
import warnings

from .. import creation, dtypes, grad_mode, nn
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _per_group

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999):
    """An in-place EMA update for lists of tensors, for ``AveragedModel(multi_avg_fn=)``:
    ``ema <- decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _num_averaged) -> None:
        with grad_mode.no_grad():
            if ema_param_list[0].is_floating_point():
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running-mean update for lists of tensors, for
    ``AveragedModel(multi_avg_fn=)``: ``avg <- avg + (current - avg) / (n + 1)``."""

    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        with grad_mode.no_grad():
            if averaged_param_list[0].is_floating_point():
                # with a tensor count the weight is a float32 tensor, as in PyTorch
                weight = 1 / (num_averaged + 1)
                weight = float(weight) if isinstance(weight, Tensor) else weight
                for p_avg, p_model in zip(averaged_param_list, current_param_list,
                                          strict=True):
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in zip(averaged_param_list, current_param_list,
                                          strict=True):
                    p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999):
    """An EMA of one tensor, for ``AveragedModel(avg_fn=)``: returns
    ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged):
        with grad_mode.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """A running mean of one tensor, for ``AveragedModel(avg_fn=)``: returns
    ``avg + (current - avg) / (num_averaged + 1)``."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged):
        with grad_mode.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(nn.Module):
    r"""A copy of ``model`` whose parameters are the average of the ones it is given.

    ``update_parameters(model)`` folds the model's current parameters in: the first call
    copies them, later ones average with ``avg_fn(averaged, current, n_averaged)`` (returns
    the new value) or ``multi_avg_fn(averaged_list, current_list, n_averaged)`` (updates in
    place); the default is the running mean (SWA). Buffers are copied from the model, or
    averaged too with ``use_buffers=True``. Calling the averaged model calls the copy.

    >>> model = ember.nn.Linear(3, 1)
    >>> ema = ember.optim.swa_utils.AveragedModel(
    ...     model, multi_avg_fn=ember.optim.swa_utils.get_ema_multi_avg_fn(0.9))
    >>> ema.update_parameters(model)
    >>> ema(ember.zeros(2, 3)).shape
    ember.Size([2, 1])
    """

    def __init__(self, model: nn.Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged",
                             creation.tensor(0, dtype=dtypes.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Run the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: nn.Module) -> None:
        """Fold ``model``'s parameters (and, with ``use_buffers``, buffers) into the
        average."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = int(self.n_averaged) == 0
        with grad_mode.no_grad():
            for p_avg, p_model in zip(mine, theirs):
                value = p_model.detach().to(p_avg.device)
                averaged.append(p_avg.detach())
                current.append(value)
                if first:
                    p_avg.detach().copy_(value)
            if not first:
                self._average(averaged, current)
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers(),
                                          strict=True):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            self.n_averaged += 1

    def _average(self, averaged: list, current: list) -> None:
        if self.avg_fn is not None and self.multi_avg_fn is None:
            for p_avg, p_model in zip(averaged, current, strict=True):
                n = self.n_averaged.to(p_avg.device)
                p_avg.copy_(self.avg_fn(p_avg, p_model, n))
            return
        groups: dict = {}
        for p_avg, p_model in zip(averaged, current, strict=True):
            lists = groups.setdefault((p_avg.device, p_avg.dtype), ([], []))
            lists[0].append(p_avg)
            lists[1].append(p_model)
        for (device, _), (avg_list, model_list) in groups.items():
            n = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(avg_list, model_list, n)
            elif device.type == "cuda":  # PyTorch's fused (lerp) path on GPUs
                get_swa_multi_avg_fn()(avg_list, model_list, n)
            else:
                swa = get_swa_avg_fn()
                for p_avg, p_model in zip(avg_list, model_list, strict=True):
                    p_avg.copy_(swa(p_avg, p_model, n))


def update_bn(loader, model: nn.Module, device=None) -> None:
    """Recompute the running statistics of ``model``'s batch norms with one pass over
    ``loader`` (batches, or tuples/lists whose first item is the input): the statistics
    are reset and averaged over the whole pass (``momentum=None``); each module's
    momentum and the model's training mode are restored afterwards.

    >>> model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.BatchNorm1d(2))
    >>> update_bn([ember.ones(4, 2), ember.zeros(4, 2)], model)
    >>> int(model[1].num_batches_tracked)
    2
    """
    batch_norm = nn.modules.batchnorm._BatchNorm  # PyTorch's documented base class path
    momenta = {}
    for module in model.modules():
        if isinstance(module, batch_norm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with grad_mode.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    r"""Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` steps
    (``anneal_strategy`` ``'cos'`` or ``'linear'``), then hold it there.

    >>> w = ember.tensor([1.0], requires_grad=True)
    >>> opt = ember.optim.SGD([w], lr=1.0)
    >>> sched = ember.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2,
    ...                                     anneal_strategy="linear")
    >>> for _ in range(3):
    ...     opt.step(); sched.step()
    >>> round(sched.get_last_lr()[0], 4)
    0.1
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _per_group("swa_lr", optimizer, swa_lr)
        for value, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" \
            else self._linear_anneal

    def get_lr(self) -> list:
        """The next learning rates: the current ones moved toward ``swa_lr``."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please "
                          "use `get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def state_dict(self) -> dict:
        """The scheduler's attributes except the optimizer and the anneal function."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
