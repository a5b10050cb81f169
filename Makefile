# Two commands do everything on a fresh machine (Python >= 3.11 on PATH as python3):
#   make run    sets up .venv and runs the main job (demo + `splitopt validate quick`)
#   make test   sets up .venv and runs the test suite (fast default; `make test-slow` for all)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# the test extra includes torch==2.13.0+cpu (issue 23): the CPU wheel, about 800 MB installed, not the CUDA build
	$(BIN)/python -m pip install -q -e ".[test]"
	# numba compiles the placement kernels once and caches them (about 10 s): here, not inside a
	# user's first time limit (src/splitopt/solvers/placement/warmup.py says why)
	$(BIN)/python -m splitopt.solvers.placement.warmup
	touch $@

.PHONY: setup run test test-slow bench notebooks
setup: $(BIN)/.installed

run: $(BIN)/.installed
	$(BIN)/splitopt demo
	$(BIN)/splitopt validate quick --store out/quick.sqlite

# two workers (pytest-xdist): the CI machine has two cores; the tests that time a limit measure
# CPU seconds too (tests/timing.py), so a busy neighbour does not fail them
test: $(BIN)/.installed
	$(BIN)/ruff check src tests benchmarks
	MPLBACKEND=Agg $(BIN)/python -m pytest -q -p no:cacheprovider -n 2

test-slow: $(BIN)/.installed
	MPLBACKEND=Agg $(BIN)/python -m pytest -q -p no:cacheprovider -n 2 -m "slow or not slow"

# every benchmark writes benchmarks/results/NAME.md with the machine and the date; the README quotes them
bench: $(BIN)/.installed
	$(BIN)/python benchmarks/split.py
	$(BIN)/python benchmarks/record.py grouping benchmarks/grouping.py
	$(BIN)/python benchmarks/record.py grouping_scale benchmarks/grouping_scale.py
	$(BIN)/python benchmarks/record.py runner benchmarks/runner.py
	$(BIN)/python benchmarks/record.py graph_io benchmarks/graph_io.py
	$(BIN)/python benchmarks/record.py sweep benchmarks/sweep.py
	$(BIN)/python benchmarks/record.py placement benchmarks/placement.py
	$(BIN)/python benchmarks/record.py throughput benchmarks/throughput.py --quick --milp-limit 30
	$(BIN)/python benchmarks/record.py throughput_scale benchmarks/throughput_scale.py
	$(BIN)/python benchmarks/record.py pipeline benchmarks/pipeline.py
	$(BIN)/python benchmarks/record.py pipeline_time_limits benchmarks/pipeline_time_limits.py
	$(BIN)/python benchmarks/record.py pipeline_scale benchmarks/pipeline_scale.py
	$(BIN)/python benchmarks/record.py wide_range benchmarks/wide_range.py
	$(BIN)/python benchmarks/record.py split_chain_limits benchmarks/split_chain_limits.py 60
	$(BIN)/python benchmarks/record.py split_scale benchmarks/split_scale.py 100000 10 60
	$(BIN)/python benchmarks/record.py pytorch benchmarks/pytorch.py
	$(BIN)/python benchmarks/record.py cli benchmarks/cli.py

# executes every notebook into out/notebooks/ (the copies in notebooks/ stay as committed, so the
# tree stays clean; installs the notebooks extra: jupyterlab, nbconvert);
# open them with `.venv/bin/jupyter lab notebooks/`
notebooks: $(BIN)/.installed
	$(BIN)/python -m pip install -q -e ".[notebooks]"
	mkdir -p out/notebooks
	MPLBACKEND=Agg $(BIN)/jupyter nbconvert --to notebook --execute --output-dir out/notebooks notebooks/*.ipynb
