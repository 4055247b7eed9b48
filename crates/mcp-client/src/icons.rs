//! Icons from servers, checked before anything fetches or shows them
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic>, `icons`, Security considerations).
//!
//! Tools, prompts, resources and implementations may carry `icons`, whose `src` the
//! server chooses. The spec tells consumers to treat them as untrusted: clients **MUST**
//! reject icon URIs other than `https:` and `data:` (`javascript:`, `file:`, `ftp:`,
//! `ws:`, local app schemes), fetch them without credentials, keep to the server's
//! origin, and keep a strict allowlist of image types. This module makes that decision
//! as data: [`check_icon`] says whether one icon may be used and why not (an
//! [`Error::Icon`] with its [`IconErrorKind`]), and [`safe_icons`]
//! keeps the ones that may. It fetches nothing: a consumer that fetches an
//! icon must still refuse redirects to other origins, send no cookies or `Authorization`,
//! bound the bytes it reads, and check the bytes' real type (an SVG can carry script).
//!
//! ```
//! use mcp_client::icons::check_icon;
//! use mcp_client::{Error, IconErrorKind};
//! use mcp_types::Icon;
//!
//! assert!(check_icon(&Icon::new("https://mcp.example.com/tool.png"), Some("https://mcp.example.com")).is_ok());
//! assert!(check_icon(&Icon::new("data:image/png;base64,iVBORw0KGgo="), None).is_ok());
//! assert!(matches!(check_icon(&Icon::new("javascript:alert(1)"), None), Err(Error::Icon(IconErrorKind::Scheme(s))) if s == "javascript"));
//! assert!(matches!(check_icon(&Icon::new("https://tracker.example/p.png"), Some("https://mcp.example.com")), Err(Error::Icon(IconErrorKind::Origin { .. }))));
//! ```

use mcp_types::Icon;

use crate::error::{Error, IconErrorKind};

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

/// Whether `icon` may be used: an `https` URI without credentials (on `server_origin`,
/// such as `https://mcp.example.com`, when the server has one: a stdio server has none),
/// or a `data:` URI of an image type, in either case with a `mimeType` (if any) among
/// [`IMAGE_TYPES`]. When it may not, the error is [`Error::Icon`] and its kind says why.
pub fn check_icon(icon: &Icon, server_origin: Option<&str>) -> Result<(), Error> {
    check(icon, server_origin).map_err(Error::Icon)
}

/// [`check_icon`]'s decision, as the kind alone.
fn check(icon: &Icon, server_origin: Option<&str>) -> Result<(), IconErrorKind> {
    let src = icon.src.as_str();
    if src.len() > MAX_ICON_URI {
        return Err(IconErrorKind::TooLong);
    }
    // RFC 3986: a URI is visible ASCII; anything else (spaces, controls, bidirectional
    // overrides that disguise a name) has to be percent-encoded.
    if !src.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(IconErrorKind::Malformed("characters outside visible ASCII"));
    }
    if let Some(mime) = &icon.mime_type {
        media_type(mime)?;
    }
    let Some((scheme, rest)) = src.split_once(':') else {
        return Err(IconErrorKind::Scheme(String::new()));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "https" => {
            let origin = https_origin(rest)?;
            match server_origin {
                Some(expected) if !same_origin(&origin, expected) => Err(IconErrorKind::Origin {
                    found: origin,
                    expected: expected.to_owned(),
                }),
                _ => Ok(()),
            }
        }
        "data" => {
            let (header, _) = rest
                .split_once(',')
                .ok_or(IconErrorKind::Malformed("a data URI without a comma"))?;
            media_type(header.split(';').next().unwrap_or_default())
        }
        other => Err(IconErrorKind::Scheme(other.to_owned())),
    }
}

/// The icons of `icons` that [`check_icon`] accepts, in order; each refused one is logged.
pub fn safe_icons(icons: &[Icon], server_origin: Option<&str>) -> Vec<Icon> {
    icons
        .iter()
        .filter(|icon| match check(icon, server_origin) {
            Ok(()) => true,
            Err(reason) => {
                tracing::warn!(%reason, "an icon from the server was refused");
                false
            }
        })
        .cloned()
        .collect()
}

fn media_type(value: &str) -> Result<(), IconErrorKind> {
    let essence = value.split(';').next().unwrap_or_default().trim();
    if IMAGE_TYPES.iter().any(|t| t.eq_ignore_ascii_case(essence)) {
        Ok(())
    } else {
        Err(IconErrorKind::MediaType(value.to_owned()))
    }
}

