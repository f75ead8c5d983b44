#!/usr/bin/env bash
# Makes a container base image on this machine, for building Testbay's images (Dockerfile, Dockerfile.agent) where
# no image registry can be reached: Debian bookworm from a Debian mirror (debootstrap) and Node.js from the npm
# registry (the `node-linux-<arch>` package that the registry's `node` package installs: the official build's
# bin/node, include/ and share/), with npm from the registry too. Prints the image reference as its last line:
#
#   docker build --build-arg BASE_IMAGE="$(scripts/container-base.sh | tail -1)" -t testbay-server .
#
# Cached: the tag is a hash of this script, the Node.js and npm versions and the CA certificates this machine
# trusts, so an image already made with the same tag is printed at once and nothing is fetched. Building one
# takes a minute or two (debootstrap) and needs root, docker, debootstrap and npm.
#
# TESTBAY_BASE_NODE_VERSION (default below), TESTBAY_BASE_NPM_VERSION and TESTBAY_BASE_MIRROR (a Debian mirror's
# URL; default: the first one in /etc/apt/sources.list*, else http://deb.debian.org/debian) change what it makes.
set -euo pipefail
cd "$(dirname "$0")/.."

node_version=${TESTBAY_BASE_NODE_VERSION:-20.20.2}
# The npm release that Node.js 20's own tarball carries.
npm_version=${TESTBAY_BASE_NPM_VERSION:-10.8.2}
suite=bookworm
repository=testbay-base

say() { printf 'container-base: %s\n' "$*" >&2; }

# The certificates this machine trusts go into the image (npm's cafile), so that a TLS-inspecting proxy that this
# machine trusts is trusted by builds in the image too; a change of them is a new image.
ca_bundle=/etc/ssl/certs/ca-certificates.crt
hash=$(
  {
    cat "$0"
    echo "node=$node_version npm=$npm_version suite=$suite"
    if [ -f "$ca_bundle" ]; then cat "$ca_bundle"; fi
  } | sha256sum | cut -c1-12
)
ref="$repository:node$node_version-$hash"

if docker image inspect "$ref" >/dev/null 2>&1; then
  echo "$ref"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  say "building $ref needs root (debootstrap); run it as root or with sudo"
  exit 1
fi
for tool in debootstrap npm tar; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    say "$tool is missing (apt-get install debootstrap; Node.js with npm for npm)"
    exit 1
  fi
done

case "$(dpkg --print-architecture 2>/dev/null || uname -m)" in
  amd64 | x86_64) debian_arch=amd64 node_arch=x64 ;;
  arm64 | aarch64) debian_arch=arm64 node_arch=arm64 ;;
  *)
    say "no Node.js package for this architecture ($(uname -m)) on the npm registry"
    exit 1
    ;;
esac

# The mirror this machine's apt uses (deb822 .sources files or one-line sources.list), else Debian's own.
first_mirror() {
  local file
  for file in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    sed -n -e 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/\{0,1\}\([[:space:]].*\)\{0,1\}$/\1/p' \
      -e 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\{0,1\}\([^[:space:]]*\/debian\)\/\{0,1\}[[:space:]].*/\2/p' "$file"
  done | head -1
}
mirror=${TESTBAY_BASE_MIRROR:-$(first_mirror)}
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d /tmp/testbay-base.XXXXXX)
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
rootfs=$work/rootfs

say "debootstrap $suite ($debian_arch) from $mirror"
debootstrap --variant=minbase --arch="$debian_arch" "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log" >&2
  say "debootstrap failed (log above)"
  exit 1
}

# As Debian's slim images: no manuals or documentation from later installs (the build stage's compiler).
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
CFG
{
  echo "deb $mirror $suite main"
  echo "deb $mirror $suite-updates main"
  case "$mirror" in
    */debian) echo "deb ${mirror%/debian}/debian-security $suite-security main" ;;
  esac
} >"$rootfs/etc/apt/sources.list"
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/usr/share/doc/* \
  "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*

say "Node.js $node_version (node-$node_arch) and npm $npm_version from the npm registry"
mkdir -p "$work/packs"
(cd "$work/packs" && npm pack --silent "node-linux-$node_arch@$node_version" "npm@$npm_version" >/dev/null)
tar -xzf "$work/packs/node-linux-$node_arch-$node_version.tgz" -C "$rootfs/usr/local" --strip-components=1 \
  package/bin/node package/include package/share
mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$work/packs/npm-$npm_version.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
if [ -f "$ca_bundle" ]; then
  mkdir -p "$rootfs/etc/ssl/certs"
  cp "$ca_bundle" "$rootfs/etc/ssl/certs/ca-certificates.crt"
  mkdir -p "$rootfs/usr/local/etc"
  echo "cafile=/etc/ssl/certs/ca-certificates.crt" >"$rootfs/usr/local/etc/npmrc"
fi
chroot "$rootfs" /usr/local/bin/node --version >/dev/null

say "docker import $ref"
tar -C "$rootfs" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . |
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$node_version" \
    --change 'CMD ["node"]' \
    --message "Debian $suite, Node.js $node_version, npm $npm_version (scripts/container-base.sh)" \
    - "$ref" >/dev/null
echo "$ref"
