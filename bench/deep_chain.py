"""A deep graph: 152 residual blocks ``x = x + relu(linear(x))`` of width 256, batch 32,
forward and backward; time per pass, and peak memory of one pass. ember and PyTorch in the
same run, same weights and data.

    python bench/deep_chain.py [--repeats 7] [--threads 1]

Peak memory is measured alike for both libraries, each in a fresh process: the growth of
the resident set (peak RSS less the RSS once the model and data exist) over the first
pass of the full model, after a pass of a 2-block model has paid the first-call costs.
ember's own peak from tracemalloc (NumPy reports its buffers to it) is given too."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import _harness as h

BLOCKS, WIDTH, BATCH = 152, 256, 32


def model(lib, blocks=BLOCKS):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(WIDTH, WIDTH)

        def forward(self, x):
            return x + lib.relu(self.linear(x)) * 0.1

    return nn.Sequential(*[Block() for _ in range(blocks)])


def case_for(lib, np, blocks=BLOCKS, device="cpu"):
    rng = np.random.default_rng(0)
    net = model(lib, blocks)
    with lib.no_grad():
        for p in net.parameters():  # the same weights in both libraries
            p.copy_(lib.tensor((rng.standard_normal(tuple(p.shape)) * 0.05)
                               .astype(np.float32)))
    net = net.to(device)
    x = lib.tensor(rng.standard_normal((BATCH, WIDTH)).astype(np.float32), device=device,
                   requires_grad=True)

    def step():
        net.zero_grad()
        x.grad = None
        net(x).sum().backward()

    return h.Case(step), net


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    """This address space's peak RSS (VmHWM). Not ru_maxrss: that one carries over the
    parent's peak through fork and exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def memory(library: str) -> dict:
    """Peak memory of one pass for one library, measured in this (fresh) process."""
    import numpy as np
    lib = __import__(library)
    case_for(lib, np, blocks=2)[0].step()  # first-call costs: lazy imports, kernels, pools
    case, _ = case_for(lib, np)
    base = _rss()  # the model, the data and the library's own start-up
    case.step()
    peak = _peak_rss()
    out = {"rss_growth_mb": max(peak - base, 0) / 2**20}
    if library == "ember":
        import tracemalloc
        tracemalloc.start()
        case.step()
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return out


def main() -> None:
    p = h.parser(__doc__.splitlines()[0], repeats=7)
    p.add_argument("--memory", help="measure one library's peak memory (used internally)")
    args = p.parse_args()
    if args.memory:
        print(json.dumps(memory(args.memory)))
        return
    np, libs = h.load(args)
    cases, nets = {}, {}
    for name, lib in libs.items():
        cases[name], nets[name] = case_for(lib, np, device=args.device)
        cases[name] = {"deep_chain fwd+bwd": cases[name]}
    extra: dict = {name: {} for name in libs}
    for name in libs if args.device == "cpu" else ():  # host memory only
        result = subprocess.run([sys.executable, __file__, "--memory", name],
                                capture_output=True, text=True, check=True)
        extra[name] = json.loads(result.stdout.strip().splitlines()[-1])
    for name in libs:
        cases[name]["deep_chain fwd+bwd"].extra = extra[name]
    rows = h.main("deep_chain", f"{BLOCKS} residual blocks, width {WIDTH}, batch {BATCH}, "
                  "forward+backward", args, cases, extra=extra,
                  sync=h.sync_for(libs, args.device))
    if args.device == "cpu":
        print("\npeak memory of one pass (RSS growth, MiB): "
              + ", ".join(f"{n} {extra[n]['rss_growth_mb']:.1f}" for n in libs)
              + f"; ember tracemalloc peak {extra['ember']['tracemalloc_peak_mb']:.1f} MiB")
    if "torch" in nets:  # same weights: the gradients must agree
        e = next(iter(nets["ember"].parameters())).grad.cpu().numpy()
        t = next(iter(nets["torch"].parameters())).grad.cpu().numpy()
        np.testing.assert_allclose(e, t, rtol=1e-3, atol=1e-4)
    return rows


if __name__ == "__main__":
    main()