/// The origin (`https://host[:port]`, lowercase, without the default port) of the part of
/// an `https` URI after its scheme.
fn https_origin(rest: &str) -> Result<String, IconErrorKind> {
    let authority = rest
        .strip_prefix("//")
        .ok_or(IconErrorKind::Malformed("no authority"))?;
    let authority = authority.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(IconErrorKind::Credentials);
    }
    if authority.is_empty() || authority.starts_with(':') {
        return Err(IconErrorKind::Malformed("no host"));
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
        let refused: &[(&str, IconErrorKind)] = &[
            (
                "javascript:alert(1)",
                IconErrorKind::Scheme("javascript".into()),
            ),
            (
                "JavaScript:alert(1)",
                IconErrorKind::Scheme("javascript".into()),
            ),
            ("file:///etc/passwd", IconErrorKind::Scheme("file".into())),
            (
                "ftp://mcp.example.com/i.png",
                IconErrorKind::Scheme("ftp".into()),
            ),
            ("ws://mcp.example.com/i", IconErrorKind::Scheme("ws".into())),
            (
                "http://mcp.example.com/i.png",
                IconErrorKind::Scheme("http".into()),
            ),
            ("vscode://open?x", IconErrorKind::Scheme("vscode".into())),
            ("/relative/icon.png", IconErrorKind::Scheme(String::new())),
            (
                "https://user:pw@mcp.example.com/i.png",
                IconErrorKind::Credentials,
            ),
            (
                "https://mcp.example.com@evil.example/i.png",
                IconErrorKind::Credentials,
            ),
            ("https:///i.png", IconErrorKind::Malformed("no host")),
            ("https:i.png", IconErrorKind::Malformed("no authority")),
            (
                "https://mcp.example.com/a b.png",
                IconErrorKind::Malformed("characters outside visible ASCII"),
            ),
            (
                "https://mcp.example.com/\u{202e}gnp.exe",
                IconErrorKind::Malformed("characters outside visible ASCII"),
            ),
            (
                "data:text/html;base64,PHNjcmlwdD4=",
                IconErrorKind::MediaType("text/html".into()),
            ),
            (
                "data:image/png;base64",
                IconErrorKind::Malformed("a data URI without a comma"),
            ),
            ("data:,plain", IconErrorKind::MediaType(String::new())),
        ];
        for (src, expected) in refused {
            assert_eq!(check(&icon(src), origin).as_ref(), Err(expected), "{src}");
        }
        let elsewhere = check(&icon("https://cdn.example/i.png"), origin);
        assert!(
            matches!(elsewhere, Err(IconErrorKind::Origin { found, .. }) if found == "https://cdn.example")
        );
        let mut typed = icon("https://mcp.example.com/i");
        typed.mime_type = Some("application/x-msdownload".into());
        assert_eq!(
            check(&typed, origin),
            Err(IconErrorKind::MediaType("application/x-msdownload".into()))
        );
        let long = format!("data:image/png;base64,{}", "A".repeat(MAX_ICON_URI));
        assert_eq!(check(&icon(&long), None), Err(IconErrorKind::TooLong));
        // Exactly at the limit it is accepted; one byte more is not.
        let prefix = "data:image/png;base64,";
        let at = format!("{prefix}{}", "A".repeat(MAX_ICON_URI - prefix.len()));
        assert_eq!(at.len(), MAX_ICON_URI);
        assert_eq!(check(&icon(&at), None), Ok(()));
        let past = format!("{at}A");
        assert_eq!(check(&icon(&past), None), Err(IconErrorKind::TooLong));
    }

    #[test]
    fn check_icon_says_why_in_the_crate_s_error() {
        let err = check_icon(&icon("javascript:alert(1)"), None).unwrap_err();
        assert!(matches!(&err, Error::Icon(IconErrorKind::Scheme(s)) if s == "javascript"));
        assert_eq!(
            err.to_string(),
            "the icon may not be used: icon URI scheme \"javascript\" is neither https nor data"
        );
        assert!(check_icon(&icon("https://cdn.example/i.png"), None).is_ok());
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
            assert_eq!(check(&icon(src), origin), Ok(()), "{src}");
        }
        // Without a server origin (a stdio server), any https host may serve it.
        assert_eq!(check(&icon("https://cdn.example/i.png"), None), Ok(()));
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
