#!/usr/bin/env bash
# Installs what Rampart needs on a fresh Debian 12 machine: the reference
# libraries and tools the tests compare against, and the system policy.
# Idempotent: skips apt when everything is already there.
set -euo pipefail

packages=(
  libsepol-dev            # libsepol.a: the decision oracle for differential tests
  libselinux1-dev         # libselinux + headers: selabel-oracle, the file_contexts oracle (crates/oracle)
  selinux-policy-default  # the real policy: /etc/selinux/default/policy/policy.33
  selinux-utils           # matchpathcon and friends
  setools                 # seinfo / sesearch: independent counts and rules
  checkpolicy             # builds small test policies and older policy versions
  policycoreutils-python-utils  # audit2allow / audit2why
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install the Rust stable toolchain (rustup) first" >&2
  exit 1
fi
