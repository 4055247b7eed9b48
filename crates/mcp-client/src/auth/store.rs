//! Where credentials live between requests and runs: client registrations keyed by the
//! authorization server's issuer (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/client-registration>,
//! Authorization Server Binding), and tokens keyed by the resource they are for, each
//! recording the issuer that issued it so that it is never used with another one.
//!
//! [`MemoryStore`] keeps them for the life of the process; [`FileStore`] in one JSON file,
//! written atomically and, on Unix, readable by its owner only
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations>, Token Theft).

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

/// A client registration with one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredClient {
    /// The `client_id`.
    pub client_id: String,
    /// The `client_secret`, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The token endpoint authentication method the registration settled on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// The redirect URIs registered.
    #[serde(default)]
    pub redirect_uris: Vec<String>,
}

impl StoredClient {
    /// A registration with `client_id` and nothing else.
    pub fn new(client_id: impl Into<String>) -> Self {
        StoredClient {
            client_id: client_id.into(),
            client_secret: None,
            token_endpoint_auth_method: None,
            redirect_uris: Vec::new(),
        }
    }
}

impl fmt::Debug for StoredClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredClient")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("redirect_uris", &self.redirect_uris)
            .finish()
    }
}

/// The tokens obtained for one resource.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredTokens {
    /// The issuer of the authorization server that issued them.
    pub issuer: String,
    /// The access token.
    pub access_token: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes requested for them (what a step-up adds to).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The access token's type: `Bearer`, or `DPoP` for a token bound to the key of the
    /// client that obtained it (RFC 9449 §5), which is only ever presented with a proof of
    /// that key and so is of no use to another process.
    #[serde(default = "bearer")]
    pub token_type: String,
}

fn bearer() -> String {
    "Bearer".to_owned()
}

impl StoredTokens {
    /// Tokens with an access token and nothing else.
    pub fn new(issuer: impl Into<String>, access_token: impl Into<String>) -> Self {
        StoredTokens {
            issuer: issuer.into(),
            access_token: access_token.into(),
            refresh_token: None,
            expires_at: None,
            scopes: Vec::new(),
            token_type: bearer(),
        }
    }

    /// Whether the access token is bound to a DPoP key (its type is `DPoP`).
    pub fn is_dpop_bound(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("dpop")
    }
}

impl fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredTokens")
            .field("issuer", &self.issuer)
            .field("refresh_token", &self.refresh_token.is_some())
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .field("token_type", &self.token_type)
            .finish_non_exhaustive()
    }
}

/// Keeps client registrations (by issuer) and tokens (by resource). Calls are short and
/// synchronous; an implementation backed by a remote vault should cache.
pub trait CredentialStore: Send + Sync + fmt::Debug {
    /// The registration with the authorization server `issuer`, if any.
    fn client(&self, issuer: &str) -> io::Result<Option<StoredClient>>;
    /// Records the registration with `issuer`.
    fn save_client(&self, issuer: &str, client: &StoredClient) -> io::Result<()>;
    /// The tokens for `resource`, if any.
    fn tokens(&self, resource: &str) -> io::Result<Option<StoredTokens>>;
    /// Records the tokens for `resource`, replacing any.
    fn save_tokens(&self, resource: &str, tokens: &StoredTokens) -> io::Result<()>;
    /// Forgets the tokens for `resource`.
    fn remove_tokens(&self, resource: &str) -> io::Result<()>;
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Contents {
    #[serde(default)]
    clients: BTreeMap<String, StoredClient>,
    #[serde(default)]
    tokens: BTreeMap<String, StoredTokens>,
}

/// A store in memory, for the life of the process.
#[derive(Debug, Default)]
pub struct MemoryStore(Mutex<Contents>);

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Contents) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl CredentialStore for MemoryStore {
    fn client(&self, issuer: &str) -> io::Result<Option<StoredClient>> {
        Ok(self.with(|c| c.clients.get(issuer).cloned()))
    }

    fn save_client(&self, issuer: &str, client: &StoredClient) -> io::Result<()> {
        self.with(|c| c.clients.insert(issuer.to_owned(), client.clone()));
        Ok(())
    }

    fn tokens(&self, resource: &str) -> io::Result<Option<StoredTokens>> {
        Ok(self.with(|c| c.tokens.get(resource).cloned()))
    }

    fn save_tokens(&self, resource: &str, tokens: &StoredTokens) -> io::Result<()> {
        self.with(|c| c.tokens.insert(resource.to_owned(), tokens.clone()));
        Ok(())
    }

    fn remove_tokens(&self, resource: &str) -> io::Result<()> {
        self.with(|c| c.tokens.remove(resource));
        Ok(())
    }
}

