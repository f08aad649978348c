//! The search tool as Claude sees it: its name, description and input schema, how its input
//! is read and how its hits are written, shared by every surface that offers it (`memory mcp`'s
//! `memory_search`, memory-runner's `SearchTool`) so they answer alike.

use serde_json::{Value, json};

use super::SearchHit;
use super::query::{DEFAULT_LIMIT, MAX_LIMIT, SearchQuery};
use crate::MemoryPath;

/// The search tool's name.
pub const TOOL_NAME: &str = "memory_search";

/// What the model reads about the search tool: what it finds, how to ask, and when to use it.
pub const TOOL_DESCRIPTION: &str = "\
Search your memory directory (/memories) and get the best-matching files first, each with its \
path, the line numbers of the matches (as `view` numbers them) and a snippet.

Use it when you need a note whose path you do not know or remember, instead of viewing folder \
after folder and opening files one by one. Then `view` the files it finds (with view_range \
around the lines given) before relying on them.

How to ask: plain words or a whole question work (\"When did Melanie paint a sunrise?\"). No \
word is required: files holding more of the words, and rarer ones, rank higher, so add the \
specific words you expect in the note (names, places, terms) and leave out vague ones. Words \
match their other forms (paint, painted, painting), case and accents do not matter, and common \
words (the, when, did) are ignored. Syntax, when you need it: \"exact phrase\" in double quotes \
(exact words, in order), deploy* for any word starting with deploy, +word for a word every hit \
must hold, -word for a word no hit may hold. Hidden files and node_modules are not searched, \
as `view` leaves them out. Optional: path, a folder to search in (default /memories); limit, \
the most hits (1-100, default 10).";

/// The JSON schema of the search tool's input: `query`, optional `path` and `limit`.
pub fn tool_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Plain words or a question (no word required; more specific words rank better), \"exact phrases\" in double quotes, prefix* words, +required and -excluded words.",
                "examples": ["deploy checklist", "When did Melanie paint a sunrise?", "\"release notes\" v2* -draft"]
            },
            "path": {
                "type": "string",
                "description": "Only files at or below this folder, starting with /memories (default /memories).",
                "examples": ["/memories", "/memories/projects"]
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": "The most hits to return, best first (default 10)."
            }
        },
        "required": ["query"]
    })
}

/// Reads a search tool input (`{"query": ..., "path": ..., "limit": ...}`); the error is the
/// text of the tool's error result, without the `Error: ` prefix, saying what to change.
///
/// ```
/// use memory_core::search::parse_tool_input;
/// use serde_json::json;
/// let q = parse_tool_input(&json!({"query": "deploy*", "path": "/memories/ops", "limit": 3})).unwrap();
/// assert_eq!((q.under().as_str(), q.limit()), ("/memories/ops", 3));
/// assert!(parse_tool_input(&json!({"query": "\"open"})).unwrap_err().starts_with("invalid query"));
/// ```
pub fn parse_tool_input(input: &Value) -> Result<SearchQuery, String> {
    let Some(object) = input.as_object() else {
        return Err("the input must be a JSON object".to_owned());
    };
    let text = match object.get("query") {
        Some(Value::String(text)) => text,
        Some(_) => return Err("`query` must be a string".to_owned()),
        None => return Err("missing field `query`".to_owned()),
    };
    let under = match object.get("path") {
        None | Some(Value::Null) => MemoryPath::root(),
        Some(Value::String(raw)) => MemoryPath::parse(raw).map_err(|e| {
            let text = e.to_string();
            text.strip_prefix("Error: ").unwrap_or(&text).to_owned()
        })?,
        Some(_) => return Err("`path` must be a string".to_owned()),
    };
    let limit = match object.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(value) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("`limit` must be a whole number from 1 to {MAX_LIMIT}"))?,
    };
    let invalid = |e: super::QueryError| format!("invalid query: {e}");
    SearchQuery::new(text.as_str())
        .map_err(invalid)?
        .with_under(under)
        .with_limit(limit)
        .map_err(invalid)
}

/// The hits as text, best first: `PATH  lines 3, 7` then the snippet, indented four spaces;
/// empty when nothing matched. (Scores are left out: each engine has its own scale.)
///
/// ```
/// use memory_core::MemoryPath;
/// use memory_core::search::{SearchHit, render_hits};
/// let hit = SearchHit { path: MemoryPath::parse("/memories/a.md").unwrap(), score: 1.0, lines: vec![3, 7], snippet: "the match".into() };
/// assert_eq!(render_hits(&[hit]), "/memories/a.md  lines 3, 7\n    the match\n");
/// ```
pub fn render_hits(hits: &[SearchHit]) -> String {
    let mut out = String::new();
    for hit in hits {
        let lines: Vec<String> = hit.lines.iter().map(ToString::to_string).collect();
        let label = if hit.lines.len() == 1 {
            "line"
        } else {
            "lines"
        };
        out.push_str(&format!("{}  {label} {}\n", hit.path, lines.join(", ")));
        if !hit.snippet.is_empty() {
            out.push_str("    ");
            out.push_str(&hit.snippet);
            out.push('\n');
        }
    }
    out
}

/// The text of the search tool's result for the model: how many files match, then
/// [`render_hits`]; or that none does.
pub fn tool_result_text(query: &SearchQuery, hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return format!("No files match {:?}.", query.text());
    }
    format!(
        "{} file{} match {:?}, best first (path, line numbers as `view` shows them, then a snippet):\n\n{}",
        hits.len(),
        if hits.len() == 1 { "" } else { "s" },
        query.text(),
        render_hits(hits).trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_read_or_refused_with_what_to_change() {
        let q = parse_tool_input(&json!({"query": "x"})).unwrap();
        assert!(q.under().is_root());
        assert_eq!(q.limit(), DEFAULT_LIMIT);
        for (input, says) in [
            (json!([]), "JSON object"),
            (json!({}), "missing field `query`"),
            (json!({"query": 1}), "`query` must be a string"),
            (json!({"query": "x", "path": 1}), "`path` must be a string"),
            (json!({"query": "x", "path": "/etc"}), "/memories"),
            (json!({"query": "x", "limit": -1}), "`limit`"),
            (json!({"query": "x", "limit": 0}), "between 1 and 100"),
            (json!({"query": "*"}), "invalid query"),
        ] {
            let e = parse_tool_input(&input).unwrap_err();
            assert!(e.contains(says), "{input}: {e}");
        }
    }

    #[test]
    fn result_text() {
        let q = SearchQuery::new("zebra").unwrap();
        assert_eq!(tool_result_text(&q, &[]), "No files match \"zebra\".");
        let hit = SearchHit {
            path: MemoryPath::parse("/memories/z.md").unwrap(),
            score: 1.0,
            lines: vec![2],
            snippet: "a zebra".into(),
        };
        assert_eq!(
            tool_result_text(&q, &[hit]),
            "1 file match \"zebra\", best first (path, line numbers as `view` shows them, then a snippet):\n\n/memories/z.md  line 2\n    a zebra"
        );
        let schema = tool_input_schema();
        assert_eq!(schema["required"], json!(["query"]));
    }
}
