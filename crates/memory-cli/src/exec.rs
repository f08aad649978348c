//! The line protocol of `memory exec`: one JSON line in, one JSON line out.
//!
//! Each input line (split on `\n` only; a `\r` before it is JSON whitespace; a last line
//! without `\n` counts) is answered with exactly one output line, in order, flushed at once:
//!
//! | input line | answer |
//! |---|---|
//! | a memory-tool input, `{"command": "view", "path": "/memories"}` | `{"content": ..., "is_error": false\|true}` |
//! | a `tool_use` block, `{"type": "tool_use", "id": "toolu_1", "name": "memory", "input": {...}}` | `{"type": "tool_result", "tool_use_id": "toolu_1", "content": ...}`, with `"is_error": true` only on errors |
//! | not JSON (or not UTF-8, or blank) | `{"content": "Error: Invalid input line: not JSON ({detail})", "is_error": true}` |
//! | JSON that is not an object (`[]`, `"view"`, `5`) | `{"content": "Error: Invalid tool input: expected a JSON object", "is_error": true}` |
//! | a `tool_use` block without a string `id` | `{"content": "Error: Invalid tool_use block: missing or invalid field `id`", "is_error": true}` |
//! | a `tool_use` block without a string `name` | its `tool_result` with `Error: Invalid tool_use block: missing or invalid field `name`` |
//! | a line longer than [`MAX_LINE_BYTES`] (4 MiB) | `{"content": "Error: Invalid input line: the line is {n} bytes long, more than the 4194304 bytes (4 MiB) a line may have", "is_error": true}`, or that text in the `tool_result` of a `tool_use` block whose `type` and `id` come before the long part; the line is skipped, never held whole, and the next line is read |
//! | a `tool_use` block naming another tool | its `tool_result` with ``Error: Unknown tool `{name}`: this program only runs the `memory` tool`` |
//!
//! `content` is the result string, or for an image view the array of content blocks. Any other
//! object (with or without a `type` field other than `tool_use`) is a memory-tool input, whose
//! unknown fields are ignored, as the contract says.

use std::io::{Read, Write};

use memory_core::{MemoryHandler, ToolOutput};
use serde_json::Value;

use crate::lines::{Line, MAX_LINE_BYTES, TooLong, spawn_reader};

/// The name a `tool_use` block must carry to be run.
pub const TOOL_NAME: &str = "memory";

/// Answers one input line (without its final `\n`).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use memory_core::{InMemoryStorage, MemoryTool};
/// use serde_json::json;
///
/// let tool = MemoryTool::new(InMemoryStorage::new());
/// let line = br#"{"command": "view", "path": "/nowhere"}"#;
/// assert_eq!(
///     memory_cli::exec::answer_line(&tool, line).await,
///     json!({"content": "Error: Path must start with /memories, got: /nowhere", "is_error": true})
/// );
/// # });
/// ```
pub async fn answer_line<H>(tool: &H, line: &[u8]) -> Value
where
    H: MemoryHandler + ?Sized,
{
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            tracing::debug!(error = %e, "input line is not JSON");
            return ToolOutput::error(format!("Error: Invalid input line: not JSON ({e})"))
                .to_json();
        }
    };
    match value.get("type").and_then(Value::as_str) {
        Some("tool_use") if value.is_object() => answer_tool_use(tool, &value).await,
        _ => tool.execute(&value).await.to_json(),
    }
}

async fn answer_tool_use<H>(tool: &H, block: &Value) -> Value
where
    H: MemoryHandler + ?Sized,
{
    let Some(id) = block.get("id").and_then(Value::as_str) else {
        return ToolOutput::error("Error: Invalid tool_use block: missing or invalid field `id`")
            .to_json();
    };
    let output = match block.get("name").and_then(Value::as_str) {
        Some(TOOL_NAME) => {
            let input = block.get("input").unwrap_or(&Value::Null);
            tool.execute(input).await
        }
        Some(other) => ToolOutput::error(format!(
            "Error: Unknown tool `{other}`: this program only runs the `{TOOL_NAME}` tool"
        )),
        None => ToolOutput::error("Error: Invalid tool_use block: missing or invalid field `name`"),
    };
    output.into_tool_result(id)
}

/// The top-level fields picked out of a line too long to read: enough to answer a `tool_use`
/// block with its `tool_result`.
const TOO_LONG_FIELDS: &[&str] = &["type", "id"];

/// Answers a line longer than [`MAX_LINE_BYTES`], which was skipped unread: an error answer, a
/// `tool_result` when the line began as a `tool_use` block with an `id`.
pub fn answer_too_long(line: &TooLong) -> Value {
    let output = ToolOutput::error(format!("Error: Invalid input line: {line}"));
    match (line.field("type"), line.field("id")) {
        (Some(Value::String(kind)), Some(Value::String(id))) if kind == "tool_use" => {
            output.into_tool_result(id)
        }
        _ => output.to_json(),
    }
}

