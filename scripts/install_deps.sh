#!/usr/bin/env bash
# Installs every system dependency sharc needs, from Debian's packages only.
# Idempotent: packages already present are skipped, so a second run is quick.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache
  libhalide14-0-dev
  libabsl-dev
  libboost-graph-dev
  libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev
  llvm-14-dev llvm-14-tools clang-14 libclang-rt-14-dev
  libopenblas-dev
  python3-numpy python3-dev pybind11-dev python3-pybind11 python3-pytest python3-matplotlib
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install_deps: done"
