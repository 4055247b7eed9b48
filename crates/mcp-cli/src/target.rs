//! Where a command goes: the bundled example server (the default), a URL, a stdio command
//! given after `--`, or a server named in a config file; and connecting to it with a
//! client that answers elicitation on a terminal.
//!
//! The config file is read by `mcp-host`'s parser ([`mcp_host::HostConfig`]), the one
//! schema `docs/CONFIG.md` describes; its entries reach the connection the way they reach
//! a host's (`mcp_host::ServerConfig::connector`, `StdioConfig::to_command`,
//! `HttpConfig::to_client_config`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_client::{Client, ClientBuilder};
use mcp_host::{HostConfig, HttpConfig, OAuthGrant, ServerConfig, ServerTransport, StdioConfig};
use mcp_legacy::client::{EraChoice, Verdict};
use mcp_transport_stdio::{ServerCommand, ServerConnection, StderrMode};

use crate::Error;

/// One server a command can reach.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// `mcp serve-example`, run as a child of this process.
    Example,
    /// A server given by URL, by a command after `--`, or by its name in the config file.
    Server {
        /// Its name: the config's, or the URL or program.
        name: String,
        /// How to reach it (boxed: it is large).
        config: Box<ServerConfig>,
    },
}

/// The config file to use: `explicit`, else `$MCP_CONFIG`, else `./mcp.json`, else
/// `$XDG_CONFIG_HOME/mcp/mcp.json` (`~/.config/mcp/mcp.json` when `XDG_CONFIG_HOME` is
/// unset or empty), the last two only when they exist.
pub(crate) fn config_path(explicit: Option<&Path>) -> Option<PathBuf> {
    search(
        explicit,
        |name| std::env::var_os(name).filter(|v| !v.is_empty()),
        Path::is_file,
    )
}

/// [`config_path`] with the environment and the file system given.
fn search(
    explicit: Option<&Path>,
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
    exists: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_owned());
    }
    if let Some(path) = env("MCP_CONFIG") {
        return Some(PathBuf::from(path));
    }
    let local = PathBuf::from("mcp.json");
    if exists(&local) {
        return Some(local);
    }
    let user = match env("XDG_CONFIG_HOME") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env("HOME")?).join(".config"),
    }
    .join("mcp")
    .join("mcp.json");
    exists(&user).then_some(user)
}

/// What the command line adds to a server: `-e KEY=VAL` for a stdio server, `--header
/// K:V` for an HTTP one.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overrides {
    /// `-e KEY=VAL`, in order.
    pub(crate) env: Vec<String>,
    /// `--header K:V`, in order.
    pub(crate) headers: Vec<String>,
}

