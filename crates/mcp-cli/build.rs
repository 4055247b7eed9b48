//! How the `mcp` binary is linked (issue #8, `docs/PERFORMANCE.md`, "Resident size: the
//! hot functions together" and "Cold start and resident size, 2026-12-01").
//!
//! - The functions a server runs are laid out first, in the order of `hot-symbols.txt`
//!   (`cargo xtask hot-symbols` writes it): scattered over the binary's 14 MB of code they
//!   kept about 7 MB of it resident, since the kernel maps a file in 64 KiB runs around
//!   each page touched; together they take about 1.3 MB.
//! - `link.ld` moves the C runtime's `.init`, `.fini` and the PLT next to them (LLD put
//!   them after all the code; `INSERT BEFORE .text` only adds to its default layout).
//! - The binary is position-dependent (`-no-pie`, as Go links its programs by default).
//!   As a position-independent executable it carried 32,000 pointers the dynamic loader
//!   had to relocate at every start: 0.4 M instructions (a third of the example server's
//!   start-up) and 150 pages of `.data.rel.ro` copied and written before `main`, about
//!   0.35 ms of each start and 0.3 MB of resident memory. The cost is that the binary's
//!   own code and data sit at a fixed address (the libraries, the heap and the stack are
//!   still randomized); `MCP_CLI_PLAIN_LINK=1` links it position-independent again.
//!
//! - The unwinder is linked in statically (`libgcc_eh.a`, what `-static-libgcc` links for
//!   a C program), not loaded from `libgcc_s.so.1`: that library's constructor
//!   (`__cpu_indicator_init`) runs a dozen `cpuid` instructions at every start, and under
//!   a hypervisor each one traps to it (10–14 µs on the benchmark's VMs; with the loading
//!   of one library less, about 0.15–0.25 ms of each start). rustc asks for `-lgcc_s`
//!   itself, so a directory holding `libgcc_eh.a` under the name `libgcc_s.a` is put on
//!   the binary's library path: the linker takes the first `libgcc_s` it finds, and
//!   the binary imports only `_Unwind_*` functions from it, all of which `libgcc_eh.a`
//!   has. Without a C compiler that knows `libgcc_eh.a`, the binary links as before.
//!
//! All are options of LLD and of the C compiler driver rustc links with on
//! `x86_64-unknown-linux-gnu` (LLD is its default linker since 1.90; this workspace needs
//! 1.95), so they are passed only there, and only when nothing chose another linker (a
//! `linker` setting, `-C linker…`, `-fuse-ld`, or `-C link-self-contained` in
//! `RUSTFLAGS`). The library crates are never affected: these are link arguments of the
//! `mcp` binary alone, and a program built on the libraries is linked as its author
//! chooses.

use std::env;
use std::path::{Path, PathBuf};
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
    // After rustc's own `-pie`: the driver takes the last of the two.
    println!("cargo:rustc-link-arg-bin=mcp=-no-pie");
    let script = Path::new(&dir).join("link.ld");
    if let Some(script) = script.to_str().filter(|_| script.is_file())
        && !script.contains(',')
    {
        println!("cargo:rerun-if-changed=link.ld");
        println!("cargo:rustc-link-arg-bin=mcp=-Wl,-T,{script}");
    }
    if let Some(dir) = static_unwinder() {
        println!("cargo:rustc-link-arg-bin=mcp=-L{}", dir.display());
    }
}

/// A directory in `OUT_DIR` holding the C compiler's `libgcc_eh.a` as `libgcc_s.a`, or
/// `None` when the compiler does not have one.
fn static_unwinder() -> Option<PathBuf> {
    let out = PathBuf::from(env::var_os("OUT_DIR")?);
    let printed = Command::new("cc")
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .filter(|output| output.status.success())?;
    // The driver prints the bare name back when it has no such file.
    let archive = PathBuf::from(String::from_utf8(printed.stdout).ok()?.trim());
    if !archive.is_absolute() || !archive.is_file() {
        return None;
    }
    let dir = out.join("static-unwinder");
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::copy(&archive, dir.join("libgcc_s.a")).ok()?;
    Some(dir)
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
