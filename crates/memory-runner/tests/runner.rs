//! The tool runner against the fake Messages API: the exact requests it sends, tool order and
//! errors, max_iterations, pass-through of unknown fields and parameters.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use memory_core::{InMemoryStorage, MemoryHandler, MemoryTool, Storage, ToolOutput};
use memory_runner::testing::{FakeApi, Reply, end_turn, message, tool_use};
use memory_runner::{
    Client, Memory, Message, MessagesRequest, RetryPolicy, StopReason, Tool, ToolRunner,
};
use serde_json::{Value, json};

fn client(api: &FakeApi) -> Client {
    Client::builder()
        .api_key("sk-test-key")
        .base_url(api.url())
        .retry(RetryPolicy {
            max_retries: 1,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(2),
            max_retry_after: Duration::from_millis(10),
            max_total_wait: Duration::from_secs(10),
        })
        .build()
        .unwrap()
}

fn request(prompt: &str) -> MessagesRequest {
    MessagesRequest::new("claude-test", 1024).message(Message::user(prompt))
}

/// The `tool_result` blocks of the last user message of a recorded request.
fn tool_results(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    last["content"].as_array().unwrap().clone()
}

#[tokio::test]
async fn memory_turn_then_end_turn_sends_the_exact_requests() {
    let turn1 = tool_use(
        Some("Let me save that."),
        &[
            (
                "toolu_01",
                "memory",
                json!({"command": "create", "path": "/memories/prefs.md", "file_text": "units: metric\n"}),
            ),
            (
                "toolu_02",
                "memory",
                json!({"command": "str_replace", "path": "/memories/prefs.md", "old_str": "metric", "new_str": "metric (SI)"}),
            ),
            (
                "toolu_03",
                "memory",
                json!({"command": "view", "path": "/memories/prefs.md"}),
            ),
            (
                "toolu_04",
                "memory",
                json!({"command": "view", "path": "/elsewhere"}),
            ),
        ],
    );
    let api = FakeApi::start([
        Reply::message(turn1.clone()),
        Reply::message(end_turn("Saved: you like metric units.")),
    ])
    .await;
    let store = Arc::new(InMemoryStorage::new());
    let request = request("I like metric units.")
        .system("You remember things.")
        .temperature(0.5)
        .context_management(json!({"edits": [{"type": "clear_tool_uses_20250919"}]}))
        .param("metadata", json!({"user_id": "u1"}));
    let mut run = ToolRunner::new(client(&api), request)
        .tool(MemoryTool::new(store.clone()))
        .run();
    let mut replies = Vec::new();
    while let Some(reply) = run.next().await {
        replies.push(reply.unwrap());
    }
    assert_eq!(replies.len(), 2);
    assert_eq!(replies[0].stop_reason, Some(StopReason::ToolUse));
    assert_eq!(replies[1].text(), "Saved: you like metric units.");
    assert_eq!(run.iterations(), 2);
    assert_eq!(run.usage().input_tokens, 20);
    assert_eq!(run.usage().output_tokens, 10);
    assert!(!run.hit_max_iterations());

    let requests = api.requests();
    assert_eq!(requests.len(), 2);
    for sent in &requests {
        assert_eq!(sent.header("x-api-key"), Some("sk-test-key"));
        assert_eq!(sent.header("anthropic-version"), Some("2026-10-21"));
        // The memory tool is generally available: no beta header.
        assert_eq!(sent.header("anthropic-beta"), None);
    }
    let first = requests[0].json();
    assert_eq!(
        first,
        json!({
            "model": "claude-test",
            "max_tokens": 1024,
            "system": "You remember things.",
            "temperature": 0.5,
            "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
            "metadata": {"user_id": "u1"},
            "tools": [{"type": "memory_20250818", "name": "memory"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "I like metric units."}]}]
        })
    );

    let second = requests[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[0], first["messages"][0]);
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": turn1["content"]})
    );
    // One user message, the results in the calls' order; the commands ran in order (the
    // str_replace and the view see the created file).
    assert_eq!(
        tool_results(&second),
        vec![
            json!({"type": "tool_result", "tool_use_id": "toolu_01", "content": "File created successfully at: /memories/prefs.md"}),
            json!({"type": "tool_result", "tool_use_id": "toolu_02", "content": "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tunits: metric (SI)\n     2\t"}),
            json!({"type": "tool_result", "tool_use_id": "toolu_03", "content": "Here's the content of /memories/prefs.md with line numbers:\n     1\tunits: metric (SI)\n     2\t"}),
            json!({"type": "tool_result", "tool_use_id": "toolu_04", "content": "Error: Path must start with /memories, got: /elsewhere", "is_error": true}),
        ]
    );
    // Everything else is sent again unchanged.
    for key in [
        "model",
        "max_tokens",
        "system",
        "temperature",
        "context_management",
        "metadata",
        "tools",
    ] {
        assert_eq!(second[key], first[key], "{key}");
    }
    // The conversation ends with the final reply.
    assert_eq!(run.messages().len(), 4);
    assert_eq!(run.messages()[3].text(), "Saved: you like metric units.");
    let file = store
        .read(&memory_core::MemoryPath::parse("/memories/prefs.md").unwrap())
        .await
        .unwrap();
    assert_eq!(file.contents, b"units: metric (SI)\n");
}

