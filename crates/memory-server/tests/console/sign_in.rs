//! Signing in: nothing but the form before, a wrong key refused in words, no keys on loopback,
//! the workspace signed in to, floods and the per-client limit.

use super::*;

#[tokio::test]
async fn nothing_but_the_sign_in_form_before_signing_in() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let made = api(
        srv.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "Very Private Store"})),
    )
    .await
    .json();
    let id = made["id"].as_str().unwrap();
    let mut b = Browser::new(srv.addr);
    let page = b.get("/console/").await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("<label for=\"key\">API key</label>"),
        "{}",
        page.body
    );
    assert!(page.body.contains(">Sign in</button>"));
    assert!(!page.body.contains("Very Private Store"));
    assert!(!page.body.contains(id));
    // An anonymous visitor is given (and holds) nothing: no session, no cookie.
    assert_eq!(page.header("set-cookie"), None);
    let deep = b.get(&format!("/console/stores/{id}")).await;
    assert_eq!(deep.status, 401);
    assert!(!deep.body.contains("Very Private Store"));
    assert!(deep.body.contains("API key"));
    // Exporting, creating, archiving: all refused without signing in.
    assert_eq!(
        b.get(&format!("/console/stores/{id}/export")).await.status,
        401
    );
    let csrf = page.field("csrf");
    let archive = b
        .post(
            &format!("/console/stores/{id}/archive"),
            &[("csrf", &csrf), ("confirm", "1")],
        )
        .await;
    assert_eq!(archive.status, 401);
    let store = api(srv.addr, "GET", &format!("/v1/memory_stores/{id}"), None).await;
    assert!(store.json()["archived_at"].is_null());
    // Signed in, the store is listed; signed out, it is gone again.
    let signed = b.sign_in(SECRET).await;
    assert_eq!(signed.status, 303);
    let cookie = signed.header("set-cookie").unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let list = b.get("/console/").await;
    assert!(list.body.contains("Very Private Store"));
    assert!(list.body.contains(KEY_ID));
    let csrf = list.field("csrf");
    let out = b.post("/console/sign-out", &[("csrf", &csrf)]).await;
    assert_eq!(out.status, 303);
    let after = b.get(out.header("location").unwrap()).await;
    assert!(!after.body.contains("Very Private Store"));
    assert!(after.body.contains("You are signed out."));
}

#[tokio::test]
async fn a_wrong_key_is_refused_in_words() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    api(
        srv.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "Hidden"})),
    )
    .await;
    let mut b = Browser::new(srv.addr);
    let r = b.sign_in("sk-not-a-key").await;
    assert_eq!(r.status, 401);
    assert!(
        r.body
            .contains("That API key is not accepted by this server."),
        "{}",
        r.body
    );
    assert!(!r.body.contains("Hidden"));
    assert!(!r.body.contains('{'), "no JSON: {}", r.body);
    // The form shown again works: its token is a valid one.
    let again = r.field("csrf");
    let r = b
        .post("/console/sign-in", &[("csrf", &again), ("key", SECRET)])
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let mut b = Browser::new(srv.addr);
    let page = b.get("/console/").await;
    assert!(page.body.contains(">Sign in</button>"));
    assert!(!page.body.contains("Hidden"));
}

#[tokio::test]
async fn without_keys_it_works_on_loopback_without_signing_in() {
    let srv = start(ServerConfig::default()).await;
    let mut b = Browser::new(srv.addr);
    let page = b.get("/console/").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("without API keys"), "{}", page.body);
    assert!(!page.body.contains("Sign in"));
    let csrf = page.field("csrf");
    let r = b
        .post("/console/stores", &[("csrf", &csrf), ("name", "Zebra")])
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    // Without a token it is refused all the same.
    let r = b.post("/console/stores", &[("name", "Zebra")]).await;
    assert_eq!(r.status, 403);
    // A name that is not loopback (a rebound DNS name) is refused.
    let mut rebound = Browser::new(srv.addr);
    rebound.host = format!("attacker.example:{}", srv.addr.port());
    let r = rebound.get("/console/").await;
    assert_eq!(r.status, 403);
    assert!(!r.body.contains("Zebra"));
    let mut local = Browser::new(srv.addr);
    local.host = format!("localhost:{}", srv.addr.port());
    assert_eq!(local.get("/console/").await.status, 200);
}

