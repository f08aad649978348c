//! The runner driven by an in-process scripted transport: no sockets, no HTTP.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::*;
use crate::{InMemoryStorage, MemoryTool, ToolOutput};

/// Why the fake transport failed.
#[derive(Debug, thiserror::Error)]
enum FakeError {
    #[error("the script has no reply left")]
    ScriptOver,
    #[error("the scripted failure")]
    Scripted,
}

/// Answers each request with the next scripted reply (`None`: a failure) and records every
/// request as the JSON body it would be, with its betas.
#[derive(Debug, Default)]
struct Fake {
    script: Mutex<VecDeque<Option<Value>>>,
    requests: Mutex<Vec<(Value, Vec<String>)>>,
}

impl Fake {
    fn new(script: impl IntoIterator<Item = Option<Value>>) -> Arc<Self> {
        Arc::new(Fake {
            script: Mutex::new(script.into_iter().collect()),
            requests: Mutex::default(),
        })
    }

    fn requests(&self) -> Vec<(Value, Vec<String>)> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl MessagesTransport for Fake {
    type Error = FakeError;

    async fn create_message(
        &self,
        request: &MessagesRequest,
    ) -> Result<MessageResponse, Self::Error> {
        let body = serde_json::to_value(request).expect("a request serializes");
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((body, request.betas.clone()));
        let next = self
            .script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        match next {
            None => Err(FakeError::ScriptOver),
            Some(None) => Err(FakeError::Scripted),
            Some(Some(reply)) => Ok(serde_json::from_value(reply).expect("a scripted message")),
        }
    }
}

fn reply(content: Value, stop_reason: &str) -> Option<Value> {
    Some(json!({
        "id": "msg_1", "model": "claude-test", "role": "assistant", "content": content,
        "stop_reason": stop_reason, "usage": {"input_tokens": 10, "output_tokens": 2}
    }))
}

fn end_turn(text: &str) -> Option<Value> {
    reply(json!([{"type": "text", "text": text}]), "end_turn")
}

fn tool_use(calls: &[(&str, &str, Value)]) -> Option<Value> {
    let content: Vec<Value> = calls
        .iter()
        .map(
            |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        )
        .collect();
    reply(Value::Array(content), "tool_use")
}

fn request() -> MessagesRequest {
    MessagesRequest::new("claude-test", 1024).message(Message::user("Hi"))
}

/// The `tool_result` blocks of the last message of a request body.
fn tool_results(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().expect("messages");
    let last = messages.last().expect("a message");
    assert_eq!(last["role"], "user");
    last["content"].as_array().expect("blocks").clone()
}

#[test]
fn the_default_is_one_constant() {
    assert_eq!(DEFAULT_MAX_ITERATIONS, 25);
    let runner = ToolRunner::new(Fake::new([]), request());
    assert!(format!("{runner:?}").contains("max_iterations: 25"));
}

#[tokio::test]
async fn a_runaway_loop_stops_at_max_iterations() {
    let view = json!({"command": "view", "path": "/memories"});
    let fake = Fake::new((0..10).map(|i| tool_use(&[(&format!("t{i}"), "memory", view.clone())])));
    let store = Arc::new(InMemoryStorage::new());
    let mut run = ToolRunner::new(fake.clone(), request())
        .tool(MemoryTool::new(store))
        .max_iterations(3)
        .run();
    let mut replies = 0;
    while let Some(reply) = run.next().await {
        reply.expect("scripted replies");
        replies += 1;
    }
    assert_eq!(replies, 3);
    assert_eq!(run.iterations(), 3);
    assert!(run.hit_max_iterations());
    assert!(run.is_finished());
    assert_eq!(run.usage().input_tokens, 30);
    let requests = fake.requests();
    assert_eq!(requests.len(), 3, "max_iterations bounds the requests");
    // The tools of the first two replies ran; the third reply's did not (no fourth request),
    // and it closes the conversation.
    assert_eq!(tool_results(&requests[2].0)[0]["tool_use_id"], "t1");
    assert_eq!(run.messages().len(), 1 + 2 * 2 + 1);
    assert_eq!(run.messages().last().map(|m| m.role), Some(Role::Assistant));
    // Every request carries the memory tool's definition, and no beta: the tool is generally
    // available.
    for (body, betas) in &requests {
        assert_eq!(
            body["tools"],
            json!([{"type": "memory_20250818", "name": "memory"}])
        );
        assert!(betas.is_empty(), "{betas:?}");
        assert!(body.get("context_management").is_none());
    }
}

#[tokio::test]
async fn max_iterations_of_zero_still_sends_one_request() {
    let fake = Fake::new([tool_use(&[(
        "t1",
        "memory",
        json!({"command": "view", "path": "/memories"}),
    )])]);
    let reply = ToolRunner::new(fake.clone(), request())
        .tool(MemoryTool::new(InMemoryStorage::new()))
        .max_iterations(0)
        .run_until_done()
        .await
        .expect("one reply");
    assert_eq!(reply.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(fake.requests().len(), 1);
}

/// A tool that answers its name and input, after waiting for `wait` (if any) and then
/// notifying `notify` (if any): a call that waits for a later call's notification finishes
/// only if the calls run concurrently.
struct Gated {
    name: &'static str,
    wait: Option<Arc<tokio::sync::Notify>>,
    notify: Option<Arc<tokio::sync::Notify>>,
    sequential: bool,
    log: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Tool for Gated {
    fn name(&self) -> &str {
        self.name
    }
    fn definition(&self) -> Value {
        json!({"name": self.name, "input_schema": {"type": "object"}})
    }
    async fn call(&self, input: &Value) -> ToolOutput {
        if let Some(wait) = &self.wait {
            wait.notified().await;
        }
        tokio::task::yield_now().await;
        let line = format!("{} {}", self.name, input["n"]);
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line.clone());
        if let Some(notify) = &self.notify {
            notify.notify_one();
        }
        ToolOutput::success(line)
    }
    fn sequential(&self) -> bool {
        self.sequential
    }
}

/// A tool that panics.
struct Exploding;

#[async_trait]
impl Tool for Exploding {
    fn name(&self) -> &str {
        "exploding"
    }
    fn definition(&self) -> Value {
        json!({"name": "exploding", "input_schema": {"type": "object"}})
    }
    async fn call(&self, _input: &Value) -> ToolOutput {
        panic!("the tool exploded with a secret detail")
    }
}

#[tokio::test]
async fn parallel_calls_are_answered_in_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let gate = Arc::new(tokio::sync::Notify::new());
    let tool = |name, wait, notify, sequential| Gated {
        name,
        wait,
        notify,
        sequential,
        log: log.clone(),
    };
    let slow = tool("slow", Some(gate.clone()), None, false);
    let fast = tool("fast", None, Some(gate), false);
    let ordered = tool("ordered", None, None, true);
    let fake = Fake::new([
        tool_use(&[
            ("t1", "slow", json!({"n": 1})),
            ("t2", "nope", json!({})),
            ("t3", "ordered", json!({"n": 3})),
            ("t4", "exploding", json!({})),
            ("t5", "fast", json!({"n": 5})),
            ("t6", "ordered", json!({"n": 6})),
        ]),
        end_turn("done"),
    ]);
    let run = ToolRunner::new(fake.clone(), request())
        .tool(slow)
        .tool(fast)
        .tool(ordered)
        .tool(Exploding)
        .run_until_done();
    // `slow` waits for `fast`, written after it: only concurrent calls get past this.
    let reply = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the calls run concurrently")
        .expect("two replies");
    assert_eq!(reply.text(), "done");
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let results = tool_results(&requests[1].0);
    let ids: Vec<&Value> = results.iter().map(|r| &r["tool_use_id"]).collect();
    assert_eq!(ids, ["t1", "t2", "t3", "t4", "t5", "t6"]);
    assert_eq!(results[0]["content"], "slow 1");
    assert_eq!(results[0].get("is_error"), None);
    assert_eq!(
        results[1]["content"],
        "Error: No tool named `nope` is available"
    );
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(results[3]["content"], "Error: The tool `exploding` failed");
    assert_eq!(results[3]["is_error"], true);
    assert_eq!(results[5]["content"], "ordered 6");
    // The calls ran concurrently (the fast one finished before the slow one), the sequential
    // tool's one after another in Claude's order.
    let log = log.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert_eq!(log.last().map(String::as_str), Some("slow 1"), "{log:?}");
    let ordered: Vec<&String> = log.iter().filter(|l| l.starts_with("ordered")).collect();
    assert_eq!(ordered, ["ordered 3", "ordered 6"]);
}

#[tokio::test]
async fn a_failed_request_ends_the_run() {
    let fake = Fake::new([
        tool_use(&[(
            "t1",
            "memory",
            json!({"command": "view", "path": "/memories"}),
        )]),
        None,
        end_turn("never sent"),
    ]);
    let mut run = ToolRunner::new(fake.clone(), request())
        .tool(MemoryTool::new(InMemoryStorage::new()))
        .run();
    assert!(matches!(run.next().await, Some(Ok(_))));
    assert!(matches!(run.next().await, Some(Err(FakeError::Scripted))));
    assert!(run.next().await.is_none());
    assert!(run.is_finished());
    assert!(!run.hit_max_iterations());
    assert_eq!(fake.requests().len(), 2);
    // Already over: the last reply, nothing sent.
    let last = run.run_until_done().await.expect("no new request");
    assert_eq!(last.map(|r| r.stop_reason), Some(Some(StopReason::ToolUse)));
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn the_memory_tool_writes_through_the_runner() {
    let store = Arc::new(InMemoryStorage::new());
    let fake = Fake::new([
        tool_use(&[(
            "t1",
            "memory",
            json!({"command": "create", "path": "/memories/tea.md", "file_text": "likes tea\n"}),
        )]),
        end_turn("Noted."),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let observer = {
        let seen = seen.clone();
        move |call: &ToolCall<'_>| {
            seen.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(memory_call_summary(call.input));
        }
    };
    let reply = ToolRunner::new(fake.clone(), request())
        .tool(Observed::new(MemoryTool::new(store.clone()), observer))
        .run_until_done()
        .await
        .expect("two replies");
    assert_eq!(reply.text(), "Noted.");
    let results = tool_results(&fake.requests()[1].0);
    assert_eq!(
        results[0]["content"],
        "File created successfully at: /memories/tea.md"
    );
    assert_eq!(
        *seen.lock().unwrap_or_else(PoisonError::into_inner),
        ["create /memories/tea.md (10 bytes)"]
    );
    let path = crate::MemoryPath::parse("/memories/tea.md").expect("a path");
    let file = crate::Storage::read(&*store, &path)
        .await
        .expect("the file");
    assert_eq!(file.contents, b"likes tea\n");
}

#[tokio::test]
async fn a_run_is_a_stream() {
    use std::future::poll_fn;
    use std::pin::Pin;

    let fake = Fake::new([
        tool_use(&[(
            "t1",
            "memory",
            json!({"command": "view", "path": "/memories"}),
        )]),
        end_turn("bye"),
    ]);
    let mut stream = ToolRunner::new(fake, request())
        .tool(MemoryTool::new(InMemoryStorage::new()))
        .run()
        .into_stream();
    let mut texts = Vec::new();
    while let Some(reply) =
        poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut stream), cx)).await
    {
        texts.push(reply.expect("scripted").text());
    }
    assert_eq!(texts, ["", "bye"]);
}

