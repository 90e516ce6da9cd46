# ptrace rules for tests/semantics.rs (`ptrace_as_apparmor_d_says`).
profile tracer {
  ptrace (trace) peer=tracee,
  ptrace (read) peer=read*,
  deny ptrace (read) peer=reader2,
}

profile tracee {
  ptrace (tracedby) peer=tracer,
}

profile reader {
  ptrace (readby) peer=tracer,
}

profile closed {
}

profile watcher flags=(complain) {
}
