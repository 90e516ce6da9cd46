//! Writing policy objects as text, in the notation of setools (`sesearch`,
//! `seinfo`) so output can be compared with theirs.

pub mod cond;
pub mod constraint;
pub mod perms;
pub mod rule;
