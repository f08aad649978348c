//! Cross-site requests: refused, and every form that changes something carries the token.

use super::*;

#[tokio::test]
async fn cross_site_requests_are_refused() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let mut b = Browser::new(srv.addr);
    assert_eq!(b.sign_in(SECRET).await.status, 303);
    let csrf = b.csrf().await;
    let own = format!("http://{}/console/", srv.addr);
    let cases: Vec<(&str, Fields<'_>, Fields<'_>, u16)> = vec![
        ("no token", vec![("name", "A")], vec![], 403),
        (
            "wrong token",
            vec![("csrf", "x".repeat(32).leak()), ("name", "A")],
            vec![],
            403,
        ),
        (
            "foreign origin",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("Origin", "http://evil.example")],
            403,
        ),
        (
            "null origin",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("Origin", "null")],
            403,
        ),
        (
            "same site, another port",
            vec![("csrf", &csrf), ("name", "A")],
            vec![
                ("Origin", "http://127.0.0.1:1"),
                ("Sec-Fetch-Site", "same-site"),
            ],
            403,
        ),
        (
            "no origin, no referer",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("x-no-origin", "")],
            403,
        ),
        (
            "foreign referer",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("x-no-origin", ""), ("Referer", "http://evil.example/page")],
            403,
        ),
        (
            "cross-site fetch",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("Sec-Fetch-Site", "cross-site")],
            403,
        ),
        (
            "text/plain form",
            vec![("csrf", &csrf), ("name", "A")],
            vec![("Content-Type", "text/plain")],
            415,
        ),
    ];
    for (what, fields, extra, status) in &cases {
        let r = b.post_with("/console/stores", fields, extra).await;
        assert_eq!(r.status, *status, "{what}: {}", r.body);
        assert!(r.body.contains("refused"), "{what}: {}", r.body);
    }
    // A token of another session is no good either.
    let mut other = Browser::new(srv.addr);
    assert_eq!(other.sign_in(SECRET).await.status, 303);
    let r = other
        .post("/console/stores", &[("csrf", &csrf), ("name", "A")])
        .await;
    assert_eq!(r.status, 403);
    let stores = api(srv.addr, "GET", "/v1/memory_stores", None).await.json();
    assert_eq!(stores["data"].as_array().unwrap().len(), 0, "{stores}");
    // The same request from the console's own page (Referer only also counts) goes through.
    let ok = b
        .post_with(
            "/console/stores",
            &[("csrf", &csrf), ("name", "A")],
            &[("x-no-origin", ""), ("Referer", &own)],
        )
        .await;
    assert_eq!(ok.status, 303, "{}", ok.body);
    let stores = api(srv.addr, "GET", "/v1/memory_stores", None).await.json();
    assert_eq!(stores["data"][0]["name"], "A");
    // Signing in needs the sign-in page's token too (no login CSRF).
    let mut fresh = Browser::new(srv.addr);
    fresh.get("/console/").await;
    let r = fresh.post("/console/sign-in", &[("key", SECRET)]).await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn every_form_that_changes_something_carries_the_token() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let sid = new_store(srv.addr, "S").await;
    let m = new_memory(srv.addr, &sid, "/a.md", "x").await;
    let (mid, vid) = (
        m["id"].as_str().unwrap(),
        m["memory_version_id"].as_str().unwrap(),
    );
    let mut b = Browser::new(srv.addr);
    let signed_out = b.get("/console/").await;
    b.sign_in(SECRET).await;
    let mut posts = 0;
    for page in [
        signed_out,
        b.get("/console/").await,
        b.get(&format!("/console/stores/{sid}")).await,
        b.get(&format!("/console/stores/{sid}/memories/{mid}"))
            .await,
        b.get(&format!("/console/stores/{sid}/versions/{vid}"))
            .await,
    ] {
        for form in page.body.split("<form").skip(1) {
            let form = &form[..form.find("</form>").unwrap()];
            if form.contains("method=\"post\"") {
                posts += 1;
                assert!(
                    form.contains("name=\"csrf\" value=\"") && !form.contains("value=\"\""),
                    "a POST form without the token: {form}"
                );
            } else {
                assert!(form.contains("method=\"get\""), "{form}");
            }
        }
    }
    // sign-in; sign-out and create store; sign-out, archive, delete, create memory, import;
    // sign-out, save, rename, delete; sign-out, restore, redact (the head).
    assert_eq!(posts, 1 + 2 + 5 + 4 + 3);
}
