//! Times loading a policy file from memory: `cargo run --release --example loadtime [PATH] [N]`.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().map_or_else(rampart_policy::default_policy_path, |p| Ok(p.into()))?;
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20);
    let bytes = std::fs::read(&path)?;
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = std::time::Instant::now();
        let p = rampart_policy::Policy::from_bytes(&bytes)?;
        times.push(t.elapsed());
        drop(p);
    }
    times.sort();
    println!("median load {:?} (min {:?}) over {n} loads of {}", times[n / 2], times[0], path.display());
    Ok(())
}
