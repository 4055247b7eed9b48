//! Which lists of which servers changed since the host last read them, and the task per
//! server that finds out through a `subscriptions/listen` stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_client::{Client, ListenEvent};
use mcp_types::SubscriptionFilter;
use tokio::sync::watch;

/// A set of a server's lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Lists {
    pub(super) tools: bool,
    pub(super) prompts: bool,
    /// Resources and resource templates, which change together.
    pub(super) resources: bool,
}

impl Lists {
    /// Every list.
    pub(super) const ALL: Lists = Lists {
        tools: true,
        prompts: true,
        resources: true,
    };

    pub(super) fn is_empty(self) -> bool {
        self == Lists::default()
    }

    /// The lists in `self` or in `other`.
    pub(super) fn or(self, other: Lists) -> Lists {
        Lists {
            tools: self.tools || other.tools,
            prompts: self.prompts || other.prompts,
            resources: self.resources || other.resources,
        }
    }

    /// The lists in `self` and not in `other`.
    pub(super) fn without(self, other: Lists) -> Lists {
        Lists {
            tools: self.tools && !other.tools,
            prompts: self.prompts && !other.prompts,
            resources: self.resources && !other.resources,
        }
    }

    /// The lists in both.
    pub(super) fn and(self, other: Lists) -> Lists {
        Lists {
            tools: self.tools && other.tools,
            prompts: self.prompts && other.prompts,
            resources: self.resources && other.resources,
        }
    }
}

/// State shared with the subscription tasks: the lists each server reported changed (or
/// that could not be read) since they were last read.
#[derive(Default)]
pub(super) struct Changes {
    dirty: Mutex<HashMap<String, Lists>>,
}

impl Changes {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, Lists>) -> T) -> T {
        f(&mut self.dirty.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Marks `lists` of `server` to be read again.
    pub(super) fn mark(&self, server: &str, lists: Lists) {
        if lists.is_empty() {
            return;
        }
        self.with(|dirty| {
            let entry = dirty.entry(server.to_owned()).or_default();
            *entry = entry.or(lists);
        });
    }

    /// The servers with lists to read again.
    pub(super) fn pending(&self) -> Vec<(String, Lists)> {
        self.with(|dirty| dirty.iter().map(|(s, l)| (s.clone(), *l)).collect())
    }

    /// Unmarks `lists` of `server`: they were read.
    pub(super) fn done(&self, server: &str, lists: Lists) {
        self.with(|dirty| {
            if let Some(entry) = dirty.get_mut(server) {
                *entry = entry.without(lists);
                if entry.is_empty() {
                    dirty.remove(server);
                }
            }
        });
    }
}

/// Follows one server's list changes until the subscription ends, marking them in
/// `changes` and counting them in `counter`. `ack` is sent (or dropped) once the
/// subscription is in place (or failed).
pub(super) async fn listen(
    name: String,
    client: Client,
    changes: Arc<Changes>,
    counter: Arc<watch::Sender<u64>>,
    ack: tokio::sync::oneshot::Sender<()>,
) {
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    filter.prompts_list_changed = Some(true);
    filter.resources_list_changed = Some(true);
    let mut subscription = match client.listen(filter).await {
        Ok(subscription) => subscription,
        Err(e) => {
            tracing::debug!(server = %name, error = %e, "no change subscription");
            return;
        }
    };
    let mut ack = Some(ack);
    while let Some(event) = subscription.next().await {
        let lists = match event {
            // The first acknowledgement opens the subscription; a later one follows a
            // restart of the server, whose lists may have changed meanwhile.
            ListenEvent::Acknowledged(_) if ack.take().is_some() => Lists::default(),
            ListenEvent::Acknowledged(_) => Lists::ALL,
            ListenEvent::ToolsListChanged => Lists {
                tools: true,
                ..Lists::default()
            },
            ListenEvent::PromptsListChanged => Lists {
                prompts: true,
                ..Lists::default()
            },
            ListenEvent::ResourcesListChanged => Lists {
                resources: true,
                ..Lists::default()
            },
            _ => Lists::default(),
        };
        if !lists.is_empty() {
            tracing::debug!(server = %name, ?lists, "lists changed");
            changes.mark(&name, lists);
            counter.send_modify(|n| *n += 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_add_up_and_reads_clear_only_what_was_read() {
        let prompts = Lists {
            prompts: true,
            ..Lists::default()
        };
        let changes = Changes::default();
        changes.mark("a", Lists::default());
        assert!(changes.pending().is_empty());
        changes.mark("a", prompts);
        changes.mark(
            "a",
            Lists {
                tools: true,
                ..Lists::default()
            },
        );
        assert_eq!(
            changes.pending(),
            [(
                "a".to_owned(),
                Lists {
                    tools: true,
                    prompts: true,
                    resources: false
                }
            )]
        );
        // The tools were read, the prompts not: they stay marked.
        changes.done("a", Lists::ALL.without(prompts));
        assert_eq!(changes.pending(), [("a".to_owned(), prompts)]);
        changes.done("a", prompts);
        assert!(changes.pending().is_empty());
        assert_eq!(Lists::ALL.and(prompts), prompts);
    }
}
