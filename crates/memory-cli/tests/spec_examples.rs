//! Every example of SPEC.md, with its exact strings, through the real `memory exec` binary,
//! over a directory store and over `mem:`.

#![cfg(feature = "fs")]

mod common;

use common::{answer, answers_of, dir_store, exec_lines, exec_raw, line, listing, text};
use serde_json::{Value, json};

/// What one input line must be answered with.
enum Expect {
    /// Exactly this JSON.
    Exact(Value),
    /// An error whose text starts with this.
    ErrorStartingWith(&'static str),
}

struct Step {
    input: String,
    expect: Expect,
}

fn ok(input: Value, content: &str) -> Step {
    Step {
        input: line(input),
        expect: Expect::Exact(answer(content, false)),
    }
}

fn err(input: Value, content: &str) -> Step {
    Step {
        input: line(input),
        expect: Expect::Exact(answer(content, true)),
    }
}

fn err_prefix(input: Value, prefix: &'static str) -> Step {
    Step {
        input: line(input),
        expect: Expect::ErrorStartingWith(prefix),
    }
}

fn raw(input: &str, expect: Value) -> Step {
    Step {
        input: input.to_owned(),
        expect: Expect::Exact(expect),
    }
}

fn view(path: &str) -> Value {
    json!({"command": "view", "path": path})
}

fn view_range(path: &str, start: Value, end: Value) -> Value {
    json!({"command": "view", "path": path, "view_range": [start, end]})
}

fn create(path: &str, text: &str) -> Value {
    json!({"command": "create", "path": path, "file_text": text})
}

fn str_replace(path: &str, old: &str, new: &str) -> Value {
    json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new})
}

fn insert(path: &str, at: Value, text: &str) -> Value {
    json!({"command": "insert", "path": path, "insert_line": at, "insert_text": text})
}

fn delete(path: &str) -> Value {
    json!({"command": "delete", "path": path})
}

fn rename(from: &str, to: &str) -> Value {
    json!({"command": "rename", "old_path": from, "new_path": to})
}

const LISTING: &str = "Here're the files and directories up to 2 levels deep in";
const EDITED: &str = "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n";

fn listing_of(path: &str, entries: &[&str]) -> String {
    let mut out = format!("{LISTING} {path}, excluding hidden items and node_modules:");
    for e in entries {
        out.push('\n');
        out.push_str(e);
    }
    out
}

fn file_view(path: &str, numbered: &[&str]) -> String {
    format!(
        "Here's the content of {path} with line numbers:\n{}",
        numbered.join("\n")
    )
}

/// Runs the steps as one session with the given line ending, the last line with or without it.
fn run(store: &str, steps: &[Step], ending: &str, final_ending: bool) {
    let mut input = String::new();
    for (i, step) in steps.iter().enumerate() {
        input.push_str(&step.input);
        if i + 1 < steps.len() || final_ending {
            input.push_str(ending);
        }
    }
    let out = exec_raw(store, input.as_bytes());
    let answers = answers_of(&out, steps.len());
    for (i, (step, got)) in steps.iter().zip(&answers).enumerate() {
        match &step.expect {
            Expect::Exact(want) => {
                assert_eq!(got, want, "line {} of {store}: {}", i + 1, step.input)
            }
            Expect::ErrorStartingWith(prefix) => {
                assert_eq!(
                    got["is_error"],
                    json!(true),
                    "line {}: {}",
                    i + 1,
                    step.input
                );
                assert!(
                    text(got).starts_with(prefix),
                    "line {}: {}\n got {got}\nwant prefix {prefix}",
                    i + 1,
                    step.input
                );
            }
        }
    }
}

