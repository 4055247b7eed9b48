//! Why an icon may not be used.

/// Why an icon may not be used: what [`Error::Icon`](crate::Error::Icon) carries, from
/// [`check_icon`](crate::icons::check_icon).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IconErrorKind {
    /// The URI's scheme is neither `https` nor `data` (lowercased here), or it has none.
    #[error("icon URI scheme {0:?} is neither https nor data")]
    Scheme(String),
    /// The URI is malformed: characters outside visible ASCII, no host, a `data:` URI
    /// without its comma.
    #[error("the icon URI is malformed: {0}")]
    Malformed(&'static str),
    /// An `https` URI carries credentials (`user:password@`), which an icon fetch must
    /// never send.
    #[error("the icon URI carries credentials")]
    Credentials,
    /// An `https` icon is on another origin than the server's.
    #[error("the icon is on {found}, not on the server's origin {expected}")]
    Origin {
        /// The icon's origin.
        found: String,
        /// The server's origin.
        expected: String,
    },
    /// The media type (of a `data:` URI, or the icon's `mimeType`) is not one of
    /// [`IMAGE_TYPES`](crate::icons::IMAGE_TYPES).
    #[error("media type {0:?} is not an accepted image type")]
    MediaType(String),
    /// The URI is longer than [`MAX_ICON_URI`](crate::icons::MAX_ICON_URI).
    #[error("the icon URI is longer than {} bytes", crate::icons::MAX_ICON_URI)]
    TooLong,
}
