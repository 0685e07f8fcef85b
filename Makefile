# The two commands of the README, each working on a fresh machine with Python 3.10+.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-oracle lint test-gpu gpu-check bench bench-gpu docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[dev,examples,docs,benchmark]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m ember

test: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -n 2

# ruff (lint and import order, 100 columns) everywhere; mypy on the engine and the backend.
lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench examples
	$(VENV)/bin/mypy

# The suite with PyTorch 2.13.0 (the only version the oracle tests compare with) in .venv,
# so the oracle tests run instead of skipping. For the CPU-only wheel:
# PIP_INDEX_URL=https://download.pytorch.org/whl/cpu make test-oracle
test-oracle: $(STAMP)
	$(PY) -m pip install --quiet torch==2.13.0
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -n 2

# On a machine with a GPU and CuPy already installed (no network needed).
test-gpu:
	PYTHONPATH=src python3 -m pytest -q -p no:cacheprovider

# One short pass for a lent GPU machine: every CUDA case of the suite (op table included),
# then the GPU benchmarks.
gpu-check:
	PYTHONPATH=src python3 -m pytest -q -p no:cacheprovider -n 8 -k cuda tests
	PYTHONPATH=src python3 bench/ops_overhead.py --device cuda --repeats 100
	PYTHONPATH=src python3 bench/mlp_train.py --device cuda --repeats 7
	PYTHONPATH=src python3 -m ember.utils.benchmark matmul --include-transfer

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
