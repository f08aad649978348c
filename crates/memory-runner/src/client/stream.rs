//! [`MessageStream`]: the server-sent events of a streamed reply, parsed as they arrive.

use std::collections::VecDeque;
use std::fmt;

use serde_json::Value;

use memory_core::messages::{MessageAccumulator, StreamError, StreamEvent};

use super::ApiError;
use crate::MessageResponse;

/// The events of a streamed reply ([`Client::stream`](super::Client::stream)), read as they arrive.
///
/// Server-sent events are parsed as the SSE format says (`data:` lines joined, a blank line
/// ends an event, comments and unknown fields skipped), each event's data as a
/// [`StreamEvent`], and accumulated into the reply ([`MessageStream::final_message`]).
pub struct MessageStream {
    response: reqwest::Response,
    request_id: Option<String>,
    /// Bytes of a line not ended yet.
    lines: Vec<u8>,
    /// The `data:` lines of the event being read.
    data: Vec<String>,
    pending: VecDeque<StreamEvent>,
    accumulator: MessageAccumulator,
    finished: bool,
}

impl fmt::Debug for MessageStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageStream")
            .field("request_id", &self.request_id)
            .field("events", &self.accumulator.events())
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl MessageStream {
    /// The events of `response`, a success with an event stream.
    pub(super) fn new(response: reqwest::Response, request_id: Option<String>) -> Self {
        MessageStream {
            response,
            request_id,
            lines: Vec::new(),
            data: Vec::new(),
            pending: VecDeque::new(),
            accumulator: MessageAccumulator::new(),
            finished: false,
        }
    }

    /// The answer's `request-id` header.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// The next event; `None` after `message_stop` (or after an error).
    ///
    /// # Errors
    /// [`ApiError::Stream`] when the stream is cut before `message_stop` (the connection
    /// closed or broke), sends an `error` event, or sends events that do not make a message.
    pub async fn next_event(&mut self) -> Option<Result<StreamEvent, ApiError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                if let Err(source) = self.accumulator.push(&event) {
                    return Some(Err(self.fail(source)));
                }
                if matches!(event, StreamEvent::MessageStop) {
                    self.finished = true;
                    self.pending.clear();
                }
                return Some(Ok(event));
            }
            if self.finished {
                return None;
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => {
                    if let Err(source) = self.feed(&bytes) {
                        return Some(Err(self.fail(source)));
                    }
                }
                Ok(None) => {
                    let events = self.accumulator.events();
                    return Some(Err(self.fail(StreamError::Incomplete {
                        events,
                        cause: None,
                    })));
                }
                Err(e) => {
                    let events = self.accumulator.events();
                    return Some(Err(self.fail(StreamError::Incomplete {
                        events,
                        cause: Some(e.to_string()),
                    })));
                }
            }
        }
    }

    /// Reads the rest of the stream and returns the whole reply.
    ///
    /// # Errors
    /// As [`next_event`](Self::next_event).
    pub async fn final_message(mut self) -> Result<MessageResponse, ApiError> {
        while let Some(event) = self.next_event().await {
            event?;
        }
        let request_id = self.request_id.take();
        self.accumulator
            .finish()
            .map_err(|source| ApiError::Stream { source, request_id })
    }

    fn fail(&mut self, source: StreamError) -> ApiError {
        self.finished = true;
        self.pending.clear();
        tracing::debug!(error = %source, request_id = ?self.request_id, "streamed reply failed");
        ApiError::Stream {
            source,
            request_id: self.request_id.clone(),
        }
    }

    /// Splits `bytes` into lines and the lines into events.
    fn feed(&mut self, bytes: &[u8]) -> Result<(), StreamError> {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            self.lines.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            let mut line = std::mem::take(&mut self.lines);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.line(&line)?;
        }
        self.lines.extend_from_slice(rest);
        Ok(())
    }

    fn line(&mut self, line: &[u8]) -> Result<(), StreamError> {
        let malformed = |reason: String| StreamError::Malformed { reason };
        if line.is_empty() {
            if self.data.is_empty() {
                return Ok(());
            }
            let data = std::mem::take(&mut self.data).join("\n");
            let json: Value = serde_json::from_str(&data)
                .map_err(|e| malformed(format!("event data that is not JSON ({e})")))?;
            self.pending.push_back(StreamEvent::from_json(json)?);
            return Ok(());
        }
        let line = std::str::from_utf8(line)
            .map_err(|_| malformed("a line that is not UTF-8".to_owned()))?;
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        // `event:` repeats the data's `type`; `id:`, `retry:` and comments (`:...`) are unused.
        if field == "data" {
            self.data.push(value.to_owned());
        }
        Ok(())
    }
}
