//! `memory serve --db DB` on a free loopback port, and plain HTTP requests to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::MEMORY;

/// A running `memory serve`, killed when dropped.
#[derive(Debug)]
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `memory serve --db DB` (no console) on a free loopback port, and its address.
pub fn serve(db: &str) -> (Server, String) {
    try_serve(db)
        .unwrap_or_else(|(code, err)| panic!("memory serve did not start (exit {code}): {err}"))
}

/// [`serve`], or, when the server does not start, its exit code and standard error.
pub fn try_serve(db: &str) -> Result<(Server, String), (i32, String)> {
    let mut child = Command::new(MEMORY)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--no-console",
            "--db",
            db,
        ])
        .env_remove("MEMORY_STORES_DB")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Ok(addr) = listening_address(&mut child) {
        // Its log is read and dropped on a thread of its own, so a full pipe never stalls it.
        let mut log = child
            .stderr
            .take()
            .expect("the server's standard error is piped");
        std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
        return Ok((Server(child), addr));
    }
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("the server's standard error is piped")
        .read_to_string(&mut err)
        .unwrap();
    Err((status.code().unwrap_or(-1), err))
}

/// The address `memory serve` prints on its first line of standard output (which must be
/// piped), or that line when it is something else (the server did not start).
pub fn listening_address(server: &mut Child) -> Result<String, String> {
    let mut first = String::new();
    BufReader::new(
        server
            .stdout
            .take()
            .expect("the server's standard output is piped"),
    )
    .read_line(&mut first)
    .unwrap();
    match first
        .trim()
        .strip_prefix("memory serve: listening on http://")
    {
        Some(addr) => Ok(addr.to_owned()),
        None => Err(first),
    }
}

/// One request with a JSON body: the answer's status and body. Panics when no answer comes
/// within 30 seconds or the connection closes without one.
pub fn request(addr: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out)
        .unwrap_or_else(|e| panic!("{method} {path}: no answer: {e}"));
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or_else(|| {
        panic!("{method} {path}: the connection closed without an answer: {out:?}")
    });
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {head}"));
    (status, body.to_owned())
}

/// One request with a JSON body, and the JSON body of the answer (which must be JSON).
pub fn http(addr: &str, method: &str, path: &str, body: &str) -> Value {
    let (_, body) = request(addr, method, path, body);
    serde_json::from_str(&body).unwrap()
}
