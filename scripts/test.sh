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
# --all-features: the benchmark harness (`rampart --features bench`) too.
# --include-ignored: the tests that need root, the system policy or a tool
# installed above are #[ignore]d for a plain `cargo test`; here (root,
# everything installed) they run, and one without what it needs fails.
cargo test --release --workspace --all-targets --all-features -- --include-ignored --nocapture 2>&1
# The shipped binary (default features) links no benchmark harness, and
# says so when asked for a benchmark.
if cargo tree -e normal -p rampart | grep -q plotters; then
  echo "the default rampart build links plotters (the benchmark harness)" >&2
  exit 1
fi
cargo test --release -p rampart --test usage -- --include-ignored 2>&1
# The concurrency protocols (AVC, ignore-mark epochs), model-checked
# (separate target dir:
# --cfg loom rebuilds everything).
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p rampart-avc --test loom 2>&1
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p rampart-enforce --test loom 2>&1
