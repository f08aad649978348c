//! [`ToolRunner`]: the loop that lets Claude call tools until it is done.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::Value;

use super::join::{BoxFuture, Caught, join_all};
use super::{
    ContentBlock, ContextManagement, Message, MessageResponse, MessagesRequest, MessagesTransport,
    Role, StopReason, StreamEvent, Tool, ToolResultBlock, ToolUseBlock, Usage,
};
use crate::ToolOutput;

/// How many requests a run sends at most unless [`ToolRunner::max_iterations`] says otherwise.
/// The library's and the `memory run` command's default.
pub const DEFAULT_MAX_ITERATIONS: usize = 25;

/// What [`ToolRunner::on_event`] calls with each event of a streamed reply.
pub type EventHandler = Arc<dyn Fn(&StreamEvent) + Send + Sync>;

/// Runs Claude with tools: sends the request through a [`MessagesTransport`], runs every
/// `tool_use` block of the reply, sends the results back, and repeats until Claude stops asking
/// for tools or `max_iterations` requests were sent.
///
/// - The calls of one reply run concurrently, except that the calls of a
///   [`sequential`](Tool::sequential) tool (the memory tool) run one after another in the
///   order Claude wrote them; the `tool_result` blocks always follow the `tool_use` blocks'
///   order, in one user message.
/// - A call of a tool the runner does not have, and a tool that panics, get an
///   `is_error: true` result; the run goes on.
/// - Everything in the request (`system`, `max_tokens`, `temperature`, `context_management`,
///   any other parameter, tool definitions the runner does not run) is sent unchanged; the
///   runner adds its tools' definitions after the request's own, and their betas to
///   [`MessagesRequest::betas`].
/// - Stop reasons are handled as the official SDKs' tool runners do: `tool_use` runs the
///   tools; `pause_turn` and `compaction` send the conversation (the reply included) back so
///   that Claude goes on; every other reason (`end_turn`, `stop_sequence`, `max_tokens`,
///   `refusal`, `model_context_window_exceeded`, a reason newer than this crate, none) ends
///   the run without an error, and [`Run::end_reason`] says why it ended.
/// - Every request counts against `max_iterations`, resumed ones included: the run stops
///   when that many were sent (the last reply's tool calls are then not run), or at the first
///   request that fails.
/// - With [`on_event`](Self::on_event), every request is streamed
///   ([`MessagesTransport::stream_message`]): the handler sees each event as it arrives (text
///   deltas to print, tool input pieces...) and the run goes on with the whole reply, the same
///   message as without streaming. A stream cut before its end fails the request.
/// - [`context_management`](Self::context_management) turns on context editing (old tool
///   results cleared, server-side compaction) with the betas it needs.
///
/// The runner needs no async runtime of its own: tool calls are polled on the task that
/// awaits [`Run::next`].
///
/// ```
/// use memory_core::messages::{Message, MessagesRequest, MessagesTransport, ToolRunner};
/// use memory_core::{InMemoryStorage, MemoryTool};
///
/// async fn remember<T: MessagesTransport>(transport: T) -> Result<(), T::Error> {
///     let request = MessagesRequest::new("claude-sonnet-4-5", 2048)
///         .message(Message::user("Remember that I like tea."));
///     let mut run = ToolRunner::new(transport, request)
///         .tool(MemoryTool::new(InMemoryStorage::new()))
///         .max_iterations(10)
///         .run();
///     while let Some(reply) = run.next().await {
///         println!("{}", reply?.text());
///     }
///     println!("{} output tokens in all", run.usage().output_tokens);
///     Ok(())
/// }
/// ```
#[derive(Clone)]
pub struct ToolRunner<T> {
    transport: T,
    request: MessagesRequest,
    tools: Vec<Arc<dyn Tool>>,
    max_iterations: usize,
    on_event: Option<EventHandler>,
    context_management: Option<ContextManagement>,
}

impl<T: fmt::Debug> fmt::Debug for ToolRunner<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRunner")
            .field("transport", &self.transport)
            .field("request", &self.request)
            .field("tools", &tool_names(&self.tools))
            .field("max_iterations", &self.max_iterations)
            .field("streams", &self.on_event.is_some())
            .field("context_management", &self.context_management)
            .finish()
    }
}