/// A tool that waits for `wait` (if any), records that it finished, then wakes `wake` (if
/// any): a call waiting for a later call finishes only if the calls run at the same time.
struct Sleeper {
    name: &'static str,
    wait: Option<Arc<tokio::sync::Notify>>,
    wake: Option<Arc<tokio::sync::Notify>>,
    finished: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Tool for Sleeper {
    fn name(&self) -> &str {
        self.name
    }
    fn definition(&self) -> Value {
        json!({"name": self.name, "description": "sleeps", "input_schema": {"type": "object"}})
    }
    async fn call(&self, input: &Value) -> ToolOutput {
        if let Some(wait) = &self.wait {
            wait.notified().await;
        }
        let tag = format!("{}:{}", self.name, input["n"]);
        self.finished.lock().unwrap().push(tag.clone());
        if let Some(wake) = &self.wake {
            wake.notify_one();
        }
        ToolOutput::success(tag)
    }
}

struct Panics;

#[async_trait]
impl Tool for Panics {
    fn name(&self) -> &str {
        "boom"
    }
    fn definition(&self) -> Value {
        json!({"name": "boom", "description": "fails", "input_schema": {"type": "object"}})
    }
    async fn call(&self, _input: &Value) -> ToolOutput {
        panic!("the tool exploded with a secret detail")
    }
}

#[tokio::test]
async fn tools_run_concurrently_but_results_keep_the_calls_order() {
    let finished = Arc::new(Mutex::new(Vec::new()));
    let gate = Arc::new(tokio::sync::Notify::new());
    let slow = Sleeper {
        name: "slow",
        wait: Some(gate.clone()),
        wake: None,
        finished: finished.clone(),
    };
    let fast = Sleeper {
        name: "fast",
        wait: None,
        wake: Some(gate),
        finished: finished.clone(),
    };
    let api = FakeApi::start([
        Reply::message(tool_use(
            None,
            &[
                ("t1", "slow", json!({"n": 1})),
                ("t2", "fast", json!({"n": 2})),
                ("t3", "nope", json!({})),
                ("t4", "boom", json!({})),
                (
                    "t5",
                    "memory",
                    json!({"command": "view", "path": "/memories"}),
                ),
            ],
        )),
        Reply::message(end_turn("done")),
    ])
    .await;
    let run = ToolRunner::new(client(&api), request("go"))
        .tool(slow)
        .tool(fast)
        .tool(Panics)
        .tool(MemoryTool::new(InMemoryStorage::new()))
        .run_until_done();
    // `slow` waits for `fast`, called after it: only calls run at the same time get past.
    let reply = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the calls run at the same time")
        .unwrap();
    assert_eq!(reply.text(), "done");
    // The fast call finished first: the calls ran at the same time.
    assert_eq!(*finished.lock().unwrap(), vec!["fast:2", "slow:1"]);
    let second = api.requests()[1].json();
    let first = api.requests()[0].json();
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["slow", "fast", "boom", "memory"]);
    assert_eq!(
        tool_results(&second),
        vec![
            json!({"type": "tool_result", "tool_use_id": "t1", "content": "slow:1"}),
            json!({"type": "tool_result", "tool_use_id": "t2", "content": "fast:2"}),
            json!({"type": "tool_result", "tool_use_id": "t3", "content": "Error: No tool named `nope` is available", "is_error": true}),
            json!({"type": "tool_result", "tool_use_id": "t4", "content": "Error: The tool `boom` failed", "is_error": true}),
            json!({"type": "tool_result", "tool_use_id": "t5", "content": "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories"}),
        ]
    );
}

