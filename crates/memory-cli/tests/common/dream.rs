//! `memory dream` against the fake Messages API.

use std::process::{Command, Output};
use std::time::Duration;

use memory_runner::testing::FakeApi;

use super::MEMORY;

/// `memory dream ARGS` against `api`, without the caller's store, key or credential variables;
/// fails the test if it runs longer than two minutes.
pub async fn memory_dream(api: &FakeApi, args: &[&str]) -> Output {
    let mut cmd = Command::new(MEMORY);
    cmd.arg("dream")
        .args(args)
        .env_remove("MEMORY_STORE")
        .env_remove("MEMORY_ENCRYPTION_KEY_FILE")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env("ANTHROPIC_API_KEY", "sk-cli-test")
        .env("ANTHROPIC_BASE_URL", api.url())
        .env("RUST_LOG", "warn");
    let child = tokio::task::spawn_blocking(move || cmd.output());
    tokio::time::timeout(Duration::from_secs(120), child)
        .await
        .expect("memory dream finished in time")
        .expect("join")
        .expect("start memory")
}