fn tool_names(tools: &[Arc<dyn Tool>]) -> Vec<&str> {
    tools.iter().map(|tool| tool.name()).collect()
}

impl<T: MessagesTransport> ToolRunner<T> {
    /// A runner that will send `request` (its model, messages and parameters) with `transport`.
    pub fn new(transport: T, request: MessagesRequest) -> Self {
        ToolRunner {
            transport,
            request,
            tools: Vec::new(),
            max_iterations: DEFAULT_MAX_ITERATIONS,
            on_event: None,
            context_management: None,
        }
    }

    /// Adds a tool; one of the same name is replaced.
    pub fn tool(self, tool: impl Tool + 'static) -> Self {
        self.shared_tool(Arc::new(tool))
    }

    /// Adds a shared tool; one of the same name is replaced.
    pub fn shared_tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
        self
    }

    /// Sets how many requests one run sends at most (at least 1).
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations.max(1);
        self
    }

    /// Streams every request, calling `handler` with each event as it arrives (e.g. to print
    /// Claude's text as it is written: [`StreamEvent::text_delta`]).
    pub fn on_event(mut self, handler: impl Fn(&StreamEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(handler));
        self
    }

    /// Sends these context-editing edits (`context_management`) with every request, and the
    /// betas they need; they replace the request's own `context_management`. Empty edits
    /// change nothing.
    pub fn context_management(mut self, editing: ContextManagement) -> Self {
        self.context_management = Some(editing);
        self
    }

    /// Starts the run: nothing is sent until [`Run::next`] is awaited.
    pub fn run(self) -> Run<T> {
        let mut request = self.request;
        if let Some(editing) = &self.context_management {
            request = request.with_context_management(editing);
        }
        for tool in &self.tools {
            request.tools.push(tool.definition());
            for beta in tool.betas() {
                if !request.betas.contains(&beta) {
                    request.betas.push(beta);
                }
            }
        }
        Run {
            transport: self.transport,
            request,
            tools: self.tools,
            max_iterations: self.max_iterations,
            on_event: self.on_event,
            iterations: 0,
            usage: Usage::default(),
            pending: None,
            finished: false,
            end: None,
            last: None,
        }
    }

    /// Runs to the end and returns Claude's last reply.
    ///
    /// # Errors
    /// The first request that failed.
    pub async fn run_until_done(self) -> Result<MessageResponse, T::Error> {
        let mut run = self.run();
        let mut last = run.send().await?;
        while let Some(reply) = run.next().await {
            last = reply?;
        }
        Ok(last)
    }
}

/// One run of a [`ToolRunner`]: an async iterator over Claude's replies as they come.
///
/// Between two replies it runs the tools; [`Run::messages`] is the conversation so far and
/// [`Run::usage`] the tokens summed over every request.
pub struct Run<T> {
    transport: T,
    request: MessagesRequest,
    tools: Vec<Arc<dyn Tool>>,
    max_iterations: usize,
    on_event: Option<EventHandler>,
    iterations: usize,
    usage: Usage,
    /// A reply whose tool calls are still to run before the next request.
    pending: Option<MessageResponse>,
    finished: bool,
    end: Option<EndReason>,
    last: Option<MessageResponse>,
}

/// Why a [`Run`] ended ([`Run::end_reason`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EndReason {
    /// Claude stopped and did not ask to go on: the last reply's `stop_reason` (`end_turn`,
    /// `stop_sequence`, `max_tokens`, `refusal`, `model_context_window_exceeded`, a reason
    /// newer than this crate as [`StopReason::Other`], or none at all). `tool_use` without
    /// a `tool_use` block ends the run too.
    Stopped(Option<StopReason>),
    /// `max_iterations` requests were sent while Claude still wanted to go on (tool calls, a
    /// paused or compacted turn); the last reply's tool calls were not run.
    MaxIterations,
    /// A request failed (the error was returned by [`Run::next`]).
    RequestFailed,
}

