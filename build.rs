//! Regenerates include/gpuprims.h from the exported items in src/ffi with cbindgen, and
//! gives the shared library its SONAME. The header is committed; CI rebuilds and fails
//! when it differs.
use std::{env, path::PathBuf};

fn main() {
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    // The version macros come from the crate version.
    println!("cargo:rerun-if-changed=Cargo.toml");
    // A hand-edited header is regenerated too (cbindgen rewrites only on a change).
    println!("cargo:rerun-if-changed=include/gpuprims.h");

    let version = |part: &str| env::var(format!("CARGO_PKG_VERSION_{part}")).unwrap();
    let (major, minor, patch) = (version("MAJOR"), version("MINOR"), version("PATCH"));

    // libgpuprims.so.<major>, as C libraries name themselves: programs record that name
    // (DT_NEEDED), and an install puts libgpuprims.so.<major> beside the versioned file.
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libgpuprims.so.{major}");
    }

    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cbindgen.toml is readable");
    let version_macros = format!(
        "\n/* The version of this header. gpuprims_version() returns the version of the library\n \
         * actually loaded, as GPUPRIMS_VERSION: (major << 16) | (minor << 8) | patch. */\n\
         #define GPUPRIMS_VERSION_MAJOR {major}\n\
         #define GPUPRIMS_VERSION_MINOR {minor}\n\
         #define GPUPRIMS_VERSION_PATCH {patch}\n\
         #define GPUPRIMS_VERSION \\\n  \
         ((GPUPRIMS_VERSION_MAJOR << 16) | (GPUPRIMS_VERSION_MINOR << 8) | GPUPRIMS_VERSION_PATCH)\n"
    );
    config.after_includes = Some(config.after_includes.take().unwrap_or_default() + &version_macros);
    match cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
    {
        Ok(bindings) => {
            bindings.write_to_file(crate_dir.join("include/gpuprims.h"));
        }
        Err(e) => panic!("cbindgen failed: {e}"),
    }
}
