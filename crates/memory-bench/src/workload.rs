//! Seeded JSON-lines workloads of memory-tool commands, as an agent sends them.
//!
//! The generator keeps a model of the store (every file's lines) so that the commands it
//! emits are the ones a working agent sends: `str_replace` names text that occurs exactly once,
//! `insert_line` is in range, `rename` never overwrites, `create` never hits an existing file.
//! Every command therefore succeeds on every implementation of the tool (this crate's backends
//! and the official SDKs alike), except the deliberate look-ups of missing notes in the agent
//! mix, which fail the same way everywhere. The same seed gives the same bytes on every machine.
//!
//! ```
//! use memory_bench::workload::{Mix, WorkloadSpec, generate};
//!
//! let w = generate(&WorkloadSpec { mix: Mix::Agent, count: 200, seed: 7 });
//! assert_eq!(w.lines.len(), 200);
//! assert_eq!(w.lines, generate(&WorkloadSpec { mix: Mix::Agent, count: 200, seed: 7 }).lines);
//! assert!(w.lines[0].contains("\"command\":\"view\""));
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde_json::{Value, json};

/// Which commands a workload is made of, and how often each comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    /// What an agent does over many sessions: it looks at `/memories` first, reads notes (now
    /// and then a line range), ticks off and rewrites progress lines, appends notes, starts a
    /// new note, archives or deletes an old one, and sometimes looks for a note that is not
    /// there. About half the commands read.
    Agent,
    /// Mostly writes: creates, edits and inserts, with a few renames, deletes and reads.
    WriteHeavy,
    /// Reads alone, on a store seeded beforehand (the workload's `setup` lines, run untimed):
    /// nine file views of ten, and a view of `/memories` every tenth command.
    Views,
}

impl Mix {
    /// Every mix, in the order reports list them.
    pub const ALL: [Mix; 3] = [Mix::Agent, Mix::WriteHeavy, Mix::Views];

    /// The name used on the command line and in file names: `agent`, `write-heavy`.
    pub fn name(self) -> &'static str {
        match self {
            Mix::Agent => "agent",
            Mix::WriteHeavy => "write-heavy",
            Mix::Views => "views",
        }
    }

    /// Relative weights of the operations, in the order of [`Op::ALL`].
    fn weights(self) -> [u32; 8] {
        match self {
            // view_dir, view_file, view_missing, create, str_replace, insert, rename, delete
            Mix::Agent => [12, 36, 2, 10, 20, 14, 3, 3],
            Mix::WriteHeavy => [2, 6, 0, 20, 34, 28, 5, 5],
            // Unused: `generate` writes the views mix's every-tenth pattern itself.
            Mix::Views => [1, 9, 0, 0, 0, 0, 0, 0],
        }
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mix {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mix::ALL
            .into_iter()
            .find(|mix| mix.name() == s)
            .ok_or_else(|| format!("unknown mix `{s}`; expected `agent`, `write-heavy` or `views`"))
    }
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkloadSpec {
    /// The command mix.
    pub mix: Mix,
    /// How many commands (JSON lines).
    pub count: usize,
    /// The seed: the same seed gives the same workload.
    pub seed: u64,
}

/// A generated workload: the JSON lines, what they contain, and the store they leave behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// Lines to run before the timed ones, untimed, in the same store (the views mix's seed
    /// files); empty for the other mixes. Not counted in `stats`.
    pub setup: Vec<String>,
    /// One memory-tool input object per line, without the `\n`.
    pub lines: Vec<String>,
    /// Counts and sizes.
    pub stats: Stats,
    /// Every file the store holds after the last command, with its content.
    pub final_files: BTreeMap<String, String>,
}

impl Workload {
    /// The lines joined, each ending in `\n`: what a runner reads on standard input.
    pub fn to_jsonl(&self) -> String {
        jsonl(&self.lines)
    }

    /// The setup lines joined the same way (empty when the mix has no setup).
    pub fn setup_jsonl(&self) -> String {
        jsonl(&self.setup)
    }
}

