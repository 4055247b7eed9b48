//! A provider-neutral agent loop: the model thinks, calls tools, reads the results, and
//! goes on until it answers or the round limit is reached.

use crate::Error;
use crate::calls::{ToolCall, ToolOutcome};
use crate::catalog::Catalog;
use crate::host::Host;
use crate::middleware::BoxFuture;

/// One message of the conversation, vendor-neutral. A model adapter turns these into its
/// vendor's messages and the catalog into its declarations ([`Catalog::declarations`]).
/// Results go with [`ToolOutcome::to_vendor`], except for OpenAI Chat Completions, whose
/// tool messages carry only text: there one [`Message::ToolResults`] becomes
/// [`ToolOutcome::openai_chat_messages`], the tool messages and then a user message with
/// the results' images, audio and PDFs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// What the user said.
    User(String),
    /// What the model said: text, tool calls, or both.
    Assistant {
        /// The model's text, if any.
        text: Option<String>,
        /// The calls it made.
        calls: Vec<ToolCall>,
    },
    /// The results of the previous assistant message's calls, in its order. Kept whole
    /// (media included), so that each adapter renders what its vendor accepts.
    ToolResults(Vec<ToolOutcome>),
}

/// What the model does in one round.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Reply {
    /// The final answer: the loop ends.
    Answer(String),
    /// Calls to run (concurrently), with any text said alongside.
    ToolCalls {
        /// The model's text, if any.
        text: Option<String>,
        /// The calls.
        calls: Vec<ToolCall>,
    },
}

/// A model: given the tools and the conversation so far, the next reply. Tool
/// descriptions in the catalog are untrusted server text; an adapter passes them in the
/// vendor's tool declarations, never in a system prompt.
pub trait Model: Send + Sync {
    /// The next reply.
    fn respond<'a>(
        &'a self,
        catalog: &'a Catalog,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<Reply, Error>>;
}

/// How a conversation ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Conversation {
    /// The model's answer.
    pub answer: String,
    /// Every message, the user's first.
    pub messages: Vec<Message>,
    /// How many times the model was asked.
    pub rounds: usize,
}

/// The loop: refresh the catalog if a server reported a change (only here, between
/// rounds), ask the model, run its calls, repeat.
#[derive(Debug)]
pub struct Agent<'h, M> {
    host: &'h Host,
    model: M,
    max_rounds: usize,
}

impl<'h, M: Model> Agent<'h, M> {
    /// A loop over `host`'s tools, at most 10 rounds.
    pub fn new(host: &'h Host, model: M) -> Self {
        Agent {
            host,
            model,
            max_rounds: 10,
        }
    }

    /// Sets the round limit (at least 1).
    #[must_use]
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// Runs the loop from one user message.
    pub async fn run(&self, prompt: impl Into<String>) -> Result<Conversation, Error> {
        self.run_from(vec![Message::User(prompt.into())]).await
    }

    /// Runs the loop from an existing conversation.
    pub async fn run_from(&self, mut messages: Vec<Message>) -> Result<Conversation, Error> {
        for round in 1..=self.max_rounds {
            self.host.refresh().await;
            let catalog = self.host.catalog();
            match self.model.respond(&catalog, &messages).await? {
                Reply::Answer(answer) => {
                    messages.push(Message::Assistant {
                        text: Some(answer.clone()),
                        calls: Vec::new(),
                    });
                    return Ok(Conversation {
                        answer,
                        messages,
                        rounds: round,
                    });
                }
                Reply::ToolCalls { text, calls } => {
                    messages.push(Message::Assistant {
                        text,
                        calls: calls.clone(),
                    });
                    let outcomes = self.host.call(&catalog, calls).await;
                    messages.push(Message::ToolResults(outcomes));
                }
            }
        }
        Err(Error::RoundLimit(self.max_rounds))
    }
}
