//! Byte and substring searches that run no CPU feature detection for small inputs.
//!
//! `memchr::memchr` and `memchr::memmem::Finder` pick AVX2 when the CPU has it, which they
//! learn from `std::is_x86_feature_detected!`: the first search of the process runs std's
//! whole detection, a handful of `cpuid` instructions. Under a hypervisor each `cpuid`
//! traps to it, which makes the detection a noticeable part of a stdio server's cold
//! start, which its first request (a line to find, a frame to check) always paid.
//!
//! On x86-64 an input under [`LARGE`] bytes is searched with memchr's SSE2 searchers, which
//! need no detection (SSE2 is part of the architecture); a larger one with memchr's usual
//! searchers, AVX2 where the CPU has it, so the detection is paid once, by the first large
//! input, where the wider search repays it. Elsewhere these are memchr's own searchers.

/// From this many bytes on, a search takes memchr's usual (detected) path on x86-64.
/// Below it, SSE2 and AVX2 differ too little to repay the detection.
pub const LARGE: usize = 4 << 10;

/// The index of the first `needle` in `haystack`.
///
/// ```
/// assert_eq!(mcp_json::find::byte(b'\n', b"{}\n{}\n"), Some(2));
/// assert_eq!(mcp_json::find::byte(b'\n', b"{}"), None);
/// ```
#[inline]
pub fn byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if haystack.len() < LARGE
        && let Some(one) = memchr::arch::x86_64::sse2::memchr::One::new(needle)
    {
        return one.find(haystack);
    }
    memchr::memchr(needle, haystack)
}

/// The index of the first `a` or `b` in `haystack`.
///
/// ```
/// assert_eq!(mcp_json::find::either(b'\n', b'\r', b"ab\rc\n"), Some(2));
/// ```
#[inline]
pub fn either(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if haystack.len() < LARGE
        && let Some(two) = memchr::arch::x86_64::sse2::memchr::Two::new(a, b)
    {
        return two.find(haystack);
    }
    memchr::memchr2(a, b, haystack)
}

/// A substring to look for, prepared once (for a `static`, in a `LazyLock`).
///
/// ```
/// let finder = mcp_json::find::Substring::new(b"inputResponses");
/// assert_eq!(finder.find(br#"{"inputResponses":{}}"#), Some(2));
/// assert_eq!(finder.find(b"input"), None);
/// ```
#[derive(Debug)]
pub struct Substring {
    needle: Box<[u8]>,
    /// The searches of inputs under [`LARGE`] bytes.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    small: Small,
    /// memchr's own finder, made (and the CPU's features detected) at the first large
    /// haystack.
    large: std::sync::OnceLock<memchr::memmem::Finder<'static>>,
}

/// SSE2's packed-pair search, and Rabin-Karp for haystacks too short for it and needles it
/// cannot take (a single byte).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[derive(Debug)]
struct Small {
    packed: Option<memchr::arch::x86_64::sse2::packedpair::Finder>,
    short: memchr::arch::all::rabinkarp::Finder,
}

impl Substring {
    /// Prepares a search for `needle`.
    pub fn new(needle: &[u8]) -> Substring {
        Substring {
            needle: needle.into(),
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            small: Small {
                packed: memchr::arch::x86_64::sse2::packedpair::Finder::new(needle),
                short: memchr::arch::all::rabinkarp::Finder::new(needle),
            },
            large: std::sync::OnceLock::new(),
        }
    }

    /// The index of the first occurrence of the needle in `haystack`.
    pub fn find(&self, haystack: &[u8]) -> Option<usize> {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if haystack.len() < LARGE {
            return match &self.small.packed {
                Some(packed) if haystack.len() >= packed.min_haystack_len() => {
                    packed.find(haystack, &self.needle)
                }
                _ => self.small.short.find(haystack, &self.needle),
            };
        }
        self.large
            .get_or_init(|| memchr::memmem::Finder::new(&self.needle).into_owned())
            .find(haystack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every position and length up to past two SSE2 blocks, and lengths on both sides of
    /// [`LARGE`], against a plain scan.
    #[test]
    fn the_searches_agree_with_a_plain_scan() {
        for len in (0..80).chain(LARGE - 3..LARGE + 3) {
            for at in (0..=len).filter(|at| len < 80 || at % 61 == 0 || *at + 20 > len) {
                let mut hay = vec![b'x'; len];
                if at < len {
                    hay[at] = b'\n';
                }
                let plain = hay.iter().position(|&b| b == b'\n');
                assert_eq!(byte(b'\n', &hay), plain, "{len} {at}");
                if at < len {
                    hay[at] = b'\r';
                }
                let plain = hay.iter().position(|&b| b == b'\r' || b == b'\n');
                assert_eq!(either(b'\n', b'\r', &hay), plain, "{len} {at}");
            }
        }
    }

    #[test]
    fn substrings_are_found_in_haystacks_of_every_length() {
        for needle in [&b"\\u"[..], b"inputResponses", b"q"] {
            let finder = Substring::new(needle);
            for len in (0..100).chain(LARGE - 3..LARGE + 3) {
                for at in (0..=len).filter(|at| len < 100 || at % 61 == 0 || *at + 20 > len) {
                    let mut hay = vec![b'i'; len];
                    if at + needle.len() <= len {
                        hay[at..at + needle.len()].copy_from_slice(needle);
                    }
                    let plain = hay.windows(needle.len()).position(|w| w == needle);
                    assert_eq!(finder.find(&hay), plain, "{needle:?} {len} {at}");
                }
            }
        }
    }
}
