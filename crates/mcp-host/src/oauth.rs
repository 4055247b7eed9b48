//! OAuth for the HTTP servers of a configuration (`oauth` in an entry), through
//! `mcp-client`'s OAuth client (feature `auth`): the client credentials grant of the
//! OAuth Client Credentials extension
//! (<https://modelcontextprotocol.io/extensions/auth/oauth-client-credentials>), or the
//! tokens the `mcp` tool stored in its credential file when the user signed in
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>).
//!
//! A host never signs anyone in: it has no user to send to a browser. Stored tokens are
//! used, and renewed with their refresh token; when there are none, or they expired with
//! nothing to renew them, connecting fails with [`Error::OAuth`] saying so, and nothing is
//! sent to the authorization server.

use std::fmt;
use std::path::PathBuf;

use crate::Error;

/// How the host obtains tokens for an HTTP server.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthGrant {
    /// The client credentials grant, on the host's own behalf: no user, no browser.
    #[non_exhaustive]
    ClientCredentials {
        /// The `client_id` registered with the server's authorization server.
        client_id: String,
        /// Its secret (sent with `client_secret_basic`, or `client_secret_post` when the
        /// authorization server lists only that).
        client_secret: String,
        /// The issuer the credentials belong to, if known: a server whose metadata names
        /// another authorization server is then refused, so the secret never reaches it.
        issuer: Option<String>,
    },
    /// The tokens stored for the server's URL in a credential file by the `mcp` tool
    /// (`mcp tools -s URL` signs in), renewed with their refresh token.
    #[non_exhaustive]
    Stored {
        /// The credential file (default [`default_credential_store`], as `mcp`'s).
        store: Option<PathBuf>,
    },
}

impl fmt::Debug for OAuthGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OAuthGrant::ClientCredentials {
                client_id, issuer, ..
            } => f
                .debug_struct("ClientCredentials")
                .field("client_id", client_id)
                .field("client_secret", &"…")
                .field("issuer", issuer)
                .finish(),
            OAuthGrant::Stored { store } => f.debug_struct("Stored").field("store", store).finish(),
        }
    }
}

/// The OAuth settings of an HTTP server ([`HttpConfig::oauth`](crate::HttpConfig::oauth)).
///
/// ```
/// use mcp_host::{HttpConfig, OAuth};
///
/// let http = HttpConfig::new("https://example.com/mcp")
///     .oauth(OAuth::client_credentials("my-agent", "s3cret").issuer("https://auth.example.com"));
/// assert!(!format!("{http:?}").contains("s3cret"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuth {
    /// How tokens are obtained.
    pub grant: OAuthGrant,
    /// Whether the OAuth requests may reach private, shared and link-local addresses (an
    /// authorization server on an internal network; still over `https`). Loopback is
    /// allowed, over plain `http` too, only when the server itself is on a loopback
    /// address.
    pub allow_private: bool,
}

impl OAuth {
    /// The client credentials grant with `client_id` and its secret.
    pub fn client_credentials(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        OAuth {
            grant: OAuthGrant::ClientCredentials {
                client_id: client_id.into(),
                client_secret: client_secret.into(),
                issuer: None,
            },
            allow_private: false,
        }
    }

    /// The tokens `mcp` stored, in its credential file.
    pub fn stored() -> Self {
        OAuth {
            grant: OAuthGrant::Stored { store: None },
            allow_private: false,
        }
    }

    /// Binds client credentials to the authorization server `issuer` (no effect on
    /// stored tokens, which record their issuer themselves).
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        if let OAuthGrant::ClientCredentials { issuer: bound, .. } = &mut self.grant {
            *bound = Some(issuer.into());
        }
        self
    }

    /// Reads stored tokens from `path` instead of `mcp`'s credential file (no effect on
    /// client credentials).
    #[must_use]
    pub fn store(mut self, path: impl Into<PathBuf>) -> Self {
        if let OAuthGrant::Stored { store } = &mut self.grant {
            *store = Some(path.into());
        }
        self
    }

    /// Sets [`allow_private`](Self::allow_private).
    #[must_use]
    pub fn allow_private(mut self, allow: bool) -> Self {
        self.allow_private = allow;
        self
    }
}

/// Where `mcp` keeps registrations and tokens: `credentials.json` in the user's
/// configuration directory under `mcp` (`$XDG_CONFIG_HOME/mcp/credentials.json`, else
/// `~/.config/mcp/credentials.json`; `~/Library/Application Support/mcp/` on macOS,
/// `%APPDATA%\mcp\` on Windows). `None` when the environment names no such directory.
pub fn default_credential_store() -> Option<PathBuf> {
    credential_store_in(&|name| std::env::var_os(name))
}

