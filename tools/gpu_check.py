"""One prepared pass for a GPU machine (``make gpu-check``): the fused elementwise formulas
(each compiled by cupy.fuse and compared with the NumPy lane), the suite's CUDA cases, the
tutorial and the examples on cuda, the NCCL smoke test, and the GPU benchmarks, each with
its own time limit (under 8 minutes in all), then a summary to paste into a note.

    PYTHONPATH=src python3 tools/gpu_check.py [--budget 470] [--only NAME ...]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

PY = sys.executable
PYTEST = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
# (name, command, seconds): the limits add up to under 8 minutes
STEPS = [
    # first, so the suite finds the fused kernels compiled (CuPy keeps them on disk)
    ("fused formulas (cupy.fuse) against NumPy",
     PYTEST + ["-n", "8", "-k", "cuda", "tests/backend/test_fused.py",
               "tests/optim/test_fused_steps.py"], 50),
    ("suite: CUDA cases", PYTEST + ["-n", "8", "-k", "cuda", "tests", "-x", "--maxfail=30"],
     165),
    ("tutorial and tour on cuda", PYTEST + ["tests/test_tutorial.py", "tests/test_tour.py"], 60),
    ("example: train_digits", [PY, "examples/train_digits.py", "--device", "cuda",
                               "--epochs", "2"], 40),
    ("example: char_lm", [PY, "examples/char_lm.py", "--device", "cuda", "--steps", "40"], 40),
    ("NCCL smoke (2 processes, 1 GPU)", PYTEST + ["tests/distributed/test_nccl.py"], 40),
    ("bench: ops overhead", [PY, "bench/ops_overhead.py", "--device", "cuda",
                             "--repeats", "100"], 25),
    ("bench: CUDA graph replay", [PY, "bench/ops_overhead.py", "--device", "cuda",
                                  "--against-eager", "--mode", "reduce-overhead",
                                  "--repeats", "30"], 25),
    ("bench: MLP training", [PY, "bench/mlp_train.py", "--device", "cuda", "--steps", "200"],
     25),
]


def _gpu_line() -> str:
    try:
        import ember

        if not ember.cuda.is_available():
            return "no GPU visible to ember (ember.cuda.is_available() is False)"
        import cupy  # the report names the versions it ran with

        return (f"{ember.cuda.get_device_name()} x{ember.cuda.device_count()}, "
                f"CuPy {cupy.__version__}, CUDA runtime "
                f"{cupy.cuda.runtime.runtimeGetVersion()}")
    except Exception as error:  # the summary still prints
        return f"GPU query failed: {error}"


def _tail(text: str, lines: int) -> list[str]:
    keep = [line for line in text.splitlines() if line.strip()]
    failed = [line for line in keep if line.startswith(("FAILED", "ERROR"))]
    return (failed[:15] + keep[-lines:]) if failed else keep[-lines:]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=470.0,
                        help="seconds for all steps together (default 470)")
    parser.add_argument("--only", nargs="*", help="run the steps whose names contain these")
    args = parser.parse_args(argv)
    env = dict(os.environ, PYTHONPATH="src" + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("EMBER_TEST_STANDIN", None)
    start = time.monotonic()
    results = []
    for name, command, limit in STEPS:
        if args.only and not any(word in name for word in args.only):
            continue
        left = args.budget - (time.monotonic() - start)
        if left < 5:
            results.append((name, "not run (time budget spent)", 0.0, []))
            continue
        began = time.monotonic()
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True,
                                  timeout=min(limit, left))
            output = done.stdout + done.stderr
            status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
            if status == "ok" and " skipped" in output and " passed" not in output:
                status = "SKIPPED (every test skipped: see why below)"
        except subprocess.TimeoutExpired as error:
            status = f"TIMED OUT after {min(limit, left):.0f} s"
            output = (error.stdout or b"").decode(errors="replace") if isinstance(
                error.stdout, bytes) else (error.stdout or "")
        results.append((name, status, time.monotonic() - began, _tail(output, 4)))
        print(f"[{status}] {name} ({results[-1][2]:.0f} s)", flush=True)
    total = time.monotonic() - start
    print("\n## gpu-check summary\n")
    print(f"- machine: {_gpu_line()}")
    print(f"- total: {total:.0f} s\n")
    print("| step | result | seconds |\n|---|---|---|")
    for name, status, seconds, _ in results:
        print(f"| {name} | {status} | {seconds:.0f} |")
    for name, status, _, tail in results:
        print(f"\n### {name}: {status}\n```")
        print("\n".join(tail))
        print("```")
    return 0 if all(r[1] == "ok" for r in results) else 1  # a skip is not a pass


if __name__ == "__main__":
    sys.exit(main())
