//! The `mcp` binary's global allocator: mimalloc, asked through its plain entry points
//! whenever they give the alignment a layout needs (the `mimalloc` feature).
//!
//! The `mimalloc` crate's allocator passes every layout to `mi_malloc_aligned`. In
//! mimalloc 3 that call takes its fast path only when the next free block of the size
//! class happens to be aligned to the layout; otherwise (a page whose free list must be
//! collected first, a common case) it falls through to a generic path that, unless the
//! size class is a power of two, over-allocates (`size + align - 1`, a larger size class)
//! and marks the page as holding interior pointers. Alignments up to 16 bytes never need
//! any of that: mimalloc's `mi_malloc` aligns every block of 16 bytes or more to 16
//! (`MI_MAX_ALIGN_SIZE`, asserted in its `_mi_page_malloc_zero`), and smaller blocks to
//! their size class (8 or 16). So a layout whose alignment is at most 16 and at most its
//! size, which is nearly every Rust allocation, goes to `mi_malloc` (the condition std's
//! own `System` allocator uses before `malloc`); the rest to the aligned calls.
//!
//! Measured with callgrind on `mcp serve-example` answering 20,000 small `tools/call`s
//! (16 allocations each): see `docs/PERFORMANCE.md`, "The changes of 2026-12-01,
//! 07:00–10:00 UTC".
//!
//! This is the crate's one use of unsafe code (ARCHITECTURE.md, "Logging
//! and unsafe code"): implementing `GlobalAlloc` is unsafe by definition.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};

/// The alignment every mimalloc block of at least this size has (`MI_MAX_ALIGN_SIZE`).
const MI_MAX_ALIGN_SIZE: usize = 16;

/// Whether mimalloc's plain calls give a block of `size` bytes the alignment `align`.
#[inline]
fn plain(align: usize, size: usize) -> bool {
    align <= MI_MAX_ALIGN_SIZE && align <= size
}

/// mimalloc as the global allocator (see the module docs).
pub(crate) struct MiMalloc;

// SAFETY: every method hands mimalloc a request it documents, and returns its answer:
// a block of at least the size asked for, aligned as the layout asks (the plain calls only
// when `plain` holds, see the module docs), or null on failure; `dealloc` and `realloc`
// receive only pointers this allocator returned, which `mi_free` and the realloc calls
// accept whichever call made them.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if plain(layout.align(), layout.size()) {
                mi_malloc(layout.size()).cast()
            } else {
                mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if plain(layout.align(), layout.size()) {
                mi_zalloc(layout.size()).cast()
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (the caller's contract).
        unsafe { mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout` (the caller's contract);
        // the block returned is aligned as `layout` asks for `new_size` bytes.
        unsafe {
            if plain(layout.align(), new_size) {
                mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size and alignment comes back aligned and usable, zeroed when asked, through
    /// both kinds of call, and keeps its bytes when grown or shrunk.
    #[test]
    fn blocks_are_aligned_as_asked_through_both_paths() {
        let allocator = MiMalloc;
        for align in [1, 2, 4, 8, 16, 32, 64, 128, 4096] {
            for size in [1, 3, 8, 12, 16, 24, 40, 48, 100, 1000, 5000, 70_000] {
                let layout = Layout::from_size_align(size, align).expect("a valid layout");
                // SAFETY: non-zero sizes; every block is written within its size and
                // freed once, with the layout it has.
                unsafe {
                    let z = allocator.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "zeroed {size}, align {align}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    allocator.dealloc(z, layout);

                    for new_size in [size / 2 + 1, size * 3] {
                        let p = allocator.alloc(layout);
                        assert_eq!(p as usize % align, 0, "{size}, align {align}");
                        p.write_bytes(0xA5, size);
                        let q = allocator.realloc(p, layout, new_size);
                        assert_eq!(q as usize % align, 0, "{size} -> {new_size}, align {align}");
                        let kept = size.min(new_size);
                        assert!(
                            std::slice::from_raw_parts(q, kept)
                                .iter()
                                .all(|&b| b == 0xA5)
                        );
                        let grown = Layout::from_size_align(new_size, align).expect("valid");
                        allocator.dealloc(q, grown);
                    }
                }
            }
        }
    }
}
