//! Obtaining a client id, in the order of
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/client-registration>: pre-registered
//! credentials for this issuer, a registration stored for this issuer, a Client ID
//! Metadata Document when the server supports them, then dynamic client registration
//! (RFC 7591, with `application_type`). Registrations are stored by issuer and never
//! presented to another authorization server.

use bytes::Bytes;
use http::HeaderMap;
use serde::Deserialize;
use serde_json::json;

use super::config::{ClientSecret, Grant, OAuthConfig};
use super::discovery::AuthorizationServerMetadata;
use super::fetch::{Fetcher, is_loopback_host};
use super::store::StoredClient;
use super::token::ClientIdentity;
use crate::AuthErrorKind;

/// The client to use with the server of `metadata`. `redirect_uri` is the authorization
/// code grant's (`None` for the others). The unattended grants bring their own: the
/// client credentials (of the client credentials grant, or of enterprise-managed
/// authorization at the MCP authorization server), or, for a workload, no client
/// authentication at all (an optional `client_id`).
pub(crate) async fn client_for(
    config: &OAuthConfig,
    fetcher: &Fetcher,
    metadata: &AuthorizationServerMetadata,
    redirect_uri: Option<&str>,
) -> Result<ClientIdentity, AuthErrorKind> {
    let issuer = &metadata.issuer;
    if let Grant::WorkloadIdentity(workload) = &config.grant {
        return Ok(ClientIdentity {
            client_id: workload.client_id.clone().unwrap_or_default(),
            secret: None,
            private_key: None,
            registered_method: None,
        });
    }
    let credentials = match &config.grant {
        Grant::ClientCredentials(credentials) => Some(credentials),
        Grant::EnterpriseManaged(grant) => Some(&grant.client),
        Grant::AuthorizationCode(_) | Grant::WorkloadIdentity(_) => None,
    };
    if let Some(credentials) = credentials {
        let (secret, private_key) = match &credentials.credential {
            ClientSecret::Secret(secret) => (Some(secret.clone()), None),
            ClientSecret::PrivateKeyJwt { pem, algorithm } => {
                (None, Some((pem.clone(), algorithm.clone())))
            }
        };
        return Ok(ClientIdentity {
            client_id: credentials.client_id.clone(),
            secret,
            private_key,
            registered_method: None,
        });
    }
    // 1. Pre-registered credentials, for this issuer only.
    if let Some(pre) = config.pre_registered.iter().find(|p| &p.issuer == issuer) {
        return Ok(ClientIdentity {
            client_id: pre.client_id.clone(),
            secret: pre.client_secret.clone(),
            private_key: None,
            registered_method: pre.token_endpoint_auth_method.clone(),
        });
    }
    // 2. A Client ID Metadata Document.
    if let Some(url) = &config.client_metadata_url
        && metadata.client_id_metadata_document_supported == Some(true)
    {
        return Ok(ClientIdentity {
            client_id: url.clone(),
            secret: None,
            private_key: None,
            registered_method: Some("none".to_owned()),
        });
    }
    // 3. Dynamic client registration: one made earlier with this very server, for this
    // redirect, or a new one.
    let store = &config.store;
    if let Some(stored) = store.client(issuer).map_err(AuthErrorKind::Store)?
        && redirect_uri.is_none_or(|r| stored.redirect_uris.iter().any(|s| s == r))
    {
        return Ok(identity(stored));
    }
    let Some(endpoint) = &metadata.registration_endpoint else {
        return Err(AuthErrorKind::Registration {
            issuer: issuer.clone(),
            reason: "no pre-registered credentials for it, no Client ID Metadata Document \
                     support and no registration endpoint"
                .to_owned(),
        });
    };
    if !config.dynamic_registration {
        return Err(AuthErrorKind::Registration {
            issuer: issuer.clone(),
            reason: "dynamic client registration is disabled".to_owned(),
        });
    }
    let stored = register(config, fetcher, metadata, endpoint, redirect_uri).await?;
    store
        .save_client(issuer, &stored)
        .map_err(AuthErrorKind::Store)?;
    Ok(identity(stored))
}

fn identity(stored: StoredClient) -> ClientIdentity {
    ClientIdentity {
        client_id: stored.client_id,
        secret: stored.client_secret,
        private_key: None,
        registered_method: stored.token_endpoint_auth_method,
    }
}

