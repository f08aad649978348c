//! `memory serve`: the memory-stores HTTP API (memory-server) over a SQLite file.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use memory_server::{ApiKeys, ServerConfig};
use memory_store::{MemoryStores, SqlitePersistence, StoreOptions};

pub(crate) const SERVE_LONG_ABOUT: &str = "\
Serve memory stores over HTTP with the hosted memory-stores API.

The official SDKs work against it by changing only their base URL, e.g. in Python:

  client = anthropic.Anthropic(base_url=\"http://127.0.0.1:8080\", api_key=\"...\")
  store = client.beta.memory_stores.create(name=\"Prefs\")

Endpoints: /v1/memory_stores[/{id}[/archive]], /v1/memory_stores/{id}/memories[/{id}],
/v1/memory_stores/{id}/memory_versions[/{id}[/redact]], and GET /health.

Without --api-keys every request is accepted, no actor is recorded, and only a loopback
address may be used. With it, each request needs `x-api-key: <secret>` (or
`Authorization: Bearer <secret>`) from the file, one `apikey_<id> <secret>` per line, and
every write is recorded as that key's api_actor.

The first line on standard output is `memory serve: listening on http://ADDR` (with the real
port when --listen asks for port 0). SIGTERM or Ctrl-C stops it after the requests in flight.";

/// Arguments of `memory serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// The SQLite database holding the stores (created if missing).
    #[arg(
        long,
        env = "MEMORY_STORES_DB",
        default_value = "./memory-stores.db",
        value_name = "PATH"
    )]
    db: PathBuf,

    /// The address to listen on (port 0 picks a free port).
    #[arg(
        long,
        env = "MEMORY_LISTEN",
        default_value = "127.0.0.1:8080",
        value_name = "ADDR"
    )]
    listen: SocketAddr,

    /// A file of accepted API keys, one `apikey_<id> <secret>` per line.
    #[arg(long, env = "MEMORY_API_KEYS", value_name = "FILE")]
    api_keys: Option<PathBuf>,

    /// Most memories one store may hold.
    #[arg(long, default_value_t = memory_store::DEFAULT_MAX_MEMORIES_PER_STORE, value_name = "N")]
    max_memories_per_store: u64,
}

/// Runs the server until SIGTERM or SIGINT. Exit 0 after a clean shutdown, 2 when it cannot
/// start, 1 when serving fails.
pub(crate) async fn run(args: ServeArgs) -> ExitCode {
    let keys = match &args.api_keys {
        None => None,
        Some(file) => match ApiKeys::from_file(file) {
            Ok(keys) => Some(keys),
            Err(e) => {
                eprintln!("memory serve: {}: {e}", file.display());
                return ExitCode::from(2);
            }
        },
    };
    let config = ServerConfig::default().api_keys(keys);
    if let Err(e) = config.check_listen(args.listen) {
        eprintln!("memory serve: {e}");
        return ExitCode::from(2);
    }
    let db = args.db.clone();
    let opened = tokio::task::spawn_blocking(move || SqlitePersistence::open(db)).await;
    let persistence = match opened {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            eprintln!("memory serve: cannot open {}: {e}", args.db.display());
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("memory serve: {e}");
            return ExitCode::from(2);
        }
    };
    let options = StoreOptions::default().max_memories_per_store(args.max_memories_per_store);
    let engine = MemoryStores::with_options(persistence, options);
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("memory serve: cannot listen on {}: {e}", args.listen);
            return ExitCode::from(2);
        }
    };
    let addr = listener.local_addr().unwrap_or(args.listen);
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "memory serve: listening on http://{addr}");
        let _ = out.flush();
    }
    tracing::info!(%addr, db = %args.db.display(), auth = config.api_keys.is_some(), "serving memory stores");
    match memory_server::serve(listener, engine, config, memory_server::shutdown_signal()).await {
        Ok(()) => {
            eprintln!("memory serve: stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("memory serve: {e}");
            ExitCode::FAILURE
        }
    }
}