/// A console user signs in to a workspace: the header names it, and the console shows and
/// opens only that workspace's stores (another workspace's store is not found).
#[tokio::test]
async fn the_console_acts_in_the_workspace_it_signed_in_to() {
    let s = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let made = api(
        s.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "Default store"})),
    )
    .await;
    let default_id = made.json()["id"].as_str().unwrap().to_owned();

    let mut b = Browser::new(s.addr);
    let page = b.get("/console/").await;
    let csrf = page.field("csrf");
    let r = b
        .post(
            "/console/sign-in",
            &[
                ("csrf", &csrf),
                ("key", SECRET),
                ("workspace", "wrkspc_01Team"),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let index = b.get("/console/").await;
    assert!(
        index
            .body
            .contains("in workspace: <code>wrkspc_01Team</code>"),
        "{}",
        index.body
    );
    assert!(!index.body.contains("Default store"), "{}", index.body);
    let csrf = index.field("csrf");
    let r = b
        .post(
            "/console/stores",
            &[("csrf", &csrf), ("name", "Team store")],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let other = b.get(&format!("/console/stores/{default_id}")).await;
    assert_eq!(other.status, 404, "{}", other.body);
    // Through the API, the store is the workspace's: absent without the header.
    let listed = api(s.addr, "GET", "/v1/memory_stores", None).await.json();
    let names: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Default store"]);

    // Signed in without a workspace: the default one.
    let mut d = Browser::new(s.addr);
    d.sign_in(SECRET).await;
    let index = d.get("/console/").await;
    assert!(
        index.body.contains("in workspace: the default workspace"),
        "{}",
        index.body
    );
    assert!(index.body.contains("Default store") && !index.body.contains("Team store"));
    // A malformed workspace id signs nobody in.
    let mut m = Browser::new(s.addr);
    let csrf = m.get("/console/").await.field("csrf");
    let r = m
        .post(
            "/console/sign-in",
            &[("csrf", &csrf), ("key", SECRET), ("workspace", "no spaces")],
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
}

/// Anonymous visitors hold nothing on the server: 10,200 unauthenticated GETs of the sign-in
/// page (past the 10,000 sessions the server keeps) make no session, so a console user's
/// session survives them, and the sign-in form they were given still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn anonymous_floods_sign_nobody_out() {
    let s = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let mut user = Browser::new(s.addr);
    let anonymous_form = Browser::new(s.addr).get("/console/").await.field("csrf");
    assert_eq!(user.sign_in(SECRET).await.status, 303);
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let addr = s.addr;
        tasks.push(tokio::spawn(async move {
            for _ in 0..(10_200 / 16 + 1) {
                let r = Browser::new(addr).get("/console/").await;
                assert_eq!(r.status, 200);
                assert_eq!(r.header("set-cookie"), None);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let list = user.get("/console/").await;
    assert!(
        list.body.contains(KEY_ID),
        "signed out by the flood: {}",
        list.body
    );
    let csrf = list.field("csrf");
    let made = user
        .post(
            "/console/stores",
            &[("csrf", &csrf), ("name", "After the flood")],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    // The stateless token of a form served before the flood still signs in.
    let mut late = Browser::new(s.addr);
    let r = late
        .post(
            "/console/sign-in",
            &[("csrf", &anonymous_form), ("key", SECRET)],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    // A forged token does not.
    let r = Browser::new(s.addr)
        .post("/console/sign-in", &[("csrf", "1.00"), ("key", SECRET)])
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
}

/// Sign-in attempts are limited per client address: past 10 a minute, 429 with
/// `Retry-After`, even with the right key; a signed-in session is not affected.
#[tokio::test]
async fn sign_in_attempts_beyond_the_limit_get_429() {
    let s = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let mut user = Browser::new(s.addr);
    assert_eq!(user.sign_in(SECRET).await.status, 303);
    let csrf = Browser::new(s.addr).get("/console/").await.field("csrf");
    for i in 1..10 {
        let r = Browser::new(s.addr)
            .post("/console/sign-in", &[("csrf", &csrf), ("key", "wrong")])
            .await;
        assert_eq!(r.status, 401, "attempt {i}: {}", r.body);
    }
    for key in ["wrong", SECRET] {
        let r = Browser::new(s.addr)
            .post("/console/sign-in", &[("csrf", &csrf), ("key", key)])
            .await;
        assert_eq!(r.status, 429, "{}", r.body);
        assert!(
            r.header("retry-after")
                .is_some_and(|v| v.parse::<u64>().is_ok_and(|n| (1..=60).contains(&n)))
        );
        assert!(r.body.contains("Too many sign-in attempts"), "{}", r.body);
        assert_eq!(r.header("set-cookie"), None);
    }
    assert!(user.get("/console/").await.body.contains(KEY_ID));
}
