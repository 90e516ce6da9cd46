//! Compiles the two reference programs into `OUT_DIR` and exports their
//! paths:
//!
//! - `oracle.c` into `sepol-oracle` (`SEPOL_ORACLE`), linked statically
//!   against libsepol (`libsepol.a` from Debian's `libsepol-dev`).
//!   Static linking is required: the service functions the oracle uses
//!   (`sepol_set_policydb`, `sepol_compute_av`, `sepol_context_to_sid`,
//!   ...) are hidden in the shared library.
//! - `selabel_oracle.c` into `selabel-oracle` (`SELABEL_ORACLE`), linked
//!   with libselinux (Debian's `libselinux1-dev`): libselinux's own
//!   file_contexts lookup, the reference for rampart-label.
//!
//! Both live here, in a crate that is only ever a dev-dependency, so
//! that building Rampart itself needs neither a C compiler nor these
//! libraries.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const DEFAULT_LIBSEPOL_A: &str = "/usr/lib/x86_64-linux-gnu/libsepol.a";
const SELINUX_HEADER: &str = "/usr/include/selinux/label.h";

/// Runs `cc -O2 -Wall ARGS -o EXE SRC LIBS`; `package` names what to
/// install when it fails.
fn compile(src: &Path, exe: &Path, libs: &[&std::ffi::OsStr], package: &str) -> Result<(), String> {
    let output = Command::new("cc")
        .args(["-O2", "-Wall", "-Wextra", "-o"])
        .arg(exe)
        .arg(src)
        .args(libs)
        .output()
        .map_err(|e| format!("could not run `cc`: {e}; install a C compiler (`apt-get install gcc`)"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        for line in stderr.lines() {
            println!("cargo:warning=cc: {line}");
        }
        return Err(format!(
            "compiling {} failed ({}); is {package} installed? (`apt-get install {package}`)",
            src.display(),
            output.status
        ));
    }
    Ok(())
}

fn sepol_oracle(manifest_dir: &Path, out_dir: &Path) -> Result<PathBuf, String> {
    let lib = env::var_os("LIBSEPOL_A").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(DEFAULT_LIBSEPOL_A));
    println!("cargo:rerun-if-env-changed=LIBSEPOL_A");
    println!("cargo:rerun-if-changed={}", lib.display());
    if !lib.exists() {
        return Err(format!(
            "{} not found; install it with `apt-get install libsepol-dev` \
             (or point LIBSEPOL_A at a libsepol.a)",
            lib.display()
        ));
    }
    if !Path::new("/usr/include/sepol/policydb/services.h").exists() {
        return Err("libsepol headers not found (/usr/include/sepol); \
                    install them with `apt-get install libsepol-dev`"
            .to_string());
    }
    let exe = out_dir.join("sepol-oracle");
    compile(&manifest_dir.join("oracle.c"), &exe, &[lib.as_os_str()], "libsepol-dev")?;
    Ok(exe)
}

fn selabel_oracle(manifest_dir: &Path, out_dir: &Path) -> Result<PathBuf, String> {
    println!("cargo:rerun-if-changed={SELINUX_HEADER}");
    if !Path::new(SELINUX_HEADER).exists() {
        return Err(format!(
            "{SELINUX_HEADER} not found: selabel-oracle needs libselinux's headers and library; \
             install them with `apt-get install libselinux1-dev`"
        ));
    }
    let exe = out_dir.join("selabel-oracle");
    compile(&manifest_dir.join("selabel_oracle.c"), &exe, &["-lselinux".as_ref()], "libselinux1-dev")?;
    Ok(exe)
}

fn run() -> Result<(), String> {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR is not set")?);
    let sepol = sepol_oracle(&manifest_dir, &out_dir)?;
    let selabel = selabel_oracle(&manifest_dir, &out_dir)?;
    println!("cargo:rustc-env=SEPOL_ORACLE={}", sepol.display());
    println!("cargo:rustc-env=SELABEL_ORACLE={}", selabel.display());
    Ok(())
}

fn main() -> ExitCode {
    println!("cargo:rerun-if-changed=oracle.c");
    println!("cargo:rerun-if-changed=selabel_oracle.c");
    println!("cargo:rerun-if-changed=build.rs");
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            println!("cargo:warning=rampart-oracle: {msg}");
            eprintln!("rampart-oracle build failed: {msg}");
            ExitCode::FAILURE
        }
    }
}
