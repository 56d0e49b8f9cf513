# Two entry points for a fresh machine with Python >= 3.11: `make run` and `make test`.
# Both create (once) and reuse a local virtual environment in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck venv bench clean dap-client

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
test: $(STAMP) dap-client
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

# VS Code's DAP test client (tests/test_dap_vscode_client.py drives `hlodbg dap` with it), installed
# from tests/dap_vscode/package-lock.json once per change of it; without npm that test skips and says why.
DAP_CLIENT := tests/dap_vscode
dap-client:
	@if command -v npm >/dev/null 2>&1; then \
		[ $(DAP_CLIENT)/node_modules/.installed -nt $(DAP_CLIENT)/package-lock.json ] || \
		{ npm ci --prefix $(DAP_CLIENT) --no-audit --no-fund --loglevel=error && touch $(DAP_CLIENT)/node_modules/.installed \
		  || echo "npm ci in $(DAP_CLIENT) failed (offline?): tests/test_dap_vscode_client.py will skip"; }; \
	else echo "npm not found: tests/test_dap_vscode_client.py will skip (it needs Node.js and npm)"; fi

# ruff and mypy over the code that ships (settings and the reasons for them: pyproject.toml).
# mypy reads the package as it is installed (hlodbg.engine is engine/, hlodbg.ui is ui/, ...), so
# it runs over a tree of links laid out that way (its messages name the files as they are here).
# After a merge, `$(BIN)/ruff check --fix $(LINT_PATHS)` sorts imports and drops unused ones;
# what it cannot fix it lists.
LINT_PATHS := engine layouts hlodbg ui
LINT_TREE := $(VENV)/lint-tree
lint: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(MAKE) --no-print-directory typecheck

# mypy alone, with the tools of BIN (tests/test_lint.py runs it with the suite's Python's).
typecheck:
	rm -rf $(LINT_TREE) && mkdir -p $(LINT_TREE)/hlodbg
	ln -s $(CURDIR)/hlodbg/*.py $(CURDIR)/hlodbg/dap $(CURDIR)/hlodbg/jax $(CURDIR)/hlodbg/mcp $(LINT_TREE)/hlodbg/
	for d in engine layouts ui sample_programs; do ln -s $(CURDIR)/$$d $(LINT_TREE)/hlodbg/$$d; done
	cd $(LINT_TREE) && { $(abspath $(BIN))/mypy --config-file $(CURDIR)/pyproject.toml \
		--cache-dir $(CURDIR)/$(VENV)/mypy-cache -p hlodbg > mypy.out; status=$$?; \
		sed -E 's#^hlodbg/(engine|layouts|ui|sample_programs)/#\1/#' mypy.out; exit $$status; }

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
	$(BIN)/python benchmarks/gemm.py --repeats 3
	$(BIN)/python benchmarks/perf.py --only gpt2 --repeats 3
	$(BIN)/python benchmarks/tpu_mode.py --gpt2 --repeats 2 gpt_tiny
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/dap.py --repeats 1
	$(BIN)/python benchmarks/trace_nan.py
	$(BIN)/python benchmarks/time_travel.py --quick --only gpt_tiny,grid,gpt2
	$(BIN)/python benchmarks/memory_svg.py --quick --repeats 1
	$(BIN)/python benchmarks/first_frame.py --quick --only 100k,gpt2
	$(BIN)/python benchmarks/jax_api.py

clean:
	rm -rf $(VENV) build *.egg-info $(DAP_CLIENT)/node_modules
