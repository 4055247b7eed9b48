//! What the client's tests share: scripted servers that say exactly what a test tells them
//! to (over the real stdio line framing, or as a raw HTTP/1.1 server on 127.0.0.1), and a
//! panic counter for the hostile-server suites.

#![allow(
    dead_code,
    reason = "each test binary uses a part of the shared module"
)]

pub(crate) mod http;
pub(crate) mod script;

use std::cell::Cell;
use std::sync::Once;

thread_local! {
    /// How many panics this thread has seen, caught or not. The suites run the client on
    /// tokio's current-thread runtime, so every task the client spawns runs here too, and
    /// a failing neighbour test (on another thread) does not count.
    static PANICS: Cell<usize> = const { Cell::new(0) };
}

/// Counts every panic from now on (the default hook still prints it).
pub(crate) fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|count| count.set(count.get() + 1));
            previous(info);
        }));
    });
}

/// The panics this thread has counted so far.
pub(crate) fn panics() -> usize {
    PANICS.with(Cell::get)
}
