# Every target sets itself up: the first run creates .venv from pyproject.toml, later runs reuse it.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
BENCH_STAMP := $(VENV)/.bench-stamp
BENCH_ARGS ?=
# Offline by default: models and tokenizers come from installed packages, never from a hub.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

NOTEBOOKS := $(sort $(wildcard notebooks/[0-9]*.ipynb))

.PHONY: setup demo results test check lab lint bench notebooks docs clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[all]'
	@# the model's one-time ONNX export (about 10 s) now, not in the first `chunking index` a user times
	$(PY) -c "from chunking.embed import Embedder; print('embedding model ready on', Embedder().backend)"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m chunking demo

# The demo's results without timings, committed for notebook 12 and the docs.
results: $(STAMP)
	$(PY) -m chunking demo --snapshot docs/results

test: $(STAMP)
	$(PY) -m ruff check chunking tests benchmarks data/eval
	$(PY) -m pytest -n 2 --dist loadgroup --doctest-modules chunking tests
	$(if $(NOTEBOOKS),$(PY) -m pytest -n 2 --dist loadfile --nbval $(NOTEBOOKS) notebooks/playground.ipynb --nbval-sanitize-with notebooks/nbval_sanitize.cfg)

# The quick loop while you work (about two minutes): ruff, the doctests, and the tests of the core and
# the strategies; no model (a test that would load one is skipped: tests/no_model.py), no notebooks.
CHECK_TESTS := $(addprefix tests/test_,$(addsuffix .py,layers options api documents segment sizers tokens counting \
	fixed sentence paragraph markdown sliding recursive semantic late contextual parent_child models bounds linear \
	invariants reference_packing reference_structure reference_models guide))
check: $(STAMP)
	$(PY) -m ruff check chunking tests benchmarks data/eval
	$(PY) -m pytest -n 2 -p tests.no_model --doctest-modules chunking $(CHECK_TESTS)

# Re-execute every notebook in place (commit the result; nbval then holds it to these outputs).
notebooks: $(STAMP)
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace $(NOTEBOOKS)

# The docs site in site/: the committed notebooks as they are (nbval checks their outputs, so the
# site never re-runs them) and the API reference from the docstrings. Any warning fails the build.
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict

lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/

lint: $(STAMP)
	$(PY) -m ruff check chunking tests benchmarks data/eval

# Speed, memory and checks of every strategy beside the peers (docs/benchmarks.md); e.g.
# `make bench BENCH_ARGS="--sizes 1 --repeat 3"`. The peers (the `bench` extra) are installed once;
# if that fails (offline, say), the benchmark runs without them and the next `make bench` tries again.
bench: $(STAMP) $(BENCH_STAMP)
	$(PY) benchmarks/bench.py $(BENCH_ARGS)

$(BENCH_STAMP): pyproject.toml | $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]' && touch $(BENCH_STAMP) || \
		echo "make bench: could not install the peers (.[bench]); benchmarking chunking without them"

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
