#!/usr/bin/env bash
# Installs Debian's bubblewrap, the sandbox the shell tool runs its commands in
# (apps/factum/src/builtin-tools/shell-sandbox.ts; the sandbox-escape tests in
# apps/factum/test/adversarial-shell.test.ts). Idempotent: does nothing when it is there.
set -euo pipefail

if command -v bwrap >/dev/null 2>&1; then
  echo "bubblewrap: already installed ($(bwrap --version))"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq bubblewrap >/dev/null
echo "bubblewrap: installed ($(bwrap --version))"