#[tokio::test]
async fn unknown_blocks_and_fields_are_sent_back_unchanged() {
    let mut reply = message(
        vec![
            json!({"type": "thinking", "thinking": "The user wants...", "signature": "sig=="}),
            json!({"type": "text", "text": "Checking.", "citations": [{"type": "char_location", "cited_text": "x"}]}),
            json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}),
            json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}),
            json!({"type": "tool_use", "id": "toolu_9", "name": "memory", "input": {"command": "view", "path": "/memories"}, "caller": {"type": "direct"}}),
            json!({"type": "brand_new_block", "payload": {"nested": [1, 2, 3]}}),
        ],
        "tool_use",
    );
    reply["context_management"] = json!({"applied_edits": []});
    reply["usage"]["server_tool_use"] = json!({"web_search_requests": 1});
    let api = FakeApi::start([
        Reply::message(reply.clone()),
        Reply::message(end_turn("ok")),
    ])
    .await;
    let mut run = ToolRunner::new(client(&api), request("search and remember"))
        .tool(
            Memory::new(MemoryTool::new(InMemoryStorage::new()))
                .with_cache_control(json!({"type": "ephemeral"})),
        )
        .run();
    let first = run.next().await.unwrap().unwrap();
    assert_eq!(
        first.extra["context_management"],
        json!({"applied_edits": []})
    );
    assert_eq!(
        first.usage.extra["server_tool_use"],
        json!({"web_search_requests": 1})
    );
    // The reply reads back to the very JSON the API sent.
    assert_eq!(serde_json::to_value(&first).unwrap(), reply);
    run.run_until_done().await.unwrap();
    let requests = api.requests();
    assert_eq!(
        requests[0].json()["tools"],
        json!([{"type": "memory_20250818", "name": "memory", "cache_control": {"type": "ephemeral"}}])
    );
    let second = requests[1].json();
    assert_eq!(
        second["messages"][1],
        json!({"role": "assistant", "content": reply["content"]})
    );
    let results = tool_results(&second);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_use_id"], "toolu_9");
}

