//! Drives `memory mcp` the way an MCP client does: spawn the binary, speak JSON-RPC over its
//! standard input and output (initialize, notifications/initialized, tools/list, tools/call),
//! and check every answer against the memory tool's contract.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

const MEMORY: &str = env!("CARGO_BIN_EXE_memory");
const TIMEOUT: Duration = Duration::from_secs(30);
/// A protocol version MCP clients in the field send.
const PROTOCOL: &str = "2025-06-18";

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every line the server printed, to check stdout holds nothing but JSON-RPC.
    seen: Vec<String>,
    next_id: u64,
}

impl Client {
    fn start(args: &[&str]) -> Client {
        let mut child = Command::new(MEMORY)
            .arg("mcp")
            .args(args)
            .env_remove("MEMORY_STORE")
            .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
            .env("RUST_LOG", "debug")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start memory mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            seen: Vec::new(),
            next_id: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to server");
        stdin.flush().expect("flush");
    }

    /// Sends a request and waits for the response with its id.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(TIMEOUT)
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            self.seen.push(line.clone());
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn initialize(&mut self) -> Value {
        let answer = self.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "memory-cli-test", "version": "0.0.0"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// `tools/call` of the memory tool; returns the `result`.
    fn call(&mut self, arguments: Value) -> Value {
        let answer = self.request(
            "tools/call",
            json!({"name": "memory", "arguments": arguments}),
        );
        assert!(answer.get("error").is_none(), "{answer}");
        answer["result"].clone()
    }

    /// Closes standard input and waits for a clean exit.
    fn finish(mut self) -> Vec<String> {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                assert!(status.success(), "memory mcp exited with {status}");
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "memory mcp did not exit at end of input"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
            self.seen.push(line);
        }
        std::mem::take(&mut self.seen)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text_result(text: &str, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
}

/// The result without fields that vary by protocol version (`resultType`, `_meta`).
fn core(result: &Value) -> Value {
    json!({"content": result["content"], "isError": result["isError"]})
}

fn store_arg(dir: &Path) -> String {
    dir.to_str().expect("utf-8 temp path").to_owned()
}

#[test]
fn a_client_session_runs_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    // A PNG placed by the application, to view as an image.
    let png = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2];
    std::fs::create_dir_all(store.join("memories/pics")).unwrap();
    std::fs::write(store.join("memories/pics/dot.png"), png).unwrap();

    let mut client = Client::start(&["--store", &store_arg(&store)]);
    let init = client.initialize();
    let info = &init["result"];
    assert_eq!(info["protocolVersion"], PROTOCOL, "{init}");
    assert_eq!(info["serverInfo"]["name"], "memory");
    assert!(info["capabilities"]["tools"].is_object(), "{init}");
    assert!(
        info["instructions"]
            .as_str()
            .unwrap()
            .contains("MEMORY PROTOCOL")
    );