fn paused(kind: &str) -> Option<Value> {
    let block = match kind {
        "compaction" => json!({"type": "compaction", "content": "summary of the conversation"}),
        _ => {
            json!({"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"q": "x"}})
        }
    };
    reply(json!([block]), kind)
}

#[tokio::test]
async fn paused_and_compacted_turns_are_resumed() {
    for kind in ["pause_turn", "compaction"] {
        let fake = Fake::new([paused(kind), paused(kind), end_turn("all done")]);
        let mut run = ToolRunner::new(fake.clone(), request())
            .tool(MemoryTool::new(InMemoryStorage::new()))
            .run();
        let reply = run.run_until_done().await.expect("three replies");
        assert_eq!(reply.map(|r| r.text()).as_deref(), Some("all done"));
        assert_eq!(
            run.end_reason(),
            Some(&EndReason::Stopped(Some(StopReason::EndTurn)))
        );
        assert_eq!(run.iterations(), 3);
        let requests = fake.requests();
        assert_eq!(requests.len(), 3, "{kind}");
        // Each resumed request is the conversation with the paused reply sent back as it
        // came, and no user message after it.
        let second = &requests[1].0["messages"];
        assert_eq!(second.as_array().map(Vec::len), Some(2), "{kind}");
        assert_eq!(second[1]["role"], "assistant");
        assert_eq!(second[1]["content"], paused(kind).unwrap()["content"]);
        let third = &requests[2].0["messages"];
        assert_eq!(third.as_array().map(Vec::len), Some(3), "{kind}");
    }
}

#[tokio::test]
async fn resumed_turns_count_against_max_iterations() {
    let fake = Fake::new((0..10).map(|_| paused("pause_turn")));
    let mut run = ToolRunner::new(fake.clone(), request())
        .max_iterations(4)
        .run();
    let last = run.run_until_done().await.expect("replies");
    assert_eq!(
        last.and_then(|r| r.stop_reason),
        Some(StopReason::PauseTurn)
    );
    assert_eq!(fake.requests().len(), 4);
    assert_eq!(run.end_reason(), Some(&EndReason::MaxIterations));
    assert!(run.hit_max_iterations());
}

#[tokio::test]
async fn other_stop_reasons_end_the_run_and_are_reported() {
    for raw in [
        "end_turn",
        "stop_sequence",
        "max_tokens",
        "refusal",
        "model_context_window_exceeded",
        "a_reason_from_the_future",
    ] {
        let fake = Fake::new([reply(json!([{"type": "text", "text": "partial"}]), raw)]);
        let mut run = ToolRunner::new(fake.clone(), request())
            .tool(MemoryTool::new(InMemoryStorage::new()))
            .run();
        let last = run.run_until_done().await.expect("no error");
        assert_eq!(last.map(|r| r.text()).as_deref(), Some("partial"), "{raw}");
        assert_eq!(fake.requests().len(), 1, "{raw}");
        let expected: StopReason = serde_json::from_value(json!(raw)).expect("any string");
        assert_eq!(
            run.end_reason(),
            Some(&EndReason::Stopped(Some(expected.clone()))),
            "{raw}"
        );
        assert_eq!(expected.as_str(), raw);
        assert!(!run.hit_max_iterations());
    }
    // No stop reason at all ends the run too.
    let mut no_reason = reply(json!([]), "end_turn").unwrap();
    no_reason["stop_reason"] = Value::Null;
    let fake = Fake::new([Some(no_reason)]);
    let mut run = ToolRunner::new(fake, request()).run();
    run.run_until_done().await.expect("no error");
    assert_eq!(run.end_reason(), Some(&EndReason::Stopped(None)));
}

#[tokio::test]
async fn a_failed_request_is_the_end_reason() {
    let fake = Fake::new([None]);
    let mut run = ToolRunner::new(fake, request()).run();
    assert!(run.end_reason().is_none());
    assert!(matches!(run.next().await, Some(Err(FakeError::Scripted))));
    assert_eq!(run.end_reason(), Some(&EndReason::RequestFailed));
}

#[tokio::test]
async fn a_streamed_run_gives_the_events_and_the_same_replies() {
    let script = || {
        [
            tool_use(&[(
                "t1",
                "memory",
                json!({"command": "create", "path": "/memories/a.md", "file_text": "A"}),
            )]),
            end_turn("Saved it."),
        ]
    };
    let plain = ToolRunner::new(Fake::new(script()), request())
        .tool(MemoryTool::new(InMemoryStorage::new()))
        .run_until_done()
        .await
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let fake = Fake::new(script());
    let streamed = ToolRunner::new(fake.clone(), request())
        .tool(MemoryTool::new(InMemoryStorage::new()))
        .on_event(move |event| seen.lock().unwrap().push(event.clone()))
        .run_until_done()
        .await
        .unwrap();
    assert_eq!(streamed.text(), plain.text());
    assert_eq!(streamed.content, plain.content);
    let events = events.lock().unwrap();
    let text: String = events.iter().filter_map(StreamEvent::text_delta).collect();
    assert_eq!(text, "Saved it.");
    let starts = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::MessageStart(_)))
        .count();
    assert_eq!(starts, 2, "one stream per request");
    // The tool ran between the two streams.
    assert_eq!(tool_results(&fake.requests()[1].0)[0]["tool_use_id"], "t1");
}