/// [`default_credential_store`] with the environment given.
fn credential_store_in(env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = if cfg!(windows) {
        var("APPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library").join("Application Support"))
    } else {
        var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|h| h.join(".config")))
    }?;
    Some(base.join("mcp").join("credentials.json"))
}

/// [`Error::OAuth`] for `server`.
pub(crate) fn refused(server: &str, reason: impl Into<String>) -> Error {
    Error::OAuth {
        server: server.to_owned(),
        reason: reason.into(),
    }
}

#[cfg(feature = "auth")]
mod client {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
    use mcp_client::auth::{
        AuthorizationRequest, ClientCredentials, ClientSecret, CredentialStore, FileStore,
        Interaction, InteractionFuture, NetworkPolicy, OAuthClient, OAuthConfig, is_loopback_host,
    };
    use mcp_transport_http::{AuthFuture, Authorizer, AuthorizerError, Challenge};

    use super::{OAuth, OAuthGrant, default_credential_store, refused};
    use crate::Error;

    /// What a host answers a server that wants someone to sign in.
    const NO_SIGN_IN: &str = "a host does not sign in";

    /// The user-interaction step of a host: there is no user, so it always refuses. Its
    /// redirect URI is the one `mcp` registered with, so that the stored registration is
    /// the client a refresh uses.
    #[derive(Debug)]
    struct NoSignIn {
        redirect_uri: String,
    }

    impl Interaction for NoSignIn {
        fn redirect_uri(&self) -> String {
            self.redirect_uri.clone()
        }

        fn authorize<'a>(&'a self, _request: &'a AuthorizationRequest) -> InteractionFuture<'a> {
            Box::pin(async { Err(NO_SIGN_IN.into()) })
        }
    }

    /// The seconds since the Unix epoch.
    fn now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    /// The settings for the tokens stored for `url` in the credential file `path`,
    /// checked to be usable by a host: not bound to another process's DPoP key, and
    /// either still valid or renewable with a refresh token.
    fn stored(server: &str, url: &str, path: &Path) -> Result<OAuthConfig, Error> {
        let store = FileStore::new(path);
        let unreadable = |e: std::io::Error| {
            let path = path.display();
            refused(
                server,
                format!("cannot read the credential file {path}: {e}"),
            )
        };
        let sign_in = |why: &str| {
            let path = path.display();
            refused(
                server,
                format!("{why} for {url} in {path}: sign in with `mcp tools -s {url}` first"),
            )
        };
        let tokens = store
            .tokens(url)
            .map_err(unreadable)?
            .ok_or_else(|| sign_in("no stored sign-in"))?;
        if tokens.is_dpop_bound() {
            // Bound to the key of the `mcp` run that obtained it, which no other process
            // holds.
            return Err(sign_in("the stored token is bound to another key (DPoP)"));
        }
        let expired = tokens.expires_at.is_some_and(|at| at <= now());
        if expired && tokens.refresh_token.is_none() {
            return Err(sign_in(
                "the stored token has expired and there is no refresh token",
            ));
        }
        // The registration with the issuer of the tokens, which refreshes them. Without
        // one no refresh can happen, and any redirect URI does.
        let redirect_uri = store
            .client(&tokens.issuer)
            .map_err(unreadable)?
            .and_then(|client| client.redirect_uris.into_iter().next())
            .unwrap_or_else(|| "http://127.0.0.1/callback".to_owned());
        Ok(
            OAuthConfig::authorization_code(url, Arc::new(NoSignIn { redirect_uri }))
                // Registering anew would leave a client at the authorization server that
                // no one can sign in with.
                .dynamic_registration(false)
                .store(Arc::new(store) as Arc<dyn CredentialStore>),
        )
    }

