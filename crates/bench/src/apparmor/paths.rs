//! The files the workload's threads open: what a web server under the
//! lighttpd profile opens (its documents, virtual hosts, configuration,
//! libraries, time zones), and about one open in ten of a file the
//! profile does not grant (keys, backups, other users' files), so both
//! answers occur. The engine decides which is which, not this list.
//!
//! Why generated: the seed's workload is nginx serving many distinct
//! files; a few hand-written paths would all stay in one CPU cache line
//! set and understate the walk. Seeded, so every run and machine opens
//! the same paths.

use std::collections::HashSet;

use crate::rng::Rng;

/// Seed of the path set and stream.
pub const SEED: u64 = 0x5e1f_2026_0003;

/// One file to open: an id (what a cache keys on, like an inode number)
/// and its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathReq {
    pub id: u64,
    pub path: Box<[u8]>,
}

const DIRS: [&str; 8] = ["", "css/", "js/", "img/", "blog/2024/", "docs/api/", "static/fonts/", "shop/items/"];
const EXTS: [&str; 6] = ["html", "css", "js", "png", "woff2", "json"];

/// A path the profile is meant to grant, of a kind picked by `rng`.
fn granted(rng: &mut Rng, n: usize) -> String {
    let dir = DIRS[rng.below(DIRS.len())];
    let ext = EXTS[rng.below(EXTS.len())];
    match rng.below(10) {
        0..=3 => format!("/var/www/html/site{}/{dir}page{n}.{ext}", rng.below(16)),
        4..=5 => format!("/srv/www/htdocs/{dir}file{n}.{ext}"),
        6 => format!("/srv/www/vhosts/host{}.example.org/{dir}index{n}.{ext}", rng.below(32)),
        7 => format!("/var/cache/lighttpd/compress/{dir}page{n}.{ext}.gz"),
        8 => format!("/usr/lib/x86_64-linux-gnu/perl5/5.36/auto/mod{n}.so"),
        _ => format!("/usr/share/zoneinfo/Region{}/City{n}", rng.below(8)),
    }
}

/// A path the profile is not meant to grant.
fn refused(rng: &mut Rng, n: usize) -> String {
    match rng.below(4) {
        0 => format!("/etc/ssh/ssh_host_{n}_key"),
        1 => format!("/var/www/backup/db{n}.sql"),
        2 => format!("/home/user{}/.ssh/id_{n}", rng.below(64)),
        _ => format!("/srv/www/private/report{n}.pdf"),
    }
}

/// `count` distinct paths (ids 0..count), about one in ten refused.
pub fn generate(count: usize) -> Vec<PathReq> {
    let mut rng = Rng::new(SEED);
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    let mut n = 0usize;
    while out.len() < count {
        n += 1;
        let path = if rng.chance(1, 10) { refused(&mut rng, n) } else { granted(&mut rng, n) };
        if seen.insert(path.clone()) {
            out.push(PathReq { id: out.len() as u64, path: path.into_bytes().into_boxed_slice() });
        }
    }
    out
}

/// `len` indexes into `paths`: shuffled passes over all of them, so each
/// is opened about equally often and in no fixed order.
pub fn stream(paths: usize, len: usize) -> Vec<usize> {
    let mut rng = Rng::new(SEED ^ 0x5742);
    let mut out = Vec::with_capacity(len);
    while out.len() < len && paths > 0 {
        let mut pass: Vec<usize> = (0..paths).collect();
        rng.shuffle(&mut pass);
        pass.truncate(len - out.len());
        out.extend(pass);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_distinct_and_numbered() {
        let p = generate(500);
        assert_eq!(p.len(), 500);
        assert!(p.iter().enumerate().all(|(i, r)| r.id == i as u64));
        assert_eq!(p.iter().map(|r| &r.path).collect::<HashSet<_>>().len(), 500);
    }

    #[test]
    fn the_stream_opens_each_path_equally_often() {
        let s = stream(7, 70);
        let mut counts = [0usize; 7];
        for i in s {
            counts[i] += 1;
        }
        assert_eq!(counts, [10; 7]);
    }
}