impl<T> fmt::Debug for Run<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run")
            .field("tools", &tool_names(&self.tools))
            .field("iterations", &self.iterations)
            .field("max_iterations", &self.max_iterations)
            .field("usage", &self.usage)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl<T: MessagesTransport> Run<T> {
    /// The next reply: runs the tools the previous reply called, then sends the next request.
    /// `None` once the run is over.
    ///
    /// # Errors
    /// A request that failed; the run is then over.
    pub async fn next(&mut self) -> Option<Result<MessageResponse, T::Error>> {
        if self.finished {
            return None;
        }
        Some(self.send().await)
    }

    /// Runs the pending tool calls and sends one request (the run must not be over).
    async fn send(&mut self) -> Result<MessageResponse, T::Error> {
        if let Some(reply) = self.pending.take() {
            let results = self.run_tools(&reply).await;
            self.request.messages.push(reply.to_message());
            self.request
                .messages
                .push(Message::new(Role::User, results));
        }
        self.iterations += 1;
        let sent = match &self.on_event {
            Some(handler) => {
                let handler = Arc::clone(handler);
                let mut call = move |event: &StreamEvent| handler(event);
                self.transport
                    .stream_message(&self.request, &mut call)
                    .await
            }
            None => self.transport.create_message(&self.request).await,
        };
        let reply = match sent {
            Ok(reply) => reply,
            Err(e) => {
                self.finished = true;
                self.end = Some(EndReason::RequestFailed);
                return Err(e);
            }
        };
        self.usage.add(&reply.usage);
        let wants_tools =
            reply.stop_reason == Some(StopReason::ToolUse) && reply.tool_uses().next().is_some();
        let resumes = matches!(
            reply.stop_reason,
            Some(StopReason::PauseTurn | StopReason::Compaction)
        );
        let goes_on = wants_tools || resumes;
        if goes_on && self.iterations < self.max_iterations {
            if wants_tools {
                self.pending = Some(reply.clone());
            } else {
                // A paused or compacted turn: the reply goes back as it is, and Claude resumes.
                self.request.messages.push(reply.to_message());
            }
        } else {
            if goes_on {
                self.end = Some(EndReason::MaxIterations);
                tracing::warn!(
                    max_iterations = self.max_iterations,
                    "tool runner stopped at max_iterations while Claude wanted to go on"
                );
            } else {
                self.end = Some(EndReason::Stopped(reply.stop_reason.clone()));
            }
            self.finished = true;
            self.request.messages.push(reply.to_message());
        }
        self.last = Some(reply.clone());
        Ok(reply)
    }

    /// Runs to the end and returns Claude's last reply; `None` when the run was already over
    /// without one (its first request failed, and that error was returned then).
    ///
    /// # Errors
    /// The first request that failed.
    pub async fn run_until_done(&mut self) -> Result<Option<MessageResponse>, T::Error> {
        while let Some(reply) = self.next().await {
            reply?;
        }
        Ok(self.last.clone())
    }

    /// The replies as a [`Stream`](futures_core::Stream).
    pub fn into_stream(self) -> RunStream<T>
    where
        T: 'static,
    {
        RunStream {
            state: StreamState::Idle(Box::new(self)),
        }
    }

    /// Runs every tool call of `reply`; the results are in the calls' order.
    async fn run_tools(&self, reply: &MessageResponse) -> Vec<ContentBlock> {
        let uses: Vec<&ToolUseBlock> = reply.tool_uses().collect();
        let mut outputs: Vec<Option<ToolOutput>> = vec![None; uses.len()];
        // Calls of sequential tools, kept per tool in Claude's order.
        let mut chains: Vec<Chain> = Vec::new();
        let mut tasks: Vec<BoxFuture<'static, Vec<(usize, ToolOutput)>>> = Vec::new();
        for (index, tool_use) in uses.iter().enumerate() {
            let Some(tool) = self.tools.iter().find(|t| t.name() == tool_use.name) else {
                tracing::warn!(tool = %tool_use.name, "Claude called a tool the runner does not have");
                outputs[index] = Some(ToolOutput::error(format!(
                    "Error: No tool named `{}` is available",
                    tool_use.name
                )));
                continue;
            };
            let input = tool_use.input.clone();
            if tool.sequential() {
                match chains.iter_mut().find(|(t, _)| Arc::ptr_eq(t, tool)) {
                    Some((_, calls)) => calls.push((index, input)),
                    None => chains.push((tool.clone(), vec![(index, input)])),
                }
            } else {
                let tool = tool.clone();
                tasks.push(Box::pin(async move {
                    vec![(index, call_guarded(tool, input).await)]
                }));
            }
        }
        for (tool, calls) in chains {
            tasks.push(Box::pin(async move {
                let mut done = Vec::with_capacity(calls.len());
                for (index, input) in calls {
                    done.push((index, call_guarded(tool.clone(), input).await));
                }
                done
            }));
        }
        for (index, output) in join_all(tasks).await.into_iter().flatten() {
            outputs[index] = Some(output);
        }
        uses.iter()
            .zip(outputs)
            .map(|(tool_use, output)| {
                let output = output.unwrap_or_else(|| {
                    ToolOutput::error(format!("Error: The tool `{}` failed", tool_use.name))
                });
                ContentBlock::ToolResult(ToolResultBlock::from_output(&tool_use.id, output))
            })
            .collect()
    }
}

