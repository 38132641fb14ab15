# One target per chore; CI (.ci/run) and people use the same ones.
PYTHON ?= python3
# cargo mutants jobs: one builds while the other tests, on two cores about 11 mutants a minute
MUTANTS_JOBS ?= 2

.PHONY: help install dev lint fmt test test-rust test-python wheel test-wheel test-lower-bounds bench bench-instructions bench-pcap bench-startup screenshot ci clean mutants mutants-save mutants-diff

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

install:  ## build the Rust core and install irqlab
	$(PYTHON) -m pip install .

dev:  ## editable install with test and benchmark extras
	$(PYTHON) -m pip install -e '.[test,bench]'

# Files that a registry macro declares as modules (one line per variant): `cargo fmt` does not
# see them, so they are formatted and checked by name.
MACRO_MODULES = crates/irqlab-core/src/moderation/*.rs crates/irqlab-core/src/qos/*.rs

lint:  ## rustfmt, clippy (warnings are errors), ruff, mypy, and the core's .pyi against the built core (stubtest: needs make dev)
	cargo fmt --all --check
	rustfmt --check --edition 2024 $(MACRO_MODULES)
	cargo clippy --workspace --all-targets -- -D warnings
	ruff check .
	ruff format --check .
	$(PYTHON) -m mypy
	$(PYTHON) -m mypy.stubtest irqlab._irqlab

fmt:  ## format Rust and Python
	cargo fmt --all
	rustfmt --edition 2024 $(MACRO_MODULES)
	ruff format .
	ruff check --fix .

test-rust:  ## the core's tests (no Python needed)
	cargo test -p irqlab-core

test-python:  ## the README's test command
	$(PYTHON) -m pip install '.[test]' && pytest

test: test-rust test-python  ## all tests

wheel:  ## build this platform's wheel into dist/ (pip install dist/irqlab-*.whl needs no Rust)
	$(PYTHON) .ci/test_wheel.py --build-only dist

test-wheel:  ## build the wheel, install it in a fresh venv without Rust, run the example and tests
	$(PYTHON) .ci/test_wheel.py --pytest

test-lower-bounds:  ## the tests against the oldest dependencies pyproject.toml allows (a fresh venv)
	rm -rf .venv-lower && $(PYTHON) -m venv .venv-lower
	.venv-lower/bin/python -m pip install --quiet --upgrade 'pip>=23'
	PIP_CONSTRAINT= .venv-lower/bin/python -m pip install --quiet -c .ci/lower-bounds.txt '.[test]'
	.venv-lower/bin/python -m pytest -q

bench:  ## simulated packets per second against the C and SimPy references
	$(PYTHON) -m pip install '.[bench]'
	$(PYTHON) benches/run_benchmarks.py

bench-instructions:  ## instructions per simulated packet of each bench row (callgrind: repeatable); BEFORE=FILE compares
	$(PYTHON) benches/instructions.py $(if $(BEFORE),--compare $(BEFORE))

bench-pcap:  ## trace replay: packets/s against Poisson, peak memory for 2 M and 20 M packets
	$(PYTHON) -m pip install .
	$(PYTHON) benches/pcap_replay.py

bench-startup:  ## wall time of import irqlab and the quick commands (--help, keys, check, run)
	$(PYTHON) -m pip install .
	$(PYTHON) benches/startup.py

screenshot:  ## refresh docs/img/report.png, the README's picture of irqlab report (needs Chromium)
	IRQLAB_REPORT_SCREENSHOT=docs/img/report.png $(PYTHON) -m pytest -q tests/test_report_html.py -k sweep_report_in_the_browser

mutants:  ## mutation testing of the whole core: ≥ 90 % caught by cargo test, ≥ 80 % per file (hours: Ctrl-C, and run again to go on; MUTANTS_FRESH=1 starts over)
	cargo mutants --version >/dev/null 2>&1 || cargo install --locked cargo-mutants@27.1.0
	@if [ -n "$(MUTANTS_FRESH)" ]; then rm -rf target/mutants.out target/mutants.out.old target/mutants.history; fi
	@mkdir -p target/mutants.history
	@if [ -f target/mutants.out/outcomes.json ]; then stamp=$$(date +%Y%m%d-%H%M%S); \
	  cp target/mutants.out/outcomes.json target/mutants.history/$$stamp.json; \
	  cp target/mutants.out/mutants.json target/mutants.history/$$stamp.mutants; fi
	cargo mutants --package irqlab-core --list > target/mutants.list
	cargo mutants --package irqlab-core --list --json --diff > target/mutants.list.json
	$(PYTHON) .ci/mutants_ledger.py prune target/mutants.list.json target/mutants.out target/mutants.history
	@if [ -z "$(MUTANTS_FRESH)" ] && [ -f .ci/mutants-ledger.tsv ]; then \
	  $(PYTHON) .ci/mutants_ledger.py seed .ci/mutants-ledger.tsv target/mutants.list.json \
	    target/mutants.out target/mutants.history/00-ledger.json; fi
	cargo mutants --package irqlab-core --iterate --shuffle --jobs $(MUTANTS_JOBS) --output target; status=$$?; \
	  $(PYTHON) .ci/mutants_report.py $$(ls target/mutants.history/*.json 2>/dev/null) target/mutants.out \
	    --expect target/mutants.list --min-total 90 --min-file 80 && \
	  case $$status in 0|2|3) ;; *) exit $$status;; esac

mutants-save:  ## keep what make mutants caught in .ci/mutants-ledger.tsv: commit it, and a run elsewhere goes on from there
	cargo mutants --package irqlab-core --list --json --diff > target/mutants.list.json
	$(PYTHON) .ci/mutants_ledger.py save .ci/mutants-ledger.tsv target/mutants.list.json \
	  $$(ls target/mutants.history/2*.json 2>/dev/null) target/mutants.out

mutants-diff:  ## mutation testing of the core's lines changed since the main branch (as CI)
	.ci/mutants_diff

ci:  ## what CI runs
	.ci/run

clean:
	cargo clean
	rm -rf build dist .pytest_cache .ruff_cache .hypothesis benches/build
