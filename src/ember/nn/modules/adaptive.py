"""AdaptiveLogSoftmaxWithLoss: the efficient softmax of Grave et al. (2016) for large
vocabularies, with frequent classes in a head and rare ones in smaller tail clusters."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ... import creation
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _ember():
    import ember

    return ember


class AdaptiveLogSoftmaxWithLoss(Module):
    """Classes [0, cutoffs[0]) are scored by the head, which also scores one entry per
    tail cluster; class c in cluster i has log p = log p_head(cluster i) + log
    p_cluster_i(c). Cluster i projects the input to in_features // div_value^(i+1)
    dimensions first. ``forward(input, target)`` returns (output = log p(target) per row,
    loss = mean of -output); each row is scored only by the head and its own cluster:
    O(N (head + d_i * cluster_i)) instead of O(N n_classes)."""

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        factory = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            out = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, out, bias=False, **factory)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for cluster in self.tail:
            for layer in cluster:
                layer.reset_parameters()

    def forward(self, input, target):
        ember = _ember()
        batched = target.dim() > 0
        if batched:
            if input.dim() != 2 or input.shape[0] != target.shape[0]:
                raise RuntimeError("1D target tensor expects 2D input tensors, of the same "
                                   "batch size, but found inputs of size "
                                   f"{list(input.shape)} and {list(target.shape)}")
        else:
            if input.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found "
                                   f"inputs of size {list(input.shape)}")
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        labels = np.asarray(target.cpu().numpy(), dtype=np.int64)
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{labels.min()}, {labels.max()}] were found. ")
        head_index = labels.copy()
        output = creation.zeros(labels.shape[0], dtype=input.dtype, device=input.device)
        bounds = self.cutoffs
        for i in range(self.n_clusters):
            low, high = bounds[i], bounds[i + 1]
            rows = np.nonzero((labels >= low) & (labels < high))[0]
            if rows.size == 0:
                continue
            head_index[rows] = self.shortlist_size + i
            row_tensor = ember.tensor(rows, device=input.device)
            local = ember.tensor(labels[rows] - low, device=input.device).unsqueeze(1)
            cluster_logprob = F.log_softmax(self.tail[i](input.index_select(0, row_tensor)),
                                            dim=1)
            output.index_copy_(0, row_tensor, cluster_logprob.gather(1, local).squeeze(1))
        head_logprob = F.log_softmax(self.head(input), dim=1)
        gather = ember.tensor(head_index, device=input.device).unsqueeze(1)
        output = output + head_logprob.gather(1, gather).squeeze()  # (as PyTorch's)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _full_log_prob(self, input, head_output):
        ember = _ember()
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, cluster in enumerate(self.tail):
            cluster_logprob = F.log_softmax(cluster(input), dim=1)
            index = self.shortlist_size + i
            parts.append(cluster_logprob + head_logprob[:, index:index + 1])
        return ember.cat(parts, 1)

    def log_prob(self, input):
        """log p(class) for every class: (N, n_classes) (or (n_classes,) for 1-D input)."""
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        out = self._full_log_prob(input, self.head(input))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row: argmax of log_prob."""
        return self.log_prob(input).argmax(dim=-1)
