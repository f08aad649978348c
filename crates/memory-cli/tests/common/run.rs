//! `memory run` against the fake Messages API.

use std::ffi::OsStr;
use std::process::{Command, Output};
use std::time::Duration;

use memory_runner::testing::FakeApi;

use super::MEMORY;

/// `memory run ARGS` with `api`'s URL and a test key (with no API at all when `api` is
/// `None`), without the caller's store, key, session or Anthropic variables; off the async
/// runtime so the fake keeps serving; fails the test if it runs longer than a minute.
pub async fn memory_run<S: AsRef<OsStr>>(api: Option<&FakeApi>, args: &[S]) -> Output {
    let mut cmd = Command::new(MEMORY);
    cmd.arg("run")
        .args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .env_remove("MEMORY_SESSION_ID")
        .env_remove("MEMORY_STORE_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("RUST_LOG", "warn");
    if let Some(api) = api {
        cmd.env("ANTHROPIC_API_KEY", "sk-cli-test")
            .env("ANTHROPIC_BASE_URL", api.url());
    }
    let child = tokio::task::spawn_blocking(move || cmd.output());
    tokio::time::timeout(Duration::from_secs(60), child)
        .await
        .expect("memory run finished in time")
        .expect("join")
        .expect("start memory")
}
