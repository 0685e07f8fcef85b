"""Exponential families: p(x; theta) = h(x) exp(<t(x), theta> - F(theta))."""
from __future__ import annotations

import ember

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of the form ``p(x; theta) = h(x) exp(<t(x), theta> - F(theta))``,
    with natural parameters ``theta`` (``_natural_params``), log normalizer ``F``
    (``_log_normalizer``) and ``E[log h(x)]`` (``_mean_carrier_measure``).

    Its entropy, ``F(theta) - <theta, grad F(theta)> - E[log h(x)]``, and the KL
    divergence between two members of one family (a Bregman divergence of ``F``) follow
    from these by automatic differentiation; subclasses with closed forms override them.
    """

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self):
        """``F(theta) - <theta, grad F(theta)> - E[log h(x)]``, via autograd."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with ember.enable_grad():
            log_normalizer = self._log_normalizer(*params)
            gradients = ember.autograd.grad(log_normalizer.sum(), params, create_graph=True)
        result = result + log_normalizer
        for param, gradient in zip(params, gradients):
            result = result - (param * gradient).reshape(
                tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
