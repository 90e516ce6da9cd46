# Two profiles with the same attachment: an exec matches both equally.
profile dup1 /opt/dup/* {
}
profile dup2 /opt/dup/* {
}
profile longer /opt/dup/long* {
}
profile caller /usr/bin/caller {
  /opt/dup/x pix,
  /opt/dup/y px,
}
