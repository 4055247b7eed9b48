//! Icons from servers, checked before anything fetches or shows them
//! (`docs/2026-07-28/basic/index.mdx`, `icons`, Security considerations).
//!
//! Tools, prompts, resources and implementations may carry `icons`, whose `src` the
//! server chooses. The spec tells consumers to treat them as untrusted: clients **MUST**
//! reject icon URIs other than `https:` and `data:` (`javascript:`, `file:`, `ftp:`,
//! `ws:`, local app schemes), fetch them without credentials, keep to the server's
//! origin, and keep a strict allowlist of image types. This module makes that decision
//! as data: [`check_icon`] says whether one icon may be used and why not, and
//! [`safe_icons`] keeps the ones that may. It fetches nothing: a consumer that fetches an
//! icon must still refuse redirects to other origins, send no cookies or `Authorization`,
//! bound the bytes it reads, and check the bytes' real type (an SVG can carry script).
//!
//! ```
//! use mcp_client::icons::{IconError, check_icon};
//! use mcp_types::Icon;
//!
//! assert_eq!(check_icon(&Icon::new("https://mcp.example.com/tool.png"), Some("https://mcp.example.com")), Ok(()));
//! assert_eq!(check_icon(&Icon::new("data:image/png;base64,iVBORw0KGgo="), None), Ok(()));
//! assert!(matches!(check_icon(&Icon::new("javascript:alert(1)"), None), Err(IconError::Scheme(s)) if s == "javascript"));
//! assert!(matches!(check_icon(&Icon::new("https://tracker.example/p.png"), Some("https://mcp.example.com")), Err(IconError::Origin { .. })));
//! ```

use mcp_types::Icon;

/// The image media types an icon may have (the spec's required `image/png` and
/// `image/jpeg`, with `image/jpg`, and its recommended `image/svg+xml` and `image/webp`).
pub const IMAGE_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/jpg",
    "image/svg+xml",
    "image/webp",
];

/// The longest icon URI accepted, in bytes (a `data:` URI holds the whole image).
pub const MAX_ICON_URI: usize = 512 << 10;

/// Why an icon may not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IconError {
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
    /// [`IMAGE_TYPES`].
    #[error("media type {0:?} is not an accepted image type")]
    MediaType(String),
    /// The URI is longer than [`MAX_ICON_URI`].
    #[error("the icon URI is longer than {MAX_ICON_URI} bytes")]
    TooLong,
}

/// Whether `icon` may be used: an `https` URI without credentials (on `server_origin`,
/// such as `https://mcp.example.com`, when the server has one: a stdio server has none),
/// or a `data:` URI of an image type, in either case with a `mimeType` (if any) among
/// [`IMAGE_TYPES`].
pub fn check_icon(icon: &Icon, server_origin: Option<&str>) -> Result<(), IconError> {
    let src = icon.src.as_str();
    if src.len() > MAX_ICON_URI {
        return Err(IconError::TooLong);
    }
    // RFC 3986: a URI is visible ASCII; anything else (spaces, controls, bidirectional
    // overrides that disguise a name) has to be percent-encoded.
    if !src.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(IconError::Malformed("characters outside visible ASCII"));
    }
    if let Some(mime) = &icon.mime_type {
        media_type(mime)?;
    }
    let Some((scheme, rest)) = src.split_once(':') else {
        return Err(IconError::Scheme(String::new()));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "https" => {
            let origin = https_origin(rest)?;
            match server_origin {
                Some(expected) if !same_origin(&origin, expected) => Err(IconError::Origin {
                    found: origin,
                    expected: expected.to_owned(),
                }),
                _ => Ok(()),
            }
        }
        "data" => {
            let (header, _) = rest
                .split_once(',')
                .ok_or(IconError::Malformed("a data URI without a comma"))?;
            media_type(header.split(';').next().unwrap_or_default())
        }
        other => Err(IconError::Scheme(other.to_owned())),
    }
}

/// The icons of `icons` that [`check_icon`] accepts, in order; each refused one is logged.
pub fn safe_icons(icons: &[Icon], server_origin: Option<&str>) -> Vec<Icon> {
    icons
        .iter()
        .filter(|icon| match check_icon(icon, server_origin) {
            Ok(()) => true,
            Err(reason) => {
                tracing::warn!(%reason, "an icon from the server was refused");
                false
            }
        })
        .cloned()
        .collect()
}

fn media_type(value: &str) -> Result<(), IconError> {
    let essence = value.split(';').next().unwrap_or_default().trim();
    if IMAGE_TYPES.iter().any(|t| t.eq_ignore_ascii_case(essence)) {
        Ok(())
    } else {
        Err(IconError::MediaType(value.to_owned()))
    }
}

