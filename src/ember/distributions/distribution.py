"""The base class of every distribution: shapes, argument validation, sampling API."""
from __future__ import annotations

import warnings

import ember

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _size(shape) -> ember.Size:
    if isinstance(shape, ember.Size):
        return shape
    if isinstance(shape, int):
        return ember.Size((shape,))
    return ember.Size(tuple(int(s) for s in shape))


class Distribution:
    """A probability distribution over values of shape ``batch_shape + event_shape``:
    ``batch_shape`` indexes independent (not identically parameterized) distributions,
    ``event_shape`` is the shape of one draw.

    With ``validate_args`` (on by default, as in PyTorch; off under ``python -O`` or
    ``Distribution.set_default_validate_args(False)``) the parameters are checked against
    ``arg_constraints`` when the distribution is made, and values passed to ``log_prob``,
    ``cdf`` against ``support``: a ValueError names what is outside.

    >>> from ember.distributions import Normal
    >>> Normal(ember.tensor([0.0]), ember.tensor([-1.0]))
    Traceback (most recent call last):
    ...
    ValueError: Expected parameter scale (Tensor of shape (1,)) of distribution Normal(loc: tensor([0.]), scale: tensor([-1.])) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values:
    tensor([-1.])
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions made from now on (unless
        they pass ``validate_args``)."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args expects True or False, got {value!r}")
        Distribution._validate_args = bool(value)

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked on its own
                if param not in self.__dict__ and isinstance(
                        getattr(type(self), param, None), lazy_property):
                    continue  # not made yet: made from a checked parameter
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A distribution with its parameters expanded (as views) to ``batch_shape``; the
        arguments are not checked again."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> ember.Size:
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> ember.Size:
        """The shape of one draw (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """{parameter name: Constraint} that ``validate_args`` checks."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint that values of this distribution satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A draw of shape ``sample_shape + batch_shape + event_shape``, cut from the graph."""
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterized draw: a differentiable function of the parameters, so
        gradients flow from the sample back to them (where ``has_rsample``)."""
        raise NotImplementedError(f"{self.__class__.__name__} has no reparameterized "
                                  "sampler (has_rsample is False); use sample()")

    def sample_n(self, n: int):
        """``sample((n,))`` (deprecated in PyTorch)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(ember.Size((n,)))

    def log_prob(self, value):
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse of the cdf, at probabilities ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        """Every value of a discrete distribution along dim 0:
        ``(cardinality,) + batch_shape + event_shape`` (batch dims of size 1 when
        ``expand=False``)."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self):
        """``exp(entropy())``."""
        return ember.exp(self.entropy())

    def _extended_shape(self, sample_shape=()) -> ember.Size:
        return ember.Size(_size(sample_shape) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value) -> None:
        """Check that ``value`` broadcasts with ``batch_shape + event_shape`` and lies in
        the support (ValueError otherwise)."""
        if not isinstance(value, ember.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_start:]) != tuple(self._event_shape) or event_start < 0:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self._event_shape}.")
        actual, expected = value.shape, self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_probs_logits(self, new, shape) -> None:
        """Give an expanded copy ``new`` this one's probs and/or logits (whichever it holds),
        expanded to ``shape``."""
        for name in ("probs", "logits"):
            if name in self.__dict__:
                value = self.__dict__[name].expand(shape)
                setattr(new, name, value)
                if "_param" in self.__dict__:
                    new._param = value

    def _finish_expand(self, new, batch_shape, cls):
        """Initialize an expanded copy ``new`` (no validation) with this one's setting."""
        super(cls, new).__init__(batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        parts = []
        for name in names:
            value = self.__dict__[name]
            shown = value if value.numel() == 1 else value.size()
            parts.append(f"{name}: {shown}")
        return f"{self.__class__.__name__}({', '.join(parts)})"
