//! What an [`OAuthClient`](super::OAuthClient) is told: the server, the grant, how to
//! register, whether to bind tokens with DPoP, where credentials live and which networks
//! it may reach.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::fetch::NetworkPolicy;
use super::interaction::Interaction;
use super::store::{CredentialStore, MemoryStore};

/// How many authorizations one request may trigger (the first one and step-ups) before
/// the client treats the refusal as permanent (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>,
/// Step-Up Authorization Flow: "no more than a few times").
pub const DEFAULT_MAX_AUTHORIZATIONS: u32 = 3;

/// How long before its expiry an access token is renewed by default (see
/// [`OAuthConfig::refresh_ahead`]).
pub const DEFAULT_REFRESH_AHEAD: Duration = Duration::from_mins(1);

/// Client credentials known in advance for one authorization server
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/client-registration>, Pre-registration). They are used with that issuer only.
#[derive(Clone)]
#[non_exhaustive]
pub struct PreRegistered {
    /// The issuer of the authorization server they were registered with.
    pub issuer: String,
    /// The `client_id`.
    pub client_id: String,
    /// The `client_secret`, for a confidential client.
    pub client_secret: Option<String>,
    /// The token endpoint authentication method to use (`client_secret_basic`,
    /// `client_secret_post` or `none`); chosen from the server's metadata when `None`.
    pub token_endpoint_auth_method: Option<String>,
}

impl PreRegistered {
    /// Credentials for `issuer` with `client_id` and, for a confidential client, a secret.
    pub fn new(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        PreRegistered {
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret,
            token_endpoint_auth_method: None,
        }
    }
}

impl fmt::Debug for PreRegistered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreRegistered")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

/// The identifier of the OAuth Client Credentials extension
/// (<https://modelcontextprotocol.io/extensions/auth/oauth-client-credentials>), which a client using that grant
/// declares in its capabilities' `extensions` (see `ClientBuilder::oauth`).
pub const CLIENT_CREDENTIALS_EXTENSION: &str = "io.modelcontextprotocol/oauth-client-credentials";

/// How a client-credentials client proves who it is.
#[derive(Clone)]
#[non_exhaustive]
pub enum ClientSecret {
    /// A shared secret, sent with `client_secret_basic` (or `client_secret_post` when the
    /// server only lists that).
    Secret(String),
    /// A private key (PEM, PKCS#8 or the key type's own format) that signs a JWT assertion
    /// (`private_key_jwt`, RFC 7523 §2.2), with its JWS algorithm (`ES256`, `RS256`, …).
    PrivateKeyJwt {
        /// The private key, PEM-encoded.
        pem: String,
        /// The JWS algorithm name.
        algorithm: String,
    },
}

impl fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientSecret::Secret(_) => f.write_str("Secret(…)"),
            ClientSecret::PrivateKeyJwt { algorithm, .. } => f
                .debug_struct("PrivateKeyJwt")
                .field("algorithm", algorithm)
                .finish_non_exhaustive(),
        }
    }
}

/// A machine client of the OAuth Client Credentials extension
/// (<https://modelcontextprotocol.io/extensions/auth/oauth-client-credentials>): no user, no browser.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientCredentials {
    /// The `client_id`.
    pub client_id: String,
    /// The secret or key.
    pub credential: ClientSecret,
    /// The issuer the credentials belong to, if known: the client then refuses a server
    /// whose metadata names another authorization server.
    pub issuer: Option<String>,
}

impl ClientCredentials {
    /// Credentials for `client_id`, usable with whichever authorization server the
    /// resource names.
    pub fn new(client_id: impl Into<String>, credential: ClientSecret) -> Self {
        ClientCredentials {
            client_id: client_id.into(),
            credential,
            issuer: None,
        }
    }
}

/// The identifier of the Enterprise-Managed Authorization extension
/// (<https://modelcontextprotocol.io/extensions/auth/enterprise-managed-authorization>), which a client using the
/// [`Grant::EnterpriseManaged`] grant declares in its capabilities' `extensions`.
pub const ENTERPRISE_MANAGED_EXTENSION: &str =
    "io.modelcontextprotocol/enterprise-managed-authorization";

/// The identifier of the Workload Identity Federation extension (SEP-1933,
/// <https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/draft/workload-identity-federation.mdx>;
/// the draft names no identifier, this is the one the conformance suite's
/// `auth/wif-jwt-bearer` scenario is filed under), declared by a client using the
/// [`Grant::WorkloadIdentity`] grant.
pub const WORKLOAD_IDENTITY_EXTENSION: &str = "io.modelcontextprotocol/auth/wif";

