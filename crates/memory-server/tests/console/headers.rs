//! What every console answer carries: the security headers, a 404 for no console, memory text
//! shown as text.

use super::*;

#[tokio::test]
async fn every_console_response_carries_the_csp() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let mut b = Browser::new(srv.addr);
    let mut seen = vec![
        ("sign-in page", b.get("/console/").await),
        ("redirect", b.get("/console").await),
        ("css", b.get("/console/assets/console.css").await),
        ("js", b.get("/console/assets/console.js").await),
        ("unknown page", b.get("/console/nothing/here").await),
        (
            "store before sign-in",
            b.get("/console/stores/memstore_x").await,
        ),
        (
            "post without token",
            b.post("/console/stores", &[("name", "x")]).await,
        ),
        ("wrong key", b.sign_in("sk-wrong").await),
    ];
    let signed = b.sign_in(SECRET).await;
    assert_eq!(signed.status, 303);
    seen.push(("sign-in", signed));
    let csrf = b.csrf().await;
    let created = b
        .post("/console/stores", &[("csrf", &csrf), ("name", "Notes")])
        .await;
    let store_page = created.location();
    seen.push(("create store", created));
    seen.push(("store page", b.get(&store_page).await));
    seen.push((
        "missing store",
        b.get("/console/stores/memstore_nope").await,
    ));
    seen.push(("export", b.get(&format!("{store_page}/export")).await));
    seen.push((
        "refused form",
        b.post("/console/stores", &[("csrf", &csrf), ("name", "")])
            .await,
    ));
    seen.push(("wrong method", b.post("/console/", &[]).await));
    for (what, r) in &seen {
        assert_secure_headers(r, what);
    }
    let css = &seen[2].1;
    assert_eq!(css.status, 200);
    assert!(css.header("content-type").unwrap().starts_with("text/css"));
}

#[tokio::test]
async fn no_console_answers_404() {
    for keys in [None, Some(keys())] {
        let srv = start(ServerConfig::default().api_keys(keys).console(false)).await;
        let mut b = Browser::new(srv.addr);
        assert_eq!(b.get("/console/").await.status, 404);
        assert_eq!(b.get("/console/assets/console.js").await.status, 404);
        assert_eq!(
            b.post("/console/sign-in", &[("key", SECRET)]).await.status,
            404
        );
    }
}

#[tokio::test]
async fn memory_text_is_shown_as_text() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let xss = "<img src=x onerror=alert(1)>";
    let store = api(
        srv.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "<script>alert('n')</script>", "description": "\"><b>d</b>"})),
    )
    .await
    .json();
    let sid = store["id"].as_str().unwrap();
    let mem = api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories"),
        Some(json!({"path": "/x\"<i>.md", "content": xss})),
    )
    .await
    .json();
    let mid = mem["id"].as_str().unwrap();
    let mut b = Browser::new(srv.addr);
    b.sign_in(SECRET).await;
    for path in [
        "/console/".to_owned(),
        format!("/console/stores/{sid}"),
        format!("/console/stores/{sid}/memories/{mid}"),
        format!("/console/stores/{sid}/versions"),
        format!(
            "/console/stores/{sid}/versions/{}",
            mem["memory_version_id"].as_str().unwrap()
        ),
    ] {
        let page = b.get(&path).await;
        assert_eq!(page.status, 200, "{path}");
        for raw in ["<img", "<script>alert", "<b>d", "<i>"] {
            assert!(
                !page.body.contains(raw),
                "{path} holds {raw}: {}",
                page.body
            );
        }
    }
    let page = b
        .get(&format!("/console/stores/{sid}/memories/{mid}"))
        .await;
    assert!(page.body.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(page.body.contains("/x&quot;&lt;i&gt;.md"));
}