    let list = client.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 2, "{list}");
    assert_eq!(tools[1]["name"], "memory_search", "{list}");
    let tool = &tools[0];
    assert_eq!(tool["name"], "memory");
    let description = tool["description"].as_str().unwrap();
    assert!(description.contains("ALWAYS VIEW YOUR MEMORY DIRECTORY"));
    assert!(description.contains("organized"));
    let schema = &tool["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["command"]));
    assert_eq!(
        schema["properties"]["command"]["enum"],
        json!([
            "view",
            "create",
            "str_replace",
            "insert",
            "delete",
            "rename"
        ])
    );
    for field in [
        "path",
        "view_range",
        "file_text",
        "old_str",
        "new_str",
        "insert_line",
        "insert_text",
        "old_path",
        "new_path",
    ] {
        assert!(
            schema["properties"][field].is_object(),
            "schema lacks {field}"
        );
    }
    assert_eq!(tool["annotations"]["readOnlyHint"], false);

    // create
    let out = client.call(
        json!({"command": "create", "path": "/memories/notes.md", "file_text": "alpha\nbeta\n"}),
    );
    assert_eq!(
        core(&out),
        text_result("File created successfully at: /memories/notes.md", false)
    );
    // view a directory
    let out = client.call(json!({"command": "view", "path": "/memories"}));
    assert_eq!(
        core(&out),
        text_result(
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n\
             22B\t/memories\n\
             11B\t/memories/notes.md\n\
             11B\t/memories/pics/\n\
             11B\t/memories/pics/dot.png",
            false
        )
    );
    // str_replace
    let out = client.call(json!({"command": "str_replace", "path": "/memories/notes.md", "old_str": "beta", "new_str": "gamma"}));
    assert_eq!(
        core(&out),
        text_result(
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\talpha\n     2\tgamma\n     3\t",
            false
        )
    );
    // insert
    let out = client.call(json!({"command": "insert", "path": "/memories/notes.md", "insert_line": 1, "insert_text": "between"}));
    assert_eq!(
        core(&out),
        text_result("The file /memories/notes.md has been edited.", false)
    );
    // view a file, and a range
    let out = client.call(json!({"command": "view", "path": "/memories/notes.md"}));
    assert_eq!(
        core(&out),
        text_result(
            "Here's the content of /memories/notes.md with line numbers:\n     1\talpha\n     2\tbetween\n     3\tgamma\n     4\t",
            false
        )
    );
    let out =
        client.call(json!({"command": "view", "path": "/memories/notes.md", "view_range": [2, 2]}));
    assert_eq!(
        core(&out),
        text_result(
            "Here's the content of /memories/notes.md with line numbers:\n     2\tbetween",
            false
        )
    );
    // an image view is MCP image content
    let out = client.call(json!({"command": "view", "path": "/memories/pics/dot.png"}));
    assert_eq!(
        core(&out),
        json!({"content": [{"type": "image", "data": "iVBORw0KGgoAAQI=", "mimeType": "image/png"}], "isError": false})
    );
    // rename
    let out = client.call(json!({"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/topics/notes.md"}));
    assert_eq!(
        core(&out),
        text_result(
            "Successfully renamed /memories/notes.md to /memories/topics/notes.md",
            false
        )
    );
    // delete
    let out = client.call(json!({"command": "delete", "path": "/memories/pics"}));
    assert_eq!(
        core(&out),
        text_result("Successfully deleted /memories/pics", false)
    );

    // errors are results with isError, in the contract's words
    let out = client.call(json!({"command": "view", "path": "/memories/missing.md"}));
    assert_eq!(
        core(&out),
        text_result(
            "The path /memories/missing.md does not exist. Please provide a valid path.",
            true
        )
    );
    let out = client.call(json!({"command": "create", "path": "/etc/passwd", "file_text": "x"}));
    assert_eq!(
        core(&out),
        text_result(
            "Error: Path must start with /memories, got: /etc/passwd",
            true
        )
    );
    let out = client.call(json!({"command": "undo_edit", "path": "/memories"}));
    assert_eq!(
        core(&out),
        text_result(
            "Error: Unknown command `undo_edit`. Expected one of: view, create, str_replace, insert, delete, rename",
            true
        )
    );
    let out = client.call(
        json!({"command": "create", "path": "/memories/topics/notes.md", "file_text": "again"}),
    );
    assert_eq!(
        core(&out),
        text_result("Error: File /memories/topics/notes.md already exists", true)
    );
    let out = client.call(json!({"command": "insert", "path": "/memories/topics/notes.md", "insert_line": "x", "insert_text": "y"}));
    assert_eq!(
        core(&out),
        text_result(
            "Error: Missing or invalid field `insert_line` for command `insert`",
            true
        )
    );
    // A call without arguments is a bad input, not a crash.
    let answer = client.request("tools/call", json!({"name": "memory"}));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    // Another tool's name is a protocol error.
    let answer = client.request("tools/call", json!({"name": "bash", "arguments": {}}));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");

    let lines = client.finish();
    for line in &lines {
        let message: Value = serde_json::from_str(line).expect("JSON on stdout");
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
    }
    // What the client did is on disk, laid out as the SDKs do.
    assert_eq!(
        std::fs::read_to_string(store.join("memories/topics/notes.md")).unwrap(),
        "alpha\nbetween\ngamma\n"
    );
    assert!(!store.join("memories/pics").exists());
    assert!(!store.join("memories/notes.md").exists());
}

#[test]
fn read_only_refuses_every_write_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    std::fs::create_dir_all(store.join("memories")).unwrap();
    std::fs::write(store.join("memories/keep.md"), "kept\n").unwrap();

    let mut client = Client::start(&["--store", &store_arg(&store), "--read-only"]);
    client.initialize();
    let list = client.request("tools/list", json!({}));
    let tool = &list["result"]["tools"][0];
    assert_eq!(tool["annotations"]["readOnlyHint"], true, "{list}");
    assert!(tool["description"].as_str().unwrap().contains("READ-ONLY"));

    // Core's ReadOnly policy: one refusal, naming the path that was to change.
    for (arguments, changed) in [
        (
            json!({"command": "create", "path": "/memories/new.md", "file_text": "x"}),
            "/memories/new.md",
        ),
        (
            json!({"command": "str_replace", "path": "/memories/keep.md", "old_str": "kept", "new_str": "lost"}),
            "/memories/keep.md",
        ),
        (
            json!({"command": "insert", "path": "/memories/keep.md", "insert_line": 0, "insert_text": "x"}),
            "/memories/keep.md",
        ),
        (
            json!({"command": "delete", "path": "/memories/keep.md"}),
            "/memories/keep.md",
        ),
        (
            json!({"command": "rename", "old_path": "/memories/keep.md", "new_path": "/memories/moved.md"}),
            "/memories/keep.md",
        ),
    ] {
        let out = client.call(arguments);
        assert_eq!(
            core(&out),
            text_result(
                &format!("Error: Cannot change {changed}: /memories is read-only"),
                true
            )
        );
    }
    let out = client.call(json!({"command": "view", "path": "/memories/keep.md"}));
    assert_eq!(
        core(&out),
        text_result(
            "Here's the content of /memories/keep.md with line numbers:\n     1\tkept\n     2\t",
            false
        )
    );
    client.finish();

    let names: Vec<_> = std::fs::read_dir(store.join("memories"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["keep.md"]);
    assert_eq!(
        std::fs::read_to_string(store.join("memories/keep.md")).unwrap(),
        "kept\n"
    );
}

