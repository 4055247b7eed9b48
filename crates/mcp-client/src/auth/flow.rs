//! The authorization request and the checks on its response: PKCE `S256`, `state`, the
//! RFC 8707 `resource`, the chosen scopes, and RFC 9207 `iss` validation
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>, Authorization Flow Steps and
//! Authorization Response Validation). Pure functions; the flow that calls them is in
//! `oauth.rs`.

use super::discovery::AuthorizationServerMetadata;
use super::interaction::AuthorizationResponse;
use super::pkce::Pkce;
use crate::AuthErrorKind;

/// What the authorization request needs besides the server's metadata.
#[derive(Debug)]
pub(crate) struct AuthorizationParams<'a> {
    pub(crate) client_id: &'a str,
    pub(crate) redirect_uri: &'a str,
    /// The scopes to request, in order; the parameter is omitted when empty.
    pub(crate) scopes: &'a [String],
    /// The resource identifier, as the protected resource metadata publishes it.
    pub(crate) resource: &'a str,
    pub(crate) pkce: &'a Pkce,
    pub(crate) state: &'a str,
}

/// The authorization URL: the endpoint with `response_type=code`, `client_id`,
/// `redirect_uri`, the PKCE challenge with `S256`, `state`, `resource` and `scope`,
/// appended to any query the endpoint already has.
pub(crate) fn authorization_url(endpoint: &str, params: &AuthorizationParams<'_>) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("response_type", "code")
        .append_pair("client_id", params.client_id)
        .append_pair("redirect_uri", params.redirect_uri)
        .append_pair("code_challenge", params.pkce.challenge())
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", params.state)
        .append_pair("resource", params.resource);
    if !params.scopes.is_empty() {
        query.append_pair("scope", &params.scopes.join(" "));
    }
    let separator = if endpoint.contains('?') { '&' } else { '?' };
    format!("{endpoint}{separator}{}", query.finish())
}

