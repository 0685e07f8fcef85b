# The two commands of the README, each working on a fresh machine with Python 3.10+.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: demo test test-oracle test-standin lint test-gpu gpu-check bench bench-gpu docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[dev,examples,docs,benchmark]'
	touch $(STAMP)

# The tour needs only the light extras, so a fresh clone starts it quickly.
$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[demo]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(PY) -m ember

test: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -n 2 --dist loadgroup

# ruff (lint and import order, 100 columns) everywhere; mypy on the engine and the backend.
lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench examples
	$(VENV)/bin/mypy

# The suite with PyTorch 2.13.0 (the only version the oracle tests compare with) in .venv,
# so the oracle tests run instead of skipping. For the CPU-only wheel:
# PIP_INDEX_URL=https://download.pytorch.org/whl/cpu make test-oracle
test-oracle: $(STAMP)
	$(PY) -m pip install --quiet torch==2.13.0
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -n 2 --dist loadgroup

# On a machine with a GPU and CuPy already installed (no network needed).
test-gpu:
	PYTHONPATH=src python3 -m pytest -q -p no:cacheprovider

# One short pass for a lent GPU machine (under 8 minutes): the suite's CUDA cases, the
# tutorial and examples on cuda, the NCCL smoke test and the GPU benchmarks, then a summary.
gpu-check:
	PYTHONPATH=src python3 tools/gpu_check.py

# Every CUDA case of the suite (the op table's included) on the strict CuPy stand-in
# (NumPy underneath, NumPy conversion refused): CUDA paths that leak NumPy fail on a CPU.
test-standin: $(STAMP)
	EMBER_TEST_STANDIN=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2 \
		-p no:cacheprovider -k cuda tests

# Side-by-side with PyTorch (installed in .venv by .ci/run, or pip install torch==2.13.0):
# every bench/ workload at the default thread count and with one thread, written to
# docs/benchmarks.md and docs/images/benchmarks.png.
bench: $(STAMP)
	PYTHONPATH=src $(PY) bench/run_all.py

# The same on a machine with a GPU, CuPy and PyTorch with CUDA: docs/benchmarks-gpu.md,
# then the CPU-vs-GPU sweep of ember.utils.benchmark.
bench-gpu:
	PYTHONPATH=src python3 bench/run_all.py --device cuda
	PYTHONPATH=src python3 -m ember.utils.benchmark matmul --include-transfer

# The site with the API reference from the docstrings (build/site); warnings fail it.
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --quiet

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
