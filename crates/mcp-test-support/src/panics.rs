//! A panic counter for the hostile-input suites: after every case nothing may have
//! panicked, not even a panic that was caught.

use std::cell::Cell;
use std::sync::Once;

thread_local! {
    /// How many panics this thread has seen, caught or not. The suites run their server
    /// or client on tokio's current-thread runtime, so every task it spawns runs here too,
    /// and a failing neighbour test (on another thread) does not count.
    static PANICS: Cell<usize> = const { Cell::new(0) };
}

/// Counts every panic from now on (the default hook still prints it).
pub fn count_panics() {
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
pub fn panics() -> usize {
    PANICS.with(Cell::get)
}