    impl OAuth {
        /// The OAuth client of the server `server` at `url`, as these settings say.
        /// Fails with [`Error::OAuth`] when stored tokens are missing, unreadable or
        /// expired without a refresh token, or the client cannot be set up.
        #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
        pub fn client(&self, server: &str, url: &str) -> Result<OAuthClient, Error> {
            let config = match &self.grant {
                OAuthGrant::ClientCredentials {
                    client_id,
                    client_secret,
                    issuer,
                } => {
                    let secret = ClientSecret::Secret(client_secret.clone());
                    let mut credentials = ClientCredentials::new(client_id, secret);
                    credentials.issuer.clone_from(issuer);
                    OAuthConfig::client_credentials(url, credentials)
                }
                OAuthGrant::Stored { store } => {
                    let path: PathBuf = store
                        .clone()
                        .or_else(default_credential_store)
                        .ok_or_else(|| {
                            refused(server, "no directory for the credential file: give `store`")
                        })?;
                    stored(server, url, &path)?
                }
            };
            let mut network = NetworkPolicy::default();
            // A server on this machine may have its authorization server here too; a
            // remote one may not point the client at local services.
            network.allow_loopback = url
                .parse::<Uri>()
                .ok()
                .and_then(|u| u.host().map(is_loopback_host))
                .unwrap_or(false);
            network.allow_private = self.allow_private;
            let config = config
                .client_name(concat!("mcp-host ", env!("CARGO_PKG_VERSION")))
                .network(network);
            OAuthClient::new(config).map_err(|e| refused(server, e.to_string()))
        }

        /// The OAuth client, and the authorizer the transport is given: the client
        /// itself, or for stored tokens one that says plainly why a refused token ends
        /// the connection.
        pub(crate) fn authorizer(
            &self,
            server: &str,
            url: &str,
        ) -> Result<(Arc<OAuthClient>, Arc<dyn Authorizer>), Error> {
            let client = Arc::new(self.client(server, url)?);
            let authorizer: Arc<dyn Authorizer> = match self.grant {
                OAuthGrant::Stored { .. } => Arc::new(StoredSignIn {
                    inner: Arc::clone(&client),
                    url: url.to_owned(),
                }),
                OAuthGrant::ClientCredentials { .. } => Arc::clone(&client) as Arc<dyn Authorizer>,
            };
            Ok((client, authorizer))
        }
    }

    /// The authorizer of stored tokens: the OAuth client's, but a challenge it cannot
    /// answer (the token was refused and could not be refreshed, so only a new sign-in
    /// would do) fails with what to do about it.
    #[derive(Debug)]
    struct StoredSignIn {
        inner: Arc<OAuthClient>,
        url: String,
    }

    /// Why a request with stored tokens failed.
    #[derive(Debug, thiserror::Error)]
    #[error(
        "the stored sign-in for {url} was refused and cannot be renewed, and {NO_SIGN_IN}: \
         sign in again with `mcp tools -s {url}`"
    )]
    struct SignInAgain {
        url: String,
        #[source]
        source: AuthorizerError,
    }

    impl Authorizer for StoredSignIn {
        fn authorization(&self) -> Option<HeaderValue> {
            self.inner.authorization()
        }

        fn headers(&self, method: &Method, url: &Uri) -> Result<HeaderMap, AuthorizerError> {
            self.inner.headers(method, url)
        }

        fn responded(&self, url: &Uri, status: StatusCode, headers: &HeaderMap) {
            self.inner.responded(url, status, headers);
        }

        fn prepare(&self) -> Option<AuthFuture<'_, ()>> {
            self.inner.prepare()
        }

        fn challenged<'a>(
            &'a self,
            challenge: &'a Challenge,
        ) -> AuthFuture<'a, Result<bool, AuthorizerError>> {
            Box::pin(async move {
                self.inner.challenged(challenge).await.map_err(|source| {
                    Box::new(SignInAgain {
                        url: self.url.clone(),
                        source,
                    }) as AuthorizerError
                })
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    #[test]
    fn the_credential_file_is_where_mcp_keeps_it() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let found = credential_store_in(&env(&[
            ("HOME", "/home/ada"),
            ("XDG_CONFIG_HOME", "/cfg"),
            ("APPDATA", "C:/AppData"),
        ]));
        let expected = if cfg!(windows) {
            "C:/AppData/mcp/credentials.json"
        } else if cfg!(target_os = "macos") {
            "/home/ada/Library/Application Support/mcp/credentials.json"
        } else {
            "/cfg/mcp/credentials.json"
        };
        assert_eq!(found, Some(PathBuf::from(expected)));
        if cfg!(all(unix, not(target_os = "macos"))) {
            // An empty XDG_CONFIG_HOME is unset.
            let found =
                credential_store_in(&env(&[("HOME", "/home/ada"), ("XDG_CONFIG_HOME", "")]));
            assert_eq!(
                found,
                Some(PathBuf::from("/home/ada/.config/mcp/credentials.json"))
            );
        }
        assert_eq!(credential_store_in(&env(&[])), None);
    }
}
