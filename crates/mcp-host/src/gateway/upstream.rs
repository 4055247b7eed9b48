//! The upstreams: connecting, listing, following their changes, and trying again.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_client::{Client, ClientBuilder, ListenEvent};
use mcp_types::{
    CreateMessageRequest, ElicitRequest, InputRequest, InputResponse, ListRootsRequest, Prompt,
    Resource, ResourceTemplate, SubscriptionFilter, Tool,
};

use super::publish::Shared;
use super::relay;
use crate::Error;
use crate::config::ServerConfig;
use crate::connect::connect_with;

/// How many resource URIs the gateway subscribes to on one upstream.
const MAX_SUBSCRIPTIONS: usize = 256;

/// The longest wait between two attempts to reach an upstream that is down.
const MAX_RETRY_DELAY: Duration = Duration::from_mins(1);

/// The client builder for `up`: the gateway's identity, and handlers that pass every
/// question to the downstream call that asked.
pub(super) fn client_builder(name: &str, version: &str, up: &Arc<Upstream>) -> ClientBuilder {
    let elicit = Arc::clone(&up.in_flight);
    let sample = Arc::clone(&up.in_flight);
    let roots = Arc::clone(&up.in_flight);
    Client::builder(name.to_owned(), version.to_owned())
        // An upstream that answers with a task is followed to its end here (its questions
        // asked downstream as any others); the downstream client sees one call.
        .tasks(mcp_client::TaskOptions::default())
        .on_elicit(move |params| {
            let in_flight = Arc::clone(&elicit);
            async move {
                let request = InputRequest::Elicit(ElicitRequest::new(params));
                match relay::ask(&in_flight, request).await? {
                    InputResponse::Elicit(answer) => Ok(answer),
                    _ => Err("the downstream client answered another question".into()),
                }
            }
        })
        .on_sample(move |params| {
            let in_flight = Arc::clone(&sample);
            async move {
                let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
                match relay::ask(&in_flight, request).await? {
                    InputResponse::CreateMessage(answer) => Ok(answer),
                    _ => Err("the downstream client answered another question".into()),
                }
            }
        })
        .on_roots(move || {
            let in_flight = Arc::clone(&roots);
            async move {
                let request = InputRequest::ListRoots(ListRootsRequest::new());
                match relay::ask(&in_flight, request).await? {
                    InputResponse::ListRoots(answer) => Ok(answer),
                    _ => Err("the downstream client answered another question".into()),
                }
            }
        })
}

/// Makes the client builder of an upstream, for each attempt to connect.
pub(super) type BuilderFn = Arc<dyn Fn() -> ClientBuilder + Send + Sync>;

/// One upstream server.
pub(super) struct Upstream {
    pub(super) name: String,
    pub(super) config: ServerConfig,
    pub(super) in_flight: Arc<relay::InFlight>,
    pub(super) state: Mutex<UpState>,
}

/// What the gateway knows of an upstream now.
#[derive(Default)]
pub(super) struct UpState {
    pub(super) client: Option<Client>,
    pub(super) down: Option<String>,
    pub(super) listing: Listing,
}

/// An upstream's tools, prompts, resources and templates.
#[derive(Default, Clone)]
pub(super) struct Listing {
    pub(super) tools: Vec<Tool>,
    pub(super) prompts: Vec<Prompt>,
    pub(super) resources: Vec<Resource>,
    pub(super) templates: Vec<ResourceTemplate>,
}

/// A connected upstream and its first listing.
pub(super) struct Connected {
    pub(super) client: Client,
}

impl Upstream {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, UpState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn client(&self) -> Option<Client> {
        self.lock().client.clone()
    }

    pub(super) fn down_reason(&self) -> Option<String> {
        self.lock().down.clone()
    }

    /// A new listing, of an upstream that is up.
    pub(super) fn set_listing(&self, listing: Listing) {
        let mut state = self.lock();
        state.listing = listing;
        state.down = None;
    }

    pub(super) fn set_down(&self, reason: String) {
        tracing::warn!(upstream = %self.name, %reason, "upstream unavailable");
        let mut state = self.lock();
        state.client = None;
        state.listing = Listing::default();
        state.down = Some(reason);
    }

    /// Connects, and reads the whole listing.
    pub(super) async fn connect(&self, builder: ClientBuilder) -> Result<Connected, Error> {
        let connection = connect_with(&self.name, &self.config, builder).await?;
        let client = connection.client;
        let listing = self.list(&client).await?;
        let mut state = self.lock();
        state.client = Some(client.clone());
        state.down = None;
        state.listing = listing;
        drop(state);
        tracing::info!(upstream = %self.name, "upstream connected");
        Ok(Connected { client })
    }

