#!/usr/bin/env bash
# Installs what Rampart needs on a fresh Debian 12 machine: the reference
# libraries and tools the tests compare against, and the system policy.
# Idempotent: skips apt when everything is already there.
set -euo pipefail

packages=(
  gcc                     # cc: the oracles (crates/oracle) and the adversarial tests' attack programs
  libsepol-dev            # libsepol.a: the decision oracle for differential tests
  libselinux1-dev         # libselinux + headers: selabel-oracle, the file_contexts oracle (crates/oracle)
  selinux-policy-default  # the real policy: /etc/selinux/default/policy/policy.33
  selinux-utils           # matchpathcon and friends
  setools                 # seinfo / sesearch: independent counts and rules
  checkpolicy             # builds small test policies and older policy versions
  policycoreutils-python-utils  # audit2allow / audit2why
  fapolicyd               # the enforcement benchmark's reference daemon (run only in a private namespace)
  apparmor                # apparmor_parser: compiles the profiles crates/apparmor reads (works without AppArmor in the kernel)
  python3-apparmor        # apparmor.aare / rule classes: the independent reference of crates/apparmor's tests
  apparmor-profiles       # shipped profiles in /etc/apparmor.d: test and benchmark corpus
  apparmor-profiles-extra # more shipped profiles in /usr/share/apparmor/extra-profiles
  strace                  # an unconfined tracer for the adversarial tests' traced exec transitions
  e2fsprogs               # mkfs.ext4: a disk-backed marked filesystem on a loop device (adversarial tests)
  btrfs-progs             # mkfs.btrfs, btrfs subvolume: a marked btrfs's subvolumes (adversarial tests)
  mount                   # losetup (blockdev: util-linux, always there)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# fapolicyd must never run system-wide here: its packaged rules deny
# executing any untrusted file on every mounted ext4/tmpfs/... filesystem,
# and its service is enabled and started on installation where systemd
# runs. The benchmark starts it itself, in the foreground, in a private
# mount namespace, watching only a tmpfs it mounted. So mask the unit
# before installing (an admin mask, a link to /dev/null, survives the
# package's `deb-systemd-helper unmask`), and stop, by pid, any fapolicyd
# the installation started anyway.
fapolicyd_before=""
if [[ " ${missing[*]} " == *" fapolicyd "* ]]; then
  fapolicyd_before=$(pgrep -x fapolicyd || true)
  if [[ ! -e /etc/systemd/system/fapolicyd.service ]]; then
    mkdir -p /etc/systemd/system
    ln -s /dev/null /etc/systemd/system/fapolicyd.service
    [[ -d /run/systemd/system ]] && systemctl daemon-reload || true
  fi
fi

if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [[ " ${missing[*]} " == *" fapolicyd "* ]]; then
  # Only a new fapolicyd in this (the system's) mount namespace: the
  # benchmark's own fapolicyd runs in a private one and is left alone.
  own_ns=$(readlink /proc/self/ns/mnt)
  for pid in $(pgrep -x fapolicyd || true); do
    if [[ " ${fapolicyd_before//$'\n'/ } " != *" $pid "* ]] &&
       [[ "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)" == "$own_ns" ]]; then
      echo "stopping fapolicyd (pid $pid), started by its installation" >&2
      kill -TERM "$pid" 2>/dev/null || true
    fi
  done
  if pgrep -x fapolicyd >/dev/null; then
    echo "warning: fapolicyd is running system-wide (pid $(pgrep -x fapolicyd | tr '\n' ' '))" >&2
  fi
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install the Rust stable toolchain (rustup) first" >&2
  exit 1
fi
