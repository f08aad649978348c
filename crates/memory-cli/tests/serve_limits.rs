//! `memory serve` as a process against clients that never finish: SIGTERM still stops it
//! within its deadline, and silent connections are closed.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

const BIN: &str = common::MEMORY;

/// Starts `memory serve` on a free port; the process and its address.
fn serve(db: &Path, extra: &[&str]) -> (Child, String) {
    let mut server = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(db)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = common::serve::listening_address(&mut server)
        .unwrap_or_else(|first| panic!("unexpected first line {first:?}"));
    (server, addr)
}

/// Waits at most `bound` for the process to exit; its exit code.
fn exit_within(server: &mut Child, bound: Duration) -> Option<i32> {
    let start = Instant::now();
    while start.elapsed() < bound {
        if let Some(status) = server.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = server.kill();
    let _ = server.wait();
    panic!("memory serve did not exit within {bound:?}");
}

fn sigterm(server: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn sigterm_stops_the_server_within_the_deadline_with_unfinished_connections_open() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, addr) = serve(
        &dir.path().join("stores.db"),
        &[
            "--header-read-timeout",
            "2m",
            "--idle-timeout",
            "2m",
            "--shutdown-timeout",
            "500ms",
        ],
    );
    let _silent = TcpStream::connect(&addr).unwrap();
    let mut half = TcpStream::connect(&addr).unwrap();
    half.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut body = TcpStream::connect(&addr).unwrap();
    body.write_all(b"POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{")
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let asked = Instant::now();
    sigterm(&server);
    assert_eq!(exit_within(&mut server, Duration::from_secs(10)), Some(0));
    assert!(asked.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_silent_connection_is_closed_after_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, addr) = serve(
        &dir.path().join("stores.db"),
        &["--header-read-timeout", "300ms"],
    );
    let mut silent = TcpStream::connect(&addr).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let opened = Instant::now();
    let mut buf = Vec::new();
    // EOF (or a reset) well before the 10 s read timeout.
    let _ = silent.read_to_end(&mut buf);
    let waited = opened.elapsed();
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    sigterm(&server);
    assert_eq!(exit_within(&mut server, Duration::from_secs(10)), Some(0));
}

#[test]
fn bad_connection_settings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        ["--header-read-timeout", "soon"],
        ["--idle-timeout", "0s"],
        ["--max-connections", "0"],
    ] {
        let out = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--db"])
            .arg(dir.path().join("x.db"))
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

/// The database `memory serve` creates, and its `-wal`/`-shm`, are private to their owner
/// even under umask 000.
#[cfg(unix)]
#[test]
fn the_served_database_is_0600_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stores.db");
    let mut server = Command::new("sh")
        .arg("-c")
        .arg("umask 000; exec \"$0\" serve --listen 127.0.0.1:0 --db \"$1\"")
        .arg(BIN)
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = common::serve::listening_address(&mut server)
        .unwrap_or_else(|first| panic!("unexpected first line {first:?}"));
    // One write, so the journal files exist.
    let mut s = TcpStream::connect(&addr).unwrap();
    let body = r#"{"name":"private"}"#;
    write!(
        s,
        "POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    for name in ["stores.db", "stores.db-wal", "stores.db-shm"] {
        let mode = std::fs::metadata(dir.path().join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{name} is {:o}", mode & 0o777);
    }
    sigterm(&server);
    assert_eq!(exit_within(&mut server, Duration::from_secs(10)), Some(0));
}
