//! `memory serve --db DB` on a free loopback port, and plain HTTP requests to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use super::MEMORY;

/// A running `memory serve`, killed when dropped.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `memory serve --db DB` (no console) on a free loopback port, and its address.
pub fn serve(db: &str) -> (Server, String) {
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
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .trim()
        .strip_prefix("memory serve: listening on http://")
        .unwrap_or_else(|| panic!("memory serve did not start: {first}"))
        .to_owned();
    (Server(child), addr)
}

/// One request with a JSON body, and the JSON body of the answer.
pub fn http(addr: &str, method: &str, path: &str, body: &str) -> Value {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (_, body) = out.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap()
}
