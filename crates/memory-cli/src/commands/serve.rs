//! `memory serve`: the memory-stores HTTP API (memory-server) over a SQLite file or a
//! PostgreSQL database.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use memory_server::{ApiKeys, ServerConfig};

use crate::admin::parse_positive_duration;
use memory_store::EngineOptions;

pub(crate) const SERVE_LONG_ABOUT: &str = "\
Serve memory stores over HTTP with the hosted memory-stores API.

--db is a SQLite file (created if missing) or a PostgreSQL database,
postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?schema=NAME&sslmode=...&pool_size=N]
(the tables are created or migrated on start). Several `memory serve` instances may serve one
PostgreSQL database at once, e.g. behind a load balancer: each write is one transaction that
holds its store's row, so preconditions, the memory limit and the path rules hold across them.

The official SDKs work against it by changing only their base URL, e.g. in Python:

  client = anthropic.Anthropic(base_url=\"http://127.0.0.1:8080\", api_key=\"...\")
  store = client.beta.memory_stores.create(name=\"Prefs\")

Endpoints: /v1/memory_stores[/{id}[/archive]], /v1/memory_stores/{id}/memories[/{id}],
/v1/memory_stores/{id}/memory_versions[/{id}[/redact]], and GET /health.

A web console for people is at /console/ (sign in with a key of --api-keys; without keys
it works on loopback without signing in): stores, memories as a folder tree, editing with
preconditions, history, diffs, restore, redaction, import and export. --no-console turns
it off (then /console/ answers 404).

Without --api-keys every request is accepted, no actor is recorded, and only a loopback
address may be used. With it, each request needs `x-api-key: <secret>` (or
`Authorization: Bearer <secret>`) from the file, one `apikey_<id> <secret>` per line, and
every write is recorded as that key's api_actor.

Connections are bounded: one that sends no complete request head within
--header-read-timeout (counted from when it opens and from each response, so it also bounds
idle keep-alive connections), or sends and reads nothing for --idle-timeout, is closed; at
most --max-connections are open at once (by default the descriptor limit less a reserve),
further clients wait in the listen backlog.

The first line on standard output is `memory serve: listening on http://ADDR` (with the real
port when --listen asks for port 0). SIGTERM or Ctrl-C stops it: it stops accepting, lets
the requests in flight finish and exits, at the latest after --shutdown-timeout.";

/// Arguments of `memory serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    db: crate::store_args::DbArgs,

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

    /// Time a connection has to send a complete request head (e.g. 10s, 500ms).
    #[arg(long, default_value = "10s", value_parser = parse_positive_duration, value_name = "DURATION")]
    header_read_timeout: Duration,

    /// Time a connection may send and read nothing while a request is read or answered.
    #[arg(long, default_value = "30s", value_parser = parse_positive_duration, value_name = "DURATION")]
    idle_timeout: Duration,

    /// Most connections open at once (default: the descriptor limit less a reserve).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
    max_connections: Option<u32>,

    /// After SIGTERM, how long requests in flight may take before every connection is closed.
    #[arg(long, default_value = "10s", value_parser = parse_positive_duration, value_name = "DURATION")]
    shutdown_timeout: Duration,

    /// Do not serve the web console (`/console/` answers 404).
    #[arg(long)]
    no_console: bool,
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
    let config = ServerConfig::default()
        .api_keys(keys)
        .header_read_timeout(args.header_read_timeout)
        .idle_timeout(args.idle_timeout)
        .max_connections(args.max_connections.map(|n| n as usize))
        .shutdown_timeout(args.shutdown_timeout)
        .console(!args.no_console);
    if let Err(e) = config.check_listen(args.listen) {
        eprintln!("memory serve: {e}");
        return ExitCode::from(2);
    }
    let options = EngineOptions::default().max_memories_per_store(args.max_memories_per_store);
    let engine = match args.db.open(options).await {
        Ok(engine) => engine,
        Err(e) => {
            eprintln!("memory serve: {e}");
            return ExitCode::from(2);
        }
    };
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
    tracing::info!(%addr, db = %engine.persistence(), auth = config.api_keys.is_some(), "serving memory stores");
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