/// Checks the authorization response and returns its code.
///
/// First `iss`, per the table of Authorization Response Validation (RFC 9207 §2.4): when
/// the server advertises `authorization_response_iss_parameter_supported`, `iss` must be
/// present; when present, advertised or not, it must be identical to the recorded issuer
/// (simple string comparison of the decoded value, no normalization). On a mismatch
/// nothing else in the response is acted on, not even an `error`. Then `state` must be
/// the one sent; then an `error` is reported; then the `code` is returned.
pub(crate) fn validate_response(
    metadata: &AuthorizationServerMetadata,
    expected_state: &str,
    response: &AuthorizationResponse,
) -> Result<String, AuthErrorKind> {
    let advertised = metadata.authorization_response_iss_parameter_supported == Some(true);
    match response.get("iss") {
        Some(iss) if iss != metadata.issuer => {
            return Err(AuthErrorKind::IssuerMismatch {
                expected: metadata.issuer.clone(),
                found: Some(iss.to_owned()),
            });
        }
        None if advertised => {
            return Err(AuthErrorKind::IssuerMismatch {
                expected: metadata.issuer.clone(),
                found: None,
            });
        }
        _ => {}
    }
    if response.get("state") != Some(expected_state) {
        return Err(AuthErrorKind::StateMismatch);
    }
    if let Some(error) = response.get("error") {
        return Err(AuthErrorKind::AuthorizationDenied {
            error: error.to_owned(),
            description: response.get("error_description").map(str::to_owned),
        });
    }
    response
        .get("code")
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .ok_or(AuthErrorKind::MissingCode)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(iss_supported: Option<bool>) -> AuthorizationServerMetadata {
        let mut m = serde_json::json!({
            "issuer": "https://as.example/tenant",
            "token_endpoint": "https://as.example/token",
        });
        if let Some(s) = iss_supported {
            m["authorization_response_iss_parameter_supported"] = s.into();
        }
        serde_json::from_value(m).unwrap()
    }

    fn response(pairs: &[(&str, &str)]) -> AuthorizationResponse {
        AuthorizationResponse::from_params(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        )
    }

    #[test]
    fn the_iss_table_of_the_spec() {
        let good = "https://as.example/tenant";
        // (advertised, iss in response, outcome)
        let cases: [(Option<bool>, Option<&str>, bool); 9] = [
            (Some(true), Some(good), true),
            (Some(true), None, false),
            (Some(true), Some("https://evil.example"), false),
            (Some(false), Some(good), true),
            (Some(false), Some("https://evil.example"), false),
            (None, Some("https://evil.example"), false),
            (None, None, true),
            (Some(false), None, true),
            // No normalization: a trailing slash or a case change is a mismatch.
            (Some(true), Some("https://as.example/tenant/"), false),
        ];
        for (advertised, iss, ok) in cases {
            let mut pairs = vec![("code", "c"), ("state", "s")];
            if let Some(iss) = iss {
                pairs.push(("iss", iss));
            }
            let got = validate_response(&metadata(advertised), "s", &response(&pairs));
            assert_eq!(got.is_ok(), ok, "{advertised:?} {iss:?}: {got:?}");
            if !ok {
                assert!(matches!(got, Err(AuthErrorKind::IssuerMismatch { .. })));
            }
        }
        let upper = validate_response(
            &metadata(Some(true)),
            "s",
            &response(&[
                ("code", "c"),
                ("state", "s"),
                ("iss", "HTTPS://as.example/tenant"),
            ]),
        );
        assert!(upper.is_err());
    }

    #[test]
    fn state_error_and_code() {
        let m = metadata(None);
        let check = |pairs: &[(&str, &str)]| validate_response(&m, "s", &response(pairs));
        assert_eq!(check(&[("code", "c"), ("state", "s")]).unwrap(), "c");
        assert!(matches!(
            check(&[("code", "c")]),
            Err(AuthErrorKind::StateMismatch)
        ));
        assert!(matches!(
            check(&[("code", "c"), ("state", "t")]),
            Err(AuthErrorKind::StateMismatch)
        ));
        assert!(matches!(
            check(&[("error", "access_denied"), ("state", "s")]),
            Err(AuthErrorKind::AuthorizationDenied { error, .. }) if error == "access_denied"
        ));
        assert!(matches!(
            check(&[("state", "s")]),
            Err(AuthErrorKind::MissingCode)
        ));
        // A mismatched iss hides the error: it is not acted on.
        let hidden = validate_response(
            &m,
            "s",
            &response(&[
                ("error", "access_denied"),
                ("state", "s"),
                ("iss", "https://x"),
            ]),
        );
        assert!(matches!(hidden, Err(AuthErrorKind::IssuerMismatch { .. })));
    }

    #[test]
    fn authorization_urls_carry_every_parameter() {
        let pkce = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
        let scopes = ["mcp:read".to_owned(), "offline_access".to_owned()];
        let params = AuthorizationParams {
            client_id: "https://app.example/client.json",
            redirect_uri: "http://127.0.0.1:3000/callback",
            scopes: &scopes,
            resource: "https://mcp.example.com",
            pkce: &pkce,
            state: "xyz",
        };
        let url = authorization_url("https://as.example/authorize?tenant=a", &params);
        let query = AuthorizationResponse::from_redirect_url(&url);
        assert!(url.starts_with("https://as.example/authorize?tenant=a&response_type=code&"));
        for (name, value) in [
            ("client_id", "https://app.example/client.json"),
            ("redirect_uri", "http://127.0.0.1:3000/callback"),
            (
                "code_challenge",
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            ),
            ("code_challenge_method", "S256"),
            ("state", "xyz"),
            ("resource", "https://mcp.example.com"),
            ("scope", "mcp:read offline_access"),
        ] {
            assert_eq!(query.get(name), Some(value), "{name}");
        }
        assert!(url.contains("resource=https%3A%2F%2Fmcp.example.com"));
        let no_scope = authorization_url(
            "https://as.example/authorize",
            &AuthorizationParams {
                scopes: &[],
                ..params
            },
        );
        assert!(!no_scope.contains("scope="), "{no_scope}");
    }
}
