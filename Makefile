# hyperpod-ha: `make demo` (the failover scenario, end to end, no AWS account) and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Python 3.13 (the Lambda runtime) where the machine has it, pyenv's included; else python3 (3.11+).
# Each candidate is run once: a pyenv shim for a version that is not selected exists but fails.
PYTHON ?= $(shell for p in $$HOME/.pyenv/versions/3.13*/bin/python3.13 $$(command -v python3.13) $$(command -v python3); do \
	"$$p" -c 'import sys; assert sys.version_info >= (3, 11)' >/dev/null 2>&1 && { echo "$$p"; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
# checkov's pins clash with the SAM CLI's: it gets a tool environment of its own.
CHECKOV_VERSION := 3.3.30
CHECKOV_VENV := .venv-checkov
export AWS_DEFAULT_REGION ?= us-east-1
export PYTHONDONTWRITEBYTECODE := 1
export SAM_CLI_TELEMETRY := 0

.PHONY: help venv demo test lint checkov unit build bench probe-document lab-up lab-down clean

help:
	@echo "make demo            the failover scenario end to end on the embedded stack"
	@echo "make test            ruff, mypy, cfn-lint, sam validate --lint, checkov and the whole test suite"
	@echo "make checkov         checkov on the template as SAM translates it (own tool venv)"
	@echo "make build           sam build (arm64, python3.13)"
	@echo "make bench           cold start, package size, event storm, hostile input, workflow cost"
	@echo "make probe-document  write the probe and roll-out commands into template.yaml"
	@echo "make lab-up|lab-down the real Slurm HA lab (root, network namespaces)"

$(BIN)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $@

venv: $(BIN)/.installed

$(CHECKOV_VENV)/.installed: Makefile
	@test -x $(CHECKOV_VENV)/bin/python || $(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet "checkov==$(CHECKOV_VERSION)"
	@touch $@

# checkov reads the CloudFormation SAM would deploy, for each command transport (their IAM differs).
checkov: venv $(CHECKOV_VENV)/.installed
	@mkdir -p .aws-sam/checkov
	$(BIN)/python -m hyperpod_ha.embedded.sam template.yaml --output .aws-sam/checkov/session-manager.json
	$(BIN)/python -m hyperpod_ha.embedded.sam template.yaml --parameter CommandTransport=run-command \
		--output .aws-sam/checkov/run-command.json
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml \
		-f .aws-sam/checkov/session-manager.json -f .aws-sam/checkov/run-command.json

demo: venv
	$(BIN)/hyperpod-ha simulate failover

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/cfn-lint template.yaml
	$(BIN)/sam validate --lint --template template.yaml
	$(MAKE) --no-print-directory checkov

# The non-lab suite runs with the host's Slurm, munge, their users and the lab's leftovers
# hidden (tests/fresh_host.sh), as on a new user's machine. The lab's tests time real Slurm
# failovers: they run alone, after the rest ran on both cores.
test: lint
	tests/fresh_host.sh $(BIN)/python -m pytest -n 2 -m "not lab"
	$(BIN)/python -m pytest -m lab

unit: venv
	$(BIN)/python -m pytest tests/unit -q

build: venv
	PATH="$(dir $(PYTHON)):$$PATH" $(BIN)/sam build --template template.yaml

bench: venv build
	$(BIN)/python -m bench

probe-document: venv
	$(BIN)/python -m hyperpod_ha.documents --write template.yaml
	$(BIN)/python -m hyperpod_ha.command_documents --write template.yaml

lab-up: venv
	$(BIN)/python -m hyperpod_lab up

lab-down: venv
	$(BIN)/python -m hyperpod_lab down

clean:
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache
