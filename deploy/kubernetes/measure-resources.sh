#!/usr/bin/env bash
# Measures orders-grpc's memory (RSS) and CPU idle and under a bounded load against real PostgreSQL,
# Redis and NATS on loopback: the figures behind the Deployment's resource requests and limits.
#   bash deploy/kubernetes/measure-resources.sh            # uses the machine's services (docs/real-backends.md)
# Everything stays on loopback; the load is bounded in time (LOAD_SECONDS per phase) and connections.
# Tables go to a private schema (POSTGRES_SCHEMA), dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."

export POSTGRES_DSN="${POSTGRES_DSN:-postgres://postgres@127.0.0.1:5432/test}"
export REDIS_ADDR="${REDIS_ADDR:-127.0.0.1:6379}"
export NATS_URL="${NATS_URL:-nats://127.0.0.1:4222}"
export POSTGRES_SCHEMA="k8s_measure_$$"
export JWT_SECRET="measure-only-secret-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
# The limiter would cap one loopback client at 50 rps; the point here is the process's cost per request.
export RATE_LIMIT_RPS=1000000
export LOG_LEVEL=warn
LOAD_SECONDS="${LOAD_SECONDS:-20}"
CONNECTIONS="${CONNECTIONS:-16}"
HTTP_PORT="${HTTP_PORT:-18470}"
ADMIN_PORT="${ADMIN_PORT:-18471}"
export HTTP_ADDR="127.0.0.1:$HTTP_PORT" ADMIN_ADDR="127.0.0.1:$ADMIN_PORT"
base="http://127.0.0.1:$HTTP_PORT"

node bin/orders-admin.ts migrate >/dev/null
printf '%s' 'measure-password' | node bin/orders-admin.ts users add measurer >/dev/null

node bin/orders-grpc.ts >/tmp/orders-measure-$$.log 2>&1 &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  node -e "const pg=require('pg');const c=new pg.Client(process.env.POSTGRES_DSN);c.connect().then(()=>c.query('DROP SCHEMA IF EXISTS $POSTGRES_SCHEMA CASCADE')).finally(()=>c.end())"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$ADMIN_PORT/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done

ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$pid/status"; }
# phase NAME SECONDS: CPU in millicores averaged over the phase, RSS at its end and the peak so far.
report() {
  local name=$1 t0=$2 c0=$3
  local t1 c1
  t1=$(date +%s.%N)
  c1=$(cpu_ticks)
  awk -v n="$name" -v c="$((c1 - c0))" -v hz="$ticks" -v t="$(echo "$t1 - $t0" | bc)" -v rss="$(rss_kib)" -v hwm="$(hwm_kib)" \
    'BEGIN { printf "%-22s cpu %5.0f millicores   rss %4.0f MiB   peak rss %4.0f MiB\n", n, 1000 * c / hz / t, rss / 1024, hwm / 1024 }'
}

sleep 5
t0=$(date +%s.%N); c0=$(cpu_ticks); sleep 15; report "idle (15 s)" "$t0" "$c0"

token=$(curl -fs -XPOST "$base/auth/login" -H 'Content-Type: application/json' -d '{"username":"measurer","password":"measure-password"}' | sed 's/.*"token":"\([^"]*\)".*/\1/')
id=$(curl -fs -XPOST "$base/orders" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"item":"widget","quantity":1}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
cannon=node_modules/.bin/autocannon

t0=$(date +%s.%N); c0=$(cpu_ticks)
"$cannon" -c "$CONNECTIONS" -d "$LOAD_SECONDS" -H "Authorization=Bearer $token" "$base/orders/$id" 2>&1 | grep -E "^(Req/Sec|Latency)|requests in" || true
report "GET /orders/{id}" "$t0" "$c0"

t0=$(date +%s.%N); c0=$(cpu_ticks)
"$cannon" -c "$CONNECTIONS" -d "$LOAD_SECONDS" -m POST -H "Authorization=Bearer $token" -H "Content-Type=application/json" \
  -b '{"item":"widget","quantity":2}' "$base/orders" 2>&1 | grep -E "^(Req/Sec|Latency)|requests in" || true
report "POST /orders" "$t0" "$c0"

t0=$(date +%s.%N); c0=$(cpu_ticks); sleep 10; report "idle after load (10 s)" "$t0" "$c0"
