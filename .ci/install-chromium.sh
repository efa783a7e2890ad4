#!/usr/bin/env bash
# Installs Debian's chromium for the web timeline's end-to-end test (apps/factum/test/web-timeline.test.ts),
# which drives it with playwright-core at /usr/bin/chromium. Idempotent: does nothing when it is there.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium: already installed ($(/usr/bin/chromium --version 2>/dev/null | head -n 1))"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
echo "chromium: installed ($(/usr/bin/chromium --version 2>/dev/null | head -n 1))"
