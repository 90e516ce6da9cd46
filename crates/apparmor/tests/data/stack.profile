# Stacked and cross-namespace exec targets (tests/semantics.rs).
profile s /usr/bin/s {
  /x/stack px -> &tgt,
  /x/stackix pix -> &tgt,
  /x/stackattach px -> &tgt,
  /x/nsx px -> :other:foo,
}
profile tgt /x/tgt {
}
profile att /x/stackattach {
}
