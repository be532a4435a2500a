# dashgen — the two commands that do all the set-up on a fresh machine:
#   make dashboards   render every dashboard, rule file and the panel index (docs/panels.md) of every profile
#   make test         install what the tests need (venv, victoria-metrics, promtool) and run them
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBIAN_TEST_PACKAGES := victoria-metrics prometheus chromium nodejs
README_IMAGE := docs/images/preview-first-screen.png

.PHONY: dashboards test test-fast fuzz lint bench diff check demo readme-image test-live venv debian-deps clean grafana-data-bundle

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# Debian packages the tests start for real: VictoriaMetrics (query validation), promtool (rules), a headless
# Chromium (dashgen preview's screenshots) and Node (the preview's @grafana/data bundle run on the same frames).
debian-deps:
	@missing=""; \
	command -v victoria-metrics >/dev/null 2>&1 || missing="$$missing victoria-metrics"; \
	command -v promtool >/dev/null 2>&1 || missing="$$missing prometheus"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# The preview's copies of Grafana's @grafana/data (dashgen/data/grafana-data/<minor>/, one per Grafana minor the
# profiles target): rebuilt from the versions pinned in bundles/grafana-data/<minor>/package-lock.json with
# Debian's node/npm (npm ci, then esbuild); the built files, their LICENSE and VERSION are committed, so neither
# `make test` nor a user needs npm.
GRAFANA_DATA_MINORS := 11.6 12.3
grafana-data-bundle:
	set -e; for minor in $(GRAFANA_DATA_MINORS); do \
	  (cd bundles/grafana-data/$$minor && npm ci --no-audit --no-fund --ignore-scripts); \
	  node bundles/grafana-data/build.mjs $$minor; \
	done

dashboards: $(STAMP)
	$(BIN)/dashgen build
	$(BIN)/dashgen rules
	$(BIN)/dashgen index

# The tests write bytecode even where PYTHONDONTWRITEBYTECODE is set: without the cached .pyc files (and pytest's
# assertion-rewritten test modules beside them) every run, and every xdist worker, compiles the whole project again
# (collection: 12-15 s of CPU instead of about 4.5 s). pyproject.toml's `--dist loadgroup` keeps the tests that share
# a module-scoped server on one worker (tests/conftest.py).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest

test: $(STAMP) debian-deps
	$(BIN)/ruff format --check dashgen panels queries tests bench
	$(BIN)/ruff check dashgen panels queries tests bench
	$(BIN)/mypy
	$(PYTEST) -n auto

# The edit loop: every test that starts no real server or program (no VictoriaMetrics, Prometheus, vmagent,
# vmalert, promtool, Grafana stand-in, HTTP server, subprocess; tests/conftest.py marks those `slow`) and no
# real Grafana (`live`). Stops at the first failure. `make test` before a commit or pull request runs everything.
test-fast: $(STAMP)
	$(PYTEST) -m "not slow and not live" -x

# The fault and fuzz suite alone (also part of make test); DASHGEN_FUZZ_EXAMPLES=1000 for a longer hunt.
fuzz: $(STAMP) debian-deps
	$(BIN)/pytest tests/test_fuzz_*.py tests/test_fault_*.py tests/test_http_answers.py tests/test_redaction.py

lint: $(STAMP)
	$(BIN)/ruff format --check dashgen panels queries tests bench
	$(BIN)/ruff check dashgen panels queries tests bench
	$(BIN)/mypy
	$(BIN)/dashgen lint

check: $(STAMP)
	$(BIN)/dashgen check

# The same diff CI posts on a pull request, against origin/main (or BASE=<git ref>).
diff: $(STAMP)
	$(BIN)/dashgen diff --base $${BASE:-origin/main} --format $${FORMAT:-text}

bench: $(STAMP) debian-deps
	$(BIN)/python -m bench

demo: $(STAMP) debian-deps
	$(BIN)/python -m dashgen.demo.server

# The README's picture: the first screen of long-context-64 drawn by `dashgen preview` on `make demo`'s data
# (a throw-away demo VictoriaMetrics on a free port, stopped afterwards).
readme-image: $(STAMP) debian-deps
	@set -e; tmp=$$(mktemp -d); port=$$($(BIN)/python -c 'from dashgen.demo.vmlauncher import free_port; print(free_port())'); \
	$(BIN)/python -m dashgen.demo.server --profile long-context-64 --hours 1 --port $$port > $$tmp/demo.log 2>&1 & demo=$$!; \
	trap 'kill $$demo 2>/dev/null; wait $$demo 2>/dev/null; rm -rf $$tmp' EXIT; \
	for i in $$(seq 300); do grep -q "VictoriaMetrics with demo data" $$tmp/demo.log && break; \
	  kill -0 $$demo 2>/dev/null || { cat $$tmp/demo.log; exit 1; }; sleep 1; done; \
	$(BIN)/dashgen preview --profile long-context-64 --datasource-url http://127.0.0.1:$$port --out $$tmp --first-screen; \
	mkdir -p $$(dirname $(README_IMAGE)); cp $$tmp/dg-long-context-64-cluster.first.png $(README_IMAGE); \
	echo "wrote $(README_IMAGE)"

# The publish tests against a real Grafana: GRAFANA_URL and GRAFANA_TOKEN must be set.
test-live: $(STAMP)
	@test -n "$$GRAFANA_URL" || { echo "set GRAFANA_URL (and GRAFANA_TOKEN)"; exit 2; }
	$(BIN)/pytest tests -m live -p no:cacheprovider

clean:
	rm -rf $(VENV) build *.egg-info
