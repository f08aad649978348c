//! [`MessagesTransport`]: how a [`ToolRunner`](super::ToolRunner) sends one request.

use std::sync::Arc;

use async_trait::async_trait;

use super::{MessageResponse, MessagesRequest, StreamEvent, events_of};

/// Sends one Messages API request and returns Claude's reply: the one thing a
/// [`ToolRunner`](super::ToolRunner) needs from the outside world.
///
/// memory-runner's HTTP `Client` (API key, retries, timeouts) is one. An application that
/// already has an Anthropic client, or reaches Claude through another platform, implements it
/// over that; a test implements it with a script (no sockets needed).
///
/// Retries, if any, belong here: the runner sends each request once and ends the run at the
/// first error.
///
/// ```
/// use memory_core::async_trait;
/// use memory_core::messages::{MessageResponse, MessagesRequest, MessagesTransport};
/// use serde_json::json;
///
/// /// Answers every request with the same text.
/// struct Parrot;
///
/// #[async_trait]
/// impl MessagesTransport for Parrot {
///     type Error = serde_json::Error;
///
///     async fn create_message(
///         &self,
///         request: &MessagesRequest,
///     ) -> Result<MessageResponse, Self::Error> {
///         let reply = json!({
///             "id": "msg_1", "model": request.model, "role": "assistant",
///             "content": [{"type": "text", "text": "Polly wants a cracker"}],
///             "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 4}
///         });
///         serde_json::from_value(reply)
///     }
/// }
/// ```
#[async_trait]
pub trait MessagesTransport: Send + Sync {
    /// Why a request failed (after any retries of the transport's own).
    type Error: std::error::Error + Send + Sync + 'static;

    /// Sends `request` (its `betas` go wherever the transport puts them, e.g. the
    /// `anthropic-beta` header) and returns the reply.
    async fn create_message(
        &self,
        request: &MessagesRequest,
    ) -> Result<MessageResponse, Self::Error>;

    /// Sends `request` as a streamed request, calls `on_event` with each event as it arrives,
    /// and returns the whole reply: the same message [`create_message`](Self::create_message)
    /// returns. A stream cut before its end is an error, never a partial message.
    ///
    /// The default sends the request without streaming and then gives the events a stream of
    /// the reply would have sent ([`events_of`]), so a transport that cannot stream still
    /// serves callers that want events; memory-runner's `Client` streams for real.
    async fn stream_message(
        &self,
        request: &MessagesRequest,
        on_event: &mut (dyn for<'e> FnMut(&'e StreamEvent) + Send),
    ) -> Result<MessageResponse, Self::Error> {
        let reply = self.create_message(request).await?;
        for event in &events_of(&reply) {
            on_event(event);
        }
        Ok(reply)
    }
}

#[async_trait]
impl<T: MessagesTransport + ?Sized> MessagesTransport for Arc<T> {
    type Error = T::Error;

    async fn create_message(
        &self,
        request: &MessagesRequest,
    ) -> Result<MessageResponse, Self::Error> {
        (**self).create_message(request).await
    }

    async fn stream_message(
        &self,
        request: &MessagesRequest,
        on_event: &mut (dyn for<'e> FnMut(&'e StreamEvent) + Send),
    ) -> Result<MessageResponse, Self::Error> {
        (**self).stream_message(request, on_event).await
    }
}

#[async_trait]
impl<T: MessagesTransport + ?Sized> MessagesTransport for &T {
    type Error = T::Error;

    async fn create_message(
        &self,
        request: &MessagesRequest,
    ) -> Result<MessageResponse, Self::Error> {
        (**self).create_message(request).await
    }

    async fn stream_message(
        &self,
        request: &MessagesRequest,
        on_event: &mut (dyn for<'e> FnMut(&'e StreamEvent) + Send),
    ) -> Result<MessageResponse, Self::Error> {
        (**self).stream_message(request, on_event).await
    }
}
