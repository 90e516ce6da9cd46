# Signal rules for tests/semantics.rs (`signals_as_apparmor_d_says`).
profile sender {
  signal send set=(term, usr1) peer=receiver,
  signal send set=hup peer=rece*,
  signal send set=alrm peer=recv*,
  signal send set=rtmin+2 peer=receiver,
  signal (send, receive) peer=sender,
  signal receive peer=unconfined,
  audit signal send set=int peer=receiver,
  deny signal send set=kill peer=rec*,
  signal send set=(quit, kill) peer=receiver,
}

profile receiver {
  signal receive set=(term, hup, rtmin+2) peer=sender,
}

profile silent {
}

profile learner flags=(complain) {
  deny signal send set=kill peer=receiver,
}
