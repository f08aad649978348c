// cargo run -p example-remembering-agent
//! An agent that remembers a user preference in one run and uses it in the next.
//!
//! Needs `ANTHROPIC_API_KEY` (and honours `ANTHROPIC_BASE_URL`). Claude gets the memory tool
//! over the store named by configuration: `AGENT_MEMORY`, any store URL this build opens
//! (default `./agent-memory`, a folder laid out as Anthropic's SDKs do: `/memories/x` is
//! `./agent-memory/memories/x`; or `sqlite:agent-memory.db`, `mem:`, ...). With
//! `AGENT_MEMORY_KEY` naming a key file (64 hex characters), the store is encrypted at rest.
//!
//! - `cargo run -p example-remembering-agent` runs two separate conversations, as two runs of
//!   an app would: in the first the user states a preference, which Claude saves; the second
//!   starts from nothing but the folder, asks a question, and Claude answers in the way the
//!   user asked for, because it read its memory first.
//! - `cargo run -p example-remembering-agent -- "your message"` runs one conversation with
//!   your message; run it twice to see the second use what the first saved.
//!
//! Claude's text goes to standard output, one line per memory command to standard error.

use std::process::ExitCode;

use memory_runner::memory_core::MemoryTool;
use memory_runner::{
    Client, Message, MessagesRequest, Observed, OpenOptions, ToolCall, ToolRunner,
    memory_call_summary,
};

/// The model the example asks.
const MODEL: &str = "claude-sonnet-4-5";

/// The first run: the user states a preference.
const FIRST: &str = "Hi! One thing about me: I always want distances and temperatures in \
                     metric units, and I like answers of one or two sentences. Please remember \
                     that for our future conversations.";

/// The next run: a question whose answer depends on the preference.
const NEXT: &str = "How far is a marathon, and what is a comfortable temperature to run one in?";

const SYSTEM: &str = "You are a helpful assistant with a long-term memory. Before answering, \
                      look in your memory directory for what you know about the user, and \
                      follow their preferences. When the user tells you something worth \
                      keeping, save it there.";

#[tokio::main]
async fn main() -> ExitCode {
    let client = match Client::from_env() {
        Ok(client) => client,
        Err(e) => {
            eprintln!("remembering-agent: {e}");
            return ExitCode::from(2);
        }
    };
    let store_url = std::env::var("AGENT_MEMORY").unwrap_or_else(|_| "./agent-memory".to_owned());
    let mut options = OpenOptions::new();
    if let Ok(key_file) = std::env::var("AGENT_MEMORY_KEY") {
        options = options.with_encryption_key_file(key_file);
    }
    let prompts: Vec<String> = match std::env::args().nth(1) {
        Some(prompt) => vec![prompt],
        None => vec![FIRST.to_owned(), NEXT.to_owned()],
    };
    for (n, prompt) in prompts.iter().enumerate() {
        println!("=== run {} ===\nUser: {prompt}", n + 1);
        if let Err(e) = conversation(&client, &store_url, &options, prompt).await {
            eprintln!("remembering-agent: {e}");
            return ExitCode::FAILURE;
        }
    }
    println!("\nThe memory is in the store {store_url}; run again to see Claude use it.");
    ExitCode::SUCCESS
}

/// One conversation, with nothing carried over from an earlier one but the memory store.
async fn conversation(
    client: &Client,
    store_url: &str,
    options: &OpenOptions,
    prompt: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    // Opened anew each time, as a new process would.
    let store = memory_runner::open_with(store_url, options).await?;
    let memory = Observed::new(MemoryTool::new(store), |call: &ToolCall<'_>| {
        let status = if call.output.is_error { "error" } else { "ok" };
        eprintln!("  [memory] {}: {status}", memory_call_summary(call.input));
    });
    let request = MessagesRequest::new(MODEL, 1024)
        .system(SYSTEM)
        .message(Message::user(prompt));
    let mut run = ToolRunner::new(client.clone(), request)
        .tool(memory)
        .max_iterations(10)
        .run();
    while let Some(reply) = run.next().await {
        let text = reply?.text();
        if !text.trim().is_empty() {
            println!("Claude: {}", text.trim());
        }
    }
    let usage = run.usage();
    eprintln!(
        "  ({} requests, {} input and {} output tokens)",
        run.iterations(),
        usage.input_tokens,
        usage.output_tokens
    );
    Ok(())
}
