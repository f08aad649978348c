//! Processes on one S3 store (moto's server, `MEMORY_TEST_S3_ENDPOINT`): a worker process
//! edits, replaces, renames and deletes files until it is killed (SIGKILL on Unix), several
//! times; after each kill the history keeps its invariants (memory-core's
//! `conformance::processes::history_survives_kill`). This binary runs itself as the worker,
//! so it has its own `main` instead of the test harness.

use memory_s3::testing as common;

use std::sync::Arc;

use memory_core::Storage;
use memory_core::conformance::processes::{self, OpenAt};

const KILLS: usize = 6;

/// A process opens the store at `BUCKET/PREFIX` on the test server.
struct OnS3;

#[memory_core::async_trait]
impl OpenAt for OnS3 {
    async fn open(&self, place: &str) -> Arc<dyn Storage> {
        let endpoint = std::env::var(common::ENDPOINT_VAR)
            .unwrap_or_else(|_| panic!("{} is not set", common::ENDPOINT_VAR));
        let (bucket, prefix) = place.split_once('/').unwrap_or((place, ""));
        let server = common::S3Server {
            endpoint,
            bucket: bucket.to_owned(),
        };
        Arc::new(server.storage(prefix))
    }
}

fn main() {
    processes::run_worker_if_asked(&OnS3);
    let server = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(common::S3Server::from_env("history_survives_kill"));
    let place = format!("{}/killed", server.bucket);
    processes::run_tests(vec![(
        "history_survives_kill",
        Box::new(|| processes::history_survives_kill(&OnS3, &place, KILLS)),
    )]);
}
