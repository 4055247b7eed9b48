//! Metrics through the [`metrics`](https://docs.rs/metrics) facade (feature `metrics`):
//! the application installs the recorder it exports with (Prometheus, StatsD, OTLP);
//! without one, recording costs an atomic load.
//!
//! | Name | Kind | Labels | What |
//! |---|---|---|---|
//! | `mcp_server_requests_total` | counter | `method`, `outcome` (`ok`, `error`) | requests answered |
//! | `mcp_server_request_duration_seconds` | histogram | `method` | time to the answer |
//! | `mcp_server_listen_streams` | gauge | | open `subscriptions/listen` streams |
//! | `mcp_server_tasks_running` | gauge | | task runs in progress on this instance (Tasks extension) |
//! | `mcp_server_bus_lag_seconds` | histogram | | from another instance's publication of a change to its arrival here (shared change bus; clocks that differ skew it, and a negative lag counts as zero) |
//!
//! `method` is the JSON-RPC method for the methods of the protocol and its extensions
//! this crate knows, and `other` for any other, so that a client cannot grow the number
//! of series.
//!
//! With `metrics-exporter-prometheus` (any `metrics` recorder works the same way), install
//! the recorder in `main` with `PrometheusBuilder::new().install_recorder()` and serve what
//! its handle's `render()` returns on a `/metrics` route: the crate's `prometheus` example
//! (`cargo run -p mcp-server --features metrics --example prometheus`) prints it.

use std::time::Instant;

use mcp_types::method;

/// Requests answered, by method and outcome.
pub const REQUESTS: &str = "mcp_server_requests_total";
/// Time to the answer, by method.
pub const REQUEST_DURATION: &str = "mcp_server_request_duration_seconds";
/// Open `subscriptions/listen` streams.
pub const LISTEN_STREAMS: &str = "mcp_server_listen_streams";
/// Task runs in progress on this instance.
pub const TASKS_RUNNING: &str = "mcp_server_tasks_running";
/// From another instance's publication of a change on a shared bus to its arrival.
pub const BUS_LAG: &str = "mcp_server_bus_lag_seconds";

/// The label of `name`: itself for a method this crate knows, `other` otherwise.
pub(crate) fn method_label(name: &str) -> &'static str {
    const KNOWN: [&str; 13] = [
        method::SERVER_DISCOVER,
        method::TOOLS_LIST,
        method::TOOLS_CALL,
        method::PROMPTS_LIST,
        method::PROMPTS_GET,
        method::RESOURCES_LIST,
        method::RESOURCES_TEMPLATES_LIST,
        method::RESOURCES_READ,
        method::COMPLETION_COMPLETE,
        method::SUBSCRIPTIONS_LISTEN,
        mcp_types::tasks::method::TASKS_GET,
        mcp_types::tasks::method::TASKS_UPDATE,
        mcp_types::tasks::method::TASKS_CANCEL,
    ];
    KNOWN.into_iter().find(|m| *m == name).unwrap_or("other")
}

/// Records one answered request.
pub(crate) fn request(method: &'static str, started: Instant, ok: bool) {
    let outcome = if ok { "ok" } else { "error" };
    metrics::counter!(REQUESTS, "method" => method, "outcome" => outcome).increment(1);
    metrics::histogram!(REQUEST_DURATION, "method" => method)
        .record(started.elapsed().as_secs_f64());
}

/// Records the lag of a bus message published at `sent_ms` (Unix milliseconds), if stamped.
#[cfg(feature = "change-bus-redis")]
pub(crate) fn bus_lag(sent_ms: Option<u64>) {
    let Some(sent) = sent_ms else { return };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let lag_ms = now.saturating_sub(sent);
    #[allow(clippy::cast_precision_loss)]
    metrics::histogram!(BUS_LAG).record(lag_ms as f64 / 1000.0);
}

/// Counts one open thing in a gauge for as long as it lives.
pub(crate) struct Open(&'static str);

impl Open {
    pub(crate) fn new(gauge: &'static str) -> Self {
        metrics::gauge!(gauge).increment(1.0);
        Open(gauge)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        metrics::gauge!(self.0).decrement(1.0);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn unknown_methods_share_one_label() {
        assert_eq!(super::method_label("tools/call"), "tools/call");
        assert_eq!(super::method_label("tasks/get"), "tasks/get");
        assert_eq!(super::method_label("x/anything-a-client-sends"), "other");
        assert_eq!(super::method_label(""), "other");
    }
}
