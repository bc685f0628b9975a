# Two commands on a fresh machine:  `make run` (the app)  and  `make test` (the whole suite).
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat requirements.txt pyproject.toml | sha1sum | cut -c1-12)

.PHONY: run test lint bench browser-deps

# requirements.txt is the pinned lock; then this project itself, editable and without touching the lock
# (calculators/, rag/, ui/ and app import from anywhere: bench/ scripts, tests run as scripts, `batchbot`).
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	DS_BUILD_OPS=0 $(PY) -m pip install -r requirements.txt
	$(PY) -m pip install --no-deps -e .
	rm -f $(VENV)/.installed-* && touch $@

run: $(STAMP)
	$(PY) app.py $(ARGS)

# Debian's Chromium for the browser tests (Playwright cannot download browsers here).
browser-deps:
	@dpkg -s chromium fonts-noto-cjk fonts-noto-color-emoji >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk fonts-noto-color-emoji; \
	  else echo "chromium missing: sudo apt-get install chromium fonts-noto-cjk fonts-noto-color-emoji"; exit 1; fi; }

# Lint, format and types: ruff's rules, `ruff format --check` (run `ruff format .` to fix) and mypy (strict on calculators/, ui/, app.py and most of rag/: `[tool.mypy] files`);
# settings in pyproject.toml. `.ci/run` runs it first.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test: $(STAMP) browser-deps
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -q $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) bench/activations_vs_measured.py
