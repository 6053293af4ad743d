// libtorch lives outside the system library path: record it in the binary's rpath so
// `beryl` and the tests find libtorch_cpu.so (and never a Debian libtorch by accident).
fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    if let Ok(dir) = std::env::var("LIBTORCH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}/lib");
    }
    // The stubs tch links (.cargo/config.toml): a binary is linked again when setup.sh
    // rebuilds them.
    println!("cargo:rerun-if-env-changed=BERYL_TCH_DIR");
    if let Ok(dir) = std::env::var("BERYL_TCH_DIR") {
        println!("cargo:rerun-if-changed={dir}/libberyl_tch_lazy.a");
    }
    // FAISS is built into /usr/local by scripts/setup.sh; rust-lld does not search there.
    println!("cargo:rustc-link-search=native=/usr/local/lib");
    println!("cargo:rustc-link-arg=-Wl,-rpath,/usr/local/lib");
    // The library (this script also serves the binary and the lab): the few FAISS calls
    // its C API lacks, against the FAISS that setup.sh installed.
    if std::env::var("CARGO_PKG_NAME").as_deref() == Ok("beryl") {
        println!("cargo:rerun-if-changed=src/index/faiss_shim.cpp");
        cc::Build::new().cpp(true).std("c++17").include("/usr/local/include").file("src/index/faiss_shim.cpp").compile("beryl_faiss_shim");
        println!("cargo:rustc-link-lib=dylib=faiss");
    }
}
