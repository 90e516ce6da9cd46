#!/usr/bin/env bash
# Wall time of `rampart relabel -n -R DIR` beside libselinux's restorecon
# engine on the same tree (issue 3), in interleaved rounds; prints each
# side's median and the ratio.
#
# The reference is `setfiles -n FILE_CONTEXTS DIR`: restorecon and setfiles
# are one program (policycoreutils 3.4) around libselinux's
# selinux_restorecon(), but restorecon exits at once without doing
# anything when SELinux is disabled in the kernel, while setfiles does the
# whole walk (lstat, selabel_lookup, lgetfilecon per file). Both sides run
# with -n and no -v: no output, nothing written.
#
# usage: scripts/bench-relabel.sh [DIR] (default /usr); ROUNDS=N (default 5)
# Build first: cargo build --release -p rampart
set -euo pipefail

dir=${1:-/usr}
rounds=${ROUNDS:-5}
rampart=${RAMPART:-target/release/rampart}
type=$(sed -n 's/^SELINUXTYPE=//p' /etc/selinux/config 2>/dev/null | tail -n 1)
fc=/etc/selinux/${type:-default}/contexts/files/file_contexts

for need in "$rampart" /usr/sbin/setfiles "$fc"; do
  [[ -e $need ]] || { echo "bench-relabel: $need not found" >&2; exit 2; }
done

ours=("$rampart" relabel -n -R "$dir")
theirs=(/usr/sbin/setfiles -n "$fc" "$dir")

# Milliseconds of wall time of one run; fails if the command fails.
ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>&1 || { echo "bench-relabel: \`$*\` failed" >&2; exit 1; }
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

files=$(find "$dir" -xdev | wc -l)
echo "tree: $dir, $files entries (find -xdev); reference: ${theirs[*]}"
if command -v selinuxenabled >/dev/null && ! selinuxenabled; then
  start=$(date +%s%N)
  restorecon -n -R "$dir" >/dev/null 2>&1 || true
  echo "SELinux is disabled: restorecon -n -R $dir returns in $((($(date +%s%N) - start) / 1000000)) ms without walking"
fi

echo "warm-up run of each side"
ms "${ours[@]}" >/dev/null
ms "${theirs[@]}" >/dev/null

a=() b=()
for ((i = 1; i <= rounds; i++)); do
  if ((i % 2)); then
    a+=("$(ms "${ours[@]}")"); b+=("$(ms "${theirs[@]}")")
  else
    b+=("$(ms "${theirs[@]}")"); a+=("$(ms "${ours[@]}")")
  fi
  echo "round $i: rampart ${a[-1]} ms, setfiles ${b[-1]} ms"
done

ma=$(printf '%s\n' "${a[@]}" | median)
mb=$(printf '%s\n' "${b[@]}" | median)
awk -v a="$ma" -v b="$mb" -v n="$files" 'BEGIN {
  printf "median: rampart relabel %.0f ms (%.0f files/s), setfiles %.0f ms (%.0f files/s); ratio %.3fx\n",
    a, n / (a / 1000), b, n / (b / 1000), a / b
}'