fn jsonl(lines: &[String]) -> String {
    let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// What a workload is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Commands per command name (`view`, `create`, ...).
    pub commands: BTreeMap<&'static str, usize>,
    /// Commands that are expected to fail (views of notes that do not exist).
    pub expected_errors: usize,
    /// Commands that change the store (`create`, `str_replace`, `insert`, `rename`, `delete`):
    /// each is one durable operation on a store that syncs its writes.
    pub durable_ops: usize,
    /// Commands that write a file's content (`create`, `str_replace`, `insert`).
    pub content_writes: usize,
    /// The sum of the sizes of the files those commands leave behind, in bytes.
    pub content_bytes_written: u64,
}

impl Stats {
    /// The mean size of a written file, in bytes (0 when nothing is written).
    pub fn mean_write_size(&self) -> u64 {
        self.content_bytes_written
            .checked_div(self.content_writes as u64)
            .unwrap_or(0)
    }

    /// The stats as a JSON object (for `bench/compare.sh`).
    pub fn to_json(&self) -> Value {
        json!({
            "commands": self.commands,
            "expected_errors": self.expected_errors,
            "durable_ops": self.durable_ops,
            "content_writes": self.content_writes,
            "content_bytes_written": self.content_bytes_written,
            "mean_write_size": self.mean_write_size(),
        })
    }
}

/// Generates a workload.
pub fn generate(spec: &WorkloadSpec) -> Workload {
    let mut g = Generator {
        rng: Rng::new(spec.seed),
        files: BTreeMap::new(),
        next_id: 1,
        stats: Stats::default(),
    };
    let weights = spec.mix.weights();
    let mut setup = Vec::new();
    if spec.mix == Mix::Views {
        while g.files.len() < VIEWS_SEED_FILES {
            setup.push(g.command(Op::Create).to_string());
        }
        g.stats = Stats::default();
    }
    let mut lines = Vec::with_capacity(spec.count);
    while lines.len() < spec.count {
        // An agent starts every session by looking at its memory directory.
        let op = if spec.mix == Mix::Views {
            if lines.len() % 10 == 9 {
                Op::ViewRoot
            } else {
                Op::ViewFile
            }
        } else if lines.is_empty() || (spec.mix == Mix::Agent && g.rng.below(30) == 0) {
            Op::ViewDir
        } else {
            Op::ALL[g.rng.weighted(&weights)]
        };
        let command = g.command(op);
        let name = command["command"].as_str().unwrap_or("?");
        let name = COMMAND_NAMES
            .into_iter()
            .find(|n| *n == name)
            .unwrap_or("?");
        *g.stats.commands.entry(name).or_default() += 1;
        lines.push(command.to_string());
    }
    let final_files = g
        .files
        .iter()
        .map(|(path, body)| (path.clone(), body.content()))
        .collect();
    Workload {
        setup,
        lines,
        stats: g.stats,
        final_files,
    }
}

const COMMAND_NAMES: [&str; 6] = [
    "view",
    "create",
    "str_replace",
    "insert",
    "rename",
    "delete",
];

/// Files beyond this count make the generator delete rather than create.
const MAX_FILES: usize = 80;
/// Files the views mix's setup creates (below [`MAX_FILES`], so each setup line is a create).
const VIEWS_SEED_FILES: usize = 60;
/// Files with more lines than this are not inserted into any more.
const MAX_LINES: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    ViewDir,
    /// A view of `/memories` itself (the views mix's every tenth command).
    ViewRoot,
    ViewFile,
    ViewMissing,
    Create,
    StrReplace,
    Insert,
    Rename,
    Delete,
}

impl Op {
    const ALL: [Op; 8] = [
        Op::ViewDir,
        Op::ViewFile,
        Op::ViewMissing,
        Op::Create,
        Op::StrReplace,
        Op::Insert,
        Op::Rename,
        Op::Delete,
    ];
}

/// A note: a heading, then lines that each carry a unique `(#id)` tag, so any one of them is
/// a valid `old_str`.
#[derive(Debug, Clone)]
struct Note {
    heading: String,
    lines: Vec<String>,
}

