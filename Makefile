# Two entry points for a fresh machine with Python >= 3.11: `make run` and `make test`.
# Both create (once) and reuse a local virtual environment in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test venv bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/hlodbg $(ARGS)

# Two workers: CI machines have two cores, and the tests keep their files apart (tmp_path,
# per-worker session fixtures). PYTEST_ARGS='-n 0' runs them in one process.
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/parse.py
	$(BIN)/python benchmarks/interpreter.py
	$(BIN)/python benchmarks/debugger.py
	$(BIN)/python benchmarks/export.py
	$(BIN)/python benchmarks/ui.py
	$(BIN)/python benchmarks/grid.py
	$(BIN)/python benchmarks/breakpoints.py
	$(BIN)/python benchmarks/big_inputs.py
	$(BIN)/python benchmarks/long_loop.py
	$(BIN)/python benchmarks/layout_crossover.py
	$(BIN)/python benchmarks/xla.py
	$(BIN)/python benchmarks/perf.py --baseline benchmarks/baseline_issue22.json
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/trace_nan.py
	$(BIN)/python benchmarks/time_travel.py --quick --only gpt_tiny,grid,gpt2
	$(BIN)/python benchmarks/memory_svg.py --quick --repeats 1

clean:
	rm -rf $(VENV) build *.egg-info
