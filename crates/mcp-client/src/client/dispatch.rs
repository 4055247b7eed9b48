//! How one request reaches the server over each transport: the engine (stdio, in-process),
//! a supervised child, a custom transport or Streamable HTTP; version renegotiation on
//! -32022 and the one retry a restarted child allows.

use std::sync::Arc;
#[cfg(any(feature = "stdio", feature = "http"))]
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
#[cfg(feature = "http")]
use std::time::Duration;

use mcp_jsonrpc::{RawResult, RequestOptions};
#[cfg(any(feature = "stdio", feature = "http"))]
use mcp_types::method;
use mcp_types::{ErrorCode, RequestMetaObject};
use serde::Serialize;
use serde_json::value::RawValue;

use super::{CallOptions, Client, SUPPORTED_VERSIONS, Transport};
use crate::error::Error;
use crate::wire::Plain;

impl Client {
    /// The engine's options for one call, and the progress token its `_meta` carries.
    fn engine_options(
        &self,
        call: &CallOptions,
    ) -> (RequestOptions, Option<mcp_types::ProgressToken>) {
        let mut options = RequestOptions::default();
        if let Some(timeout) = call.timeout.or(self.inner.timeout) {
            options = options.timeout(timeout);
        }
        let mut progress_token = None;
        if let Some(callback) = &call.on_progress {
            let n = self.inner.progress_tokens.fetch_add(1, Ordering::Relaxed);
            let token = mcp_types::ProgressToken::String(format!("progress-{n}"));
            progress_token = Some(token.clone());
            let callback = Arc::clone(callback);
            options = options.progress(token, move |p| callback(p));
        }
        (options, progress_token)
    }

    /// After -32022: picks the newest version both sides support for the retry, or fails
    /// with [`Error::VersionMismatch`].
    fn renegotiate(&self, error: &mcp_jsonrpc::ErrorObject) -> Result<(), Error> {
        let theirs: Vec<String> = error
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .and_then(|s| serde_json::from_value(s.clone()).ok())
            .unwrap_or_default();
        match SUPPORTED_VERSIONS
            .iter()
            .position(|v| theirs.iter().any(|t| t == *v))
        {
            // Retry once with the newest common version (the same one, if the server
            // lists it: it may have refused for a passing reason).
            Some(index) => {
                self.inner.version.store(index, Ordering::Relaxed);
                Ok(())
            }
            None => Err(Error::VersionMismatch {
                ours: SUPPORTED_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
                theirs,
            }),
        }
    }

