#!/usr/bin/env bash
# Starts the scaled configuration on this machine, for trying it by hand: two API instances on PostgreSQL
# (database testbay_cluster), Redis (shared rate limits) and an S3 endpoint (s3rver), and two agents with
# shell steps allowed. Everything stops on Ctrl-C. State lives in .cluster/ (delete it to start afresh).
#
#   scripts/cluster.sh            API instances on http://127.0.0.1:8081/v1 and :8082/v1
#
# Needs PostgreSQL at 127.0.0.1:5432 (trust auth) and Redis at 127.0.0.1:6379, as on the CI machines.
set -euo pipefail
cd "$(dirname "$0")/.."
state=.cluster
mkdir -p "$state"
pids=()
cleanup() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

psql -h 127.0.0.1 -U postgres -d test -tAc "select 1 from pg_database where datname = 'testbay_cluster'" | grep -q 1 ||
  psql -h 127.0.0.1 -U postgres -d test -qc "create database testbay_cluster"
redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null

# One signing key for every instance: tokens from one are good at the other.
[ -f "$state/signing-key.pem" ] || openssl genpkey -algorithm ed25519 -out "$state/signing-key.pem" 2>/dev/null

export TESTBAY_DATABASE_URL=postgres://postgres@127.0.0.1:5432/testbay_cluster
export TESTBAY_REDIS_URL=redis://127.0.0.1:6379
export TESTBAY_STORAGE_URL="s3://testbay?endpoint=http://127.0.0.1:4569&region=us-east-1&force_path_style=true"
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
TESTBAY_SIGNING_KEY="$(cat "$state/signing-key.pem")"
export TESTBAY_SIGNING_KEY
export TESTBAY_LOCAL_AGENT=false

npx tsx scripts/s3-dev-server.ts & pids+=($!)
sleep 2
npx testbay-server migrate >/dev/null

if [ ! -f "$state/credentials.json" ]; then
  npx testbay-server org create default >/dev/null 2>&1 || true
  ci=$(npx testbay-server client create --org default --role ci)
  agent=$(npx testbay-server client create --org default --role agent)
  node -e 'const [ci, agent] = process.argv.slice(1).map(JSON.parse);
    console.log(JSON.stringify({ audience: "testbay", base_url: "http://127.0.0.1:8081/v1",
      ci: { client_id: ci.client_id, client_secret: ci.client_secret },
      agent: { client_id: agent.client_id, client_secret: agent.client_secret } }, null, 2));' \
    "$ci" "$agent" > "$state/credentials.json"
  chmod 600 "$state/credentials.json"
fi

for n in 1 2; do
  TESTBAY_PORT=808$n TESTBAY_DATA_DIR="$state/api$n" npx testbay-server start > "$state/api$n.log" 2>&1 & pids+=($!)
done
sleep 3
for n in 1 2; do
  TESTBAY_URL=http://127.0.0.1:808$n/v1 \
  TESTBAY_CLIENT_ID=$(node -p "require('./$state/credentials.json').agent.client_id") \
  TESTBAY_CLIENT_SECRET=$(node -p "require('./$state/credentials.json').agent.client_secret") \
    npx testbay-agent --name "agent-$n" --allow-shell --devices none --work-dir "$state/agent$n" > "$state/agent$n.log" 2>&1 & pids+=($!)
done

cat <<TEXT
Running: API instances http://127.0.0.1:8081/v1 and http://127.0.0.1:8082/v1 (logs in $state/api*.log),
agents agent-1 and agent-2 ($state/agent*.log), s3rver on :4569, PostgreSQL database testbay_cluster, Redis.
Credentials: $state/credentials.json (the ci client for pipelines, the agent client for agents).
Ctrl-C stops everything.
TEXT
wait
