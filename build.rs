//! With the `cuda` feature, builds the GPU probe harness (gpu/probe.cu) and the GPU
//! replay harness (gpu/replay.cu) against the sppark and blst sources that cargo
//! fetched, and embeds both in the bwsim binary.
//! Without the feature this does nothing.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=gpu/probe.cu");
    println!("cargo:rerun-if-changed=gpu/replay.cu");
    println!("cargo:rerun-if-changed=gpu/build.sh");
    println!("cargo:rerun-if-env-changed=NVCC");
    println!("cargo:rerun-if-env-changed=NVCC_LIBDIR");
    if std::env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let sppark_root = std::env::var("DEP_SPPARK_ROOT")
        .expect("the sppark crate did not report its source folder (DEP_SPPARK_ROOT)");
    let sppark_crate = PathBuf::from(&sppark_root)
        .parent()
        .map(PathBuf::from)
        .expect("sppark root has a parent folder");
    let blst_bindings = std::env::var("DEP_BLST_BINDINGS")
        .expect("the blst crate did not report its bindings folder (DEP_BLST_BINDINGS)");
    let blst_crate = PathBuf::from(&blst_bindings)
        .ancestors()
        .nth(2)
        .map(PathBuf::from)
        .expect("blst bindings folder has two parents");
    let nvcc = std::env::var("NVCC").unwrap_or_else(|_| "nvcc".into());
    let ok = Command::new(&nvcc)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        panic!(
            "feature `cuda` needs the CUDA compiler: `{nvcc} --version` failed. Install the \
             CUDA toolkit (or the nvidia-cuda-nvcc wheels, see docs/calibrate.md) and set \
             NVCC=/path/to/nvcc, or build without `--features cuda`."
        );
    }
    for (binary, source) in [
        ("bwsim-gpu-probe", "probe.cu"),
        ("bwsim-gpu-replay", "replay.cu"),
    ] {
        let status = Command::new("bash")
            .arg("gpu/build.sh")
            .arg(out.join(binary))
            .arg(&sppark_crate)
            .arg(&blst_crate)
            .arg(&nvcc)
            .arg(source)
            .status()
            .expect("could not run bash gpu/build.sh");
        if !status.success() {
            panic!("building the GPU harness gpu/{source} (gpu/build.sh) failed: {status}");
        }
    }
}