#[test]
fn read_only_never_creates_a_missing_store() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("absent");
    let output = Command::new(MEMORY)
        .args(["mcp", "--read-only", "--store", &store_arg(&store)])
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("does not exist"));
    assert!(!store.exists());
}

impl Client {
    /// Writes raw bytes (one or more lines) to the server.
    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to server");
        stdin.flush().expect("flush");
    }

    /// The next line the server prints, as JSON.
    fn next_message(&mut self) -> Value {
        let line = self.lines.recv_timeout(TIMEOUT).expect("an answer");
        self.seen.push(line.clone());
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }
}

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_and_the_session_goes_on() {
    let mut client = Client::start(&["--store", "mem:"]);
    client.initialize();
    client.send_raw(b"this is not json\n");
    let answer = client.next_message();
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Parse error"),
        "{answer}"
    );
    // Not UTF-8, and JSON that is no JSON-RPC message.
    client.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}\n");
    assert_eq!(client.next_message()["error"]["code"], -32700);
    client.send_raw(b"[1, 2]\n");
    let answer = client.next_message();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let out = client.call(json!({"command": "view", "path": "/memories"}));
    assert_eq!(out["isError"], false, "{out}");
    client.finish();
}

#[test]
fn malformed_params_are_invalid_params_not_an_unknown_method() {
    let mut client = Client::start(&["--store", "mem:"]);
    // A malformed initialize is answered, and a good one after it still starts the session.
    let answer = client.request("initialize", json!({"protocolVersion": 5}));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("initialize"), "{answer}");
    let init = client.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "memory", "{init}");
    for params in [
        json!({"name": 5}),
        json!({"name": "memory", "arguments": "view"}),
        json!([]),
    ] {
        let answer = client.request("tools/call", params.clone());
        assert_eq!(answer["error"]["code"], -32602, "{params}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("tools/call"),
            "{answer}"
        );
    }
    // No params at all.
    let id = 99;
    client.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call"}));
    let answer = client.next_message();
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // An unknown method is still -32601.
    let answer = client.request("no/such/method", json!({}));
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    client.finish();
}

#[test]
fn a_very_large_message_gets_an_error_answer_with_its_id() {
    let mut client = Client::start(&["--store", "mem:"]);
    client.initialize();
    // 5 MiB of file text: above the 4 MiB a message may have.
    let huge = "x".repeat(5 << 20);
    client.send(&json!({
        "jsonrpc": "2.0",
        "id": 41,
        "method": "tools/call",
        "params": {"name": "memory", "arguments": {"command": "create", "path": "/memories/big.md", "file_text": huge}}
    }));
    let answer = client.next_message();
    assert_eq!(answer["id"], 41, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("4194304"),
        "{answer}"
    );
    // Nothing was created, and the session goes on.
    let out = client.call(json!({"command": "view", "path": "/memories/big.md"}));
    assert_eq!(out["isError"], true, "{out}");
    client.finish();
}

#[cfg(feature = "sqlite")]
#[test]
fn pipelined_tool_calls_run_in_the_order_sent() {
    // A SQLite store: writes wait for its writer thread while reads run at once, so calls
    // run concurrently would see a view before the create sent ahead of it.
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", store_arg(&tmp.path().join("m.db")));
    let mut client = Client::start(&["--store", &url]);
    client.initialize();
    // Many create-then-view pairs in one write: each view must see its create.
    let pairs = 50;
    let mut batch = Vec::new();
    for i in 0..pairs {
        let path = format!("/memories/f{i}.md");
        for (id, arguments) in [
            (
                1000 + 2 * i,
                json!({"command": "create", "path": path, "file_text": format!("n{i}")}),
            ),
            (1001 + 2 * i, json!({"command": "view", "path": path})),
        ] {
            let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                 "params": {"name": "memory", "arguments": arguments}});
            batch.extend_from_slice(message.to_string().as_bytes());
            batch.push(b'\n');
        }
    }
    client.send_raw(&batch);
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 2 * pairs as usize {
        let answer = client.next_message();
        answers.insert(answer["id"].as_u64().expect("an id"), answer);
    }
    for i in 0..pairs {
        let view = &answers[&(1001 + 2 * i)];
        assert_eq!(
            core(&view["result"]),
            text_result(
                &format!(
                    "Here's the content of /memories/f{i}.md with line numbers:\n     1\tn{i}"
                ),
                false
            ),
            "{view}"
        );
    }
    client.finish();
}

