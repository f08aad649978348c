//! `memory search QUERY`: ranked keyword search over a store, as text or `--json`; and the
//! rendering of hits that `memory mcp`'s `memory_search` tool shares.

use std::process::ExitCode;

use memory_core::search::{DEFAULT_LIMIT, QueryError, SearchHit, SearchQuery};
use memory_core::{Error, MemoryPath, Storage};
use serde_json::{Value, json};

use crate::admin::{parse_path, write_stdout};
use crate::exit::Exit;
use crate::failure::Failure;
use crate::store_args::{OpenMode, StoreArgs};

/// `memory search --help`, after the options.
const SEARCH_AFTER_HELP: &str = concat!(
    "\
Query syntax:
  words             plain words or a whole question; no word is required: files
                    holding more of them (rarer ones weigh more) rank first;
                    words match their other forms (paint finds painted), case
                    and accents do not matter (cafe finds Café), and stop words
                    (the, when, did) are ignored
  \"exact phrase\"    exactly these words next to each other, in this order
  deploy*           any word that starts with deploy (deploys, deployment)
  +word  -word      a word every hit must hold / no hit may hold (+\"a phrase\")
Hidden files and folders (names starting with `.`) and node_modules are not
searched, as `view` leaves them out; files that are not UTF-8 text neither.

Output: one hit per paragraph, best first: the path, the 1-based lines (as the
memory tool's `view` numbers them) and a snippet holding the match:

  /memories/ops/deploy.md  lines 3, 7
      Roll back with `make rollback` when the health check fails.

--json prints one object (nothing matching: \"results\" is empty, exit 0):
  {\"query\": \"rollback\", \"results\": [{\"path\": \"/memories/ops/deploy.md\",
   \"score\": 2.41, \"lines\": [3, 7], \"snippet\": \"Roll back with ...\"}]}

Scores rank the hits of one search; every backend scores alike.
A query that cannot be parsed (an unclosed quote, a lone `*`) exits 2.

",
    exit_status_help!()
);

/// Arguments of `memory search`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = SEARCH_AFTER_HELP)]
pub(crate) struct SearchArgs {
    /// What to look for: words, "exact phrases", prefix* words.
    query: String,

    /// Only files at or below this folder (whole names: /memories/a never matches /memories/ab).
    #[arg(long, value_name = "/memories/PREFIX", default_value = "/memories")]
    path: String,

    /// The most hits to print (1 to 100).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT)]
    limit: usize,

    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    store: StoreArgs,
}

/// Runs `memory search`; prints its failure, if any, and gives the exit status.
pub(crate) async fn run(args: SearchArgs) -> ExitCode {
    match search(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("memory: {failure}");
            failure.exit.into()
        }
    }
}

async fn search(args: SearchArgs) -> Result<(), Failure> {
    let under = parse_path(&args.path)?;
    let query = build_query(&args.query, under, args.limit).map_err(invalid_query)?;
    let store = args.store.open(OpenMode::ReadOnly).await?;
    let hits = run_query(store.as_ref(), &query).await?;
    let mut text = if args.json {
        json!({"query": query.text(), "results": hits}).to_string()
    } else {
        memory_core::search::render_hits(&hits)
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    write_stdout(text.as_bytes())
}

/// The query of a search command or tool call: text, folder, limit.
pub(crate) fn build_query(
    text: &str,
    under: MemoryPath,
    limit: usize,
) -> Result<SearchQuery, QueryError> {
    SearchQuery::new(text)?.with_under(under).with_limit(limit)
}

/// A query the engine cannot run: exit 2 with the reason.
pub(crate) fn invalid_query(e: QueryError) -> Failure {
    Failure::new(Exit::Usage, format!("invalid query: {e}"))
}

/// Runs `query` on `store`; a query the engine refuses is a usage error, any other failure the
/// store's.
pub(crate) async fn run_query(
    store: &dyn Storage,
    query: &SearchQuery,
) -> Result<Vec<SearchHit>, Failure> {
    store.search(query).await.map_err(|e| match e {
        Error::InvalidQuery(e) => invalid_query(e),
        other => Failure::storage("search", other),
    })
}

/// The hits as the JSON array of `--json` and of the MCP tool's `structuredContent`.
pub(crate) fn hits_json(hits: &[SearchHit]) -> Value {
    json!(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, lines: Vec<usize>, snippet: &str) -> SearchHit {
        SearchHit {
            path: MemoryPath::parse(path).unwrap(),
            score: 2.4137,
            lines,
            snippet: snippet.to_owned(),
        }
    }

    #[test]
    fn json_has_exactly_the_documented_fields() {
        let value = hits_json(&[hit("/memories/a.md", vec![3], "s")]);
        assert_eq!(
            value,
            json!([{"path": "/memories/a.md", "score": 2.4137, "lines": [3], "snippet": "s"}])
        );
    }

    #[test]
    fn bad_queries_and_limits_are_usage_errors() {
        let root = MemoryPath::root();
        for (text, limit) in [("\"open", 10), ("", 10), ("ok", 0), ("ok", 101)] {
            let e = build_query(text, root.clone(), limit).unwrap_err();
            assert_eq!(invalid_query(e).exit, Exit::Usage);
        }
        assert!(build_query("ok", root, 100).is_ok());
    }
}
