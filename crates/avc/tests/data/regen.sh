#!/bin/sh
# Recompiles the AVC test policies. avc_b.conf is derived from avc_a.conf
# (the "reloaded" policy: secret_t and the read rule on data_t removed), so
# edit avc_a.conf only. Needs checkpolicy (Debian: apt-get install
# checkpolicy); the output is deterministic. Run from anywhere:
#   sh crates/avc/tests/data/regen.sh
set -eu
cd "$(dirname "$0")"
sed -e '/secret_t/d' \
	-e 's/allow user_t data_t:file { read getattr open };/allow user_t data_t:file { getattr open };/' \
	-e 's/^# AVC test policy, generation A.*/# AVC test policy, generation B: avc_a.conf without secret_t and without/' \
	-e 's/^# a test in crates.*/# the read rule on data_t (generated from avc_a.conf by regen.sh)./' \
	-e '/^# "reload" that removed/d' \
	avc_a.conf > avc_b.conf
checkpolicy -c 33 -o avc_a.33 avc_a.conf
checkpolicy -c 33 -o avc_b.33 avc_b.conf