/// The `application_type` for a redirect URI (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/client-registration>, Application Type
/// and Redirect URI Constraints): `native` for loopback and custom-scheme redirects (CLI
/// tools, desktop apps), `web` for a remote `https` one.
pub(crate) fn application_type(redirect_uri: Option<&str>) -> &'static str {
    let Some(uri) = redirect_uri.and_then(|r| r.parse::<http::Uri>().ok()) else {
        return "native";
    };
    match (uri.scheme_str(), uri.host()) {
        (Some("https"), Some(host)) if !is_loopback_host(host) => "web",
        _ => "native",
    }
}

/// The token endpoint authentication method to register with: `none` (a public native
/// client, protected by PKCE) unless the server lists only confidential methods.
fn registration_method(metadata: &AuthorizationServerMetadata) -> &'static str {
    let Some(supported) = &metadata.token_endpoint_auth_methods_supported else {
        return "none";
    };
    for method in ["none", "client_secret_basic", "client_secret_post"] {
        if supported.iter().any(|m| m == method) {
            return method;
        }
    }
    "none"
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    redirect_uris: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct RegistrationError {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

async fn register(
    config: &OAuthConfig,
    fetcher: &Fetcher,
    metadata: &AuthorizationServerMetadata,
    endpoint: &str,
    redirect_uri: Option<&str>,
) -> Result<StoredClient, AuthErrorKind> {
    let mut grant_types = vec!["authorization_code"];
    // A client that wants refresh tokens says so (SEP-2207).
    if config.offline_access {
        grant_types.push("refresh_token");
    }
    let body = json!({
        "client_name": config.client_name,
        "redirect_uris": redirect_uri.into_iter().collect::<Vec<_>>(),
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": registration_method(metadata),
        "application_type": application_type(redirect_uri),
    });
    let reply = fetcher
        .post(
            endpoint,
            "application/json",
            Bytes::from(body.to_string()),
            HeaderMap::new(),
        )
        .await?;
    let failed = |reason: String| AuthErrorKind::Registration {
        issuer: metadata.issuer.clone(),
        reason,
    };
    if !reply.status.is_success() {
        // RFC 7591 §3.2.2; an OIDC server may refuse the redirect for the application type.
        return Err(failed(
            match serde_json::from_slice::<RegistrationError>(&reply.body) {
                Ok(e) => format!(
                    "the registration endpoint answered {}: {}{}",
                    reply.status,
                    e.error,
                    e.error_description
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default()
                ),
                Err(_) => format!("the registration endpoint answered {}", reply.status),
            },
        ));
    }
    let registered: RegistrationResponse = serde_json::from_slice(&reply.body)
        .map_err(|e| failed(format!("invalid registration response: {e}")))?;
    Ok(StoredClient {
        client_id: registered.client_id,
        client_secret: registered.client_secret,
        token_endpoint_auth_method: registered.token_endpoint_auth_method,
        redirect_uris: registered
            .redirect_uris
            .unwrap_or_else(|| redirect_uri.into_iter().map(str::to_owned).collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_types() {
        for (redirect, expected) in [
            (Some("http://127.0.0.1:4000/callback"), "native"),
            (Some("http://localhost:3000/callback"), "native"),
            (Some("https://localhost/callback"), "native"),
            (Some("com.example.app:/callback"), "native"),
            (Some("https://app.example.com/callback"), "web"),
            (None, "native"),
        ] {
            assert_eq!(application_type(redirect), expected, "{redirect:?}");
        }
    }

    #[test]
    fn registration_methods() {
        let with = |methods: Option<&[&str]>| {
            let mut m = json!({"issuer": "https://as", "token_endpoint": "https://as/t"});
            if let Some(methods) = methods {
                m["token_endpoint_auth_methods_supported"] = json!(methods);
            }
            registration_method(&serde_json::from_value(m).unwrap())
        };
        assert_eq!(with(None), "none");
        assert_eq!(with(Some(&["client_secret_basic", "none"])), "none");
        assert_eq!(with(Some(&["client_secret_post"])), "client_secret_post");
        assert_eq!(with(Some(&["client_secret_basic"])), "client_secret_basic");
    }
}