#[tokio::test]
async fn a_runaway_loop_stops_at_max_iterations() {
    let turns = (0..10).map(|n| {
        Reply::message(tool_use(
            None,
            &[(
                &format!("toolu_{n}"),
                "memory",
                json!({"command": "create", "path": format!("/memories/{n}.md"), "file_text": "x"}),
            )],
        ))
    });
    let api = FakeApi::start(turns.collect::<Vec<_>>()).await;
    let store = Arc::new(InMemoryStorage::new());
    let mut run = ToolRunner::new(client(&api), request("loop"))
        .tool(MemoryTool::new(store.clone()))
        .max_iterations(3)
        .run();
    let last = run.run_until_done().await.unwrap().expect("a reply");
    assert_eq!(last.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(api.requests().len(), 3);
    assert_eq!(run.iterations(), 3);
    assert!(run.hit_max_iterations());
    assert!(run.next().await.is_none());
    // Two turns of tools ran; the third reply's call did not.
    let files = store.list(&memory_core::MemoryPath::root()).await.unwrap();
    let names: Vec<String> = files.iter().map(|f| f.path.to_string()).collect();
    assert_eq!(names, ["/memories/0.md", "/memories/1.md"]);
    assert_eq!(run.usage().output_tokens, 15);
}

#[tokio::test]
async fn a_failed_request_ends_the_run() {
    let api = FakeApi::start([
        Reply::message(tool_use(
            None,
            &[(
                "t1",
                "memory",
                json!({"command": "view", "path": "/memories"}),
            )],
        )),
        Reply::error(400, "invalid_request_error", "bad"),
    ])
    .await;
    let mut run = ToolRunner::new(client(&api), request("x"))
        .tool(MemoryTool::new(InMemoryStorage::new()))
        .run();
    assert!(run.next().await.unwrap().is_ok());
    let err = run.next().await.unwrap().unwrap_err();
    assert_eq!(err.error_type(), Some("invalid_request_error"));
    assert!(run.next().await.is_none());
    assert!(run.is_finished());
    assert_eq!(api.requests().len(), 2);
}

#[tokio::test]
async fn retries_inside_a_run_are_invisible_to_it() {
    let api = FakeApi::start([
        Reply::message(tool_use(
            None,
            &[(
                "t1",
                "memory",
                json!({"command": "view", "path": "/memories"}),
            )],
        )),
        Reply::error(529, "overloaded_error", "Overloaded"),
        Reply::message(end_turn("fine")),
    ])
    .await;
    let reply = ToolRunner::new(client(&api), request("x"))
        .tool(MemoryTool::new(InMemoryStorage::new()))
        .run_until_done()
        .await
        .unwrap();
    assert_eq!(reply.text(), "fine");
    let requests = api.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].body, requests[2].body);
}

#[tokio::test]
async fn a_stream_yields_each_reply() {
    let api = FakeApi::start([
        Reply::message(tool_use(
            Some("one"),
            &[(
                "t1",
                "memory",
                json!({"command": "view", "path": "/memories"}),
            )],
        )),
        Reply::message(end_turn("two")),
    ])
    .await;
    let mut stream = ToolRunner::new(client(&api), request("x"))
        .tool(MemoryTool::new(InMemoryStorage::new()))
        .run()
        .into_stream();
    let mut texts = Vec::new();
    while let Some(reply) =
        std::future::poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut stream), cx)).await
    {
        texts.push(reply.unwrap().text());
    }
    assert_eq!(texts, ["one", "two"]);
}

/// A handler of the application's own, run as the memory tool through `Memory`.
struct Audited {
    inner: MemoryTool<InMemoryStorage>,
    log: Mutex<Vec<String>>,
}

#[async_trait]
impl MemoryHandler for Audited {
    async fn view(
        &self,
        path: &memory_core::MemoryPath,
        range: Option<memory_core::ViewRange>,
    ) -> ToolOutput {
        self.log.lock().unwrap().push(format!("view {path}"));
        self.inner.view(path, range).await
    }
    async fn create(&self, path: &memory_core::MemoryPath, text: &str) -> ToolOutput {
        self.log.lock().unwrap().push(format!("create {path}"));
        self.inner.create(path, text).await
    }
    async fn str_replace(
        &self,
        path: &memory_core::MemoryPath,
        old: &str,
        new: &str,
    ) -> ToolOutput {
        self.inner.str_replace(path, old, new).await
    }
    async fn insert(&self, path: &memory_core::MemoryPath, line: i64, text: &str) -> ToolOutput {
        self.inner.insert(path, line, text).await
    }
    async fn delete(&self, path: &memory_core::MemoryPath) -> ToolOutput {
        self.inner.delete(path).await
    }
    async fn rename(
        &self,
        from: &memory_core::MemoryPath,
        to: &memory_core::MemoryPath,
    ) -> ToolOutput {
        self.inner.rename(from, to).await
    }
}