#[tokio::test]
async fn context_management_sends_the_edits_and_their_betas_only() {
    let cases = [
        (
            ContextManagement::new().clear_tool_uses(ClearToolUses::keeping_memory()),
            json!({"edits": [{"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]}]}),
            vec!["context-management-2025-06-27"],
        ),
        (
            ContextManagement::new().compact(Compact::new().pause_after_compaction(true)),
            json!({"edits": [{"type": "compact_20260112", "pause_after_compaction": true}]}),
            vec!["compact-2026-01-12"],
        ),
        (
            ContextManagement::new()
                .clear_tool_uses(ClearToolUses::keeping_memory().keep_tool_uses(3))
                .compact(Compact::new().trigger_input_tokens(100_000)),
            json!({"edits": [
                {"type": "clear_tool_uses_20250919", "keep": {"type": "tool_uses", "value": 3}, "exclude_tools": ["memory"]},
                {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 100_000}}
            ]}),
            vec!["context-management-2025-06-27", "compact-2026-01-12"],
        ),
    ];
    for (editing, body, betas) in cases {
        let fake = Fake::new([end_turn("ok")]);
        ToolRunner::new(fake.clone(), request())
            .tool(MemoryTool::new(InMemoryStorage::new()))
            .context_management(editing)
            .run_until_done()
            .await
            .unwrap();
        let (sent, sent_betas) = &fake.requests()[0];
        assert_eq!(sent["context_management"], body);
        assert_eq!(sent_betas, &betas);
    }
    // No edits: no body field, no beta.
    let fake = Fake::new([end_turn("ok")]);
    ToolRunner::new(fake.clone(), request())
        .context_management(ContextManagement::new())
        .run_until_done()
        .await
        .unwrap();
    let (sent, sent_betas) = &fake.requests()[0];
    assert!(sent.get("context_management").is_none());
    assert!(sent_betas.is_empty());
}