impl Overrides {
    /// Puts these on top of `config`: the variables after the entry's `env` (so they win),
    /// each header instead of the entry's of that name.
    fn apply(&self, config: &mut ServerConfig) -> Result<(), Error> {
        match &mut config.transport {
            ServerTransport::Stdio(stdio) => {
                if !self.headers.is_empty() {
                    return Err(Error::Arguments(
                        "--header applies to an HTTP server; this one is a stdio command (use -e KEY=VAL)"
                            .to_owned(),
                    ));
                }
                for pair in &self.env {
                    let (key, value) = pair
                        .split_once('=')
                        .filter(|(k, _)| !k.is_empty())
                        .ok_or_else(|| Error::Arguments(format!("-e {pair:?} is not KEY=VALUE")))?;
                    stdio.env.push((key.to_owned(), value.to_owned()));
                }
            }
            ServerTransport::Http(http) => {
                if !self.env.is_empty() {
                    return Err(Error::Arguments(
                        "-e applies to a stdio server; this one is reached over HTTP (use --header K:V)"
                            .to_owned(),
                    ));
                }
                for pair in &self.headers {
                    let (name, value) = pair
                        .split_once(':')
                        .filter(|(k, _)| !k.trim().is_empty())
                        .ok_or_else(|| {
                            Error::Arguments(format!("--header {pair:?} is not NAME:VALUE"))
                        })?;
                    *http = std::mem::take(http).set_header(name.trim(), value.trim());
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.env.is_empty() && self.headers.is_empty()
    }
}

/// Resolves the target of a command: `-- COMMAND ARGS…` wins, then `--server` (a URL or a
/// config name), else the example server; `overrides` go on top.
pub(crate) fn resolve(
    server: Option<&str>,
    command: &[String],
    config: Option<&HostConfig>,
    overrides: &Overrides,
) -> Result<Target, Error> {
    let (name, mut config) = if let Some((program, args)) = command.split_first() {
        (
            program.clone(),
            ServerConfig::new(StdioConfig::new(program.clone()).args(args.iter().cloned())),
        )
    } else if let Some(server) = server {
        if server.starts_with("http://") || server.starts_with("https://") {
            (
                server.to_owned(),
                ServerConfig::new(HttpConfig::new(server)),
            )
        } else {
            match config.and_then(|c| c.get(server)) {
                Some(entry) => (server.to_owned(), entry.clone()),
                None => {
                    return Err(Error::UnknownServer {
                        name: server.to_owned(),
                        known: config
                            .map(|c| c.servers.iter().map(|(n, _)| n.clone()).collect())
                            .unwrap_or_default(),
                    });
                }
            }
        }
    } else {
        if !overrides.is_empty() {
            return Err(Error::Arguments(
                "-e and --header need a server: --server URL|NAME or -- COMMAND".to_owned(),
            ));
        }
        return Ok(Target::Example);
    };
    overrides.apply(&mut config)?;
    Ok(Target::Server {
        name,
        config: Box::new(config),
    })
}

/// A connected client and what must be stopped with it.
pub(crate) struct Session {
    pub(crate) client: Client,
    /// The era and protocol version the connection settled on.
    pub(crate) verdict: Verdict,
    server: Option<ServerConnection>,
}

impl Session {
    /// Ends the session: a stdio server is asked to exit (stdin closed, then signals).
    pub(crate) async fn close(self) {
        self.client.shutdown(Duration::from_millis(500)).await;
        if let Some(server) = self.server {
            let _ = server.shutdown(Duration::from_secs(2)).await;
        }
    }
}

/// Connects `builder` to `target` in whichever era the server speaks (the dual-era
/// connector of `mcp-legacy`: a `server/discover` probe, then `initialize` for an
/// initialize-era server; over HTTP, then the 2024-11-05 HTTP+SSE transport), within the
/// protocol revisions and with the request timeout of its config entry, unless `era`
/// pins one. The bundled example server is known to be modern and is not probed.
pub(crate) async fn connect(
    target: &Target,
    mut builder: ClientBuilder,
    era: Option<EraChoice>,
    oauth: Option<&crate::oauth::OAuthArgs>,
) -> Result<Session, Error> {
    let (name, config) = match target {
        Target::Example => {
            let exe = std::env::current_exe().map_err(Error::CurrentExe)?;
            let command = ServerCommand::new(exe)
                .arg("serve-example")
                .name("mcp serve-example");
            let connected = mcp_legacy::client::Connector::new(builder)
                .era(EraChoice::Modern)
                .connect_stdio(&command)
                .await?;
            return Ok(Session {
                client: connected.client,
                verdict: connected.verdict,
                server: Some(connected.server),
            });
        }
        Target::Server { name, config } => (name, &**config),
    };
    match &config.transport {
        ServerTransport::Stdio(stdio) => {
            let mut connector = config.connector(builder);
            if let Some(era) = era {
                connector = connector.era(era);
            }
            // Found on the user's PATH and run as the user, as MCP hosts start servers;
            // other variables only from the config's `env` and `-e`.
            let command = stdio.to_command(name).stderr(StderrMode::Inherit);
            let connected = connector.connect_stdio(&command).await?;
            Ok(Session {
                client: connected.client,
                verdict: connected.verdict,
                server: Some(connected.server),
            })
        }
        ServerTransport::Http(http) => {
            let mut client_config = http.to_client_config(name)?;
            let url = &http.url;
            // The entry's own `oauth`: client credentials are used as a host uses them;
            // for stored tokens `mcp` is where the user signs in, into the entry's file.
            let (credentials, store) = match http.oauth.as_ref().map(|o| &o.grant) {
                Some(OAuthGrant::ClientCredentials { .. }) => (http.oauth.as_ref(), None),
                Some(OAuthGrant::Stored { store, .. }) => (None, store.clone()),
                _ => (None, None),
            };
            if let (Some(args), Some(credentials)) = (oauth, credentials)
                && !args.no_auth
            {
                let client = credentials.client(name, url)?;
                builder = builder.oauth(&client);
                client_config = client_config.authorizer(std::sync::Arc::new(client));
            } else if let Some(args) = oauth
                && let Some(client) = args
                    .clone()
                    .or(crate::oauth::OAuthArgs {
                        oauth_store: store,
                        ..Default::default()
                    })
                    .client(url)
                    .await?
            {
                // The extensions the configuration uses (DPoP) are declared.
                builder = builder.oauth(&client);
                let client = std::sync::Arc::new(client);
                crate::oauth::sign_in_if_needed(url, &client_config, &client).await?;
                client_config = client_config.authorizer(client);
            }
            let mut connector = config.connector(builder);
            if let Some(era) = era {
                connector = connector.era(era);
            }
            let connected = connector.connect_http(url, client_config).await?;
            Ok(Session {
                client: connected.client,
                verdict: connected.verdict,
                server: None,
            })
        }
        _ => Err(Error::Arguments(format!(
            "the server {name:?} uses a transport this version of mcp does not know"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    #[test]
    fn the_config_file_is_searched_in_order() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let all = |_: &Path| true;
        let none = |_: &Path| false;
        let explicit = Path::new("given.json");
        let vars = env(&[("MCP_CONFIG", "/env.json"), ("HOME", "/home/ada")]);
        assert_eq!(search(Some(explicit), vars, all), Some(explicit.to_owned()));
        assert_eq!(search(None, vars, all), Some("/env.json".into()));
        let vars = env(&[("HOME", "/home/ada"), ("XDG_CONFIG_HOME", "/xdg")]);
        assert_eq!(search(None, vars, all), Some("mcp.json".into()));
        let only_user = |p: &Path| p.is_absolute();
        assert_eq!(
            search(None, vars, only_user),
            Some("/xdg/mcp/mcp.json".into())
        );
        let vars = env(&[("HOME", "/home/ada")]);
        assert_eq!(
            search(None, vars, only_user),
            Some("/home/ada/.config/mcp/mcp.json".into())
        );
        assert_eq!(search(None, vars, none), None);
        assert_eq!(search(None, env(&[]), only_user), None);
    }

    #[test]
    fn overrides_go_on_top_of_the_entry() {
        let config = HostConfig::from_json(
            r#"{"mcpServers": {
                "cmd": {"command": "srv", "env": {"A": "1"}},
                "web": {"url": "http://x/mcp", "headers": {"Authorization": "old"}}
            }}"#,
        )
        .unwrap();
        let overrides = |env: &[&str], headers: &[&str]| Overrides {
            env: env.iter().map(|s| (*s).to_owned()).collect(),
            headers: headers.iter().map(|s| (*s).to_owned()).collect(),
        };
        let stdio = |target: Target| match target {
            Target::Server { config, .. } => config.stdio().cloned().unwrap(),
            Target::Example => panic!("the example"),
        };
        let http = |target: Target| match target {
            Target::Server { config, .. } => config.http().cloned().unwrap(),
            Target::Example => panic!("the example"),
        };
        let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());

        let cmd = resolve(
            Some("cmd"),
            &[],
            Some(&config),
            &overrides(&["A=2", "B=x=y"], &[]),
        );
        assert_eq!(
            stdio(cmd.unwrap()).env,
            [pair("A", "1"), pair("A", "2"), pair("B", "x=y")]
        );
        let web = resolve(
            Some("web"),
            &[],
            Some(&config),
            &overrides(&[], &["authorization: Bearer new", "X-Extra:1"]),
        );
        assert_eq!(
            http(web.unwrap()).headers,
            [pair("authorization", "Bearer new"), pair("X-Extra", "1")]
        );
        let line = ["prog".to_owned(), "arg".to_owned()];
        let cmd = resolve(Some("web"), &line, Some(&config), &overrides(&["K=V"], &[]));
        let cmd = stdio(cmd.unwrap());
        assert_eq!(
            (cmd.command.as_str(), cmd.args.as_slice()),
            ("prog", &["arg".to_owned()][..])
        );
        assert_eq!(cmd.env, [pair("K", "V")]);
        let url = resolve(Some("https://h/mcp"), &[], None, &overrides(&[], &["A:b"]));
        assert_eq!(http(url.unwrap()).headers, [pair("A", "b")]);

        for (server, env, headers, message) in [
            (
                Some("cmd"),
                &["A=1"][..],
                &["A:b"][..],
                "--header applies to an HTTP server",
            ),
            (
                Some("web"),
                &["A=1"][..],
                &[][..],
                "-e applies to a stdio server",
            ),
            (Some("cmd"), &["=1"][..], &[][..], "is not KEY=VALUE"),
            (Some("cmd"), &["A"][..], &[][..], "is not KEY=VALUE"),
            (Some("web"), &[][..], &["nocolon"][..], "is not NAME:VALUE"),
            (Some("web"), &[][..], &[":v"][..], "is not NAME:VALUE"),
            (None, &["A=1"][..], &[][..], "need a server"),
        ] {
            let e = resolve(server, &[], Some(&config), &overrides(env, headers)).unwrap_err();
            assert!(e.to_string().contains(message), "{e}");
        }
        let e = resolve(Some("nope"), &[], Some(&config), &Overrides::default()).unwrap_err();
        assert!(e.to_string().contains("known: cmd, web"), "{e}");
    }
}
