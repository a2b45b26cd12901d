# nyala: developer entry points.
#
#   make serve   run a server on 127.0.0.1:5433 with its data in ./nyala-data
#   make test    lint, check import layering and types, run the whole test suite (what CI runs)
#
# Everything the tests need is installed from here, into .venv, at the versions pinned in
# constraints.txt; a stamp file per extra makes a second run skip the install until
# pyproject.toml or constraints.txt changes.

PYTHON   ?= python3
VENV     ?= .venv
HOST     ?= 127.0.0.1
PORT     ?= 5433
DATA_DIR ?= ./nyala-data
PYTEST_ARGS ?=

BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check
RUN_STAMP  := $(VENV)/.nyala-installed
TEST_STAMP := $(VENV)/.nyala-installed-test
# pgjdbc as Debian packages it, for tests/e2e/test_pgjdbc.py (Java 17 is on the machine).
JDBC_JAR   := /usr/share/java/postgresql.jar
# Debian's Chromium, run headless by tests/e2e/test_status_page.py to render the status page.
CHROMIUM   := /usr/bin/chromium
# Debian's sqlsmith, the SQL fuzzer tests/e2e/test_sqlsmith.py and make fuzz drive.
SQLSMITH   := /usr/bin/sqlsmith

.DEFAULT_GOAL := help
.PHONY: help serve install install-test test lint unit e2e fuzz soak bench bench-quick bench-encodings bench-memory bench-spark clean distclean

help:
	@echo "make serve      start nyala on $(HOST):$(PORT), data in $(DATA_DIR) (HOST, PORT, DATA_DIR override)"
	@echo "make test       ruff, import-linter, mypy and the whole pytest suite (what CI runs)"
	@echo "make lint       ruff check, lint-imports and mypy only"
	@echo "make unit       every test except the end-to-end ones"
	@echo "make e2e        the end-to-end tests (real server processes, psql, psycopg)"
	@echo "make fuzz       protocol fuzz (FUZZ_EXAMPLES cases) and sqlsmith (FUZZ_SQLSMITH_SECONDS) at length"
	@echo "make soak       the kill -9 crash loop under transfer load, SOAK_KILLS times (default 200)"
	@echo "make bench      nyala vs PostgreSQL 15 and DuckDB, full scale (~10 min); table in README"
	@echo "make bench-quick the same workloads, smaller (~2 min); results in bench/results/"
	@echo "make bench-encodings on-disk bytes per column encoding and compression (bench data)"
	@echo "make bench-memory server RSS loading 10M rows through COPY, and after CHECKPOINT"
	@echo "make bench-spark Spark local[2]: the nyala data source vs Spark JDBC on nyala and PostgreSQL"
	@echo "make clean      remove caches and build leftovers (keeps .venv and $(DATA_DIR))"
	@echo "make distclean  clean, and remove .venv too"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) install --quiet -c constraints.txt -e .
	touch $@

$(TEST_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) install --quiet -c constraints.txt -e '.[test]'
	touch $@ $(RUN_STAMP)

install: $(RUN_STAMP)

install-test: $(TEST_STAMP) $(JDBC_JAR) $(CHROMIUM) $(SQLSMITH)

$(JDBC_JAR):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpostgresql-jdbc-java

$(CHROMIUM):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

$(SQLSMITH):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sqlsmith

serve: $(RUN_STAMP)
	$(BIN)/nyala serve --host $(HOST) --port $(PORT) --data-dir $(DATA_DIR)

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

unit: $(TEST_STAMP)
	$(BIN)/python -m pytest -m "not e2e" $(PYTEST_ARGS)

e2e: $(TEST_STAMP) $(JDBC_JAR)
	$(BIN)/python -m pytest -m e2e $(PYTEST_ARGS)

# --durations: every CI log lists the slowest tests, so the suite's 25 minutes stay watched.
test: lint $(JDBC_JAR) $(SQLSMITH)
	$(BIN)/python -m pytest --durations=40 $(PYTEST_ARGS)

# The protocol fuzz test and the sqlsmith run of make test (tests/e2e/test_protocol_fuzz.py,
# tests/e2e/test_sqlsmith.py), at length; the outcomes by SQLSTATE go to FUZZ_REPORT, with
# sqlsmith's compared against PostgreSQL 15's for the same queries.
FUZZ_EXAMPLES ?= 20000
FUZZ_SQLSMITH_SECONDS ?= 300
FUZZ_REPORT ?= fuzz-report.txt

fuzz: $(TEST_STAMP) $(SQLSMITH)
	rm -f $(FUZZ_REPORT)
	NYALA_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) NYALA_FUZZ_REPORT=$(abspath $(FUZZ_REPORT)) \
		$(BIN)/python -m pytest tests/e2e/test_protocol_fuzz.py -x --timeout=0 $(PYTEST_ARGS)
	NYALA_SQLSMITH_SECONDS=$(FUZZ_SQLSMITH_SECONDS) NYALA_SQLSMITH_REPORT=$(abspath $(FUZZ_REPORT)) \
		$(BIN)/python -m pytest tests/e2e/test_sqlsmith.py -x --timeout=0 $(PYTEST_ARGS)
	cat $(FUZZ_REPORT)

# The crash loop of make test (tests/e2e/test_crash_loop.py) with many more kills; its figures
# (kills, commits acknowledged, lost) go to SOAK_REPORT.
SOAK_KILLS ?= 200
SOAK_REPORT ?= soak-report.txt

soak: $(TEST_STAMP)
	rm -f $(SOAK_REPORT)
	NYALA_SOAK_KILLS=$(SOAK_KILLS) NYALA_SOAK_REPORT=$(abspath $(SOAK_REPORT)) \
		$(BIN)/python -m pytest tests/e2e/test_crash_loop.py -x --timeout=0 -k kill_9 $(PYTEST_ARGS)
	cat $(SOAK_REPORT)

# BENCH_ARGS adds flags, e.g. BENCH_ARGS="--only tpch,pushdown".
BENCH_ARGS ?=

bench: $(TEST_STAMP)
	$(BIN)/python -m bench --scale 1 --readme $(BENCH_ARGS)

bench-quick: $(TEST_STAMP)
	$(BIN)/python -m bench --scale 0.05 --mixed-seconds 5 --op-seconds 1.5 $(BENCH_ARGS)

bench-encodings: $(TEST_STAMP)
	$(BIN)/python -m bench.encodings --rows 1000000 --out bench/results/encodings.json

bench-memory: $(TEST_STAMP)
	$(BIN)/python -m bench.memory --rows 10000000 --out bench/results/memory.json

bench-spark: $(TEST_STAMP) $(JDBC_JAR)
	$(BIN)/python -m bench.spark --rows 5000000 --write-rows 1000000 --out bench/results/spark.json

clean:
	rm -rf .pytest_cache .ruff_cache .hypothesis build dist *.egg-info bench/results/*.tmp
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
