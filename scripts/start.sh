#!/usr/bin/env bash
# Quick start, part one: install what is missing, then start Troupe (web + one runner) with
# working defaults. Prints the URL to open; Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec node scripts/start.mjs
