"""Run every workload at the default thread count and with one thread, then write
docs/benchmarks.md (ratio table, machine facts, targets, chart) and
docs/images/benchmarks.png. ``make bench`` runs this; ``make bench-gpu`` runs it with
``--device cuda`` into docs/benchmarks-gpu.md.

    python bench/run_all.py [--device cuda] [--only cnn_train,lstm] [--quick]

Everything below the line ``<!-- end of generated section -->`` in the page is kept."""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MARKER = "<!-- end of generated section -->"

# (script, extra arguments); repeats sized so the whole run stays within minutes on 2 cores
WORKLOADS = [
    ("ops_overhead", ["--repeats", "15"]),
    ("scalar_graph", ["--repeats", "7"]),
    ("mlp_train", ["--repeats", "7"]),
    ("cnn_train", ["--repeats", "7"]),
    ("deep_chain", ["--repeats", "7"]),
    ("matmul", ["--repeats", "7"]),
    ("transformer_block", ["--repeats", "5"]),
    ("lstm", ["--repeats", "5"]),
    # ember.compile'd against PyTorch eager and ember eager, in one run
    ("ops_overhead", ["--repeats", "15", "--against-eager"]),
    ("scalar_graph", ["--repeats", "7", "--against-eager"]),
    ("mlp_train", ["--repeats", "7", "--against-eager"]),
]
COMPILED = " (compiled)"

# case -> (comparison, bound, what it says), on the ratio the table shows at default threads
TARGETS = {
    "chain no_grad (per op)": ("<=", 0.6, "time"),
    "chain fwd+bwd (per op)": ("<=", 0.5, "time"),
    "(x * 0.5).sum().backward()": ("<=", 1.0, "time"),
    "scalar_graph": ("<=", 0.7, "time"),
    "mlp_train": (">=", 1.0, "steps/s"),
    "cnn_train": (">=", 0.6, "steps/s"),
    "conv2d fwd+bwd": ("<=", 1.5, "time"),
    "deep_chain fwd+bwd": ("<=", 1.0, "time"),
    "deep_chain peak memory": ("<=", 1.2, "memory"),
    "matmul 1024": (">=", 0.95, "GFLOP/s vs NumPy"),
    "matmul 2048": (">=", 0.95, "GFLOP/s vs NumPy"),
    "transformer_block fwd+bwd": ("<=", 1.25, "time (>= 0.8x speed)"),
    "lstm fwd+bwd": ("<=", 1.25, "time (>= 0.8x speed)"),
    "chain no_grad (per op) (compiled)": ("<=", 0.25, "time"),
    "chain fwd+bwd (per op) (compiled)": ("<=", 0.25, "time"),
    "(x * 0.5).sum().backward() (compiled)": ("<=", 0.25, "time"),
    "scalar_graph (compiled)": ("<=", 0.25, "time"),
    "mlp_train compiled / ember eager": (">=", 1.2, "steps/s vs ember eager"),
}


def run(script: str, extra: list, threads: int, device: str, timeout: float) -> dict | None:
    command = [sys.executable, str(HERE / f"{script}.py"), "--json", "--threads",
               str(threads), "--device", device] + extra
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        print(f"  {script} (threads {threads}) timed out after {timeout:.0f} s")
        return None
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("BENCH-JSON ")]
    if done.returncode or not lines:
        print(f"  {script} (threads {threads}) failed:\n{done.stderr[-2000:]}")
        return None
    return json.loads(lines[-1][len("BENCH-JSON "):])


