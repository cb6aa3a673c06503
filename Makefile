# Two entry points for a fresh machine: `make report` and `make test`.
# Each creates .venv and installs the project with its dev extras when missing;
# a second run skips what is already done (the stamp is newer than pyproject.toml).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup report test test-unit test-system test-notebooks fuzz bench lint clean

setup: $(STAMP)

# The Voila page template (workbench/report/voila_template, no link to another host) where Voila finds
# templates: an install in place skips setup.py's data files, so it is linked there.
VOILA_TEMPLATE := $(VENV)/share/jupyter/voila/templates/workbench

$(STAMP): pyproject.toml setup.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@mkdir -p $(dir $(VOILA_TEMPLATE)) && ln -sfn $(CURDIR)/workbench/report/voila_template $(VOILA_TEMPLATE)
	@touch $(STAMP)

report: $(STAMP)
	$(BIN)/workbench report --config notebooks/bundled.yaml

# tests/unit mirrors the package: no subprocesses, no clocks (and the doctests of workbench/);
# tests/system: notebooks, browser, CLI, reliability, Dask, fuzz. `make test` runs both, the
# floor-plan check (lint-imports) and nbval on the templates.
test: test-unit test-system test-notebooks

test-unit: $(STAMP)
	$(BIN)/python -m pytest -n 2 tests/unit workbench

test-system: $(STAMP)
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -n 2 --dist loadscope tests/system

test-notebooks: $(STAMP)
	$(BIN)/python -m pytest --nbval-lax -p no:python -p no:cacheprovider notebooks/

# The long fuzz run (tests/system/fuzz): 20,000 examples per property (WORKBENCH_FUZZ_EXAMPLES=N to change);
# prints how many inputs it tried. `make test` runs the same properties under a bounded profile.
fuzz: $(STAMP)
	$(BIN)/python -m pytest -p no:xdist -q -s tests/system/fuzz --hypothesis-profile=fuzz

# Benchmarks (bench/README.md): each in a fresh process; figures and ratios against a peer
# measured in the same run, not timed tests. Writes bench/results/latest.{json,md}.
# Pass options with BENCH_ARGS, e.g. `make bench BENCH_ARGS="--million-copies 40"`.
bench: $(STAMP)
	$(BIN)/python bench/run_all.py $(BENCH_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy --strict --follow-imports=silent workbench/grading workbench/pipeline

clean:
	rm -rf $(VENV) reports/*/ .pytest_cache .hypothesis
