//! The line protocol of `memory exec`: one JSON line in, one JSON line out.
//!
//! Each input line (split on `\n` only; a `\r` before it is JSON whitespace; a last line
//! without `\n` counts) is answered with exactly one output line, in order, flushed as soon as
//! no further input line is waiting:
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

use memory_core::{MemoryHandler, ToolContent, ToolOutput};
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
    answer(tool, line).await.into_json()
}

/// What answers a line: a tool's output, bare or as the `tool_result` of a `tool_use` block.
enum Answer {
    /// `{"content": ..., "is_error": ...}`.
    Bare(ToolOutput),
    /// `{"type": "tool_result", "tool_use_id": ..., "content": ...}`, `"is_error": true` only
    /// on errors.
    Result { id: String, output: ToolOutput },
}

impl Answer {
    /// The answer as [`answer_line`] returns it.
    fn into_json(self) -> Value {
        match self {
            Answer::Bare(output) => output.to_json(),
            Answer::Result { id, output } => output.into_tool_result(&id),
        }
    }

    /// Appends the answer's JSON text to `out`, the same bytes `serde_json` writes for
    /// [`into_json`](Self::into_json)'s value, without building that value first.
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            Answer::Bare(output) => {
                out.extend_from_slice(b"{\"content\":");
                write_content(out, &output.content)?;
                out.extend_from_slice(if output.is_error {
                    b",\"is_error\":true}"
                } else {
                    b",\"is_error\":false}"
                });
            }
            Answer::Result { id, output } => {
                out.extend_from_slice(b"{\"type\":\"tool_result\",\"tool_use_id\":");
                serde_json::to_writer(&mut *out, id)?;
                out.extend_from_slice(b",\"content\":");
                write_content(out, &output.content)?;
                if output.is_error {
                    out.extend_from_slice(b",\"is_error\":true");
                }
                out.push(b'}');
            }
        }
        Ok(())
    }
}

fn write_content(out: &mut Vec<u8>, content: &ToolContent) -> serde_json::Result<()> {
    match content {
        ToolContent::Text(text) => serde_json::to_writer(out, text),
        ToolContent::Blocks(blocks) => serde_json::to_writer(out, blocks),
    }
}

/// Answers one input line, as [`answer_line`] does, without building its JSON value.
async fn answer<H>(tool: &H, line: &[u8]) -> Answer
where
    H: MemoryHandler + ?Sized,
{
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            tracing::debug!(error = %e, "input line is not JSON");
            return Answer::Bare(ToolOutput::error(format!(
                "Error: Invalid input line: not JSON ({e})"
            )));
        }
    };
    match value.get("type").and_then(Value::as_str) {
        Some("tool_use") if value.is_object() => {
            let Some(id) = value.get("id").and_then(Value::as_str) else {
                return Answer::Bare(ToolOutput::error(
                    "Error: Invalid tool_use block: missing or invalid field `id`",
                ));
            };
            let output = match value.get("name").and_then(Value::as_str) {
                Some(TOOL_NAME) => {
                    let input = value.get("input").unwrap_or(&Value::Null);
                    tool.execute(input).await
                }
                Some(other) => ToolOutput::error(format!(
                    "Error: Unknown tool `{other}`: this program only runs the `{TOOL_NAME}` tool"
                )),
                None => ToolOutput::error(
                    "Error: Invalid tool_use block: missing or invalid field `name`",
                ),
            };
            Answer::Result {
                id: id.to_owned(),
                output,
            }
        }
        _ => Answer::Bare(tool.execute(&value).await),
    }
}

/// The top-level fields picked out of a line too long to read: enough to answer a `tool_use`
/// block with its `tool_result`.
const TOO_LONG_FIELDS: &[&str] = &["type", "id"];

/// Answers a line longer than [`MAX_LINE_BYTES`], which was skipped unread: an error answer, a
/// `tool_result` when the line began as a `tool_use` block with an `id`.
pub fn answer_too_long(line: &TooLong) -> Value {
    too_long(line).into_json()
}

fn too_long(line: &TooLong) -> Answer {
    let output = ToolOutput::error(format!("Error: Invalid input line: {line}"));
    match (line.field("type"), line.field("id")) {
        (Some(Value::String(kind)), Some(Value::String(id))) if kind == "tool_use" => {
            Answer::Result {
                id: id.clone(),
                output,
            }
        }
        _ => Answer::Bare(output),
    }
}

