//! Connections that never finish: real sockets on 127.0.0.1, short configured timeouts, and
//! bounds on every wait so a regression fails instead of hanging.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use memory_server::ServerConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use common::start;

/// Longest any test waits for something that should happen.
const BOUND: Duration = Duration::from_secs(10);

/// Timeouts long enough that nothing closes on its own during a test.
fn patient() -> ServerConfig {
    ServerConfig::default()
        .header_read_timeout(Duration::from_secs(120))
        .idle_timeout(Duration::from_secs(120))
        .body_timeout(Duration::from_secs(120))
        .shutdown_timeout(Duration::from_secs(120))
}

/// Reads until the server closes the connection; what it sent, and when it closed.
async fn until_closed(stream: &mut TcpStream) -> (Vec<u8>, Instant) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(BOUND, stream.read(&mut buf)).await {
            Err(_) => panic!("the server kept the connection open for {BOUND:?}"),
            Ok(Ok(0)) | Ok(Err(_)) => return (out, Instant::now()),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
}

async fn health(addr: SocketAddr) -> u16 {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let (out, _) = until_closed(&mut s).await;
    let text = String::from_utf8_lossy(&out);
    text.split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_header_timeout() {
    let timeout = Duration::from_millis(300);
    let srv = start(patient().header_read_timeout(timeout)).await;
    let opened = Instant::now();
    let mut silent = TcpStream::connect(srv.addr).await.unwrap();
    let (_, closed) = until_closed(&mut silent).await;
    assert!(closed - opened >= timeout - Duration::from_millis(50));
    assert_eq!(health(srv.addr).await, 200);
}

#[tokio::test]
async fn unfinished_headers_are_closed_after_the_header_timeout() {
    let timeout = Duration::from_millis(300);
    let srv = start(patient().header_read_timeout(timeout)).await;
    let opened = Instant::now();
    let mut slow = TcpStream::connect(srv.addr).await.unwrap();
    slow.write_all(b"GET /v1/memory_stores HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // A header line now and then does not extend the deadline.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(80)).await;
        let _ = slow.write_all(b"x-filler: 1\r\n").await;
    }
    let (out, closed) = until_closed(&mut slow).await;
    assert!(closed - opened >= timeout - Duration::from_millis(50));
    // No request was ever answered on it.
    assert!(!String::from_utf8_lossy(&out).contains("200 OK"));
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let timeout = Duration::from_millis(300);
    let srv = start(patient().header_read_timeout(timeout)).await;
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let answered = Instant::now();
    let (out, closed) = until_closed(&mut s).await;
    assert!(String::from_utf8_lossy(&out).starts_with("HTTP/1.1 200"));
    assert!(closed - answered >= timeout - Duration::from_millis(100));
}

#[tokio::test]
async fn a_stalled_body_is_closed_after_the_idle_timeout() {
    let srv = start(patient().idle_timeout(Duration::from_millis(300))).await;
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    s.write_all(
        b"POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\"",
    )
    .await
    .unwrap();
    let started = Instant::now();
    let (_, closed) = until_closed(&mut s).await;
    assert!(closed - started >= Duration::from_millis(250));
    assert_eq!(health(srv.addr).await, 200);
}

#[tokio::test]
async fn a_trickling_body_gets_408_after_the_body_timeout() {
    let srv = start(
        patient()
            .idle_timeout(Duration::from_secs(5))
            .body_timeout(Duration::from_millis(400)),
    )
    .await;
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    s.write_all(
        b"POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n",
    )
    .await
    .unwrap();
    let writer = tokio::spawn(async move {
        for _ in 0..40 {
            if s.write_all(b" ").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        s
    });
    let mut s = tokio::time::timeout(BOUND, writer).await.unwrap().unwrap();
    let (out, _) = until_closed(&mut s).await;
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("did not arrive within"), "{text}");
}

#[tokio::test]
async fn shutdown_finishes_within_its_deadline_whatever_the_clients_do() {
    let deadline = Duration::from_millis(500);
    let mut srv = start(patient().shutdown_timeout(deadline)).await;
    // One says nothing, one stops inside its headers, one inside its body, one is idle
    // after a response.
    let silent = TcpStream::connect(srv.addr).await.unwrap();
    let mut half_head = TcpStream::connect(srv.addr).await.unwrap();
    half_head
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut half_body = TcpStream::connect(srv.addr).await.unwrap();
    half_body
        .write_all(b"POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{")
        .await
        .unwrap();
    let mut kept = TcpStream::connect(srv.addr).await.unwrap();
    kept.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = kept.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    tokio::time::sleep(Duration::from_millis(100)).await;

    let asked = Instant::now();
    srv.stop.take().unwrap().send(()).unwrap();
    let result = tokio::time::timeout(BOUND, &mut srv.task)
        .await
        .expect("serve returned after the shutdown deadline");
    result.unwrap().unwrap();
    assert!(asked.elapsed() < deadline + Duration::from_secs(2));
    // Every connection is closed.
    for mut s in [silent, half_head, half_body, kept] {
        until_closed(&mut s).await;
    }
    assert!(TcpStream::connect(srv.addr).await.is_err());
}

#[tokio::test]
async fn many_idle_connections_do_not_stop_serving() {
    let srv = start(
        patient()
            .max_connections(Some(4))
            .header_read_timeout(Duration::from_millis(300)),
    )
    .await;
    let mut idle = Vec::new();
    for _ in 0..24 {
        idle.push(TcpStream::connect(srv.addr).await.unwrap());
    }
    // The bound holds them in the backlog; the header timeout frees the slots; the real
    // request gets its answer in bounded time.
    let asked = Instant::now();
    let status = tokio::time::timeout(BOUND, health(srv.addr)).await.unwrap();
    assert_eq!(status, 200);
    assert!(asked.elapsed() < BOUND);
    drop(idle);
    assert_eq!(health(srv.addr).await, 200);
}

#[tokio::test]
async fn the_connection_bound_is_kept() {
    let srv = start(patient().max_connections(Some(2))).await;
    let _a = TcpStream::connect(srv.addr).await.unwrap();
    let _b = TcpStream::connect(srv.addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A third is not served while two are open...
    let third = tokio::spawn(health(srv.addr));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!third.is_finished());
    // ...and is once one of them closes.
    drop(_a);
    let status = tokio::time::timeout(BOUND, third).await.unwrap().unwrap();
    assert_eq!(status, 200);
}
