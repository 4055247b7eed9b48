//! A tracing subscriber that records the events it is given, standing in for a real one.
//!
//! Installed with `tracing::subscriber::set_default`, it sees the events of this thread
//! only; a current-thread runtime runs the tasks under test on the test's thread, so their
//! events land here too.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::span::{Attributes, Id, Record};
use tracing::{Level, Metadata};

/// One recorded event: its level, its target, and each field as text (a `&str` field as
/// it is, any other through `Debug`, so a message reads as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The event's level.
    pub level: Level,
    /// The event's target (its module path unless set).
    pub target: String,
    /// Field name to value.
    pub fields: BTreeMap<&'static str, String>,
}

impl Event {
    /// The value of `field`, or "" when the event has none.
    pub fn field(&self, field: &str) -> &str {
        self.fields.get(field).map_or("", String::as_str)
    }

    /// The event's message.
    pub fn message(&self) -> &str {
        self.field("message")
    }
}

/// Records every event that `wanted` accepts; clones share the record.
#[derive(Clone)]
pub struct Recorder {
    wanted: fn(&Metadata<'_>) -> bool,
    events: Arc<Mutex<Vec<Event>>>,
}

impl Recorder {
    /// A recorder of the events whose metadata `wanted` accepts.
    pub fn new(wanted: fn(&Metadata<'_>) -> bool) -> Self {
        Recorder {
            wanted,
            events: Arc::default(),
        }
    }

    /// A recorder of warnings and errors.
    pub fn warnings() -> Self {
        Recorder::new(|metadata| *metadata.level() <= Level::WARN)
    }

    /// The events recorded so far, taken out of the record.
    pub fn taken(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.lock().unwrap())
    }

    /// The events recorded so far, left in the record.
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }
}

#[derive(Default)]
struct Fields(BTreeMap<&'static str, String>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        (self.wanted)(metadata)
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        self.events.lock().unwrap().push(Event {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            fields: fields.0,
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