impl Note {
    fn content(&self) -> String {
        let mut out = String::new();
        out.push_str(&self.heading);
        out.push('\n');
        for line in &self.lines {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// Lines as the tool counts them: the heading and the body.
    fn line_count(&self) -> usize {
        1 + self.lines.len()
    }
}

struct Generator {
    rng: Rng,
    files: BTreeMap<String, Note>,
    next_id: u64,
    stats: Stats,
}

const DIRS: [&str; 6] = [
    "/memories",
    "/memories/user",
    "/memories/progress",
    "/memories/projects/billing-service",
    "/memories/projects/web-frontend",
    "/memories/decisions",
];
const TOPICS: [&str; 10] = [
    "auth-refactor",
    "flaky-tests",
    "release-checklist",
    "api-design",
    "db-migration",
    "customer-feedback",
    "perf-investigation",
    "onboarding",
    "incident-review",
    "style-preferences",
];
const VERBS: [&str; 10] = [
    "Investigate",
    "Fix",
    "Document",
    "Review",
    "Refactor",
    "Benchmark",
    "Ask the user about",
    "Write tests for",
    "Remove",
    "Confirm",
];
const OBJECTS: [&str; 12] = [
    "the retry logic in the payment client",
    "timezone handling in invoice dates",
    "the login redirect loop on Safari",
    "slow queries on the orders table",
    "the CSV export of monthly reports",
    "error messages shown to end users",
    "the deprecated v1 webhook endpoint",
    "flaky integration test test_refund_partial",
    "the caching layer in front of search",
    "preferred code style (4 spaces, no trailing commas)",
    "the staging deploy pipeline",
    "memory usage of the background worker",
];
const DETAILS: [&str; 8] = [
    "",
    " — blocked on review",
    " — see PR 1432",
    " — user prefers a minimal change",
    " — reproduced locally with seed 42",
    " — root cause is a missing index",
    " — needs a follow-up next session",
    " — discussed on Tuesday, agreed to ship behind a flag",
];

impl Generator {
    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn body_line(&mut self) -> String {
        let id = self.id();
        let verb = *self.rng.pick(&VERBS);
        let object = *self.rng.pick(&OBJECTS);
        let detail = *self.rng.pick(&DETAILS);
        let mark = if self.rng.below(4) == 0 { "x" } else { " " };
        format!("- [{mark}] {verb} {object}{detail} (#{id})")
    }

    fn pick_file(&mut self) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let i = self.rng.below(self.files.len());
        self.files.keys().nth(i).cloned()
    }

    fn record_write(&mut self, path: &str) {
        self.stats.durable_ops += 1;
        self.stats.content_writes += 1;
        self.stats.content_bytes_written += self.files[path].content().len() as u64;
    }

    /// One command; falls back to `create` (or `delete` when the store is full) when the
    /// chosen operation has nothing to work on.
    fn command(&mut self, op: Op) -> Value {
        let op = match op {
            Op::Create if self.files.len() >= MAX_FILES => Op::Delete,
            Op::ViewFile | Op::StrReplace | Op::Insert | Op::Rename | Op::Delete
                if self.files.is_empty() =>
            {
                Op::Create
            }
            op => op,
        };
        match op {
            Op::ViewDir => self.view_dir(),
            Op::ViewRoot => json!({"command": "view", "path": "/memories"}),
            Op::ViewFile => self.view_file(),
            Op::ViewMissing => {
                self.stats.expected_errors += 1;
                let id = self.id();
                json!({"command": "view", "path": format!("/memories/progress/session-{id}.md")})
            }
            Op::Create => self.create(),
            Op::StrReplace => self.str_replace(),
            Op::Insert => self.insert(),
            Op::Rename => self.rename(),
            Op::Delete => self.delete(),
        }
    }

    fn view_dir(&mut self) -> Value {
        let path = if self.rng.below(10) < 7 {
            "/memories".to_owned()
        } else {
            // A directory that holds at least one file, or the root.
            match self.pick_file() {
                Some(file) => parent(&file).to_owned(),
                None => "/memories".to_owned(),
            }
        };
        json!({"command": "view", "path": path})
    }

    fn view_file(&mut self) -> Value {
        let Some(path) = self.pick_file() else {
            return self.create();
        };
        let n = self.files[&path].line_count();
        if self.rng.below(100) < 15 && n > 2 {
            let start = 1 + self.rng.below(n - 1);
            let end = if self.rng.below(3) == 0 {
                -1
            } else {
                (start + self.rng.below(n - start + 1)).min(n) as i64
            };
            json!({"command": "view", "path": path, "view_range": [start, end]})
        } else {
            json!({"command": "view", "path": path})
        }
    }

    fn create(&mut self) -> Value {
        let dir = *self.rng.pick(&DIRS);
        let topic = *self.rng.pick(&TOPICS);
        let id = self.id();
        let path = format!("{dir}/{topic}-{id}.md");
        let n = 4 + self.rng.below(36);
        let lines = (0..n).map(|_| self.body_line()).collect();
        let note = Note {
            heading: format!("# {topic} (note {id})"),
            lines,
        };
        let text = note.content();
        self.files.insert(path.clone(), note);
        self.record_write(&path);
        json!({"command": "create", "path": path, "file_text": text})
    }

    fn str_replace(&mut self) -> Value {
        let Some(path) = self.pick_file() else {
            return self.create();
        };
        if self.files[&path].lines.is_empty() {
            return self.insert_into(path);
        }
        let i = self.rng.below(self.files[&path].lines.len());
        let old = self.files[&path].lines[i].clone();
        let new_lines: Vec<String> = match self.rng.below(4) {
            // Tick a box, or untick it.
            0 | 1 if old.starts_with("- [ ]") => vec![old.replacen("- [ ]", "- [x]", 1)],
            0 | 1 => vec![old.replacen("- [x]", "- [ ]", 1)],
            // Rewrite the line.
            2 => vec![self.body_line()],
            // Split it into two.
            _ => vec![self.body_line(), self.body_line()],
        };
        let new = new_lines.join("\n");
        let note = self.files.get_mut(&path).expect("picked from the map");
        note.lines.splice(i..=i, new_lines);
        self.record_write(&path);
        json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new})
    }

    fn insert(&mut self) -> Value {
        // Notes that are long already are left alone; a fresh note is started instead.
        for _ in 0..4 {
            let Some(path) = self.pick_file() else {
                break;
            };
            if self.files[&path].lines.len() < MAX_LINES {
                return self.insert_into(path);
            }
        }
        self.create()
    }

    fn insert_into(&mut self, path: String) -> Value {
        let n = self.files[&path].line_count();
        // Agents mostly append.
        let at = if self.rng.below(10) < 6 {
            n
        } else {
            1 + self.rng.below(n)
        };
        let count = 1 + self.rng.below(3);
        let new_lines: Vec<String> = (0..count).map(|_| self.body_line()).collect();
        let text = new_lines.join("\n");
        let note = self.files.get_mut(&path).expect("picked from the map");
        // Line `at` (1-based, the heading is line 1) is body index `at - 1`.
        note.lines.splice(at - 1..at - 1, new_lines);
        self.record_write(&path);
        json!({"command": "insert", "path": path, "insert_line": at, "insert_text": text})
    }

    fn rename(&mut self) -> Value {
        let Some(path) = self.pick_file() else {
            return self.create();
        };
        let name = &path[path.rfind('/').map_or(0, |i| i + 1)..];
        let new_path = if path.starts_with("/memories/archive/") {
            // Bring an archived note back.
            format!("/memories/progress/{name}")
        } else {
            format!("/memories/archive/{name}")
        };
        if self.files.contains_key(&new_path) {
            return self.view_file();
        }
        let note = self.files.remove(&path).expect("picked from the map");
        self.files.insert(new_path.clone(), note);
        self.stats.durable_ops += 1;
        json!({"command": "rename", "old_path": path, "new_path": new_path})
    }

    fn delete(&mut self) -> Value {
        // Archived notes go first.
        let archived = self
            .files
            .keys()
            .find(|p| p.starts_with("/memories/archive/"))
            .cloned();
        let Some(path) = archived.or_else(|| self.pick_file()) else {
            return self.create();
        };
        self.files.remove(&path);
        self.stats.durable_ops += 1;
        json!({"command": "delete", "path": path})
    }
}

