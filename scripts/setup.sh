#!/usr/bin/env bash
# Installs everything Troupe needs, idempotently and fast when nothing changed:
#   node_modules (npm ci), the Python venv with the runtime (.venv), the Prisma client,
#   and with --test also Debian's Chromium for the browser tests.
# Each missing prerequisite gets one line naming what to install.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WITH_TEST=0
[ "${1:-}" = "--test" ] && WITH_TEST=1

say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

# Offline-friendly pip: the default index may be unreachable; never retry it for minutes.
export PIP_RETRIES="${PIP_RETRIES:-0}" PIP_TIMEOUT="${PIP_TIMEOUT:-15}" PIP_DISABLE_PIP_VERSION_CHECK=1
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"

command -v node >/dev/null || die "node not found: install Node.js 20 or newer (https://nodejs.org or apt-get install nodejs)"
node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' || die "Node.js $(node -v) is too old: Troupe needs 20 or newer"
command -v npm >/dev/null || die "npm not found: install npm (apt-get install npm)"
PY=${TROUPE_BOOTSTRAP_PYTHON:-python3}
command -v "$PY" >/dev/null || die "python3 not found: install Python 3.11+ (apt-get install python3 python3-venv)"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || die "$("$PY" -V) is too old: the runtime needs Python 3.11+"
"$PY" -c 'import venv, ensurepip' 2>/dev/null || die "python3 venv support missing: apt-get install python3-venv"

hash_of() { cat "$@" 2>/dev/null | sha256sum | cut -c1-16; }

# --- node_modules -----------------------------------------------------------------------
lock_hash=$(hash_of package-lock.json)
if [ "$(cat node_modules/.troupe-installed 2>/dev/null)" != "$lock_hash" ]; then
  # CI and fresh clones get the exact lock (npm ci); a working tree whose lock changed gets an
  # incremental npm install, so processes using node_modules are not pulled out from under.
  lock() { if command -v flock >/dev/null; then flock /tmp/troupe-npm.lock "$@"; else "$@"; fi; }
  if [ "${CI:-}" = "true" ] || [ ! -d node_modules ]; then
    say "npm ci"
    lock npm ci --no-fund --no-audit --loglevel=error
  else
    say "npm install (package-lock.json changed)"
    lock npm install --no-fund --no-audit --loglevel=error
  fi
  echo "$lock_hash" > node_modules/.troupe-installed
fi

# --- Python venv with the runtime -------------------------------------------------------
py_hash=$(hash_of gpu-runtime/pyproject.toml kernels/pyproject.toml scripts/setup.sh)
if [ -L .venv ] && [ -x .venv/bin/python ] && [ "$(cat .venv/.troupe-installed 2>/dev/null)" != "$py_hash" ]; then
  # A venv linked from another checkout (the start test's copy links the repository's): installing here would
  # point its editable packages at this folder, and break that checkout once this one is gone.
  say "warning: .venv links to $(readlink -f .venv), set up for another checkout: not reinstalling into it (run scripts/setup.sh there)"
elif [ ! -x .venv/bin/python ] || [ "$(cat .venv/.troupe-installed 2>/dev/null)" != "$py_hash" ]; then
  say "python venv (.venv) with the runtime"
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  if ! .venv/bin/python -c 'import torch' 2>/dev/null; then
    # A CPU build where CUDA is absent (pip would otherwise pick a multi-GB CUDA build);
    # TROUPE_TORCH_SPEC overrides, e.g. "torch==2.13.0" on a GPU host.
    if [ -n "${TROUPE_TORCH_SPEC:-}" ]; then
      .venv/bin/pip install -q $TROUPE_TORCH_SPEC
    elif command -v nvidia-smi >/dev/null; then
      .venv/bin/pip install -q "torch>=2.4"
    else
      .venv/bin/pip install -q "torch==2.13.0+cpu" 2>/dev/null \
        || .venv/bin/pip install -q "torch>=2.4" --index-url https://download.pytorch.org/whl/cpu \
        || die "could not install torch: set TROUPE_TORCH_SPEC to a pip requirement that your index has"
    fi
  fi
  .venv/bin/pip install -q -e "kernels[test]" -e "gpu-runtime[test,lora,cluster,games,grpc]"
  echo "$py_hash" > .venv/.troupe-installed
fi

# --- Prisma client (generated, offline) ---------------------------------------------------
schema_hash=$(hash_of prisma/schema.prisma package-lock.json)
if [ "$(cat packages/db/src/generated/.troupe-generated 2>/dev/null)" != "$schema_hash" ]; then
  say "prisma generate"
  npm run -s -w @troupe/db generate
  echo "$schema_hash" > packages/db/src/generated/.troupe-generated
fi

# --- bubblewrap: the sandbox user code (Python rewards) runs in; without it such specs are refused
if ! command -v bwrap >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "apt-get install bubblewrap (the sandbox for user code)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
  else
    say "WARNING: bwrap not found: install bubblewrap, or runs with Python rewards are refused (TROUPE_SANDBOX=off opts out, unsandboxed)"
  fi
fi

# --- Chromium for the browser tests (Debian's package; never a downloaded browser) -----------
if [ $WITH_TEST = 1 ]; then
  CHROMIUM=${TROUPE_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
  if [ -z "$CHROMIUM" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      say "apt-get install chromium (for the browser tests)"
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
      die "chromium not found: install it (apt-get install chromium) or set TROUPE_CHROMIUM to a Chromium binary"
    fi
  fi
  if ! command -v redis-server >/dev/null && [ -z "${REDIS_URL:-}" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      say "apt-get install redis-server"
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    fi
  fi
fi
say "ready"
