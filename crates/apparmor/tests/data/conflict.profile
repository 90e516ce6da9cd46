# Two profiles with the same attachment: an exec matches both equally.
profile dup1 /opt/dup/* {
}
profile dup2 /opt/dup/* {
}
profile longer /opt/dup/long* {
}