/// Answers every line of `input` on `output` until the end of input; returns how many lines
/// were answered.
///
/// `input` is read on a thread of its own, in lines of at most [`MAX_LINE_BYTES`] (a longer
/// line is skipped, never held whole, and gets an error answer); each answer is written to
/// `output`, which is flushed whenever no further complete input line is waiting (so an
/// interactive client gets every answer before it sends the next line, and lines that arrive
/// together get their answers in as few writes as the buffer allows). Give `output` a buffer
/// (a [`std::io::BufWriter`]): each flush is then one write.
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
        let batch = match batch {
            Ok(batch) => batch,
            Err(e) => {
                // What was answered before the failed read still reaches the client.
                output.flush()?;
                return Err(e);
            }
        };
        let mut left = batch.len();
        for line in batch {
            left -= 1;
            let answer = match &line {
                Line::Complete(line) => answer(tool, line).await,
                Line::TooLong(line) => {
                    tracing::debug!(bytes = line.bytes, "input line too long");
                    too_long(line)
                }
            };
            bytes.clear();
            answer
                .write_json(&mut bytes)
                .map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            output.write_all(&bytes)?;
            answered += 1;
            // Flushed as soon as no further line is waiting: an interactive client gets each
            // answer at once, while lines that arrived together (a piped file, a pipelining
            // client) are answered in one write per buffer instead of one per line.
            if left == 0 && batches.is_empty() {
                output.flush()?;
            }
        }
    }
    output.flush()?;
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

    /// The answers written directly are the bytes serde_json writes for the same values.
    #[test]
    fn answers_are_written_as_serde_json_writes_them() {
        let mut texts: Vec<String> = vec![
            String::new(),
            "plain".into(),
            "Here's the content of /memories/a.md with line numbers:\n     1\thi \"there\"\n     2\t\\".into(),
            (0u8..0x80).map(char::from).collect(),
            "ünïcødé ✓ 𝄞 \u{7f}\u{80}\u{9f} end".into(),
            "12345678\n".into(),
            "1234567\n".into(),
        ];
        for n in 0..40 {
            texts.push(format!("{}\u{1}{}\"", "x".repeat(n), "y".repeat(n % 9)));
        }
        for text in &texts {
            for is_error in [false, true] {
                let output = ToolOutput {
                    content: ToolContent::Text(text.clone()),
                    is_error,
                };
                for answer in [
                    Answer::Bare(output.clone()),
                    Answer::Result {
                        id: format!("toolu_\"{text}"),
                        output: output.clone(),
                    },
                ] {
                    let mut direct = Vec::new();
                    answer.write_json(&mut direct).unwrap();
                    let via_value = serde_json::to_vec(&answer.into_json()).unwrap();
                    assert_eq!(
                        String::from_utf8(direct).unwrap(),
                        String::from_utf8(via_value).unwrap()
                    );
                }
            }
        }
        let image = ToolOutput::image("image/png", "aGk=".into());
        let mut direct = Vec::new();
        Answer::Bare(image.clone()).write_json(&mut direct).unwrap();
        assert_eq!(direct, serde_json::to_vec(&image.to_json()).unwrap());
    }

    /// A writer that keeps what it is given and counts the flushes asked of it.
    #[derive(Default)]
    struct CountingFlushes {
        bytes: Vec<u8>,
        flushes: usize,
    }

    impl Write for CountingFlushes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            self.flushes += 1;
            Ok(())
        }
    }

    /// Lines that are all there at once are answered without a flush per line (the
    /// interactive case, a flush per answer while the client waits, is
    /// `answers_are_flushed_line_by_line` in the spec tests).
    #[tokio::test]
    async fn lines_that_arrive_together_are_flushed_together() {
        let tool = MemoryTool::new(InMemoryStorage::new());
        let input: String = (0..200)
            .map(|i| format!("{{\"command\":\"view\",\"path\":\"/memories/f{i}.md\"}}\n"))
            .collect();
        let mut out = CountingFlushes::default();
        let n = run(&tool, std::io::Cursor::new(input.into_bytes()), &mut out)
            .await
            .unwrap();
        assert_eq!(n, 200);
        let answers: Vec<Value> = out
            .bytes
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(answers.len(), 200);
        assert_eq!(
            answers[7],
            json!({
                "content": "The path /memories/f7.md does not exist. Please provide a valid path.",
                "is_error": true,
            })
        );
        assert!(out.flushes <= 2, "{} flushes for 200 lines", out.flushes);
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
