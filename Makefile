# The README's commands. Everything a fresh clone needs is installed from here.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
PORT ?= 8501
DEFAULT_CORPUS := icml2025
# pip's cap on this machine serves the CPU build of torch from disk when pinned.
TORCH := torch==2.13.0

.PHONY: run serve test lint docs install-check bench bench-full load-test build-default clean-venv browser haproxy netns

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "$(TORCH)"
	$(PIP) install --quiet -e ".[build]"
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install --quiet "$(TORCH)" -e ".[build,dev,ray]"
	touch $@

# Always asks `explorer build`: it answers "Up to date" in seconds when the latest run was
# made from these inputs by this code, and rebuilds a run that older code made.
build-default: $(VENV)/.installed
	$(VENV)/bin/explorer build data/icml2025 --name $(DEFAULT_CORPUS)

# One Streamlit process on 127.0.0.1:PORT; it prints the host's one-click editing link.
run: build-default
	$(VENV)/bin/explorer dashboard --port $(PORT)

# Every core: one Streamlit worker per core (WORKERS=N to choose) behind haproxy, on PORT.
# Read-only unless EDIT=1 (the host then edits through the link it prints).
serve: build-default haproxy
	$(VENV)/bin/explorer serve --port $(PORT) $(if $(WORKERS),--workers $(WORKERS)) $(if $(EDIT),--edit)

# Debian's chromium for the real-browser tests, and an emoji font so screenshots show the
# page icons as a visitor sees them; installed only when missing and root.
EMOJI_FONT := /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf
browser:
	@if { [ ! -x /usr/bin/chromium ] || [ ! -e $(EMOJI_FONT) ]; } && [ "$$(id -u)" = "0" ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium fonts-noto-color-emoji >/dev/null; \
	fi

# Debian's haproxy for `make serve` and its tests; installed only when missing and root.
haproxy:
	@if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ] && [ "$$(id -u)" = "0" ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null; \
	fi

# unshare and ip for the Ray tests' private network namespaces (tests/ray_cluster.py).
netns:
	@if { ! command -v unshare >/dev/null || { ! command -v ip >/dev/null && [ ! -x /usr/sbin/ip ]; }; } \
		&& [ "$$(id -u)" = "0" ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			util-linux iproute2 >/dev/null; \
	fi

test: $(VENV)/.installed-dev browser haproxy netns
	$(PY) -m pytest

# Benchmarks never run in `make test` (bench/README.md). Results: bench/results/*.json,
# summarised in bench/README.md. A missed target is reported, and the exit status says so.
bench: $(VENV)/.installed-dev browser haproxy
	$(PY) -m bench.run quick
	$(PY) -m bench.run load

bench-full: $(VENV)/.installed-dev browser haproxy netns
	$(PY) -m bench.run full
	$(PY) -m bench.run load

# The dashboard under load alone (bench/load.py, bench/README.md): per-change server CPU,
# cache hits, and crowds of 20 and 100 websocket sessions through `explorer serve` and plain.
load-test: $(VENV)/.installed-dev haproxy
	$(PY) -m bench.run load

# A wheel install into a fresh venv (not editable, sources deleted) builds, publishes and
# serves like a checkout (tests/install_check.py). Slow: it installs torch; not in `make test`.
install-check: $(VENV)/.installed-dev haproxy
	$(PY) -m tests.install_check

# docs/cli.md from explorer's own parser (tests/test_docs.py fails when it is stale).
docs: $(VENV)/.installed
	$(PY) -m explorer.cli.reference docs/cli.md

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check explorer pages tests app.py serve.py bench
	$(VENV)/bin/ruff format --check explorer pages tests app.py serve.py bench

clean-venv:
	rm -rf $(VENV)
