# Sourced by .ci/run: installs and starts what the test suite needs beyond Node
# (Chromium for the web timeline, bubblewrap for the shell's sandbox, PostgreSQL for
# the several-hosts suite) and exports
# where to find them. Idempotent; safe on a machine that already has them.
_services_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -f "$_services_dir/install-chromium.sh" ]; then bash "$_services_dir/install-chromium.sh"; fi
if [ -f "$_services_dir/install-sandbox.sh" ]; then bash "$_services_dir/install-sandbox.sh"; fi
if [ -f "$_services_dir/install-postgres.sh" ]; then source "$_services_dir/install-postgres.sh"; fi