/// The session of SPEC.md's command sections, in order.
fn commands_session() -> Vec<Step> {
    let notes = "/memories/notes.md";
    vec![
        // view of an empty store
        ok(
            view("/memories"),
            &listing_of("/memories", &["0B\t/memories"]),
        ),
        // create
        ok(
            create(notes, "Line one\nLine two\nLine three\n"),
            "File created successfully at: /memories/notes.md",
        ),
        err(
            create(notes, "again"),
            "Error: File /memories/notes.md already exists",
        ),
        // view a file: the final \n leaves a last empty line
        ok(
            view(notes),
            &file_view(
                notes,
                &[
                    "     1\tLine one",
                    "     2\tLine two",
                    "     3\tLine three",
                    "     4\t",
                ],
            ),
        ),
        ok(
            view_range(notes, json!(2), json!(3)),
            &file_view(notes, &["     2\tLine two", "     3\tLine three"]),
        ),
        ok(
            view_range(notes, json!(2), json!(-1)),
            &file_view(
                notes,
                &["     2\tLine two", "     3\tLine three", "     4\t"],
            ),
        ),
        // an end past the last line is clamped; integers may come as strings or 2.0
        ok(
            view_range(notes, json!("3"), json!(100)),
            &file_view(notes, &["     3\tLine three", "     4\t"]),
        ),
        ok(
            view_range(notes, json!(1.0), json!(1)),
            &file_view(notes, &["     1\tLine one"]),
        ),
        err(
            view_range(notes, json!(0), json!(2)),
            "Error: Invalid `view_range` parameter: [0, 2]. The file has 4 lines; use 1 <= start <= 4, and end >= start or end = -1",
        ),
        err(
            view_range(notes, json!(3), json!(2)),
            "Error: Invalid `view_range` parameter: [3, 2]. The file has 4 lines; use 1 <= start <= 4, and end >= start or end = -1",
        ),
        err(
            view_range(notes, json!(5), json!(-1)),
            "Error: Invalid `view_range` parameter: [5, -1]. The file has 4 lines; use 1 <= start <= 4, and end >= start or end = -1",
        ),
        err(
            view_range(notes, json!(1.5), json!(2)),
            "Error: Missing or invalid field `view_range` for command `view`",
        ),
        err(
            view("/memories/missing.md"),
            "The path /memories/missing.md does not exist. Please provide a valid path.",
        ),
        // str_replace
        ok(
            str_replace(notes, "Line two", "Line 2"),
            &format!("{EDITED}     1\tLine one\n     2\tLine 2\n     3\tLine three\n     4\t"),
        ),
        err(
            str_replace(notes, "nope", "x"),
            "No replacement was performed, old_str `nope` did not appear verbatim in /memories/notes.md.",
        ),
        err(
            str_replace(notes, "Line", "x"),
            "No replacement was performed. Multiple occurrences of old_str `Line` in lines: 1, 2, 3. Please ensure it is unique",
        ),
        err(
            str_replace("/memories/missing.md", "a", "b"),
            "Error: The path /memories/missing.md does not exist. Please provide a valid path.",
        ),
        // insert
        ok(
            insert(notes, json!(1), "Inserted"),
            "The file /memories/notes.md has been edited.",
        ),
        ok(
            view(notes),
            &file_view(
                notes,
                &[
                    "     1\tLine one",
                    "     2\tInserted",
                    "     3\tLine 2",
                    "     4\tLine three",
                    "     5\t",
                ],
            ),
        ),
        err(
            insert(notes, json!(10), "x"),
            "Error: Invalid `insert_line` parameter: 10. It should be within the range of lines of the file: [0, 4]",
        ),
        err(
            insert(notes, json!(-1), "x"),
            "Error: Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 4]",
        ),
        err(
            insert("/memories/missing.md", json!(0), "x"),
            "Error: The path /memories/missing.md does not exist",
        ),
        ok(
            insert(notes, json!("4"), "Last\n\n"),
            "The file /memories/notes.md has been edited.",
        ),
        ok(
            view_range(notes, json!(4), json!(-1)),
            &file_view(notes, &["     4\tLine three", "     5\tLast", "     6\t"]),
        ),
        // a listing with sizes, hidden files and node_modules
        ok(
            create("/memories/projects/alpha/todo.md", "- a\n"),
            "File created successfully at: /memories/projects/alpha/todo.md",
        ),
        ok(
            create("/memories/projects/plan.md", &"p".repeat(1536)),
            "File created successfully at: /memories/projects/plan.md",
        ),
        ok(
            create("/memories/.hidden.md", "secret"),
            "File created successfully at: /memories/.hidden.md",
        ),
        ok(
            create("/memories/node_modules/x.js", "x"),
            "File created successfully at: /memories/node_modules/x.js",
        ),
        ok(
            view("/memories"),
            &listing_of(
                "/memories",
                &[
                    "1.6K\t/memories",
                    "41B\t/memories/notes.md",
                    "1.5K\t/memories/projects/",
                    "4B\t/memories/projects/alpha/",
                    "1.5K\t/memories/projects/plan.md",
                ],
            ),
        ),
        // one trailing slash is dropped, and the echo is normalized
        ok(
            view("/memories/projects/"),
            &listing_of(
                "/memories/projects",
                &[
                    "1.5K\t/memories/projects",
                    "4B\t/memories/projects/alpha/",
                    "4B\t/memories/projects/alpha/todo.md",
                    "1.5K\t/memories/projects/plan.md",
                ],
            ),
        ),
        // a view_range on a directory is ignored; a hidden path can still be viewed directly
        ok(
            view_range("/memories/projects/alpha", json!(5), json!(1)),
            &listing_of(
                "/memories/projects/alpha",
                &[
                    "4B\t/memories/projects/alpha",
                    "4B\t/memories/projects/alpha/todo.md",
                ],
            ),
        ),
        ok(
            view("/memories/.hidden.md"),
            &file_view("/memories/.hidden.md", &["     1\tsecret"]),
        ),
        // file / directory conflicts
        err(
            create("/memories/projects", "x"),
            "Error: File /memories/projects already exists",
        ),
        err(
            create("/memories/notes.md/deeper/y.md", "x"),
            "Error: Cannot create /memories/notes.md/deeper/y.md: /memories/notes.md is a file",
        ),
        // rename
        ok(
            rename(notes, "/memories/archive/2025/notes.md"),
            "Successfully renamed /memories/notes.md to /memories/archive/2025/notes.md",
        ),
        err(
            rename(notes, "/memories/elsewhere.md"),
            "Error: The path /memories/notes.md does not exist",
        ),
        // the source is checked first
        err(
            rename(notes, "/memories/projects"),
            "Error: The path /memories/notes.md does not exist",
        ),
        err(
            rename("/memories/projects", "/memories/archive"),
            "Error: The destination /memories/archive already exists",
        ),
        err(
            rename("/memories/projects", "/memories/projects"),
            "Error: The destination /memories/projects already exists",
        ),
        err(
            rename("/memories", "/memories/moved"),
            "Error: Cannot rename the /memories directory itself",
        ),
        err(
            rename("/memories/projects", "/memories/projects/sub"),
            "Error: Cannot move /memories/projects into itself",
        ),
        err(
            rename("/memories/projects", "/memories/archive/2025/notes.md/x"),
            "Error: Cannot create /memories/archive/2025/notes.md/x: /memories/archive/2025/notes.md is a file",
        ),
        ok(
            rename("/memories/projects", "/memories/archive/projects"),
            "Successfully renamed /memories/projects to /memories/archive/projects",
        ),
        ok(
            view("/memories/archive"),
            &listing_of(
                "/memories/archive",
                &[
                    "1.5K\t/memories/archive",
                    "41B\t/memories/archive/2025/",
                    "41B\t/memories/archive/2025/notes.md",
                    "1.5K\t/memories/archive/projects/",
                    "4B\t/memories/archive/projects/alpha/",
                    "1.5K\t/memories/archive/projects/plan.md",
                ],
            ),
        ),
        // delete
        err(
            delete("/memories"),
            "Error: Cannot delete the /memories directory itself",
        ),
        err(
            delete("/memories/missing.md"),
            "Error: The path /memories/missing.md does not exist",
        ),
        ok(
            delete("/memories/archive/2025/notes.md"),
            "Successfully deleted /memories/archive/2025/notes.md",
        ),
        // the directory went with its last file
        err(
            view("/memories/archive/2025"),
            "The path /memories/archive/2025 does not exist. Please provide a valid path.",
        ),
        ok(
            delete("/memories/archive"),
            "Successfully deleted /memories/archive",
        ),
        ok(
            view("/memories"),
            &listing_of("/memories", &["7B\t/memories"]),
        ),
    ]
}

