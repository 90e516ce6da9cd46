#!/bin/sh
# Recompiles the seed policies in this directory from their .conf sources.
# Needs checkpolicy (Debian: apt-get install checkpolicy). Run from anywhere:
#   sh crates/policy/tests/data/regen.sh
# then copy the binaries into the fuzz corpus:
#   cp crates/policy/tests/data/*.3[0-3] fuzz/corpus/policy_reader/
set -eu
cd "$(dirname "$0")"
for v in 30 31 32 33; do
	checkpolicy -M -c "$v" -o "full_mls.$v" full_mls.conf
done
for v in 30 33; do
	checkpolicy -c "$v" -o "minimal.$v" minimal.conf
	checkpolicy -c "$v" -o "nonmls.$v" nonmls.conf
done
checkpolicy -c 31 -o nonmls.31 nonmls.conf
checkpolicy -M -c 33 -o minimal_mls.33 minimal_mls.conf
checkpolicy -c 33 -o many_attrs.33 many_attrs.conf
