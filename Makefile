# hyperpod-ha: `make demo` (the failover scenario, end to end, no AWS account) and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Python 3.13 (the Lambda runtime) where the machine has it, pyenv's included; else python3 (3.11+).
# Each candidate is run once: a pyenv shim for a version that is not selected exists but fails.
PYTHON ?= $(shell for p in $$HOME/.pyenv/versions/3.13*/bin/python3.13 $$(command -v python3.13) $$(command -v python3); do \
	"$$p" -c 'import sys; assert sys.version_info >= (3, 11)' >/dev/null 2>&1 && { echo "$$p"; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
# checkov's pins clash with the SAM CLI's: it gets a tool environment of its own, one per version
# in the user's cache, so a new clone of the project (CI's) does not install it again.
CHECKOV_VERSION := 3.3.30
CHECKOV_VENV := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/hyperpod-ha/checkov-$(CHECKOV_VERSION)
# mypy's incremental cache, checked against each file's hash: a new clone (CI's) reuses it.
MYPY_CACHE := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/hyperpod-ha/mypy
export AWS_DEFAULT_REGION ?= us-east-1
export PYTHONDONTWRITEBYTECODE := 1
export SAM_CLI_TELEMETRY := 0

# sam local on this machine: functions and layer for its own instruction set (deployed: arm64).
LOCAL_ARCH := $(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x86_64)
ARCH ?= arm64

.PHONY: help venv demo test check test-timing test-container test-ssm-agent test-arm64 test-lab test-lab-long lint checkov unit build local-build local-image bench generate lab-prepare lab-up lab-down clean

help:
	@echo "make demo            the failover scenario end to end on the embedded stack"
	@echo "make test            ruff, mypy, cfn-lint, sam validate --lint, checkov and every test tier, side by"
	@echo "                     side; as root it installs what the container and lab tiers need (docker.io,"
	@echo "                     Slurm builds); logs in .test-logs/, timings at the end"
	@echo "make check           the quick loop: lint, the unit and function tiers (no workflow, lab, container)"
	@echo "make test-timing     make test, its timings kept in docs/test-timings.json"
	@echo "make checkov         checkov on the template as SAM translates it (own tool venv)"
	@echo "make build           sam build (arm64, python3.13; ARCH=x86_64 for the other)"
	@echo "make local-build     sam build for this machine's architecture, for sam local"
	@echo "make local-image     the local Lambda base image hyperpod-ha/lambda-python:3.13 (root, Docker)"
	@echo "make bench           cold start, package size, event storm, hostile input, workflow cost"
	@echo "make generate        write the generated parts: template.yaml's end (alarms, dashboard, Run"
	@echo "                     Command documents, node scripts), the state machines' settings checks and"
	@echo "                     docs/messages.md (stack/hyperpod_ha_stack; a test fails until it is run)"
	@echo "make test-ssm-agent  AWS's Session Manager agent against the project's client (root; in make test)"
	@echo "make test-arm64      the layer built for arm64, imported and tested under arm64 Python (root; in make test)"
	@echo "make lab-prepare     the lab's packages, and Slurm 24.11 and 25.11 built once (root)"
	@echo "make lab-up|lab-down the real Slurm HA lab (root, network namespaces; Slurm 24.11)"
	@echo "make test-lab        the lab tests: all on 24.11, a smaller set on 25.11 (root)"
	@echo "make test-lab-long   the long lab proofs of restoring redundancy, not in make test (root, ~15 min)"

# The layer's pins are the environment's constraints: the tests run on exactly the Powertools,
# PyMySQL and websockets the functions ship (tests/unit/test_pins.py checks it).
$(BIN)/.installed: pyproject.toml layers/requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]" --constraint layers/requirements.txt
	@touch $@

# IAM's evaluator for the tests (tests/iam: @cloud-copilot/iam-simulate, pinned by its lock file;
# a development tool only, never shipped).
tests/iam/node_modules/.installed: tests/iam/package.json tests/iam/package-lock.json
	cd tests/iam && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

venv: $(BIN)/.installed tests/iam/node_modules/.installed

$(CHECKOV_VENV)/.installed:
	@test -x $(CHECKOV_VENV)/bin/python || $(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet "checkov==$(CHECKOV_VERSION)"
	@touch $@

# checkov reads the CloudFormation SAM would deploy, for each command transport (their IAM differs).
checkov: venv $(CHECKOV_VENV)/.installed
	@mkdir -p .aws-sam/checkov
	$(BIN)/python -m hyperpod_ha_dev.embedded.sam template.yaml --output .aws-sam/checkov/session-manager.json
	$(BIN)/python -m hyperpod_ha_dev.embedded.sam template.yaml --parameter CommandTransport=run-command \
		--output .aws-sam/checkov/run-command.json
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml \
		-f .aws-sam/checkov/session-manager.json -f .aws-sam/checkov/run-command.json

demo: venv
	$(BIN)/hyperpod-ha simulate failover

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --cache-dir $(MYPY_CACHE)
	$(BIN)/cfn-lint template.yaml
	$(BIN)/sam validate --lint --template template.yaml
	$(MAKE) --no-print-directory checkov

# `make test` is the whole set-up (tests/tiers.py). As root it also installs what the container
# and lab tiers need (once per machine, reused after: Debian's docker.io and debootstrap, the
# lab's packages and its Slurm builds), and runs each tier as soon as what it needs is there:
# lint, the suite outside the lab (through tests/fresh_host.sh: the host's Slurm, munge, their
# users and the lab's leftovers hidden, as on a new user's machine) and the container tier while
# Slurm builds, then the Slurm lab tier on 24.11 (HyperPod's; several labs at once) and a smaller
# set on 25.11 (HyperPod's newer AMIs). Each step's log is in .test-logs/, the timings table at
# the end. As another user it runs lint and the suite outside the lab, and names the command of
# each tier it cannot run. 22.05 is on no HyperPod AMI: in no tier, still runnable
# (`HYPERPOD_LAB_SLURM=22.05 ... -k "$(LAB_2205_TESTS)"`).
IS_ROOT := $(filter 0,$(shell id -u))
LAB_2205_TESTS := test_up_builds or test_a_job_runs or test_runner_runs or test_sigkill or \
	test_an_operator_session or verdict[failover] or verdict[both-down] or verdict[isolated-primary] or \
	test_a_drill_takes_over_and_hands_back
test: venv
	$(BIN)/python -m tests.tiers

# The quick loop while working: lint, the unit and the in-process function tiers (no workflow,
# lab or container tier). `make test` before a change lands.
check: venv
	$(BIN)/python -m tests.tiers --check

# `make test`, its timings kept in docs/test-timings.json (the figures docs/development.md shows).
test-timing: venv
	$(BIN)/python -m tests.tiers --record docs/test-timings.json

# The container tier starts dockerd itself as root when none answers (and stops it after).
test-container: venv
ifneq ($(IS_ROOT),)
	$(BIN)/python -m tests.tiers --only container
else
	@if .ci/container-runtime status; then time $(BIN)/python -m pytest -m container; \
	else echo "container tier skipped: no Docker daemon answers and starting one needs root: run 'sudo make test-container'"; fi
endif

# AWS's Session Manager agent (../shared/ssm-agent, or HYPERPOD_HA_SSM_AGENT_DIR) against the
# project's client, in namespaces of its own (tests/ssm_agent/sandbox.sh: loopback only).
test-ssm-agent: venv
ifneq ($(IS_ROOT),)
	$(BIN)/python -m tests.tiers --only ssm-agent
else
	@echo "ssm-agent tier skipped: AWS's agent runs as root in namespaces: run 'sudo make test-ssm-agent'"
endif

# The layer built for arm64 under an arm64 Python 3.13 (qemu-user; the arm64 root kept in
# /var/cache/hyperpod-ha, or HYPERPOD_HA_ARM64_ROOT). Installs qemu-user-static and debootstrap.
test-arm64: venv
ifneq ($(IS_ROOT),)
	$(BIN)/python -m tests.tiers --only arm64
else
	@echo "arm64 tier skipped: the arm64 root is made with debootstrap as root: run 'sudo make test-arm64'"
endif

test-lab: venv
ifneq ($(IS_ROOT),)
	$(BIN)/python -m tests.tiers --only lab-24.11 lab-25.11
else
	@echo "lab tier skipped: the Slurm lab needs root (network namespaces, daemons): run 'sudo make test-lab'"
endif

# The restore's proofs that wait as the deployed stack does (the restore's six checks 10 s apart,
# a one-minute grace, 24.11's hand-back): about 13 minutes on 2 cores, outside make test.
test-lab-long: venv
ifneq ($(IS_ROOT),)
	time $(BIN)/python -m pytest -m lab_long
else
	@echo "long lab tests skipped: the Slurm lab needs root: run 'sudo make test-lab-long'"
endif

# 25.11 from HYPERPOD_LAB_SLURM_SOURCE, else ../shared/slurm/slurm-25.11.7.tar.gz (sha256 checked).
lab-prepare: venv
	time $(BIN)/python -m hyperpod_lab prepare --slurm 24.11
	time $(BIN)/python -m hyperpod_lab prepare --slurm 25.11

unit: venv
	$(BIN)/python -m pytest tests/unit -q

build: venv
	PATH="$(dir $(PYTHON)):$$PATH" $(BIN)/sam build --template template.yaml \
		--parameter-overrides FunctionArchitecture=$(ARCH)

local-build:
	$(MAKE) build ARCH=$(LOCAL_ARCH)

# Built from Debian trixie with debootstrap; rebuilt only when images/lambda-python/ changes.
local-image: venv
	images/lambda-python/build.sh $(BIN)/python

bench: venv build
	$(BIN)/python -m bench

# Every generated part of what is deployed, from its description (stack/hyperpod_ha_stack).
generate: venv
	$(BIN)/python -m hyperpod_ha_stack.generate

lab-up: venv
	$(BIN)/python -m hyperpod_lab up

lab-down: venv
	$(BIN)/python -m hyperpod_lab down

clean:
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache
