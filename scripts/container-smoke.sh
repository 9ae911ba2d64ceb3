#!/usr/bin/env bash
# The container smoke test (CI runs it after the test suite; `npm run container:smoke` runs it locally).
#
# Builds the Dockerfile with podman and proves the image works as a user would run it: the gateway answers on a
# published port, pairs a sandbox device and delivers a message through the container's API, stops cleanly on
# SIGTERM within 10 s, and keeps its data in the /data volume across a second container.
#
# It runs the commands docs/operations.md gives ("The image"), with podman in place of docker: `build -t` and
# `run -d --name -p -v`, plus only what a test run needs (its own names, a free port, a known token, podman's
# --format docker and --pull=never). No per-container limits or runtime flags: what this machine's runtime needs
# is set once in podman's own configuration (step 3), as docs/operations.md tells an operator to.
# (test/packaging/container.unit.test.ts checks that the commands here and in the docs stay that way.)
#
# Owns: its own containers and volume (named after this process, removed at exit), the image tag
# localhost/messaging-gateway:smoke and a containers.conf of its own (removed at exit). It never pulls from a
# registry (--pull=never; scripts/container-base-image.sh makes the base image locally when it is missing) and
# binds only 127.0.0.1.
#
# Settings: GATEWAY_SMOKE_IMAGE (the tag to build), GATEWAY_CONTAINER_CACHE (see container-base-image.sh),
# GATEWAY_BUILD_CA_FILE (a CA bundle whose extra authorities npm must trust inside the build; default: the
# system bundle when NODE_EXTRA_CA_CERTS or npm's cafile point at it).
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE="${GATEWAY_SMOKE_IMAGE:-localhost/messaging-gateway:smoke}"
NAME="gateway-smoke-$$"
VOLUME="$NAME-data"
TOKEN="smoke-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
STARTED_AT=$SECONDS

log() { printf '[smoke %3ds] %s\n' "$((SECONDS - STARTED_AT))" "$*" >&2; }
fail() {
  log "FAILED: $*"
  exit 1
}

# Root: debootstrap and chroot make the base image, and podman runs rootful so that image and the build share one
# store (sudo works: `sudo scripts/container-smoke.sh`).
[ "$(id -u)" -eq 0 ] || fail "run as root (sudo scripts/container-smoke.sh)"

# 1. Tools: podman, and runc as its runtime (crun cannot set up this machine's cgroup v1 layout); debootstrap
#    for the base image. Installed from Debian's packages when missing, as on a fresh CI machine.
export PATH="$PATH:/usr/sbin:/sbin"
missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]} from Debian's packages"
  apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null
  env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q "${missing[@]}" >/dev/null
fi
ENGINE_CONF="$(mktemp)"

cleanup() {
  local status=$?
  if [ "$status" -ne 0 ] && podman container exists "$NAME" 2>/dev/null; then
    log "last lines of the gateway's log:"
    podman logs --tail 40 "$NAME" >&2 2>&1 || true
  fi
  podman rm -f -t 0 "$NAME" >/dev/null 2>&1 || true
  podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  rm -f "$ENGINE_CONF"
  exit "$status"
}
trap cleanup EXIT

# 2. The base image, made locally when it is not present.
scripts/container-base-image.sh

# 3. The engine's settings for this machine (docs/operations.md, "When the runtime refuses a container's limits").
#    Podman asks the runtime for 1,048,576 open files and processes per container, and gives a build's RUN steps
#    1,024 open files. Where even root may not raise its limits that far (this machine: a hard limit of 20,000
#    open files), runc refuses every container with "error setting rlimit type 7: operation not permitted". The
#    engine is told the limits this process has, which its containers can always be given (a process may keep
#    any limit up to its own hard one); runc, because this machine's cgroup v1 layout needs it. CONTAINERS_CONF
#    points podman at this file alone, for this script only.
NOFILE="$(ulimit -Hn)"
NPROC="$(ulimit -Hu)"
if [ "$NOFILE" = unlimited ] || [ "$NOFILE" -gt 1048576 ]; then NOFILE=1048576; fi
if [ "$NPROC" = unlimited ] || [ "$NPROC" -gt 32768 ]; then NPROC=32768; fi
printf '%s\n' '[containers]' "default_ulimits = [\"nofile=$NOFILE:$NOFILE\", \"nproc=$NPROC:$NPROC\"]" '' \
  '[engine]' 'runtime = "runc"' >"$ENGINE_CONF"
export CONTAINERS_CONF="$ENGINE_CONF"
log "podman: runc, containers limited to $NOFILE open files and $NPROC processes"

# 4. Certificate authorities npm needs inside the build: those of the host's bundle that Node does not already
#    trust (here, the TLS-intercepting proxy's). Passed as a build argument, used by the build stage only.
ca_file="${GATEWAY_BUILD_CA_FILE:-${NODE_EXTRA_CA_CERTS:-}}"
if [ -z "$ca_file" ]; then
  ca_file="$(npm config get cafile 2>/dev/null || true)"
  [ "$ca_file" = null ] && ca_file=""
fi
build_args=()
if [ -n "$ca_file" ] && [ -r "$ca_file" ]; then
  extra_ca="$(node -e '
    const { rootCertificates } = require("node:tls");
    const known = new Set(rootCertificates.map((pem) => pem.replace(/\s+/g, "")));
    const pems = require("node:fs").readFileSync(process.argv[1], "utf8")
      .match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
    process.stdout.write(pems.filter((pem) => !known.has(pem.replace(/\s+/g, ""))).join("\n"));
  ' "$ca_file")"
  if [ -n "$extra_ca" ]; then
    log "the build trusts $(grep -c BEGIN <<<"$extra_ca") extra certificate authorities from $ca_file"
    build_args+=(--build-arg "EXTRA_CA_CERTS=$extra_ca")
  fi
fi

# 5. Build, offline as far as images go: `docker build -t messaging-gateway .` of the docs.
log "building $IMAGE"
build_log="$(mktemp)"
if ! podman build --pull=never --format docker "${build_args[@]}" -t "$IMAGE" . >"$build_log" 2>&1; then
  tail -n 40 "$build_log" >&2
  rm -f "$build_log"
  fail "podman build"
fi
rm -f "$build_log"
log "built: $(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1 / 1e6}')"

# 6. What the image must not carry: tests, sources (the server's and the dashboard's), git, data; and it runs
#    as `node`.
podman run --rm --no-healthcheck --entrypoint /bin/sh "$IMAGE" -c '
  set -e
  for path in /app/test /app/src /app/web /app/bench /app/.git /app/data /app/.env /app/dist/.tsbuildinfo; do
    if [ -e "$path" ]; then echo "the image contains $path"; exit 1; fi
  done
  if [ -n "$(ls -A /data)" ]; then echo "/data is not empty in the image"; exit 1; fi
  test -f /app/dist/main.js && test -f /app/LICENSE
  test "$(id -un)" = node
' || fail "image contents"

api_status=""
api_body=""
# api METHOD PATH [JSON]: sets api_status and api_body.
api() {
  local out args=(-sS -m 10 -X "$1" "http://127.0.0.1:$PORT$2" -H "Authorization: Bearer $TOKEN" -w '\n%{http_code}')
  if [ -n "${3:-}" ]; then args+=(-H 'Content-Type: application/json' --data "$3"); fi
  out="$(curl "${args[@]}")" || return 1
  api_status="${out##*$'\n'}"
  api_body="${out%$'\n'*}"
}
# field EXPRESSION: evaluates a JavaScript expression over the last answer's parsed body (`b`).
field() { node -e 'const b = JSON.parse(process.argv[1]); console.log(eval(process.argv[2]) ?? "")' "$api_body" "$1"; }
expect_status() {
  [ "$api_status" = "$1" ] || fail "$2: expected HTTP $1, got $api_status: $api_body"
}

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND every half second until it succeeds.
wait_until() {
  local limit=$1 what=$2 deadline=$((SECONDS + $1))
  shift 2
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${limit}s waiting for $what"
    sleep 0.5
  done
}

# podman without systemd complains about healthcheck timers on every run, stop and rm; those lines are noise.
podman_quiet() { podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }

healthz() { curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null; }

# `docker run -d --name gateway -p 127.0.0.1:3000:3000 -v gateway-data:/data messaging-gateway` of the docs, with
# this run's own name, volume and a free port, a known token and no send pacing. The image's HEALTHCHECK is run by
# hand (`podman healthcheck run`): podman schedules it with systemd timers, and CI machines have no systemd.
start_gateway() {
  podman_quiet run -d --name "$NAME" -p 127.0.0.1::3000 -v "$VOLUME:/data" --health-interval disable \
    -e GATEWAY_BOOTSTRAP_TOKEN="$TOKEN" -e GATEWAY_SEND_INTERVAL_MS=0 "$IMAGE" >/dev/null
  PORT="$(podman port "$NAME" 3000/tcp | head -n 1)"
  PORT="${PORT##*:}"
  [ -n "$PORT" ] || fail "no published port"
  wait_until 60 "/healthz on 127.0.0.1:$PORT" healthz
  podman healthcheck run "$NAME" >/dev/null || fail "the image's HEALTHCHECK reports unhealthy"
  log "listening on 127.0.0.1:$PORT, healthy"
}

stop_gateway() {
  local began=$SECONDS code
  podman_quiet stop -t 10 "$NAME" >/dev/null
  code="$(podman inspect --format '{{.State.ExitCode}}' "$NAME")"
  # A container still running after 10 s is killed (exit 137): exit 0 means it stopped by itself, in time.
  [ "$code" = 0 ] || fail "the gateway exited with $code on SIGTERM (137: still running after 10 s)"
  podman logs "$NAME" 2>&1 | grep -q '"signal":"SIGTERM"' || fail "the gateway did not log its SIGTERM shutdown"
  log "stopped by SIGTERM in $((SECONDS - began))s, exit 0"
  podman_quiet rm "$NAME" >/dev/null
}

podman volume create "$VOLUME" >/dev/null

# 7. First run: pair a sandbox device and deliver a message.
start_gateway
api POST /devices '{"package":"BETA","name":"Smoke test"}'
expect_status 201 "POST /devices"
DEVICE_ID="$(field 'b.data.id')"
api GET "/devices/$DEVICE_ID/qr?response_type=url"
expect_status 200 "GET /devices/$DEVICE_ID/qr"
api GET "/sandbox/devices/$DEVICE_ID/qr"
expect_status 200 "GET /sandbox/devices/$DEVICE_ID/qr"
QR="$(field 'b.data.qr')"
PHONE=6281234567890
api POST /sandbox/scan "$(node -e 'console.log(JSON.stringify({ qr: process.argv[1], phone: process.argv[2] }))' "$QR" "$PHONE")"
expect_status 200 "POST /sandbox/scan"
paired() { api GET "/devices/$DEVICE_ID" && [ "$(field 'b.data.paired_status')" = PAIRED ]; }
wait_until 30 "device $DEVICE_ID to be PAIRED" paired
log "device $DEVICE_ID paired as $PHONE"

api POST /messages "{\"device\":\"$PHONE\",\"receiver\":\"6289876543210\",\"type\":\"chat\",\"params\":{\"text\":\"Hello from the container\"}}"
expect_status 200 "POST /messages"
MESSAGE_ID="$(field 'b.data.id')"
delivered() {
  api GET "/messages/$MESSAGE_ID" && case "$(field 'b.data.status')" in delivered | read) true ;; *) false ;; esac
}
wait_until 30 "message $MESSAGE_ID to be delivered" delivered
api GET /sandbox/phones/6289876543210
expect_status 200 "GET /sandbox/phones/6289876543210"
[ "$(field 'JSON.stringify(b).includes("Hello from the container")')" = true ] ||
  fail "the receiving phone's inbox does not hold the message: $api_body"
log "message $MESSAGE_ID delivered"

stop_gateway

# 8. Second run on the same volume: the device and its message are still there.
start_gateway
api GET "/devices/$DEVICE_ID"
expect_status 200 "GET /devices/$DEVICE_ID after a restart"
[ "$(field 'b.data.phone')" = "$PHONE" ] && [ "$(field 'b.data.paired_status')" = PAIRED ] ||
  fail "the device lost its pairing across a restart: $api_body"
api GET "/messages/$MESSAGE_ID"
expect_status 200 "GET /messages/$MESSAGE_ID after a restart"
log "the data volume survived a second run"
stop_gateway

log "passed in $((SECONDS - STARTED_AT))s"
