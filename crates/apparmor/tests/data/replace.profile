# Loaded after semantics.profile: replaces `t` in place, adds `fresh`.
profile t /usr/bin/t {
  /etc/b r,
}
profile fresh {
}
