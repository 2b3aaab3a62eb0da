//! Regenerates include/gpuprims.h from the exported items in src/ffi with cbindgen.
//! The header is committed; CI rebuilds and fails when it differs.
use std::{env, path::PathBuf};

fn main() {
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    // A hand-edited header is regenerated too (cbindgen rewrites only on a change).
    println!("cargo:rerun-if-changed=include/gpuprims.h");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cbindgen.toml is readable");
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