#[tokio::test]
async fn a_custom_handler_is_the_memory_tool_too() {
    let api = FakeApi::start([
        Reply::message(tool_use(
            None,
            &[
                (
                    "t1",
                    "memory",
                    json!({"command": "create", "path": "/memories/a.md", "file_text": "hi"}),
                ),
                (
                    "t2",
                    "memory",
                    json!({"command": "view", "path": "/memories/a.md"}),
                ),
            ],
        )),
        Reply::message(end_turn("ok")),
    ])
    .await;
    let handler = Arc::new(Audited {
        inner: MemoryTool::new(InMemoryStorage::new()),
        log: Mutex::new(Vec::new()),
    });
    struct Shared(Arc<Audited>);
    #[async_trait]
    impl Tool for Shared {
        fn name(&self) -> &str {
            "memory"
        }
        fn definition(&self) -> Value {
            json!({"type": "memory_20250818", "name": "memory"})
        }
        async fn call(&self, input: &Value) -> ToolOutput {
            self.0.execute(input).await
        }
        fn sequential(&self) -> bool {
            true
        }
    }
    ToolRunner::new(client(&api), request("x"))
        .tool(Shared(handler.clone()))
        .run_until_done()
        .await
        .unwrap();
    assert_eq!(
        *handler.log.lock().unwrap(),
        ["create /memories/a.md", "view /memories/a.md"]
    );
    // Without betas from the tool, no beta header.
    assert_eq!(api.requests()[0].header("anthropic-beta"), None);
}

#[tokio::test]
async fn an_observer_sees_each_memory_call_as_it_happens() {
    let api = FakeApi::start([
        Reply::message(tool_use(
            None,
            &[
                ("t1", "memory", json!({"command": "create", "path": "/memories/a.md", "file_text": "hello"})),
                ("t2", "memory", json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"})),
                ("t3", "memory", json!({"command": "delete", "path": "/memories/zzz"})),
            ],
        )),
        Reply::message(end_turn("ok")),
    ])
    .await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let tool = memory_runner::Observed::new(
        MemoryTool::new(InMemoryStorage::new()),
        move |call: &memory_runner::ToolCall<'_>| {
            log.lock().unwrap().push(format!(
                "{} {}{}",
                call.name,
                memory_runner::memory_call_summary(call.input),
                if call.output.is_error { " (error)" } else { "" }
            ));
        },
    );
    ToolRunner::new(client(&api), request("x"))
        .tool(tool)
        .run_until_done()
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "memory create /memories/a.md (5 bytes)",
            "memory rename /memories/a.md -> /memories/b.md",
            "memory delete /memories/zzz (error)",
        ]
    );
    // The wrapper keeps the memory tool's definition, and adds no beta.
    let first = &api.requests()[0];
    assert_eq!(
        first.json()["tools"],
        json!([{"type": "memory_20250818", "name": "memory"}])
    );
    assert_eq!(first.header("anthropic-beta"), None);
}

// ---------------------------------------------------------------------------------------------
// Stop reasons, streaming and context editing over HTTP

/// A paused turn, a compacted one (with its compaction block), then the end.
fn resumed_script() -> Vec<Reply> {
    vec![
        Reply::message(message(
            vec![json!({"type": "text", "text": "Searching"})],
            "pause_turn",
        )),
        Reply::message(message(
            vec![
                json!({"type": "compaction", "content": "Summary of the earlier turns."}),
                json!({"type": "text", "text": " still"}),
            ],
            "compaction",
        )),
        Reply::message(end_turn(" done.")),
    ]
}