/// The origin (`https://host[:port]`, lowercase, without the default port) of the part of
/// an `https` URI after its scheme.
fn https_origin(rest: &str) -> Result<String, IconError> {
    let authority = rest
        .strip_prefix("//")
        .ok_or(IconError::Malformed("no authority"))?;
    let authority = authority.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(IconError::Credentials);
    }
    if authority.is_empty() || authority.starts_with(':') {
        return Err(IconError::Malformed("no host"));
    }
    let authority = authority.to_ascii_lowercase();
    let authority = authority.strip_suffix(":443").unwrap_or(&authority);
    Ok(format!("https://{authority}"))
}

fn same_origin(origin: &str, expected: &str) -> bool {
    let expected = expected.trim_end_matches('/').to_ascii_lowercase();
    let expected = expected.strip_suffix(":443").unwrap_or(&expected);
    origin == expected
}

#[cfg(test)]
mod tests {
    use super::*;

    fn icon(src: &str) -> Icon {
        Icon::new(src)
    }

    #[test]
    fn the_spec_s_unsafe_schemes_and_forms_are_refused() {
        let origin = Some("https://mcp.example.com");
        let refused: &[(&str, IconError)] = &[
            (
                "javascript:alert(1)",
                IconError::Scheme("javascript".into()),
            ),
            (
                "JavaScript:alert(1)",
                IconError::Scheme("javascript".into()),
            ),
            ("file:///etc/passwd", IconError::Scheme("file".into())),
            (
                "ftp://mcp.example.com/i.png",
                IconError::Scheme("ftp".into()),
            ),
            ("ws://mcp.example.com/i", IconError::Scheme("ws".into())),
            (
                "http://mcp.example.com/i.png",
                IconError::Scheme("http".into()),
            ),
            ("vscode://open?x", IconError::Scheme("vscode".into())),
            ("/relative/icon.png", IconError::Scheme(String::new())),
            (
                "https://user:pw@mcp.example.com/i.png",
                IconError::Credentials,
            ),
            (
                "https://mcp.example.com@evil.example/i.png",
                IconError::Credentials,
            ),
            ("https:///i.png", IconError::Malformed("no host")),
            ("https:i.png", IconError::Malformed("no authority")),
            (
                "https://mcp.example.com/a b.png",
                IconError::Malformed("characters outside visible ASCII"),
            ),
            (
                "https://mcp.example.com/\u{202e}gnp.exe",
                IconError::Malformed("characters outside visible ASCII"),
            ),
            (
                "data:text/html;base64,PHNjcmlwdD4=",
                IconError::MediaType("text/html".into()),
            ),
            (
                "data:image/png;base64",
                IconError::Malformed("a data URI without a comma"),
            ),
            ("data:,plain", IconError::MediaType(String::new())),
        ];
        for (src, expected) in refused {
            assert_eq!(
                check_icon(&icon(src), origin).as_ref(),
                Err(expected),
                "{src}"
            );
        }
        let elsewhere = check_icon(&icon("https://cdn.example/i.png"), origin);
        assert!(
            matches!(elsewhere, Err(IconError::Origin { found, .. }) if found == "https://cdn.example")
        );
        let mut typed = icon("https://mcp.example.com/i");
        typed.mime_type = Some("application/x-msdownload".into());
        assert_eq!(
            check_icon(&typed, origin),
            Err(IconError::MediaType("application/x-msdownload".into()))
        );
        let long = format!("data:image/png;base64,{}", "A".repeat(MAX_ICON_URI));
        assert_eq!(check_icon(&icon(&long), None), Err(IconError::TooLong));
        // Exactly at the limit it is accepted; one byte more is not.
        let prefix = "data:image/png;base64,";
        let at = format!("{prefix}{}", "A".repeat(MAX_ICON_URI - prefix.len()));
        assert_eq!(at.len(), MAX_ICON_URI);
        assert_eq!(check_icon(&icon(&at), None), Ok(()));
        let past = format!("{at}A");
        assert_eq!(check_icon(&icon(&past), None), Err(IconError::TooLong));
    }

    #[test]
    fn https_on_the_server_s_origin_and_image_data_are_accepted() {
        let origin = Some("https://MCP.example.com:443/");
        for src in [
            "https://mcp.example.com/icon.png",
            "HTTPS://mcp.example.com:443/icon.svg?v=2#x",
            "data:image/png;base64,iVBORw0KGgo=",
            "data:IMAGE/SVG+XML;charset=utf-8,%3Csvg%3E",
            "data:image/webp;base64,UklGR",
        ] {
            assert_eq!(check_icon(&icon(src), origin), Ok(()), "{src}");
        }
        // Without a server origin (a stdio server), any https host may serve it.
        assert_eq!(check_icon(&icon("https://cdn.example/i.png"), None), Ok(()));
        let kept = safe_icons(
            &[
                icon("javascript:x"),
                icon("https://cdn.example/i.png"),
                icon("data:image/jpeg;base64,/9j/"),
            ],
            None,
        );
        let kept: Vec<&str> = kept.iter().map(|i| i.src.as_str()).collect();
        assert_eq!(
            kept,
            ["https://cdn.example/i.png", "data:image/jpeg;base64,/9j/"]
        );
    }
}
