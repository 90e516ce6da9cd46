# Hand-written expectations for this profile are in tests/semantics.rs,
# from apparmor.d(5).
@{VAR}=/srv/a /srv/b
@{ONE}=/opt/one

profile t /usr/bin/t {
  /etc/a r,
  /g/*.conf r,
  /h/** rw,
  /q/fil? r,
  /c/[ab]x r,
  /n/[^ab]x r,
  /alt/{one,two}/f r,
  @{VAR}/data r,
  @{ONE}/f r,
  owner /o/** rw,
  /d/** rw,
  deny /d/secret w,
  audit deny /d/loud w,
  audit /au/** r,
  /ap/log a,
  /k/lock rk,
  /m/lib.so mr,
  /dir/ r,
  /x/ix ix,
  /x/px Px,
  /x/pxmissing px,
  /x/pix pix,
  /x/cx cx -> child,
  /x/cxmissing cx -> nochild,
  /x/ux ux,
  /x/Ux Ux,
  /x/named px -> tgt,
  /x/pux pux,
  /x/PUx PUx,
  /x/cix cix,
  /x/Pix Pix,
  /x/cxattach cx,
  deny /x/denied x,
  /l/src rw,
  /l/other r,
  link /l/new -> /l/src,
  link subset /l/sub -> /l/src,
  link subset /l/sub2 -> /l/other,
  /l/sub2 rw,

  profile child /x/cxattach {
    /c r,
  }
}

profile tgt /x/px {
}

profile cm /usr/bin/cm flags=(complain) {
  /cm/ok r,
  deny /cm/no w,
  audit deny /cm/loud w,
}

profile kl flags=(kill) {
  /kl/ok r,
}

profile au flags=(audit) {
  /au/ok r,
}

profile un flags=(unconfined) {
}
