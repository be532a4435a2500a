# dashgen — the two commands that do all the set-up on a fresh machine:
#   make dashboards   render every dashboard, rule file and the panel index (docs/panels.md) of every profile
#   make test         install what the tests need (venv, victoria-metrics, promtool) and run them
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBIAN_TEST_PACKAGES := victoria-metrics prometheus

.PHONY: dashboards test fuzz lint bench diff check demo test-live venv debian-deps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# Debian packages the tests start for real: VictoriaMetrics (query validation) and promtool (rules).
debian-deps:
	@missing=""; \
	command -v victoria-metrics >/dev/null 2>&1 || missing="$$missing victoria-metrics"; \
	command -v promtool >/dev/null 2>&1 || missing="$$missing prometheus"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

dashboards: $(STAMP)
	$(BIN)/dashgen build
	$(BIN)/dashgen rules
	$(BIN)/dashgen index

test: $(STAMP) debian-deps
	$(BIN)/ruff format --check dashgen panels queries tests bench
	$(BIN)/ruff check dashgen panels queries tests bench
	$(BIN)/mypy
	$(BIN)/pytest

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

# The publish tests against a real Grafana: GRAFANA_URL and GRAFANA_TOKEN must be set.
test-live: $(STAMP)
	@test -n "$$GRAFANA_URL" || { echo "set GRAFANA_URL (and GRAFANA_TOKEN)"; exit 2; }
	$(BIN)/pytest tests -m live -p no:cacheprovider

clean:
	rm -rf $(VENV) build *.egg-info
