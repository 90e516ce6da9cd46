# A profile in namespace `other` (tests/semantics.rs).
profile :other:foo /opt/foo {
  /f r,
}
