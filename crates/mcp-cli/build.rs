//! How the `mcp` binary is linked (issue #8, `docs/PERFORMANCE.md`, "Resident size").
//!
//! - The functions a server runs are laid out first, in the order of `hot-symbols.txt`
//!   (`cargo xtask hot-symbols` writes it): scattered over the binary's 18 MB of code they
//!   kept about 7 MB of it resident, since the kernel maps a file in 64 KiB runs around
//!   each page touched; together they take about 1.4 MB.
//! - Relative relocations are packed (`DT_RELR`): the loader then reads a table of a few
//!   kilobytes instead of 850 KB of `Elf64_Rela` entries at start-up.
//!
//! Both are flags of LLD, the linker rustc uses on `x86_64-unknown-linux-gnu` since 1.90
//! (this workspace needs 1.95), so they are passed only there, and only when nothing
//! chose another linker (a `linker` setting, `-C linker…`, `-fuse-ld`, or
//! `-C link-self-contained` in `RUSTFLAGS`). Packed relocations need glibc 2.36 where the
//! binary runs, so they are passed only when the build machine has it and builds for
//! itself. `MCP_CLI_PLAIN_LINK=1` turns both off. The library crates are never affected:
//! these are link arguments of the `mcp` binary alone.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=hot-symbols.txt");
    println!("cargo:rerun-if-env-changed=MCP_CLI_PLAIN_LINK");
    if env::var_os("MCP_CLI_PLAIN_LINK").is_some_and(|v| v != "0") || !default_lld() {
        return;
    }
    let dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let order = Path::new(&dir).join("hot-symbols.txt");
    if let Some(order) = order.to_str().filter(|_| order.is_file())
        && !order.contains(',')
    {
        println!("cargo:rustc-link-arg-bin=mcp=-Wl,--symbol-ordering-file={order}");
        println!("cargo:rustc-link-arg-bin=mcp=-Wl,--no-warn-symbol-ordering");
    }
    if env::var("HOST") == env::var("TARGET") && glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bin=mcp=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the binary is linked by rustc's own LLD: the target where it is the default,
/// and no setting that picks another.
fn default_lld() -> bool {
    if env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu")
        || env::var_os("RUSTC_LINKER").is_some()
    {
        return false;
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    !["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|word| flags.contains(word))
}

/// Whether the build machine's C library is glibc `major.minor` or later
/// (`getconf GNU_LIBC_VERSION` prints `glibc 2.36`).
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(have_major), Some(have_minor)) => (have_major, have_minor) >= (major, minor),
        _ => false,
    }
}