/// Paths, bad input and the line protocol's own shapes.
fn input_session() -> Vec<Step> {
    vec![
        err(
            view("/etc/passwd"),
            "Error: Path must start with /memories, got: /etc/passwd",
        ),
        err(
            view("/memoriesX/a"),
            "Error: Path must start with /memories, got: /memoriesX/a",
        ),
        err(
            view("memories/a"),
            "Error: Path must start with /memories, got: memories/a",
        ),
        err(
            create("C:\\x", "t"),
            "Error: Path must start with /memories, got: C:\\x",
        ),
        err_prefix(
            view("/memories/../etc/passwd"),
            "Error: Invalid path /memories/../etc/passwd: ",
        ),
        err_prefix(
            create("/memories/./a.md", "t"),
            "Error: Invalid path /memories/./a.md: ",
        ),
        err_prefix(
            create("/memories//a.md", "t"),
            "Error: Invalid path /memories//a.md: ",
        ),
        err_prefix(
            create("/memories/a\\b.md", "t"),
            "Error: Invalid path /memories/a\\b.md: ",
        ),
        err_prefix(
            create("/memories/a\u{0}b.md", "t"),
            "Error: Invalid path /memories/a\u{0}b.md: ",
        ),
        err_prefix(
            create("/memories/%2e%2e/x", "t"),
            "Error: Invalid path /memories/%2e%2e/x: ",
        ),
        err_prefix(
            create("/memories/v1%2E0.md", "t"),
            "Error: Invalid path /memories/v1%2E0.md: ",
        ),
        err_prefix(
            create(&format!("/memories/{}", "n".repeat(256)), "t"),
            "Error: Invalid path /memories/nnn",
        ),
        err(
            json!({"command": "undo_edit", "path": "/memories"}),
            "Error: Unknown command `undo_edit`. Expected one of: view, create, str_replace, insert, delete, rename",
        ),
        err(
            json!({"command": "create", "path": "/memories/x.md"}),
            "Error: Missing or invalid field `file_text` for command `create`",
        ),
        err(
            json!({"command": "insert", "path": "/memories/x.md", "insert_line": true, "insert_text": "x"}),
            "Error: Missing or invalid field `insert_line` for command `insert`",
        ),
        err(
            json!({"command": "rename", "old_path": "/memories/a"}),
            "Error: Missing or invalid field `new_path` for command `rename`",
        ),
        err(
            json!([1, 2]),
            "Error: Invalid tool input: expected a JSON object",
        ),
        err(
            json!("view"),
            "Error: Invalid tool input: expected a JSON object",
        ),
        // unknown extra fields are ignored
        ok(
            json!({"command": "create", "path": "/memories/a.md", "file_text": "a\n", "extra": 1}),
            "File created successfully at: /memories/a.md",
        ),
        // malformed lines in between: answered, and the program goes on
        Step {
            input: "this is not json".to_owned(),
            expect: Expect::ErrorStartingWith("Error: Invalid input line: not JSON ("),
        },
        Step {
            input: r#"{"command": "view", "path": "/memories""#.to_owned(),
            expect: Expect::ErrorStartingWith("Error: Invalid input line: not JSON ("),
        },
        Step {
            input: String::new(),
            expect: Expect::ErrorStartingWith("Error: Invalid input line: not JSON ("),
        },
        // a tool_use block in, a tool_result block out (is_error only on errors)
        raw(
            &line(
                json!({"type": "tool_use", "id": "toolu_01", "name": "memory", "input": view("/memories/a.md")}),
            ),
            json!({
                "type": "tool_result",
                "tool_use_id": "toolu_01",
                "content": "Here's the content of /memories/a.md with line numbers:\n     1\ta\n     2\t",
            }),
        ),
        raw(
            &line(
                json!({"type": "tool_use", "id": "toolu_02", "name": "memory", "input": delete("/memories/nope")}),
            ),
            json!({
                "type": "tool_result",
                "tool_use_id": "toolu_02",
                "content": "Error: The path /memories/nope does not exist",
                "is_error": true,
            }),
        ),
        raw(
            &line(
                json!({"type": "tool_use", "id": "toolu_03", "name": "web_search", "input": {"query": "x"}}),
            ),
            json!({
                "type": "tool_result",
                "tool_use_id": "toolu_03",
                "content": "Error: Unknown tool `web_search`: this program only runs the `memory` tool",
                "is_error": true,
            }),
        ),
        // image files come back as an image block
        ok(
            create("/memories/pic.png", "abc"),
            "File created successfully at: /memories/pic.png",
        ),
        raw(
            &line(view_range("/memories/pic.png", json!(1), json!(1))),
            json!({
                "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "YWJj"}}],
                "is_error": false,
            }),
        ),
        raw(
            &line(
                json!({"type": "tool_use", "id": "toolu_04", "name": "memory", "input": view("/memories/pic.png")}),
            ),
            json!({
                "type": "tool_result",
                "tool_use_id": "toolu_04",
                "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "YWJj"}}],
            }),
        ),
        // str_replace details: new_str omitted deletes; empty old_str on an empty file
        ok(
            create("/memories/e.md", ""),
            "File created successfully at: /memories/e.md",
        ),
        ok(
            view("/memories/e.md"),
            &file_view("/memories/e.md", &["     1\t"]),
        ),
        ok(
            json!({"command": "str_replace", "path": "/memories/e.md", "old_str": "", "new_str": "filled"}),
            &format!("{EDITED}     1\tfilled"),
        ),
        ok(
            json!({"command": "str_replace", "path": "/memories/e.md", "old_str": "ill"}),
            &format!("{EDITED}     1\tfed"),
        ),
        err(
            str_replace("/memories/e.md", "", "x"),
            "No replacement was performed, old_str `` did not appear verbatim in /memories/e.md.",
        ),
        // limits
        err(
            create("/memories/big.txt", &"x".repeat(102_401)),
            "Error: /memories/big.txt would be 102401 bytes, over the limit of 102400 bytes",
        ),
        err(
            view("/memories/big.txt"),
            "The path /memories/big.txt does not exist. Please provide a valid path.",
        ),
        // the last line (sent without a final newline by one of the runs)
        ok(
            view("/memories/e.md"),
            &file_view("/memories/e.md", &["     1\tfed"]),
        ),
    ]
}