/// The identifier of the DPoP extension (SEP-1932,
/// <https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/draft/dpop-extension.mdx>; as for [`WORKLOAD_IDENTITY_EXTENSION`], the
/// conformance suite's), declared by a client whose [`DpopPolicy`] is not
/// [`Off`](DpopPolicy::Off).
pub const DPOP_EXTENSION: &str = "io.modelcontextprotocol/auth/dpop";

/// A JWT the client presents as an authorization grant or a subject token: given as is,
/// or read from a file each time it is needed (a workload platform such as Kubernetes
/// rotates a projected token file; reading it anew picks up the current one).
#[derive(Clone)]
#[non_exhaustive]
pub enum Assertion {
    /// The JWT itself.
    Jwt(String),
    /// A file holding the JWT (surrounding whitespace is ignored), read at each grant.
    File(PathBuf),
}

impl Assertion {
    /// The JWT, read from its file if it is one.
    pub(crate) fn read(&self) -> std::io::Result<String> {
        match self {
            Assertion::Jwt(jwt) => Ok(jwt.clone()),
            Assertion::File(path) => Ok(std::fs::read_to_string(path)?.trim().to_owned()),
        }
    }
}

impl fmt::Debug for Assertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Assertion::Jwt(_) => f.write_str("Jwt(…)"),
            Assertion::File(path) => f.debug_tuple("File").field(path).finish(),
        }
    }
}

/// An autonomous workload's identity for the JWT bearer grant (RFC 7523 §2.1) of the
/// Workload Identity Federation extension (see [`WORKLOAD_IDENTITY_EXTENSION`]): a JWT its
/// platform issued (Kubernetes, SPIFFE, a cloud provider), presented to the authorization
/// server as the `assertion`, without client registration or client secret.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WorkloadIdentity {
    /// The workload JWT. Its `aud` must name the authorization server (its issuer or its
    /// token endpoint): the client never presents it to another one.
    pub assertion: Assertion,
    /// A `client_id` to send along, for an authorization server that wants one (the
    /// extension needs none).
    pub client_id: Option<String>,
    /// The issuer the JWT is for, if known: the client then refuses a server whose
    /// metadata names another authorization server.
    pub issuer: Option<String>,
}

impl WorkloadIdentity {
    /// A workload presenting `assertion`.
    pub fn new(assertion: Assertion) -> Self {
        WorkloadIdentity {
            assertion,
            client_id: None,
            issuer: None,
        }
    }
}

/// The enterprise identity provider of [`EnterpriseManaged`]: where the client exchanges
/// the user's identity assertion for an ID-JAG (RFC 8693 token exchange).
#[derive(Clone)]
#[non_exhaustive]
pub struct EnterpriseIdp {
    /// The IdP's issuer identifier.
    pub issuer: String,
    /// Its token endpoint; discovered from the issuer's metadata (RFC 8414, then OpenID
    /// Connect Discovery) when `None`.
    pub token_endpoint: Option<String>,
    /// This client's `client_id` at the IdP (the one it signs users in with).
    pub client_id: String,
    /// This client's secret at the IdP, for a confidential client (`client_secret_basic`).
    pub client_secret: Option<String>,
}

impl EnterpriseIdp {
    /// The IdP `issuer`, where this client is `client_id`.
    pub fn new(issuer: impl Into<String>, client_id: impl Into<String>) -> Self {
        EnterpriseIdp {
            issuer: issuer.into(),
            token_endpoint: None,
            client_id: client_id.into(),
            client_secret: None,
        }
    }
}

impl fmt::Debug for EnterpriseIdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseIdp")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .finish()
    }
}

/// Enterprise-Managed Authorization (<https://modelcontextprotocol.io/extensions/auth/enterprise-managed-authorization>;
/// <https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/stable/enterprise-managed-authorization.mdx>):
/// the user signed in to this client through the enterprise IdP, and the client turns that
/// sign-in into access tokens without sending the user anywhere. For each MCP server it
///
/// 1. exchanges the user's ID token at the IdP for an Identity Assertion JWT Authorization
///    Grant (ID-JAG): an RFC 8693 token exchange with `requested_token_type`
///    `urn:ietf:params:oauth:token-type:id-jag`, `audience` the MCP authorization server's
///    issuer and `resource` the MCP server's resource identifier (§4);
/// 2. presents the ID-JAG to the MCP authorization server with the JWT bearer grant
///    (RFC 7523 §2.1), authenticating with its own credentials there (§5).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EnterpriseManaged {
    /// The enterprise IdP.
    pub idp: EnterpriseIdp,
    /// The identity assertion of the user's single sign-on: an OpenID Connect ID token
    /// issued to this client by the IdP.
    pub id_token: Assertion,
    /// This client's credentials at the MCP authorization server (its `issuer`, if set,
    /// binds them to that server).
    pub client: ClientCredentials,
}

