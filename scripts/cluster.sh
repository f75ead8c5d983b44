#!/usr/bin/env bash
# Starts the scaled configuration on this machine, for trying it by hand: two API instances on PostgreSQL
# (database testbay_cluster), Redis (shared rate limits) and an S3 endpoint (s3rver), and two agents with
# shell steps allowed. Ctrl-C (SIGINT), SIGTERM or any failure on the way stops every process it started and
# waits until they are gone, so their ports are free again. State lives in .cluster/ (delete it to start afresh).
#
#   scripts/cluster.sh            API instances on http://127.0.0.1:8081/v1 and :8082/v1
#
# CLUSTER_STATE_DIR, CLUSTER_DATABASE, CLUSTER_API_PORT (the first instance's; the second takes the next one)
# and S3_PORT change those defaults, so a second cluster (a test's) can run beside the first.
# Needs PostgreSQL at 127.0.0.1:5432 (trust auth) and Redis at 127.0.0.1:6379, as on the CI machines.
set -euo pipefail
cd "$(dirname "$0")/.."
state=${CLUSTER_STATE_DIR:-.cluster}
database=${CLUSTER_DATABASE:-testbay_cluster}
api_port=${CLUSTER_API_PORT:-8081}
export S3_PORT=${S3_PORT:-4569}
mkdir -p "$state"
# The repository's current sources, never a build left in dist/ (what the packages' "source" condition picks).
export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--conditions=source"

# Process group IDs of what runs in the background: each is started as its own group (set -m), so a stop
# reaches every process under it, not only the one whose PID the shell knows.
groups=()
stop_all() {
  trap - EXIT INT TERM
  [ ${#groups[@]} -gt 0 ] || return 0
  local group
  for group in "${groups[@]}"; do kill -TERM -- "-$group" 2>/dev/null || true; done
  # Agents get their shutdown grace (30 s) to hand running jobs back; whatever is left after 40 s is killed.
  set -m
  (
    sleep 40
    for group in "${groups[@]}"; do kill -KILL -- "-$group" 2>/dev/null || true; done
  ) &
  local watchdog=$!
  set +m
  for group in "${groups[@]}"; do wait "$group" 2>/dev/null || true; done
  # A leader gone can leave members of its group behind for a moment: they got the same signal. Bounded:
  # an orphan nobody reaps (a container without an init) would answer kill -0 forever.
  local until=$((SECONDS + 45))
  for group in "${groups[@]}"; do
    while kill -0 -- "-$group" 2>/dev/null && [ "$SECONDS" -lt "$until" ]; do sleep 0.1; done
  done
  kill -- "-$watchdog" 2>/dev/null || true
  wait "$watchdog" 2>/dev/null || true
}
trap stop_all EXIT
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM

# start <log file> <command…>: runs the command in the background as a process group of its own.
started=
start() {
  local log=$1
  shift
  set -m
  "$@" >"$log" 2>&1 &
  started=$!
  set +m
  groups+=("$started")
}

# wait_until <what> <pid> <command…>: until the command succeeds, while the process lives; 120 s at most
# (a loaded machine takes tens of seconds to start a node process on TypeScript sources).
wait_until() {
  local what=$1 pid=$2
  shift 2
  for _ in $(seq 1 1200); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$what exited before it was ready: see $state/*.log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "$what was not ready within 120 s: see $state/*.log" >&2
  return 1
}

server() { node packages/server/bin/testbay-server.js "$@"; }

psql -h 127.0.0.1 -U postgres -d test -tAc "select 1 from pg_database where datname = '$database'" | grep -q 1 ||
  psql -h 127.0.0.1 -U postgres -d test -qc "create database $database"
redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null

# One signing key for every instance: tokens from one are good at the other.
[ -f "$state/signing-key.pem" ] || openssl genpkey -algorithm ed25519 -out "$state/signing-key.pem" 2>/dev/null

export TESTBAY_DATABASE_URL=postgres://postgres@127.0.0.1:5432/$database
export TESTBAY_REDIS_URL=redis://127.0.0.1:6379
export TESTBAY_STORAGE_URL="s3://testbay?endpoint=http://127.0.0.1:$S3_PORT&region=us-east-1&force_path_style=true"
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
TESTBAY_SIGNING_KEY="$(cat "$state/signing-key.pem")"
export TESTBAY_SIGNING_KEY
export TESTBAY_LOCAL_AGENT=false

start "$state/s3.log" node --import tsx scripts/s3-dev-server.ts
wait_until s3rver "$started" curl -s -o /dev/null "http://127.0.0.1:$S3_PORT/"
server migrate >/dev/null

if [ ! -f "$state/credentials.json" ]; then
  server org create default >/dev/null 2>&1 || true
  ci=$(server client create --org default --role ci)
  agent=$(server client create --org default --role agent)
  node -e 'const [ci, agent, baseUrl] = process.argv.slice(1);
    const [c, a] = [ci, agent].map(JSON.parse);
    console.log(JSON.stringify({ audience: "testbay", base_url: baseUrl,
      ci: { client_id: c.client_id, client_secret: c.client_secret },
      agent: { client_id: a.client_id, client_secret: a.client_secret } }, null, 2));' \
    "$ci" "$agent" "http://127.0.0.1:$api_port/v1" > "$state/credentials.json"
  chmod 600 "$state/credentials.json"
fi

api_ports=("$api_port" "$((api_port + 1))")
# Both instances start at once, then both agents: each node process spends seconds loading.
pids=()
for n in 1 2; do
  TESTBAY_PORT=${api_ports[$((n - 1))]} TESTBAY_DATA_DIR="$state/api$n" start "$state/api$n.log" server start
  pids+=("$started")
done
for n in 1 2; do
  wait_until "API instance $n" "${pids[$((n - 1))]}" curl -sf "http://127.0.0.1:${api_ports[$((n - 1))]}/readyz"
done
agent_credential() { node -p 'require(require("node:path").resolve(process.argv[1])).agent[process.argv[2]]' "$state/credentials.json" "$1"; }
agent_id=$(agent_credential client_id)
agent_secret=$(agent_credential client_secret)
pids=()
for n in 1 2; do
  TESTBAY_URL=http://127.0.0.1:${api_ports[$((n - 1))]}/v1 TESTBAY_CLIENT_ID=$agent_id TESTBAY_CLIENT_SECRET=$agent_secret \
    start "$state/agent$n.log" node packages/agent/bin/testbay-agent.js --name "agent-$n" --allow-shell \
    --devices none --work-dir "$state/agent$n"
  pids+=("$started")
done
for n in 1 2; do
  wait_until "agent-$n" "${pids[$((n - 1))]}" grep -q "step types" "$state/agent$n.log"
done

cat <<TEXT
Running: API instances http://127.0.0.1:${api_ports[0]}/v1 and http://127.0.0.1:${api_ports[1]}/v1 (logs in
$state/api*.log), agents agent-1 and agent-2 ($state/agent*.log), s3rver on :$S3_PORT, PostgreSQL database
$database, Redis. Credentials: $state/credentials.json (the ci client for pipelines, the agent client for agents).
Ctrl-C stops everything.
TEXT
# Returns when a process ends by itself (or a signal arrives): one part gone is no cluster, so all stop.
wait -n || true
echo "a process of the cluster exited on its own: stopping the rest (see $state/*.log)" >&2
exit 1
