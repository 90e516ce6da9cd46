#!/usr/bin/env bash
# The main job: build Rampart and run `rampart demo`, which enforces the
# system policy on real processes in a private mount namespace, on a
# tmpfs it creates, and cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo build --release -q -p rampart
bin=target/release/rampart
set -x
$bin policy info
$bin demo
