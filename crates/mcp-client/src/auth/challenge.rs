//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1), and the `Bearer` parameters the spec
//! uses: `resource_metadata` (RFC 9728 §5.1), `scope` and `error` (RFC 6750 §3). A `DPoP`
//! challenge (RFC 9449 §7.1) carries the same parameters, and `error="use_dpop_nonce"`
//! when the server wants a nonce in the proof (§9).
//!
//! The grammar is a comma-separated list of challenges, each a scheme followed by a
//! token68 or by comma-separated `name=value` parameters (the value a token or a quoted
//! string), so a comma may separate two parameters or two challenges; a new challenge is
//! recognised by a token that is not followed by `=`. Parsing is lenient: what cannot be
//! read ends the challenge being read rather than failing the whole header.

/// The `Bearer` challenge of a refusal (or, failing one, its `DPoP` challenge, RFC 9449
/// §7.1, which has the same parameters), with the parameters this client acts on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// The scheme the parameters come from: `Bearer` or `DPoP`, as written; empty when
    /// there was no such challenge.
    pub scheme: String,
    /// `resource_metadata`: the URL of the Protected Resource Metadata document.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, …
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The first `Bearer` challenge among `values` (each a `WWW-Authenticate` header
    /// value), else the first `DPoP` one, or an empty one if there is neither.
    pub fn from_headers<S: AsRef<str>>(values: &[S]) -> BearerChallenge {
        let challenges: Vec<Challenge> = values.iter().flat_map(|v| parse(v.as_ref())).collect();
        let of = |scheme: &str| {
            challenges
                .iter()
                .find(|c| c.scheme.eq_ignore_ascii_case(scheme))
        };
        of("bearer")
            .or_else(|| of("dpop"))
            .map(|c| {
                let get = |name: &str| {
                    c.params
                        .iter()
                        .find(|(n, _)| n.eq_ignore_ascii_case(name))
                        .map(|(_, v)| v.clone())
                };
                BearerChallenge {
                    scheme: c.scheme.clone(),
                    resource_metadata: get("resource_metadata"),
                    scope: get("scope"),
                    error: get("error"),
                    error_description: get("error_description"),
                }
            })
            .unwrap_or_default()
    }

    /// The scopes of `scope`, in order, without duplicates.
    pub fn scopes(&self) -> Vec<String> {
        split_scopes(self.scope.as_deref().unwrap_or(""))
    }

    /// Whether the error is `insufficient_scope` (a step-up is needed).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Whether `values` (`WWW-Authenticate` header values) hold a `DPoP` challenge with
/// `error="use_dpop_nonce"` (RFC 9449 §9): the server wants a proof with its nonce.
pub(crate) fn wants_dpop_nonce<S: AsRef<str>>(values: &[S]) -> bool {
    values.iter().flat_map(|v| parse(v.as_ref())).any(|c| {
        c.scheme.eq_ignore_ascii_case("dpop")
            && c.params
                .iter()
                .any(|(n, v)| n.eq_ignore_ascii_case("error") && v == "use_dpop_nonce")
    })
}

/// A space-separated scope string as a list, in order, without duplicates or empties.
pub(crate) fn split_scopes(scope: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in scope.split(' ').filter(|s| !s.is_empty()) {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_owned());
        }
    }
    out
}

/// One challenge: a scheme and its parameters (names as written), or a token68.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) scheme: String,
    pub(crate) params: Vec<(String, String)>,
    pub(crate) token68: Option<String>,
}