impl<T> Run<T> {
    /// The conversation so far: the request's messages, then each reply and each user message
    /// of tool results (a reply whose tools are still to run is not in it yet).
    pub fn messages(&self) -> &[Message] {
        &self.request.messages
    }

    /// The tokens of every request so far, summed.
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// How many requests were sent.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// Whether the run stopped at `max_iterations` while Claude still wanted to go on.
    pub fn hit_max_iterations(&self) -> bool {
        self.end == Some(EndReason::MaxIterations)
    }

    /// Why the run ended; `None` while it goes on.
    pub fn end_reason(&self) -> Option<&EndReason> {
        self.end.as_ref()
    }

    /// Whether the run is over.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The last reply so far.
    pub fn last_reply(&self) -> Option<&MessageResponse> {
        self.last.as_ref()
    }
}

/// A sequential tool and its calls of one turn: (index of the `tool_use` block, input).
type Chain = (Arc<dyn Tool>, Vec<(usize, Value)>);

/// Runs one call, so that a panicking tool becomes an error result.
async fn call_guarded(tool: Arc<dyn Tool>, input: Value) -> ToolOutput {
    let name = tool.name().to_owned();
    let call: BoxFuture<'static, ToolOutput> = Box::pin(async move { tool.call(&input).await });
    match Caught::new(call).await {
        Some(output) => output,
        None => {
            tracing::error!(tool = %name, "tool call panicked");
            ToolOutput::error(format!("Error: The tool `{name}` failed"))
        }
    }
}

type Step<T> = BoxFuture<
    'static,
    (
        Box<Run<T>>,
        Option<Result<MessageResponse, <T as MessagesTransport>::Error>>,
    ),
>;

enum StreamState<T: MessagesTransport> {
    Idle(Box<Run<T>>),
    Busy(Step<T>),
    Done,
}

/// A [`Run`] as a [`Stream`](futures_core::Stream) of Claude's replies, from
/// [`Run::into_stream`].
pub struct RunStream<T: MessagesTransport> {
    state: StreamState<T>,
}

impl<T: MessagesTransport> fmt::Debug for RunStream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            StreamState::Idle(_) => "idle",
            StreamState::Busy(_) => "busy",
            StreamState::Done => "done",
        };
        f.debug_struct("RunStream").field("state", &state).finish()
    }
}

impl<T: MessagesTransport + 'static> futures_core::Stream for RunStream<T> {
    type Item = Result<MessageResponse, T::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match std::mem::replace(&mut self.state, StreamState::Done) {
                StreamState::Idle(mut run) => {
                    self.state = StreamState::Busy(Box::pin(async move {
                        let item = run.next().await;
                        (run, item)
                    }));
                }
                StreamState::Busy(mut step) => match step.as_mut().poll(cx) {
                    Poll::Ready((run, item)) => {
                        if item.is_some() {
                            self.state = StreamState::Idle(run);
                        }
                        return Poll::Ready(item);
                    }
                    Poll::Pending => {
                        self.state = StreamState::Busy(step);
                        return Poll::Pending;
                    }
                },
                StreamState::Done => return Poll::Ready(None),
            }
        }
    }
}