impl EnterpriseManaged {
    /// The user of `id_token`, signed in through `idp`; `client` authenticates this client
    /// at the MCP authorization server.
    pub fn new(idp: EnterpriseIdp, id_token: Assertion, client: ClientCredentials) -> Self {
        EnterpriseManaged {
            idp,
            id_token,
            client,
        }
    }
}

/// Whether the client binds its access tokens to a key with DPoP (RFC 9449; the DPoP
/// extension, [`DPOP_EXTENSION`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DpopPolicy {
    /// Never: tokens are bearer tokens, and a token response of type `DPoP` is refused.
    #[default]
    Off,
    /// When the authorization server advertises ES256 in
    /// `dpop_signing_alg_values_supported` (RFC 9449 §5.1): every token request carries a
    /// proof, and a token issued as `DPoP` is presented with the `DPoP` scheme and a fresh
    /// proof per request. Other servers get bearer tokens as usual.
    IfSupported,
    /// Always: an authorization server that does not advertise ES256 for DPoP, or that
    /// answers with a bearer token, is an error.
    Required,
}

/// The OAuth grant the client uses to obtain tokens.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Grant {
    /// The authorization code grant with PKCE, on behalf of a user, who signs in through
    /// the [`Interaction`].
    AuthorizationCode(Arc<dyn Interaction>),
    /// The client credentials grant, on the client's own behalf.
    ClientCredentials(ClientCredentials),
    /// The JWT bearer grant with a workload's platform-issued JWT (Workload Identity
    /// Federation), on the workload's own behalf.
    WorkloadIdentity(WorkloadIdentity),
    /// Enterprise-managed authorization: an ID-JAG from the enterprise IdP, then the JWT
    /// bearer grant, on behalf of the signed-in user, who is never asked.
    EnterpriseManaged(EnterpriseManaged),
}

impl Grant {
    /// Whether the grant involves no user (it can be run again to renew a token).
    pub(crate) fn is_unattended(&self) -> bool {
        !matches!(self, Grant::AuthorizationCode(_))
    }
}

/// The settings of an [`OAuthClient`](super::OAuthClient). Build one with
/// [`authorization_code`](Self::authorization_code) or
/// [`client_credentials`](Self::client_credentials), then the setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// The MCP endpoint's URL, as the transport is given it. Tokens are stored under it,
    /// and the protected resource metadata must name it (or a parent path of it).
    pub server_url: String,
    /// The grant.
    pub grant: Grant,
    /// The `client_name` sent in dynamic client registration.
    pub client_name: String,
    /// The HTTPS URL of this client's Client ID Metadata Document, used as its `client_id`
    /// with servers that advertise `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// Pre-registered credentials, each for one issuer; tried first.
    pub pre_registered: Vec<PreRegistered>,
    /// Whether to fall back to dynamic client registration (RFC 7591; deprecated by the
    /// spec, kept for servers without Client ID Metadata Documents). Default `true`.
    pub dynamic_registration: bool,
    /// Where registrations and tokens are kept (default: in memory).
    pub store: Arc<dyn CredentialStore>,
    /// Which networks the OAuth requests may reach (default: `https` and public addresses
    /// only).
    pub network: NetworkPolicy,
    /// Whether to ask for a refresh token with `offline_access` when the authorization
    /// server lists that scope (default `true`; never asked otherwise).
    pub offline_access: bool,
    /// How many authorizations one request may trigger (default
    /// [`DEFAULT_MAX_AUTHORIZATIONS`]).
    pub max_authorizations: u32,
    /// How long before an access token expires it is renewed, before the next request
    /// rather than after the server refuses it (default [`DEFAULT_REFRESH_AHEAD`];
    /// `Duration::ZERO` renews only after a refusal). Renewal uses the refresh token, or,
    /// for the client credentials grant, a new grant; it needs the token's `expires_in`,
    /// and never asks the user. At most half the token's remaining lifetime is taken, so a
    /// short-lived token is not renewed on every request.
    pub refresh_ahead: Duration,
    /// The TLS settings for the OAuth requests (default: the Mozilla roots).
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// Whether to bind tokens to a key with DPoP (default [`DpopPolicy::Off`]).
    pub dpop: DpopPolicy,
}

impl OAuthConfig {
    /// Settings for a user-facing client of the MCP server at `server_url`, signing in
    /// through `interaction`.
    pub fn authorization_code(
        server_url: impl Into<String>,
        interaction: Arc<dyn Interaction>,
    ) -> Self {
        Self::with_grant(server_url.into(), Grant::AuthorizationCode(interaction))
    }

