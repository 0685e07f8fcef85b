# The two commands of the README, each working on a fresh machine with Python 3.10+.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-gpu bench bench-gpu clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[dev,examples]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m ember

test: $(STAMP)
	$(PY) -m pytest -n 2

# On a machine with a GPU and CuPy already installed (no network needed).
test-gpu:
	PYTHONPATH=src python3 -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(PY) bench/ops_overhead.py

bench-gpu:
	PYTHONPATH=src python3 bench/ops_overhead.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