/// A long file: numbered lines are cut at 16,000 characters with a notice.
fn truncation_session() -> Vec<Step> {
    let path = "/memories/long.txt";
    let body = vec!["abcdefghi"; 1200].join("\n");
    // Each numbered line is 16 characters; 941 of them joined by \n are 941 * 17 - 1 = 15,996.
    let shown: Vec<String> = (1..=941).map(|n| format!("{n:>6}\tabcdefghi")).collect();
    let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
    let truncated = format!(
        "{}\n[Output truncated: showed lines 1-941 of 1200. Use view_range to see the rest.]",
        file_view(path, &shown)
    );
    let tail: Vec<String> = (1190..=1200)
        .map(|n| format!("{n:>6}\tabcdefghi"))
        .collect();
    let tail: Vec<&str> = tail.iter().map(String::as_str).collect();
    vec![
        ok(
            create(path, &body),
            "File created successfully at: /memories/long.txt",
        ),
        ok(view(path), &truncated),
        ok(
            view_range(path, json!(1190), json!(-1)),
            &file_view(path, &tail),
        ),
        ok(
            view("/memories"),
            &listing_of(
                "/memories",
                &["11.7K\t/memories", "11.7K\t/memories/long.txt"],
            ),
        ),
    ]
}

fn both_stores(steps: fn() -> Vec<Step>) {
    run("mem:", &steps(), "\n", true);
    let (_dir, dir_url) = dir_store();
    run(&dir_url, &steps(), "\n", true);
}