#[tokio::test]
async fn paused_and_compacted_turns_are_resumed_over_http_streamed_or_not() {
    for streamed in [false, true] {
        let api = FakeApi::start(resumed_script()).await;
        let mut runner = ToolRunner::new(client(&api), request("Go"))
            .tool(MemoryTool::new(InMemoryStorage::new()));
        if streamed {
            runner = runner.on_event(|_| {});
        }
        let mut run = runner.run();
        let mut text = String::new();
        while let Some(reply) = run.next().await {
            text.push_str(&reply.unwrap().text());
        }
        assert_eq!(text, "Searching still done.");
        assert_eq!(
            run.end_reason(),
            Some(&memory_runner::EndReason::Stopped(Some(
                StopReason::EndTurn
            )))
        );
        let requests = api.requests();
        assert_eq!(requests.len(), 3);
        // Each resumed request sends the conversation back with the reply as it came, the
        // compaction block included.
        let third = requests[2].json();
        let messages = third["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3);
        assert_eq!(
            messages[2]["content"][0],
            json!({"type": "compaction", "content": "Summary of the earlier turns."})
        );
        assert_eq!(requests[0].json().get("stream").is_some(), streamed);
    }
    // max_iterations bounds the requests, resumed ones included.
    let api = FakeApi::start(resumed_script()).await;
    let mut run = ToolRunner::new(client(&api), request("Go"))
        .max_iterations(2)
        .run();
    while let Some(reply) = run.next().await {
        reply.unwrap();
    }
    assert!(run.hit_max_iterations());
    assert_eq!(api.requests().len(), 2);
}

#[tokio::test]
async fn a_streamed_run_gives_the_same_replies_and_runs_the_same_tools() {
    let script = || {
        vec![
            Reply::message(tool_use(
                Some("Saving."),
                &[(
                    "toolu_1",
                    "memory",
                    json!({"command": "create", "path": "/memories/tea.md", "file_text": "Green tea, no sugar.\n"}),
                )],
            )),
            Reply::message(end_turn("Saved your tea preference.")),
        ]
    };
    let mut outcomes = Vec::new();
    for streamed in [false, true] {
        let api = FakeApi::start(script()).await;
        let store = Arc::new(InMemoryStorage::new());
        let deltas = Arc::new(Mutex::new(String::new()));
        let mut runner =
            ToolRunner::new(client(&api), request("Tea?")).tool(MemoryTool::new(store.clone()));
        if streamed {
            let deltas = deltas.clone();
            runner = runner.on_event(move |event| {
                if let Some(text) = event.text_delta() {
                    deltas.lock().unwrap().push_str(text);
                }
            });
        }
        let mut run = runner.run();
        let mut replies = Vec::new();
        while let Some(reply) = run.next().await {
            let mut reply = reply.unwrap();
            reply.id = String::new();
            replies.push(reply);
        }
        let file = store
            .read(&memory_core::MemoryPath::parse("/memories/tea.md").unwrap())
            .await
            .unwrap();
        if streamed {
            assert_eq!(*deltas.lock().unwrap(), "Saving.Saved your tea preference.");
        }
        let mut second = api.requests()[1].json();
        second.as_object_mut().unwrap().remove("stream");
        outcomes.push((replies, file.contents, second));
    }
    assert_eq!(outcomes[0], outcomes[1]);
}

#[tokio::test]
async fn clearing_tool_uses_and_compaction_send_the_exact_body_and_beta() {
    use memory_runner::{ClearToolUses, Compact, ContextManagement};
    let cases = [
        (
            ContextManagement::new().clear_tool_uses(ClearToolUses::keeping_memory()),
            json!({"edits": [{"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]}]}),
            Some("context-management-2025-06-27"),
        ),
        (
            ContextManagement::new().compact(Compact::new()),
            json!({"edits": [{"type": "compact_20260112"}]}),
            Some("compact-2026-01-12"),
        ),
        (
            ContextManagement::new()
                .clear_tool_uses(ClearToolUses::keeping_memory())
                .compact(Compact::new()),
            json!({"edits": [
                {"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]},
                {"type": "compact_20260112"}
            ]}),
            Some("context-management-2025-06-27,compact-2026-01-12"),
        ),
        (ContextManagement::new(), Value::Null, None),
    ];
    for (editing, body, beta) in cases {
        let api = FakeApi::start([Reply::message(end_turn("ok"))]).await;
        ToolRunner::new(client(&api), request("Hi"))
            .tool(MemoryTool::new(InMemoryStorage::new()))
            .context_management(editing)
            .run_until_done()
            .await
            .unwrap();
        let sent = &api.requests()[0];
        assert_eq!(sent.json()["context_management"], body);
        assert_eq!(sent.header("anthropic-beta"), beta);
    }
}
