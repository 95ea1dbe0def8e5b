# Two commands set everything up on a fresh machine with Python 3.11:
#   make run    install into .venv, then serve the dashboard on the bundled demo data
#   make test   install into .venv, then lint, type-check and run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501
ADDRESS ?= 127.0.0.1

.PHONY: install run test lint typecheck browser-deps demo-data lock clean

$(STAMP): requirements.txt requirements-test.txt requirements-nodeps.txt constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-r requirements-test.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
		-r requirements-nodeps.txt
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/streamlit run app.py --server.port $(PORT) --server.address $(ADDRESS)

lint: install
	$(BIN)/ruff check .

# mypy over target_core ([tool.mypy] in pyproject.toml; the package ships py.typed)
typecheck: install
	$(BIN)/python -m mypy

# The browser tests drive Debian's chromium; install it when we can (root with apt-get).
# Elsewhere they are skipped, except under CI, where a missing chromium fails them.
browser-deps:
	@if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		echo "installing chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

test: lint typecheck browser-deps
	$(BIN)/python -m pytest -n 2

demo-data: install
	$(BIN)/python scripts/build_demo_data.py

# Refresh constraints.txt (transitive pins) from a clean install of requirements.
lock:
	rm -rf /tmp/target-lock && $(PYTHON) -m venv /tmp/target-lock
	/tmp/target-lock/bin/python -m pip install --quiet -r requirements-test.txt
	/tmp/target-lock/bin/python -m pip freeze --exclude-editable > constraints.txt

clean:
	rm -rf $(VENV)