#[test]
fn spec_commands_over_dir_and_mem() {
    both_stores(commands_session);
}

#[test]
fn spec_inputs_and_protocol_over_dir_and_mem() {
    both_stores(input_session);
}

#[test]
fn truncation_over_dir_and_mem() {
    both_stores(truncation_session);
}

#[test]
fn crlf_line_endings_and_a_last_line_without_newline() {
    for store in ["dir", "mem:"] {
        let (_dir, dir_url) = dir_store();
        let url = if store == "dir" {
            dir_url.as_str()
        } else {
            store
        };
        run(url, &input_session(), "\r\n", false);
        let (_dir, dir_url) = dir_store();
        let url = if store == "dir" {
            dir_url.as_str()
        } else {
            store
        };
        run(url, &commands_session(), "\n", false);
    }
}

#[test]
fn the_directory_store_uses_the_sdk_layout() {
    let (dir, url) = dir_store();
    let answers = exec_lines(
        &url,
        &[
            line(create("/memories/a/b.md", "hello\n")),
            line(create("/memories/c.md", "c")),
        ],
    );
    assert!(
        answers.iter().all(|a| a["is_error"] == json!(false)),
        "{answers:?}"
    );
    assert_eq!(
        common::read_disk(dir.path(), "a/b.md").as_deref(),
        Some(&b"hello\n"[..])
    );
    assert_eq!(
        common::read_disk(dir.path(), "c.md").as_deref(),
        Some(&b"c"[..])
    );
    // A second process sees the first one's files.
    let answers = exec_lines(&url, &[line(view("/memories"))]);
    assert_eq!(
        listing(&answers[0]),
        vec![
            ("7B".to_owned(), "/memories".to_owned()),
            ("6B".to_owned(), "/memories/a/".to_owned()),
            ("6B".to_owned(), "/memories/a/b.md".to_owned()),
            ("1B".to_owned(), "/memories/c.md".to_owned()),
        ]
    );
}