def machine() -> dict:
    facts = {"python": platform.python_version(), "cores": os.cpu_count(),
             "platform": platform.platform()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu"] = line.split(":", 1)[1].strip()
                break
        flags = Path("/proc/cpuinfo").read_text()
        facts["simd"] = ", ".join(f for f in ("avx512f", "avx2", "fma") if f" {f}" in flags)
    except OSError:
        facts["cpu"] = platform.processor() or "unknown"
    import numpy
    facts["numpy"] = numpy.__version__
    try:
        from threadpoolctl import threadpool_info
        facts["blas"] = [f"{i.get('internal_api')} {i.get('version')} "
                         f"({i.get('architecture', '?')} kernels, {i.get('num_threads')} threads)"
                         for i in threadpool_info() if i.get("user_api") == "blas"]
    except ImportError:
        facts["blas"] = ["unknown (pip install threadpoolctl to name it)"]
    try:
        import torch
        facts["torch"] = f"{torch.__version__} ({torch.get_num_threads()} threads by default)"
    except ImportError:
        facts["torch"] = "not installed"
    return facts


def ratios(results: list) -> dict:
    """{case: {threads: (ratio, baseline)}} including deep_chain's peak memory."""
    out: dict = {}
    for result in results:
        compiled = "(ember compiled)" in result["workload"]
        for row in result["rows"]:
            case = row["case"] + (COMPILED if compiled else "")
            if "ratio" in row and not (compiled and row["case"] == "mlp_train"):
                out.setdefault(case, {})[result["threads"]] = (row["ratio"], row["baseline"])
            if compiled and row["case"] == "mlp_train" and "ratio_eager" in row:
                out.setdefault("mlp_train compiled / ember eager", {})[result["threads"]] = (
                    row["ratio_eager"], "ember eager")
            mem_e = row.get("ember", {}).get("rss_growth_mb")
            mem_t = row.get("torch", {}).get("rss_growth_mb")
            if mem_e is not None and mem_t:
                out.setdefault("deep_chain peak memory", {})[result["threads"]] = (
                    mem_e / mem_t, "torch")
    return out


def speed(case: str, ratio: float) -> float:
    """ember's speed relative to the baseline (above 1: ember faster), for the chart."""
    comparison = TARGETS.get(case, ("<=",))[0]
    return ratio if comparison == ">=" else 1.0 / ratio


def chart(table: dict, path: Path, device: str) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("  no chart: pip install matplotlib")
        return False
    cases = list(table)
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(cases) + 1.2))
    height = 0.38
    for i, (threads, label) in enumerate(((0, "default threads"), (1, "1 thread"))):
        values = [speed(c, table[c][threads][0]) if threads in table[c] else 0 for c in cases]
        ax.barh([k + (i - 0.5) * height for k in range(len(cases))], values, height,
                label=label)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(cases)), cases)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("ember relative to PyTorch (NumPy for matmul); > 1 is better for ember")
    ax.set_title(f"ember vs PyTorch ({device})")
    ax.legend(loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def page(results: list, facts: dict, device: str, image: str, seconds: float) -> str:
    table = ratios(results)
    lines = [f"# Benchmarks{' (GPU)' if device != 'cpu' else ''}", "",
             "Generated by `make bench" + ("-gpu" if device != "cpu" else "") + "` "
             f"(bench/run_all.py, {seconds / 60:.1f} minutes). Each workload is one script in "
             "bench/ that times ember and PyTorch in the same process, on the same data, "
             "interleaved after a warm-up, over several repeats. Ratios are ember / PyTorch "
             "(ember / NumPy for matmul) of the figure named in the last column: for times "
             "below 1 is better for ember, for rates and GFLOP/s above 1 is.", "",
             "| case | default threads | 1 thread | measure | target (default threads) | met |",
             "|---|---|---|---|---|---|"]
    for case, by_threads in table.items():
        cells = [f"{by_threads[t][0]:.2f}x" if t in by_threads else "-" for t in (0, 1)]
        target = TARGETS.get(case)
        if target and 0 in by_threads:
            comparison, bound, measure = target
            value = by_threads[0][0]
            met = value >= bound if comparison == ">=" else value <= bound
            goal, verdict = f"{comparison} {bound}x", "yes" if met else "**no**"
        else:
            measure, goal, verdict = "time", "-", "-"
        lines.append(f"| {case} | {cells[0]} | {cells[1]} | {measure} | {goal} | {verdict} |")
    lines += ["", f"![ember relative to PyTorch]({image})", "", "Machine:", ""]
    lines.append(f"- CPU: {facts.get('cpu', '?')}, {facts['cores']} cores"
                 + (f" ({facts['simd']})" if facts.get("simd") else ""))
    lines.append(f"- NumPy {facts['numpy']}; BLAS: {'; '.join(facts['blas'])}")
    lines.append(f"- PyTorch {facts['torch']}; Python {facts['python']}")
    lines.append("- threads: 'default' leaves BLAS and PyTorch at their defaults; '1 thread' "
                 "sets OMP/OPENBLAS/MKL_NUM_THREADS=1 before NumPy loads and "
                 "torch.set_num_threads(1)")
    lines.append("- garbage collection: the harness freezes the import-time heap (`gc.freeze()` "
                 "after the imports), so that PyTorch's ~145,000 import-time objects, which "
                 "share the process, do not make each of Python's full collections during "
                 "ember's timings cost ~100 ms; the objects the workloads make are collected "
                 "as usual (`--no-gc-freeze` turns this off)")
    lines += ["", "Absolute figures, median (± half the interquartile range):", ""]
    for result in results:
        threads = result["threads"] or "default"
        lines.append(f"- **{result['workload']}** ({result['description']}; threads "
                     f"{threads}): " + "; ".join(_absolute(row) for row in result["rows"]))
    return "\n".join(lines) + "\n"


def _absolute(row) -> str:
    parts = []
    for lib in ("ember", "ember eager", "torch", "numpy"):
        if lib in row:
            r = row[lib]
            if row["kind"] == "rate":
                figure = f"{r['rate']:.4g} {row['unit']}/s"
            elif row["unit"] != "steps":
                figure = f"{1e6 / r['rate']:.3g} µs/{row['unit'].rstrip('s')}"
            else:
                figure = f"{r['median_s'] * 1e3:.3g} ms"
            memory = (f", {r['rss_growth_mb']:.1f} MiB peak" if "rss_growth_mb" in r else "")
            parts.append(f"{lib} {figure} (±{r['spread'] * 50:.0f}%){memory}")
    return f"{row['case']}: " + ", ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--only", help="comma-separated workloads (default: all)")
    parser.add_argument("--quick", action="store_true", help="2 repeats each (a smoke run)")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per script")
    parser.add_argument("--output", help="the page to write (default docs/benchmarks.md, "
                        "docs/benchmarks-gpu.md with a GPU)")
    args = parser.parse_args()
    gpu = args.device != "cpu"
    output = Path(args.output) if args.output else ROOT / "docs" / (
        "benchmarks-gpu.md" if gpu else "benchmarks.md")
    image_name = "benchmarks-gpu.png" if gpu else "benchmarks.png"
    only = set(args.only.split(",")) if args.only else None
    start = time.perf_counter()
    results = []
    for script, extra in WORKLOADS:
        if only and script not in only:
            continue
        if args.quick:  # (the flags other than the repeats stay)
            extra = ["--repeats", "2", "--warmup", "1"] + [
                a for i, a in enumerate(extra) if a != "--repeats" and
                (i == 0 or extra[i - 1] != "--repeats")]
        if gpu and script == "ops_overhead" and "--against-eager" in extra:
            extra = extra + ["--mode", "reduce-overhead"]  # the replay as a CUDA graph
        for threads in ((0,) if gpu else (0, 1)):
            print(f"{script}, threads {threads or 'default'}", flush=True)
            result = run(script, extra, threads, args.device, args.timeout)
            if result:
                results.append(result)
    seconds = time.perf_counter() - start
    drawn = chart(ratios(results), output.parent / "images" / image_name, args.device)
    text = page(results, machine(), args.device, f"images/{image_name}" if drawn else "",
                seconds)
    kept = ""
    if output.exists() and MARKER in output.read_text():
        kept = output.read_text().split(MARKER, 1)[1]
    output.write_text(text + "\n" + MARKER + kept)
    print(f"wrote {output} in {seconds:.0f} s")


if __name__ == "__main__":
    main()