/// A store in one JSON file. Every change rewrites the file through a temporary file and
/// a rename, so a crash leaves the old or the new contents; on Unix the file is created
/// with mode `0600`. Concurrent processes sharing a file may lose each other's updates
/// (the last writer wins); that costs a sign-in, never a wrong credential.
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    lock: Mutex<()>,
}

impl FileStore {
    /// A store in `path` (created on the first save, with its directory).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileStore {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> io::Result<Contents> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Contents::default()),
            Err(e) => Err(e),
        }
    }

    fn update(&self, f: impl FnOnce(&mut Contents)) -> io::Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut contents = self.read()?;
        f(&mut contents);
        let bytes = serde_json::to_vec_pretty(&contents).map_err(io::Error::other)?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let temp = self.path.with_extension("tmp");
        write_private(&temp, &bytes)?;
        std::fs::rename(&temp, &self.path)
    }
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    std::fs::write(path, bytes)
}

impl CredentialStore for FileStore {
    fn client(&self, issuer: &str) -> io::Result<Option<StoredClient>> {
        Ok(self.read()?.clients.remove(issuer))
    }

    fn save_client(&self, issuer: &str, client: &StoredClient) -> io::Result<()> {
        self.update(|c| {
            c.clients.insert(issuer.to_owned(), client.clone());
        })
    }

    fn tokens(&self, resource: &str) -> io::Result<Option<StoredTokens>> {
        Ok(self.read()?.tokens.remove(resource))
    }

    fn save_tokens(&self, resource: &str, tokens: &StoredTokens) -> io::Result<()> {
        self.update(|c| {
            c.tokens.insert(resource.to_owned(), tokens.clone());
        })
    }

    fn remove_tokens(&self, resource: &str) -> io::Result<()> {
        self.update(|c| {
            c.tokens.remove(resource);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(store: &dyn CredentialStore) {
        let a = StoredClient::new("client-at-a");
        store.save_client("https://a.example", &a).unwrap();
        assert_eq!(store.client("https://a.example").unwrap(), Some(a));
        // Keyed by issuer exactly: another issuer, or a look-alike, has nothing.
        for other in [
            "https://b.example",
            "https://a.example/",
            "https://A.example",
        ] {
            assert_eq!(store.client(other).unwrap(), None, "{other}");
        }
        let mut tokens = StoredTokens::new("https://a.example", "t1");
        tokens.refresh_token = Some("r1".to_owned());
        store
            .save_tokens("https://mcp.example/mcp", &tokens)
            .unwrap();
        assert_eq!(
            store.tokens("https://mcp.example/mcp").unwrap(),
            Some(tokens)
        );
        store.remove_tokens("https://mcp.example/mcp").unwrap();
        assert_eq!(store.tokens("https://mcp.example/mcp").unwrap(), None);
    }

    #[test]
    fn memory_store() {
        check(&MemoryStore::new());
    }

    #[test]
    fn file_store_persists_privately() {
        let dir = std::env::temp_dir().join(format!("mcp-auth-store-{}", std::process::id()));
        let path = dir.join("nested").join("credentials.json");
        let store = FileStore::new(&path);
        check(&store);
        // A second store on the same file sees what the first saved.
        let again = FileStore::new(&path);
        assert!(again.client("https://a.example").unwrap().is_some());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn debug_hides_secrets() {
        let mut client = StoredClient::new("id");
        client.client_secret = Some("s3cr3t".to_owned());
        let mut tokens = StoredTokens::new("https://a", "acc3ss");
        tokens.refresh_token = Some("r3fr3sh".to_owned());
        let text = format!("{client:?} {tokens:?}");
        for secret in ["s3cr3t", "acc3ss", "r3fr3sh"] {
            assert!(!text.contains(secret), "{text}");
        }
    }
}