/// Every challenge of one header value.
pub(crate) fn parse(input: &str) -> Vec<Challenge> {
    let mut p = Parser {
        s: input.as_bytes(),
        i: 0,
    };
    let mut out = Vec::new();
    loop {
        p.skip(|c| c == b' ' || c == b'\t' || c == b',');
        let Some(scheme) = p.token() else { break };
        let mut challenge = Challenge {
            scheme,
            params: Vec::new(),
            token68: None,
        };
        p.skip_ws();
        // A token68 (letters, digits, `-._~+/` and trailing `=`), not a parameter.
        let mark = p.i;
        if let Some(t) = p.token68()
            && p.at_end_of_item()
        {
            challenge.token68 = Some(t);
            out.push(challenge);
            continue;
        }
        p.i = mark;
        loop {
            let mark = p.i;
            let Some(name) = p.token() else { break };
            p.skip_ws();
            if p.peek() != Some(b'=') {
                // The scheme of the next challenge.
                p.i = mark;
                break;
            }
            p.i += 1;
            p.skip_ws();
            let value = if p.peek() == Some(b'"') {
                p.quoted()
            } else {
                p.token()
            };
            let Some(value) = value else { break };
            challenge.params.push((name, value));
            p.skip_ws();
            if p.peek() == Some(b',') {
                p.i += 1;
                p.skip(|c| c == b' ' || c == b'\t' || c == b',');
            } else {
                break;
            }
        }
        out.push(challenge);
        if p.i >= p.s.len() {
            break;
        }
    }
    out
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }

    fn skip_ws(&mut self) {
        self.skip(|c| c == b' ' || c == b'\t');
    }

    /// RFC 9110 `token`: `tchar`s.
    fn token(&mut self) -> Option<String> {
        let start = self.i;
        self.skip(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c));
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn token68(&mut self) -> Option<String> {
        let start = self.i;
        self.skip(|c| c.is_ascii_alphanumeric() || b"-._~+/".contains(&c));
        if self.i == start {
            return None;
        }
        self.skip(|c| c == b'=');
        Some(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// Whether the parser is at the end of the header or of a list item.
    fn at_end_of_item(&mut self) -> bool {
        self.skip_ws();
        matches!(self.peek(), None | Some(b','))
    }

    /// A quoted string, unescaped; `None` if it is not closed.
    fn quoted(&mut self) -> Option<String> {
        self.i += 1;
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'"' => return Some(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    if let Some(next) = self.peek() {
                        out.push(next);
                        self.i += 1;
                    }
                }
                _ => out.push(c),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(header: &str, expected: &[(&str, &[(&str, &str)])]) {
        let got: Vec<(String, Vec<(String, String)>)> = parse(header)
            .into_iter()
            .map(|c| (c.scheme, c.params))
            .collect();
        let expected: Vec<(String, Vec<(String, String)>)> = expected
            .iter()
            .map(|(s, ps)| {
                (
                    (*s).to_owned(),
                    ps.iter()
                        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(got, expected, "{header}");
    }

    #[test]
    fn challenges() {
        check(
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read""#,
            &[(
                "Bearer",
                &[
                    (
                        "resource_metadata",
                        "https://mcp.example.com/.well-known/oauth-protected-resource",
                    ),
                    ("scope", "files:read"),
                ],
            )],
        );
        // Two challenges in one value, a token value, an escaped quote, odd spacing.
        check(
            r#"Basic realm="a, b" , Bearer error=insufficient_scope,scope="a \"b\"" ,"#,
            &[
                ("Basic", &[("realm", "a, b")]),
                (
                    "Bearer",
                    &[("error", "insufficient_scope"), ("scope", r#"a "b""#)],
                ),
            ],
        );
        check("Bearer", &[("Bearer", &[])]);
        check("", &[]);
        // An unterminated quote ends the challenge, keeping what was read.
        check(r#"Bearer scope="a, error=x"#, &[("Bearer", &[])]);
        let negotiate = parse("Negotiate abc123==, Bearer scope=x");
        assert_eq!(negotiate[0].token68.as_deref(), Some("abc123=="));
        assert_eq!(negotiate[1].params, [("scope".to_owned(), "x".to_owned())]);
    }

    #[test]
    fn the_bearer_challenge_is_found() {
        let c = BearerChallenge::from_headers(&[
            r#"DPoP algs="ES256""#,
            r#"bearer Error="insufficient_scope", scope="mcp:write  mcp:write mcp:read", resource_metadata="https://x/prm""#,
        ]);
        assert!(c.is_insufficient_scope());
        assert_eq!(c.scopes(), ["mcp:write", "mcp:read"]);
        assert_eq!(c.resource_metadata.as_deref(), Some("https://x/prm"));
        assert_eq!(c.scheme, "bearer");
        assert_eq!(
            BearerChallenge::from_headers::<&str>(&[]),
            BearerChallenge::default()
        );
    }

    #[test]
    fn a_dpop_challenge_serves_when_there_is_no_bearer_one() {
        let c = BearerChallenge::from_headers(&[
            r#"DPoP error="use_dpop_nonce", resource_metadata="https://x/prm", algs="ES256""#,
        ]);
        assert_eq!(c.scheme, "DPoP");
        assert_eq!(c.resource_metadata.as_deref(), Some("https://x/prm"));
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        assert!(wants_dpop_nonce(&[
            r#"Bearer realm="x", DPoP error="use_dpop_nonce""#
        ]));
        // The error of another scheme, or another error, is not a nonce request.
        assert!(!wants_dpop_nonce(&[r#"Bearer error="use_dpop_nonce""#]));
        assert!(!wants_dpop_nonce(&[r#"DPoP error="invalid_dpop_proof""#]));
        assert!(!wants_dpop_nonce::<&str>(&[]));
    }
}