    /// Settings for a machine client of the MCP server at `server_url`.
    pub fn client_credentials(
        server_url: impl Into<String>,
        credentials: ClientCredentials,
    ) -> Self {
        Self::with_grant(server_url.into(), Grant::ClientCredentials(credentials))
    }

    /// Settings for an autonomous workload presenting its platform-issued JWT to the
    /// authorization server of the MCP server at `server_url` (Workload Identity
    /// Federation).
    pub fn workload_identity(server_url: impl Into<String>, identity: WorkloadIdentity) -> Self {
        Self::with_grant(server_url.into(), Grant::WorkloadIdentity(identity))
    }

    /// Settings for a client whose user signed in through an enterprise IdP, for the MCP
    /// server at `server_url` (Enterprise-Managed Authorization).
    pub fn enterprise_managed(server_url: impl Into<String>, grant: EnterpriseManaged) -> Self {
        Self::with_grant(server_url.into(), Grant::EnterpriseManaged(grant))
    }

    fn with_grant(server_url: String, grant: Grant) -> Self {
        OAuthConfig {
            server_url,
            grant,
            client_name: "mcp-rs client".to_owned(),
            client_metadata_url: None,
            pre_registered: Vec::new(),
            dynamic_registration: true,
            store: Arc::new(MemoryStore::new()),
            network: NetworkPolicy::default(),
            offline_access: true,
            max_authorizations: DEFAULT_MAX_AUTHORIZATIONS,
            refresh_ahead: DEFAULT_REFRESH_AHEAD,
            tls: None,
            dpop: DpopPolicy::Off,
        }
    }

    /// The identifiers of the extensions this configuration is defined by, which the client
    /// declares in its capabilities: [`CLIENT_CREDENTIALS_EXTENSION`],
    /// [`WORKLOAD_IDENTITY_EXTENSION`] or [`ENTERPRISE_MANAGED_EXTENSION`] for those grants
    /// (none for the authorization code grant, the core protocol's), and
    /// [`DPOP_EXTENSION`] when DPoP is on.
    pub fn extensions(&self) -> Vec<&'static str> {
        let mut ids = match self.grant {
            Grant::ClientCredentials(_) => vec![CLIENT_CREDENTIALS_EXTENSION],
            Grant::WorkloadIdentity(_) => vec![WORKLOAD_IDENTITY_EXTENSION],
            Grant::EnterpriseManaged(_) => vec![ENTERPRISE_MANAGED_EXTENSION],
            Grant::AuthorizationCode(_) => Vec::new(),
        };
        if self.dpop != DpopPolicy::Off {
            ids.push(DPOP_EXTENSION);
        }
        ids
    }

    /// Sets [`client_name`](Self::client_name).
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Sets [`client_metadata_url`](Self::client_metadata_url).
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Adds pre-registered credentials.
    #[must_use]
    pub fn pre_registered(mut self, credentials: PreRegistered) -> Self {
        self.pre_registered.push(credentials);
        self
    }

    /// Sets [`dynamic_registration`](Self::dynamic_registration).
    #[must_use]
    pub fn dynamic_registration(mut self, enabled: bool) -> Self {
        self.dynamic_registration = enabled;
        self
    }

    /// Sets [`store`](Self::store).
    #[must_use]
    pub fn store(mut self, store: Arc<dyn CredentialStore>) -> Self {
        self.store = store;
        self
    }

    /// Sets [`network`](Self::network).
    #[must_use]
    pub fn network(mut self, policy: NetworkPolicy) -> Self {
        self.network = policy;
        self
    }

    /// Sets [`offline_access`](Self::offline_access).
    #[must_use]
    pub fn offline_access(mut self, wanted: bool) -> Self {
        self.offline_access = wanted;
        self
    }

    /// Sets [`max_authorizations`](Self::max_authorizations).
    #[must_use]
    pub fn max_authorizations(mut self, max: u32) -> Self {
        self.max_authorizations = max;
        self
    }

    /// Sets [`refresh_ahead`](Self::refresh_ahead).
    #[must_use]
    pub fn refresh_ahead(mut self, ahead: Duration) -> Self {
        self.refresh_ahead = ahead;
        self
    }

    /// Sets [`tls`](Self::tls).
    #[must_use]
    pub fn tls(mut self, config: Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(config);
        self
    }

    /// Sets [`dpop`](Self::dpop).
    #[must_use]
    pub fn dpop(mut self, policy: DpopPolicy) -> Self {
        self.dpop = policy;
        self
    }
}