/// Answers every line of `input` on `output` until the end of input; returns how many lines
/// were answered.
///
/// `input` is read on a thread of its own, in lines of at most [`MAX_LINE_BYTES`] (a longer
/// line is skipped, never held whole, and gets an error answer); each answer is written to
/// `output` and flushed before the next line is answered. Give `output` a buffer (a
/// [`std::io::BufWriter`] or a locked standard output): each answer is one write.
///
/// # Errors
/// Reading `input` or writing `output` failed.
pub async fn run<H, R, W>(tool: &H, input: R, mut output: W) -> std::io::Result<u64>
where
    H: MemoryHandler + ?Sized,
    R: Read + Send + 'static,
    W: Write,
{
    let mut batches = spawn_reader(input, MAX_LINE_BYTES, TOO_LONG_FIELDS)?;
    let mut answered = 0;
    let mut bytes = Vec::new();
    while let Some(batch) = batches.recv().await {
        for line in batch? {
            let answer = match &line {
                Line::Complete(line) => answer_line(tool, line).await,
                Line::TooLong(line) => {
                    tracing::debug!(bytes = line.bytes, "input line too long");
                    answer_too_long(line)
                }
            };
            bytes.clear();
            serde_json::to_writer(&mut bytes, &answer).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            output.write_all(&bytes)?;
            output.flush()?;
            answered += 1;
        }
    }
    Ok(answered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory_core::{InMemoryStorage, MemoryTool};
    use serde_json::json;

    async fn answers(input: &[u8]) -> Vec<Value> {
        let tool = MemoryTool::new(InMemoryStorage::new());
        let mut out = Vec::new();
        let n = run(&tool, std::io::Cursor::new(input.to_vec()), &mut out)
            .await
            .unwrap();
        let lines: Vec<Value> = out
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(n as usize, lines.len());
        assert!(out.ends_with(b"\n") || out.is_empty());
        lines
    }

    #[tokio::test]
    async fn one_answer_per_line_in_order() {
        let input = concat!(
            r#"{"command":"create","path":"/memories/a.md","file_text":"hi\n"}"#,
            "\n",
            "not json\n",
            "\n",
            "[1]\r\n",
            r#"{"type":"tool_use","id":"toolu_1","name":"memory","input":{"command":"view","path":"/memories/a.md"}}"#,
            "\n",
            r#"{"type":"tool_use","id":"toolu_2","name":"bash","input":{}}"#,
            "\n",
            r#"{"type":"tool_use","name":"memory","input":{}}"#,
            "\n",
            r#"{"type":"tool_use","id":"toolu_3","input":{}}"#,
            "\n",
            r#"{"type":"tool_use","id":"toolu_4","name":"memory"}"#,
        );
        let got = answers(input.as_bytes()).await;
        assert_eq!(got.len(), 9);
        assert_eq!(
            got[0],
            json!({"content": "File created successfully at: /memories/a.md", "is_error": false})
        );
        for i in [1, 2] {
            assert_eq!(got[i]["is_error"], json!(true));
            let text = got[i]["content"].as_str().unwrap();
            assert!(
                text.starts_with("Error: Invalid input line: not JSON ("),
                "{text}"
            );
        }
        assert_eq!(
            got[3],
            json!({"content": "Error: Invalid tool input: expected a JSON object", "is_error": true})
        );
        assert_eq!(
            got[4],
            json!({
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": "Here's the content of /memories/a.md with line numbers:\n     1\thi\n     2\t",
            })
        );
        assert_eq!(
            got[5],
            json!({
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": "Error: Unknown tool `bash`: this program only runs the `memory` tool",
                "is_error": true,
            })
        );
        assert_eq!(
            got[6],
            json!({
                "content": "Error: Invalid tool_use block: missing or invalid field `id`",
                "is_error": true,
            })
        );
        assert_eq!(
            got[7],
            json!({
                "type": "tool_result",
                "tool_use_id": "toolu_3",
                "content": "Error: Invalid tool_use block: missing or invalid field `name`",
                "is_error": true,
            })
        );
        assert_eq!(
            got[8],
            json!({
                "type": "tool_result",
                "tool_use_id": "toolu_4",
                "content": "Error: Invalid tool input: expected a JSON object",
                "is_error": true,
            })
        );
    }

    #[tokio::test]
    async fn invalid_utf8_is_an_error_line() {
        let got = answers(b"{\"command\":\"view\",\"path\":\"/memories/\xff\"}\n").await;
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["is_error"], json!(true));
    }

    #[tokio::test]
    async fn empty_input_answers_nothing() {
        assert!(answers(b"").await.is_empty());
    }

    #[tokio::test]
    async fn other_type_fields_are_ignored_like_any_unknown_field() {
        let got = answers(
            br#"{"command":"create","path":"/memories/t.md","file_text":"x","type":"memory_20250818"}"#,
        )
        .await;
        assert_eq!(
            got[0],
            json!({"content": "File created successfully at: /memories/t.md", "is_error": false})
        );
    }
}
