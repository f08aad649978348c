//! `memory-bench`: the helpers of `bench/compare.sh`.
//!
//! ```text
//! memory-bench workload --mix agent --count 3000 --seed 1 --out agent.jsonl --stats agent.json --final agent.final.json
//! memory-bench floor --dir DIR --count 1500 --size 1800 [--sync-dir]
//! ```

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use memory_bench::floor::{self, FloorOptions};
use memory_bench::workload::{self, Mix, WorkloadSpec};

/// Helpers of the benchmark comparison (bench/compare.sh).
#[derive(Debug, Parser)]
#[command(name = "memory-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Writes a seeded JSON-lines workload of memory-tool commands.
    Workload {
        /// `agent` (about half reads), `write-heavy`, or `views` (reads alone, on a store its
        /// `--setup` lines seed).
        #[arg(long)]
        mix: Mix,
        /// Number of commands.
        #[arg(long, default_value_t = 3000)]
        count: usize,
        /// The seed; the same seed gives the same workload on every machine.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Where the JSON lines go (standard output if absent).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Where to write the lines to run untimed before the workload (the `views` mix seeds
        /// its store with them; an empty file for the other mixes).
        #[arg(long)]
        setup: Option<PathBuf>,
        /// Where to write the workload's statistics as JSON.
        #[arg(long)]
        stats: Option<PathBuf>,
        /// Where to write, as a JSON object of path to content, the files the workload leaves
        /// in a store that started empty.
        #[arg(long = "final")]
        final_files: Option<PathBuf>,
    },
    /// Does COUNT raw write + fsync + rename operations of SIZE bytes in DIR, and prints the
    /// time they took as JSON.
    Floor {
        /// An existing folder on the disk being measured.
        #[arg(long)]
        dir: PathBuf,
        /// Number of operations.
        #[arg(long)]
        count: usize,
        /// Bytes per write.
        #[arg(long)]
        size: usize,
        /// Also fsync the folder after each rename.
        #[arg(long)]
        sync_dir: bool,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Workload {
            mix,
            count,
            seed,
            out,
            setup,
            stats,
            final_files,
        } => {
            let w = workload::generate(&WorkloadSpec { mix, count, seed });
            let written = match &out {
                Some(path) => std::fs::write(path, w.to_jsonl()),
                None => {
                    use std::io::Write;
                    std::io::stdout().lock().write_all(w.to_jsonl().as_bytes())
                }
            };
            if let Err(e) = written {
                eprintln!("memory-bench: cannot write the workload: {e}");
                return ExitCode::FAILURE;
            }
            if let Some(path) = setup
                && let Err(e) = std::fs::write(&path, w.setup_jsonl())
            {
                eprintln!("memory-bench: cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            let sidecars = [
                (stats, w.stats.to_json()),
                (final_files, serde_json::json!(w.final_files)),
            ];
            for (path, value) in sidecars {
                if let Some(path) = path
                    && let Err(e) = std::fs::write(&path, format!("{value:#}\n"))
                {
                    eprintln!("memory-bench: cannot write {}: {e}", path.display());
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Command::Floor {
            dir,
            count,
            size,
            sync_dir,
        } => {
            let options = FloorOptions {
                count,
                size,
                sync_dir,
            };
            match floor::run(&dir, &options) {
                Ok(report) => {
                    println!(
                        "{}",
                        serde_json::json!({
                            "ops": report.ops,
                            "seconds": report.elapsed.as_secs_f64(),
                        })
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("memory-bench: floor run in {} failed: {e}", dir.display());
                    ExitCode::FAILURE
                }
            }
        }
    }
}
