//! Compiles `oracle.c` into the `sepol-oracle` executable in `OUT_DIR`,
//! linked statically against libsepol (`libsepol.a` from Debian's
//! `libsepol-dev`), and exposes its path as `SEPOL_ORACLE`.
//!
//! Static linking is required: the service functions the oracle uses
//! (`sepol_set_policydb`, `sepol_compute_av`, `sepol_context_to_sid`, ...)
//! are hidden in the shared library.

use std::env;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

const DEFAULT_LIBSEPOL_A: &str = "/usr/lib/x86_64-linux-gnu/libsepol.a";

fn run() -> Result<PathBuf, String> {
    let out_dir = env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?;
    let manifest_dir = env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR is not set")?;
    let src = PathBuf::from(manifest_dir).join("oracle.c");
    let lib = env::var_os("LIBSEPOL_A")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_LIBSEPOL_A));
    println!("cargo:rerun-if-env-changed=LIBSEPOL_A");
    println!("cargo:rerun-if-changed={}", lib.display());

    if !lib.exists() {
        return Err(format!(
            "{} not found; install it with `apt-get install libsepol-dev` \
             (or point LIBSEPOL_A at a libsepol.a)",
            lib.display()
        ));
    }
    if !PathBuf::from("/usr/include/sepol/policydb/services.h").exists() {
        return Err("libsepol headers not found (/usr/include/sepol); \
                    install them with `apt-get install libsepol-dev`"
            .to_string());
    }

    let exe = PathBuf::from(out_dir).join("sepol-oracle");
    let output = Command::new("cc")
        .arg("-O2")
        .arg("-Wall")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg(&lib)
        .output()
        .map_err(|e| format!("could not run `cc`: {e} (is a C compiler installed?)"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        for line in stderr.lines() {
            println!("cargo:warning=cc: {line}");
        }
        return Err(format!(
            "compiling oracle.c against {} failed ({}); \
             is libsepol-dev installed? (`apt-get install libsepol-dev`)",
            lib.display(),
            output.status
        ));
    }
    Ok(exe)
}

fn main() -> ExitCode {
    println!("cargo:rerun-if-changed=oracle.c");
    println!("cargo:rerun-if-changed=build.rs");
    match run() {
        Ok(exe) => {
            println!("cargo:rustc-env=SEPOL_ORACLE={}", exe.display());
            ExitCode::SUCCESS
        }
        Err(msg) => {
            println!("cargo:warning=rampart-oracle: {msg}");
            eprintln!("rampart-oracle build failed: {msg}");
            ExitCode::FAILURE
        }
    }
}
