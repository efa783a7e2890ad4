# Sourced: installs PostgreSQL from Debian's packages if needed, starts a cluster on
# loopback, sets a password for a test role and exports FACTUM_TEST_POSTGRES_URL, which
# turns on the PostgreSQL half of the parameterised suites.
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi
_pg_version="$(ls /usr/lib/postgresql | sort -n | tail -1)"
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^${_pg_version} main$"; then
  pg_createcluster "$_pg_version" main >/dev/null
fi
pg_ctlcluster "$_pg_version" main start 2>/dev/null || true
for _ in $(seq 1 30); do
  if su postgres -c "pg_isready -q -h 127.0.0.1 -p 5432"; then break; fi
  sleep 1
done
su postgres -c "psql -q -v ON_ERROR_STOP=1 -c \"DO \\\$\\\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'factum') THEN CREATE ROLE factum LOGIN SUPERUSER PASSWORD 'factum'; END IF; END \\\$\\\$;\""
export FACTUM_TEST_POSTGRES_URL="postgres://factum:factum@127.0.0.1:5432/postgres"
