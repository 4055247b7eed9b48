//! How the `mcp` process starts: its entry point, the runtime, and what std's start-up did
//! that the entry point has to do itself (issue #8, `docs/PERFORMANCE.md`, "Cold start
//! without std's start-up").

/// The program's entry point, which the C runtime calls: `mcp` has no Rust `fn main`
/// (`#![no_main]`), so std's start-up code does not run before it.
///
/// That code's main cost is finding the main thread's stack guard for its stack-overflow
/// message: glibc's `pthread_getattr_np` reads `/proc/self/maps` and parses it with
/// `sscanf`, 0.12 M of the 0.9 M instructions of the example server's start-up and about
/// 0.1 ms of its 1.5 ms cold start (issue #8, `docs/PERFORMANCE.md`, "Cold start without
/// std's start-up"). What else it did is done here or in [`start_runtime`]:
///
/// - the arguments: std reads them on glibc from `.init_array`, before any `main` (so
///   this entry point is used on glibc Linux only; elsewhere `mcp` has a Rust `main`);
/// - descriptors 0–2 opened on `/dev/null` when closed ([`keep_standard_fds_open`]);
/// - SIGPIPE ignored (writing to a closed pipe is an `EPIPE` error, not death): a
///   handler is registered through tokio instead ([`start_runtime`]);
/// - a panic ends the process with exit code 101, as from a Rust `main`;
/// - standard output flushed at exit.
///
/// A stack overflow is still caught by the guard page the kernel keeps below the stack;
/// it ends the process with SIGSEGV instead of std's one-line message.
///
/// This function is the workspace's one exception to `forbid(unsafe_code)`:
/// `#[no_mangle]` is an unsafe attribute because an exported symbol may clash with
/// another; `main` is the C runtime's own entry symbol, with C's signature.
#[cfg(all(not(test), target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    keep_standard_fds_open();
    let code = std::panic::catch_unwind(crate::run_main).unwrap_or(101);
    let _ = std::io::Write::flush(&mut std::io::stdout());
    code
}

/// Opens `/dev/null` on any of descriptors 0, 1 and 2 that is closed, as std's start-up
/// does: otherwise the next file this program opens would become its standard input,
/// output or error, and `println!` would write into it.
#[cfg(all(not(test), target_os = "linux", target_env = "gnu"))]
fn keep_standard_fds_open() {
    use std::os::fd::{AsRawFd as _, IntoRawFd as _};
    while let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        if null.as_raw_fd() > 2 {
            // Dropped, so closed: the three are open.
            break;
        }
        // Stays open as the missing standard descriptor.
        let _ = null.into_raw_fd();
    }
}

/// Builds a runtime (`current_thread` for one worker) and, within it, registers a SIGPIPE
/// handler: from then on a write to a closed pipe or socket fails with `EPIPE` instead of
/// ending the process, as std's start-up arranged by ignoring the signal (see [`main`]).
/// Children do not inherit a handler: `exec` resets it.
pub(crate) fn start_runtime(workers: usize) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = if workers == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(workers);
        builder
    };
    let runtime = builder.enable_all().build()?;
    #[cfg(unix)]
    {
        let _within = runtime.enter();
        let _ = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::pipe());
    }
    Ok(runtime)
}

/// The exit code of a command that did what it was asked.
pub(crate) const SUCCESS: std::ffi::c_int = 0;
/// The exit code of a command that failed (its error is one line on stderr).
pub(crate) const FAILURE: std::ffi::c_int = 1;