fn parent(path: &str) -> &str {
    path.rfind('/').map_or("/memories", |i| &path[..i])
}

/// SplitMix64: tiny, fast and the same everywhere, which is all a workload needs.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`; `n` must not be 0.
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index into `weights`, drawn in proportion to them.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut x = self.below(total as usize) as u32;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory_core::{InMemoryStorage, MemoryHandler, MemoryPath, MemoryTool, Storage};

    fn run(mix: Mix, seed: u64, count: usize) {
        let w = generate(&WorkloadSpec { mix, count, seed });
        assert_eq!(w.lines.len(), count);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let tool = MemoryTool::new(InMemoryStorage::new());
            for line in &w.setup {
                let input: Value = serde_json::from_str(line).unwrap();
                let out = tool.execute(&input).await;
                assert!(!out.is_error, "setup line failed: {line}: {:?}", out.text());
            }
            let mut errors = 0;
            for line in &w.lines {
                let input: Value = serde_json::from_str(line).unwrap();
                let out = tool.execute(&input).await;
                if out.is_error {
                    errors += 1;
                    let text = out.text().unwrap_or_default();
                    assert!(
                        text.starts_with("The path /memories/progress/session-"),
                        "unexpected error for {line}: {text}"
                    );
                }
            }
            assert_eq!(errors, w.stats.expected_errors);
            // The generator's model is the store the commands leave behind, byte for byte.
            let root = MemoryPath::parse("/memories").unwrap();
            let listed = tool.storage().list(&root).await.unwrap();
            let mut actual = BTreeMap::new();
            for meta in listed {
                let file = tool.storage().read(&meta.path).await.unwrap();
                actual.insert(
                    meta.path.as_str().to_owned(),
                    String::from_utf8(file.contents).unwrap(),
                );
            }
            assert_eq!(actual, w.final_files);
        });
    }

    #[test]
    fn agent_mix_runs_as_modelled() {
        run(Mix::Agent, 1, 3000);
    }

    #[test]
    fn write_heavy_mix_runs_as_modelled() {
        run(Mix::WriteHeavy, 2, 3000);
    }

    #[test]
    fn views_mix_reads_a_seeded_store() {
        run(Mix::Views, 3, 1000);
        let w = generate(&WorkloadSpec {
            mix: Mix::Views,
            count: 1000,
            seed: 3,
        });
        assert_eq!(w.setup.len(), VIEWS_SEED_FILES);
        assert_eq!(w.stats.commands.get("view").copied(), Some(1000));
        assert_eq!(w.stats.durable_ops, 0);
        let root_views = w
            .lines
            .iter()
            .filter(|l| l.as_str() == r#"{"command":"view","path":"/memories"}"#)
            .count();
        assert_eq!(root_views, 100);
        let other = generate(&WorkloadSpec {
            mix: Mix::Agent,
            count: 10,
            seed: 3,
        });
        assert!(other.setup.is_empty());
    }

    #[test]
    fn mixes_have_their_shape() {
        let agent = generate(&WorkloadSpec {
            mix: Mix::Agent,
            count: 3000,
            seed: 3,
        });
        let heavy = generate(&WorkloadSpec {
            mix: Mix::WriteHeavy,
            count: 3000,
            seed: 3,
        });
        let views = |w: &Workload| w.stats.commands.get("view").copied().unwrap_or(0);
        assert!(views(&agent) > 1200, "{:?}", agent.stats);
        assert!(views(&heavy) < 400, "{:?}", heavy.stats);
        assert!(heavy.stats.durable_ops > 2500, "{:?}", heavy.stats);
        for w in [&agent, &heavy] {
            for name in COMMAND_NAMES {
                assert!(
                    w.stats.commands.get(name).copied().unwrap_or(0) > 0,
                    "{name}"
                );
            }
            assert!(w.stats.mean_write_size() > 300, "{:?}", w.stats);
        }
    }

    #[test]
    fn seeds_differ() {
        let a = generate(&WorkloadSpec {
            mix: Mix::Agent,
            count: 100,
            seed: 1,
        });
        let b = generate(&WorkloadSpec {
            mix: Mix::Agent,
            count: 100,
            seed: 2,
        });
        assert_ne!(a.lines, b.lines);
    }

    #[test]
    fn mix_names_round_trip() {
        for mix in Mix::ALL {
            assert_eq!(mix.name().parse::<Mix>(), Ok(mix));
        }
        assert!("reads".parse::<Mix>().is_err());
    }
}