#[test]
fn a_file_that_is_not_utf8_is_refused_by_view() {
    let (dir, url) = dir_store();
    let mem = dir.path().join("memories");
    std::fs::create_dir_all(&mem).unwrap();
    std::fs::write(mem.join("bin.dat"), [0xff, 0xfe, 0x00]).unwrap();
    let answers = exec_lines(&url, &[line(view("/memories/bin.dat"))]);
    assert_eq!(
        answers[0],
        answer("Error: /memories/bin.dat is not a UTF-8 text file", true)
    );
}

#[test]
fn create_mode_overwrite_replaces_files() {
    let mut cmd = common::exec_command("mem:");
    cmd.args(["--create-mode", "overwrite"]);
    let child = cmd.spawn().unwrap();
    let input = [
        line(create("/memories/a.md", "one")),
        line(create("/memories/a.md", "two")),
        line(view("/memories/a.md")),
    ]
    .join("\n");
    let out = common::feed_and_wait(child, input.as_bytes());
    let answers = answers_of(&out, 3);
    assert_eq!(answers[1]["is_error"], json!(false), "{}", answers[1]);
    assert_eq!(
        answers[2],
        answer(&file_view("/memories/a.md", &["     1\ttwo"]), false)
    );
}

#[test]
fn answers_are_flushed_line_by_line() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = common::exec_command("mem:").spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines() {
            if tx.send(l.unwrap()).is_err() {
                break;
            }
        }
    });
    for i in 0..3 {
        let path = format!("/memories/f{i}.md");
        writeln!(stdin, "{}", line(create(&path, "x"))).unwrap();
        stdin.flush().unwrap();
        // The answer arrives while stdin is still open.
        let got = rx
            .recv_timeout(common::TIMEOUT)
            .expect("an answer before the end of input");
        let got: Value = serde_json::from_str(&got).unwrap();
        assert_eq!(
            got,
            answer(&format!("File created successfully at: {path}"), false)
        );
    }
    drop(stdin);
    assert!(common::wait_timeout(&mut child, common::TIMEOUT).success());
    reader.join().unwrap();
}
