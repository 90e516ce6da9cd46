# Network rules for tests/semantics.rs (`sockets_as_apparmor_d_says`) and
# tests/audit_log.rs: the sockets a profile may make.
profile streamer {
  network inet stream,
  network inet6 dgram,
  network unix,
}

profile anything {
  network,
  deny network inet6,
  audit network inet dgram,
  deny network packet,
  audit deny network netlink raw,
}

profile nothing {
}

profile learner flags=(complain) {
  network inet stream,
}
