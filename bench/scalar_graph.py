"""Scalar graphs: 100 scalar leaves and 5,000 terms ``y = y + a_i * b_i`` (a_i, b_i drawn
from the leaves), built and backpropagated, for ember and PyTorch in the same run.

    python bench/scalar_graph.py [--terms 5000] [--repeats 7] [--threads N]

Every node holds one number, so this measures the graph machinery alone: node creation,
the engine's ordering and gradient routing."""
from __future__ import annotations

import random

import _harness as h

LEAVES = 100


def build_and_backward(leaves, pairs):
    y = leaves[0] * 0.0
    for i, j in pairs:
        y = y + leaves[i] * leaves[j]
    y.backward()


def main() -> None:
    p = h.parser(__doc__.splitlines()[0], repeats=7)
    p.add_argument("--terms", type=int, default=5000)
    args = p.parse_args()
    _, libs = h.load(args)
    rng = random.Random(0)
    values = [rng.uniform(-1, 1) for _ in range(LEAVES)]
    pairs = [(rng.randrange(LEAVES), rng.randrange(LEAVES)) for _ in range(args.terms)]
    leaves = {name: [lib.tensor(v, requires_grad=True) for v in values]
              for name, lib in libs.items()}

    def case(name):
        def step():
            for leaf in leaves[name]:
                leaf.grad = None
            build_and_backward(leaves[name], pairs)
        return {"scalar_graph": h.Case(step)}

    cases = {name: case(name) for name in libs}
    h.main("scalar_graph", f"{LEAVES} scalar leaves, {args.terms} terms y = y + a_i * b_i, "
           "build + backward", args, cases)
    if "torch" in leaves:  # the gradients must agree, or the timing means nothing
        for a, b in zip(leaves["ember"], leaves["torch"]):
            assert abs(a.grad.item() - b.grad.item()) <= 1e-4 * (1 + abs(b.grad.item()))


if __name__ == "__main__":
    main()
