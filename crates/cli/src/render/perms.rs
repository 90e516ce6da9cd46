//! Permission sets: `{ getattr open read }`.

use rampart_policy::{AccessVector, ClassId, Policy};

/// The names of the permissions in `av`, sorted by name (as sesearch
/// prints them); bits the class does not name appear as hex.
pub fn names(policy: &Policy, class: ClassId, av: AccessVector) -> Vec<String> {
    let mut v = policy.av_to_names(class, av);
    v.sort_unstable();
    v
}

/// `{ a b }`, and `{ }` when empty: the form `check` prints.
pub fn braced<S: AsRef<str>>(names: &[S]) -> String {
    let mut s = String::from("{ ");
    for n in names {
        s.push_str(n.as_ref());
        s.push(' ');
    }
    s.push('}');
    s
}

/// sesearch's form: a single name bare, several braced.
pub fn sesearch<S: AsRef<str>>(names: &[S]) -> String {
    match names {
        [one] => one.as_ref().to_owned(),
        _ => braced(names),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(braced::<&str>(&[]), "{ }");
        assert_eq!(braced(&["a", "b"]), "{ a b }");
        assert_eq!(sesearch(&["a"]), "a");
        assert_eq!(sesearch(&["a", "b"]), "{ a b }");
    }
}