    /// What the client's transport is, as OpenTelemetry's `network.transport` names it.
    fn transport_kind(&self) -> &'static str {
        match &self.inner.transport {
            Transport::Engine(_) => "pipe",
            #[cfg(feature = "stdio")]
            Transport::Supervised(_) => "pipe",
            #[cfg(feature = "http")]
            Transport::Http(_) => "http",
            Transport::Custom(_) => "custom",
        }
    }

    /// [`send`](Self::send) with the `_meta` written from the client's
    /// [`FixedMeta`](crate::wire::FixedMeta).
    pub(crate) async fn send_wire<P: crate::wire::WireParams>(
        &self,
        fixed: &Arc<crate::wire::FixedMeta>,
        method: &str,
        build: impl Fn(crate::wire::WireMeta) -> P,
        routing: crate::wire::Routing<'_>,
        call: &CallOptions,
    ) -> Result<RawResult, Error> {
        use tracing::Instrument as _;
        let span = crate::trace::request_span(
            method,
            Some(routing.name),
            self.version(),
            self.transport_kind(),
        );
        let trace = crate::trace::context(&span, call.trace.as_ref());
        async move {
            for attempt in 0..2 {
                let (options, progress_token) = self.engine_options(call);
                let params = build(crate::wire::WireMeta {
                    fixed: Arc::clone(fixed),
                    protocol_version: self.version(),
                    progress_token,
                    trace: trace.clone(),
                });
                match self
                    .dispatch_raw(method, &params, options, Some(routing))
                    .await
                {
                    Err(Error::Protocol(error))
                        if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                            && attempt == 0 =>
                    {
                        self.renegotiate(&error)?;
                    }
                    other => return other,
                }
            }
            unreachable!("the loop returns on its second attempt")
        }
        .instrument(span)
        .await
    }

    /// Sends one request; on -32022 picks the newest version both sides support and
    /// retries once.
    pub(crate) async fn send<P: Serialize>(
        &self,
        method: &str,
        build: impl Fn(RequestMetaObject) -> P,
        call: &CallOptions,
    ) -> Result<Box<RawValue>, Error> {
        use tracing::Instrument as _;
        let span = crate::trace::request_span(method, None, self.version(), self.transport_kind());
        let trace = crate::trace::context(&span, call.trace.as_ref());
        async move {
            for attempt in 0..2 {
                let (options, progress_token) = self.engine_options(call);
                let meta = super::request_meta(
                    &self.inner.handlers.capabilities,
                    &self.inner.handlers.info,
                    self.inner.log_level,
                    self.version(),
                    trace.as_ref(),
                    progress_token,
                );
                let params = build(meta);
                match self.dispatch(method, &Plain(&params), options, None).await {
                    Err(Error::Protocol(error))
                        if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                            && attempt == 0 =>
                    {
                        self.renegotiate(&error)?;
                    }
                    other => return other,
                }
            }
            unreachable!("the loop returns on its second attempt")
        }
        .instrument(span)
        .await
    }

    /// Sends one request on the client's transport. `routing` (HTTP only) is what the
    /// request's headers are made of when the caller has it at hand; without it they are
    /// read from the params.
    async fn dispatch<P: crate::wire::WireParams>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
        routing: Option<crate::wire::Routing<'_>>,
    ) -> Result<Box<RawValue>, Error> {
        let answer = self.dispatch_raw(method, params, options, routing).await?;
        answer.into_raw_value().map_err(Error::from)
    }

    /// [`dispatch`](Self::dispatch), the result as it arrived ([`RawResult`]), for a
    /// caller that parses it itself.
    async fn dispatch_raw<P: crate::wire::WireParams>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
        #[cfg_attr(not(feature = "http"), allow(unused_variables))] routing: Option<
            crate::wire::Routing<'_>,
        >,
    ) -> Result<RawResult, Error> {
        let encode = |id: &_| crate::wire::encode_request(id, method, params);
        match &self.inner.transport {
            Transport::Engine(peer) => peer
                .request_encoded(method, encode, options)
                .await
                .map_err(Error::from),
            #[cfg(feature = "stdio")]
            Transport::Supervised(supervisor) => {
                let (generation, peer) = supervisor.peer();
                match peer
                    .request_encoded(method, encode, options.clone())
                    .await
                    .map_err(Error::from)
                {
                    Err(Error::Transport(e)) if e.is_closed() => {
                        // Boxed: a restart's state (1 KB) would size every call's future.
                        Box::pin(supervisor.restart(generation)).await?;
                        if self.retry_safe(method, params) {
                            let (_, peer) = supervisor.peer();
                            peer.request_encoded(method, encode, options)
                                .await
                                .map_err(Error::from)
                        } else {
                            Err(Error::MayHaveRun {
                                method: method.to_owned(),
                            })
                        }
                    }
                    other => other,
                }
            }
            Transport::Custom(custom) => {
                let params = serde_json::to_value(params).map_err(|source| Error::Decode {
                    method: method.to_owned(),
                    source,
                })?;
                custom
                    .request(method, params, options)
                    .await
                    .map(RawResult::from)
            }
            #[cfg(feature = "http")]
            Transport::Http(http) => {
                let wait = || crate::http::Wait {
                    timeout: options.timeout.unwrap_or(Duration::from_mins(1)),
                    max: options.max_timeout.unwrap_or(Duration::from_mins(10)),
                    progress: options
                        .progress_token
                        .clone()
                        .zip(options.on_progress.clone()),
                };
                let router = &self.inner.router;
                let route = |notification: mcp_jsonrpc::Notification| {
                    if let Some(router) = router {
                        router.route(&notification);
                    }
                };
                let version = self.version();
                // Each attempt in a box of its own, written in place: the HTTP request's
                // state (2.3 KB) would otherwise size every call's future, which each
                // caller's `.await` moves (copies) whole; a box costs less than the copies.
                let send = || {
                    Box::into_pin(Box::write(
                        Box::new_uninit(),
                        http.request(version, method, params, routing, wait(), route),
                    ))
                };
                match send().await {
                    // The stream broke before the response: the request is lost. Re-issue
                    // it, with a new id, only if running it twice is harmless.
                    Err(Error::Http(
                        mcp_transport_http::Error::Incomplete | mcp_transport_http::Error::Body(_),
                    )) => {
                        if self.retry_safe(method, params) {
                            send().await
                        } else {
                            Err(Error::MayHaveRun {
                                method: method.to_owned(),
                            })
                        }
                    }
                    other => other,
                }
            }
        }
    }

    /// Whether running `method` twice is harmless: reads, lists and prompts, and tool calls
    /// whose annotations say read-only or idempotent. (Both users resend after a lost
    /// connection: a restarted child, an HTTP request whose connection closed.)
    #[cfg(any(feature = "stdio", feature = "http"))]
    fn retry_safe<P: Serialize>(&self, method: &str, params: &P) -> bool {
        match method {
            method::SERVER_DISCOVER
            | method::TOOLS_LIST
            | method::PROMPTS_LIST
            | method::RESOURCES_LIST
            | method::RESOURCES_TEMPLATES_LIST
            | method::RESOURCES_READ
            | method::PROMPTS_GET
            | method::COMPLETION_COMPLETE
            | mcp_types::tasks::method::TASKS_GET
            | mcp_types::tasks::method::TASKS_CANCEL => true,
            method::TOOLS_CALL => serde_json::to_value(params)
                .ok()
                .and_then(|p| {
                    p.get("name")
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_owned)
                })
                .is_some_and(|name| {
                    self.inner
                        .safe_tools
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .contains(&name)
                }),
            _ => false,
        }
    }
}
