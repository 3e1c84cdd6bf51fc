#!/usr/bin/env bash
# Quick start, part two: install what is missing, then run every test (not the benchmarks).
# `.ci/run` calls exactly this. Optional arguments pick suites: typecheck vitest pytest e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
exec node scripts/test.mjs "$@"
