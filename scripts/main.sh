#!/usr/bin/env bash
# The main job: build Rampart, load the system policy and answer real
# queries. (Becomes `rampart demo` once the enforcement daemon lands.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo build --release -q -p rampart
bin=target/release/rampart
set -x
$bin policy info
$bin check system_u:system_r:sshd_t:s0 system_u:object_r:sshd_exec_t:s0 file read execute entrypoint
$bin check system_u:system_r:httpd_t:s0 system_u:object_r:shadow_t:s0 file read || true
$bin explain system_u:system_r:httpd_t:s0 system_u:object_r:shadow_t:s0 file read || true
$bin label /etc/shadow /usr/bin/passwd /var/www
$bin label /srv/www/index.html --type file
