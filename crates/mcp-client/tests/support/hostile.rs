//! The table of the hostile-HTTP-server suites (issue #11): each case is a reply the
//! scripted server makes to one request, and what the client must end with.

use mcp_client::Error;

use super::http::{Reply, Seen};

/// What a case must end with.
pub(crate) enum Expect {
    Ok,
    Fails(&'static str, fn(&Error) -> bool),
}

pub(crate) struct Case {
    pub(crate) name: &'static str,
    /// Whether the case's request is `tools/call` (a request that is not retried) rather
    /// than `tools/list`.
    pub(crate) call: bool,
    pub(crate) reply: fn(&Seen) -> Reply,
    pub(crate) expect: Expect,
}

/// A case whose request is `tools/list`.
pub(crate) const fn list(name: &'static str, reply: fn(&Seen) -> Reply, expect: Expect) -> Case {
    Case {
        name,
        call: false,
        reply,
        expect,
    }
}

/// A case whose request is `tools/call`.
pub(crate) const fn call(name: &'static str, reply: fn(&Seen) -> Reply, expect: Expect) -> Case {
    Case {
        name,
        call: true,
        reply,
        expect,
    }
}
