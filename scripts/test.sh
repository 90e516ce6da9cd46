#!/usr/bin/env bash
# Runs every test. With CI=true (or RAMPART_FULL=1) the differential test
# against libsepol runs its full sample (1,000,000+ queries).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [[ "${CI:-}" == "true" ]]; then
  export RAMPART_FULL=1
fi
# Formatting (rustfmt.toml) first: cheap, and a diff says what to fix.
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all --check
fi
cargo test --release --workspace --all-targets -- --nocapture 2>&1
# The concurrency protocols (AVC, ignore-mark epochs), model-checked
# (separate target dir:
# --cfg loom rebuilds everything).
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p rampart-avc --test loom 2>&1
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p rampart-enforce --test loom 2>&1
