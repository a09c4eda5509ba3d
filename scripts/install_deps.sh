#!/usr/bin/env bash
# Installs what Orrery needs to build and test, from Debian's packages, if it is missing.
# Safe to run again: it only calls apt-get when a package is absent.
set -euo pipefail

packages=(
  bazel-bootstrap bazel-rules-java bazel-platforms
  g++ protobuf-compiler libprotobuf-dev libyaml-cpp-dev libboost-program-options-dev
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev zlib1g-dev python3
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >&2
fi