    /// Reads everything the upstream declares it serves.
    pub(super) async fn list(&self, client: &Client) -> Result<Listing, Error> {
        let failed = |source| Error::Server {
            server: self.name.clone(),
            source: Box::new(source),
        };
        let discovered = client.discover().await.map_err(failed)?;
        let caps = &discovered.capabilities;
        let mut listing = Listing::default();
        if caps.tools.is_some() {
            listing.tools = client.list_tools_all().await.map_err(failed)?;
        }
        if caps.prompts.is_some() {
            listing.prompts = client.list_prompts_all().await.map_err(failed)?;
        }
        if caps.resources.is_some() {
            listing.resources = client.list_resources_all().await.map_err(failed)?;
            listing.templates = client.list_resource_templates_all().await.map_err(failed)?;
        }
        Ok(listing)
    }
}

/// Follows one upstream for the gateway's life: its changes while it is up, new attempts
/// while it is down.
pub(super) async fn follow(
    shared: Arc<Shared>,
    index: usize,
    mut connected: Option<Connected>,
    builder: BuilderFn,
    ack: tokio::sync::oneshot::Sender<()>,
) {
    let mut ack = Some(ack);
    let up = Arc::clone(&shared.upstreams[index]);
    let mut delay = Duration::from_secs(1);
    loop {
        let Some(Connected { client }) = connected.take() else {
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(MAX_RETRY_DELAY);
            match up.connect(builder()).await {
                Ok(c) => {
                    connected = Some(c);
                    shared.publish();
                }
                Err(e) => {
                    up.set_down(e.to_string());
                    shared.publish();
                }
            }
            continue;
        };
        let watched = std::time::Instant::now();
        watch(&shared, index, &client, &mut ack).await;
        if watched.elapsed() > MAX_RETRY_DELAY {
            // A subscription that lasted: what follows is a new incident.
            delay = Duration::from_secs(1);
        }
        // The subscription ended. A stdio server that crashed and was started again by
        // its client still answers: list it again and follow it anew.
        if let Ok(listing) = up.list(&client).await {
            up.set_listing(listing);
            shared.publish();
            connected = Some(Connected { client });
            // Not at once: a subscription that ends as soon as it opens is not followed in
            // a tight loop.
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(MAX_RETRY_DELAY);
            continue;
        }
        // Gone for good (a stdio server past its restart budget, an HTTP server that no
        // longer answers): tried again from the start.
        up.set_down("the connection ended".to_owned());
        shared.publish();
        client.shutdown(Duration::from_secs(1)).await;
    }
}

/// Follows one connected upstream's changes until its subscription ends.
pub(super) async fn watch(
    shared: &Arc<Shared>,
    index: usize,
    client: &Client,
    ack: &mut Option<tokio::sync::oneshot::Sender<()>>,
) {
    let up = &shared.upstreams[index];
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    filter.prompts_list_changed = Some(true);
    filter.resources_list_changed = Some(true);
    let uris: Vec<String> = up
        .lock()
        .listing
        .resources
        .iter()
        .take(MAX_SUBSCRIPTIONS)
        .map(|r| r.uri.clone())
        .collect();
    if !uris.is_empty() {
        filter.resource_subscriptions = Some(uris);
    }
    let mut subscription = match client.listen(filter).await {
        Ok(subscription) => subscription,
        Err(e) => {
            tracing::info!(upstream = %up.name, error = %e, "no change subscription");
            if let Some(ack) = ack.take() {
                let _ = ack.send(());
            }
            // Without one, the upstream is still served; nothing more to follow.
            std::future::pending::<()>().await;
            return;
        }
    };
    let mut acknowledged = false;
    while let Some(event) = subscription.next().await {
        let relist = match event {
            // The first acknowledgement opens the subscription; a later one follows a
            // restart of the upstream, whose lists may have changed meanwhile.
            ListenEvent::Acknowledged(_) => {
                if let Some(ack) = ack.take() {
                    let _ = ack.send(());
                }
                std::mem::replace(&mut acknowledged, true)
            }
            ListenEvent::ToolsListChanged
            | ListenEvent::PromptsListChanged
            | ListenEvent::ResourcesListChanged => true,
            ListenEvent::ResourceUpdated(uri) => {
                shared
                    .server
                    .resource_updated(shared.downstream_uri(index, &uri));
                false
            }
            _ => false,
        };
        if relist {
            match up.list(client).await {
                Ok(listing) => {
                    up.set_listing(listing);
                    shared.publish();
                }
                Err(e) => tracing::warn!(upstream = %up.name, error = %e, "listing failed"),
            }
        }
    }
    if !acknowledged {
        // Refused before it opened: the upstream serves without change notifications.
        tracing::info!(upstream = %up.name, "no change subscription");
        if let Some(ack) = ack.take() {
            let _ = ack.send(());
        }
        std::future::pending::<()>().await;
    }
}