/// `tools/call` of `memory_search`; returns the `result`.
fn search(client: &mut Client, arguments: Value) -> Value {
    let answer = client.request(
        "tools/call",
        json!({"name": "memory_search", "arguments": arguments}),
    );
    assert!(answer.get("error").is_none(), "{answer}");
    answer["result"].clone()
}

#[test]
fn memory_search_is_listed_and_returns_ranked_hits() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let mut client = Client::start(&["--store", &store_arg(&store)]);
    client.initialize();

    let list = client.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["memory", "memory_search"], "{list}");
    let tool = &tools[1];
    let description = tool["description"].as_str().unwrap();
    assert!(
        description.contains("instead of viewing folder after folder"),
        "{description}"
    );
    let schema = &tool["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(schema["properties"]["query"]["type"], "string");
    assert_eq!(schema["properties"]["path"]["type"], "string");
    assert_eq!(schema["properties"]["limit"]["type"], "integer");
    assert_eq!(tool["annotations"]["readOnlyHint"], true);

    // Files written through the memory tool of the same session.
    for (path, text) in [
        (
            "/memories/ops/deploy.md",
            "# Deploys\nRoll back with make rollback.\nRollback twice if the rollback fails.\n",
        ),
        (
            "/memories/ops/oncall.md",
            "Pager rota.\nRollback is the last resort.\n",
        ),
        ("/memories/personal.md", "Nothing about that.\n"),
    ] {
        let created = client.call(json!({"command": "create", "path": path, "file_text": text}));
        assert_eq!(created["isError"], false, "{created}");
    }
    let result = search(&mut client, json!({"query": "rollback"}));
    assert_eq!(result["isError"], false, "{result}");
    let results = result["structuredContent"]["results"]
        .as_array()
        .expect("results");
    let mut paths: Vec<&str> = results.iter().filter_map(|r| r["path"].as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        ["/memories/ops/deploy.md", "/memories/ops/oncall.md"],
        "{result}"
    );
    let deploy = results
        .iter()
        .find(|r| r["path"] == "/memories/ops/deploy.md")
        .unwrap();
    assert_eq!(deploy["lines"], json!([2, 3]));
    assert_eq!(deploy["snippet"], "Roll back with make rollback.");
    assert!(results[0]["score"].as_f64().unwrap() >= results[1]["score"].as_f64().unwrap());
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("/memories/ops/deploy.md  lines 2, 3"),
        "{text}"
    );
    assert!(text.contains("Roll back with make rollback."), "{text}");

    // path and limit.
    let result = search(
        &mut client,
        json!({"query": "rollback", "path": "/memories/ops", "limit": 1}),
    );
    assert_eq!(
        result["structuredContent"]["results"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "{result}"
    );
    let result = search(
        &mut client,
        json!({"query": "rollback", "path": "/memories/o"}),
    );
    assert_eq!(
        result["structuredContent"]["results"],
        json!([]),
        "whole names only: {result}"
    );
    // Nothing matching is an empty list, not an error.
    let result = search(&mut client, json!({"query": "zebra"}));
    assert_eq!(result["isError"], false);
    assert_eq!(result["structuredContent"]["results"], json!([]));
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("No files match")
    );

    // Bad input is an error result that says what to change.
    for (arguments, says) in [
        (json!({"query": "\"unclosed"}), "invalid query"),
        (json!({"query": "*"}), "invalid query"),
        (json!({}), "missing field `query`"),
        (json!({"query": 5}), "`query` must be a string"),
        (json!({"query": "x", "path": "/etc"}), "/memories"),
        (json!({"query": "x", "limit": 0}), "limit"),
        (json!({"query": "x", "limit": "ten"}), "limit"),
    ] {
        let result = search(&mut client, arguments.clone());
        assert_eq!(result["isError"], true, "{arguments}: {result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("Error: ") && text.contains(says),
            "{arguments}: {text}"
        );
    }
    let seen = client.finish();
    assert!(
        seen.iter()
            .all(|line| serde_json::from_str::<Value>(line).is_ok())
    );
}
