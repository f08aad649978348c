//! The console's actions are the API's: create, edit, rename, delete, archive, versions; and its
//! pages (archived stores, times, result pages).

use super::*;

#[tokio::test]
async fn console_actions_are_the_apis() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let mut b = Browser::new(srv.addr);
    b.sign_in(SECRET).await;
    let csrf = b.csrf().await;
    let r = b
        .post(
            "/console/stores",
            &[("csrf", &csrf), ("name", "Work"), ("description", "d")],
        )
        .await;
    let store_page = r.location();
    let sid = store_page.rsplit('/').next().unwrap().to_owned();
    let r = b
        .post(
            &format!("{store_page}/memories"),
            &[
                ("csrf", &csrf),
                ("path", "/notes/a.md"),
                ("content", "one\r\ntwo\r\n"),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let memory_page = r.location();
    let mid = memory_page.rsplit('/').next().unwrap().to_owned();
    let api_mem = memory_of(srv.addr, &sid, &mid).await;
    assert_eq!(api_mem["content"], "one\ntwo\n", "textarea CRLF becomes LF");
    // Two pages loaded; the first saves, the second's save is stale.
    let first = b.get(&memory_page).await;
    let second = b.get(&memory_page).await;
    let save = |page: &Reply, text: &str| {
        vec![
            ("csrf".to_owned(), csrf.clone()),
            ("content_sha256".to_owned(), page.field("content_sha256")),
            ("version".to_owned(), page.field("version")),
            ("eol".to_owned(), page.field("eol")),
            ("content".to_owned(), text.to_owned()),
        ]
    };
    let f = save(&first, "one\r\ntwo\r\nthree\r\n");
    let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = b.post(&format!("{memory_page}/save"), &f).await;
    assert_eq!(r.status, 303, "{}", r.body);
    let f = save(&second, "mine\r\n");
    let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let stale = b.post(&format!("{memory_page}/save"), &f).await;
    assert_eq!(stale.status, 409);
    assert!(
        stale.body.contains("changed since it was loaded"),
        "{}",
        stale.body
    );
    assert!(stale.body.contains("three") && stale.body.contains("mine"));
    let api_mem = memory_of(srv.addr, &sid, &mid).await;
    assert_eq!(api_mem["content"], "one\ntwo\nthree\n");
    // Versions carry the key's actor.
    let versions = api(
        srv.addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memory_versions?memory_id={mid}"),
        None,
    )
    .await
    .json();
    let data = versions["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    for v in data {
        assert_eq!(
            v["created_by"],
            json!({"type": "api_actor", "api_key_id": KEY_ID})
        );
    }
    let history = b.get(&memory_page).await;
    assert!(history.body.contains(&format!("API key {KEY_ID}")));
    // Redacting the head is refused with the API's reason, in words.
    let head = data[0]["id"].as_str().unwrap();
    let r = b
        .post(
            &format!("{store_page}/versions/{head}/redact"),
            &[("csrf", &csrf), ("confirm", "1")],
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(r.body.contains("cannot be redacted"), "{}", r.body);
    assert!(
        r.body.contains("is the current version of memory"),
        "{}",
        r.body
    );
    // The diff of the two versions.
    let old = data[1]["id"].as_str().unwrap();
    let d = b
        .get(&format!("{memory_page}/diff?from={old}&to=head"))
        .await;
    assert_eq!(d.status, 200);
    assert!(d.body.contains("<span class=\"add\">+ three"), "{}", d.body);
    // Restoring the old version writes a third; redacting the old one works.
    let r = b
        .post(
            &format!("{store_page}/versions/{old}/restore"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(r.status, 303);
    let api_mem = memory_of(srv.addr, &sid, &mid).await;
    assert_eq!(api_mem["content"], "one\ntwo\n");
    let r = b
        .post(
            &format!("{store_page}/versions/{old}/redact"),
            &[("csrf", &csrf), ("confirm", "1")],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let v = api(
        srv.addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memory_versions/{old}"),
        None,
    )
    .await
    .json();
    assert!(
        v["content"].is_null() && v["redacted_at"].is_string(),
        "{v}"
    );
    // Export, then import into a second store.
    let export = b.get(&format!("{store_page}/export")).await;
    assert_eq!(export.status, 200);
    let files = memory_store::archive::parse(export.body.as_bytes()).unwrap();
    assert_eq!(files[0].path.as_str(), "/memories/notes/a.md");
    let r = b
        .post("/console/stores", &[("csrf", &csrf), ("name", "Copy")])
        .await;
    let copy_page = r.location();
    let r = b
        .post(
            &format!("{copy_page}/import"),
            &[("csrf", &csrf), ("archive", &export.body)],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("Imported 1 memory"));
    let again = b
        .post(
            &format!("{copy_page}/import"),
            &[("csrf", &csrf), ("archive", &export.body)],
        )
        .await;
    assert_eq!(again.status, 409);
    assert!(again.body.contains("already exist"));
    let bad = b
        .post(
            &format!("{copy_page}/import"),
            &[("csrf", &csrf), ("archive", "{\"type\":\"header\"}")],
        )
        .await;
    assert_eq!(bad.status, 400);
    assert!(bad.body.contains("The archive is not valid"));
    // Archive (confirmed), then writes are refused in words.
    let no = b
        .post(&format!("{store_page}/archive"), &[("csrf", &csrf)])
        .await;
    assert_eq!(no.status, 400);
    let r = b
        .post(
            &format!("{store_page}/archive"),
            &[("csrf", &csrf), ("confirm", "1")],
        )
        .await;
    assert_eq!(r.status, 303);
    let s = api(srv.addr, "GET", &format!("/v1/memory_stores/{sid}"), None)
        .await
        .json();
    assert!(s["archived_at"].is_string());
    let refused = b
        .post(
            &format!("{store_page}/memories"),
            &[("csrf", &csrf), ("path", "/b.md"), ("content", "x")],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(
        refused.body.contains("This store is archived"),
        "{}",
        refused.body
    );
    assert!(!refused.body.contains("invalid_request_error"));
    // Deleting asks for the name.
    let r = b
        .post(
            &format!("{store_page}/delete"),
            &[("csrf", &csrf), ("confirm_name", "work")],
        )
        .await;
    assert_eq!(r.status, 400);
    let r = b
        .post(
            &format!("{store_page}/delete"),
            &[("csrf", &csrf), ("confirm_name", "Work")],
        )
        .await;
    assert_eq!(r.status, 303);
    let gone = api(srv.addr, "GET", &format!("/v1/memory_stores/{sid}"), None).await;
    assert_eq!(gone.status, 404);
}

#[tokio::test]
async fn rename_and_delete_a_memory() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let sid = new_store(srv.addr, "S").await;
    let m = new_memory(srv.addr, &sid, "/a.md", "x").await;
    api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories"),
        Some(json!({"path": "/b/c.md", "content": "y"})),
    )
    .await;
    let mid = m["id"].as_str().unwrap();
    let mut b = Browser::new(srv.addr);
    b.sign_in(SECRET).await;
    let page = format!("/console/stores/{sid}/memories/{mid}");
    let loaded = b.get(&page).await;
    let csrf = loaded.field("csrf");
    // A rename onto a folder of another memory is refused in words.
    let r = b
        .post(
            &format!("{page}/rename"),
            &[("csrf", &csrf), ("path", "/b")],
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(
        r.body.contains("Another memory is in the way: /b/c.md"),
        "{}",
        r.body
    );
    let r = b
        .post(
            &format!("{page}/rename"),
            &[("csrf", &csrf), ("path", "/d/a.md")],
        )
        .await;
    assert_eq!(r.status, 303);
    let got = memory_of(srv.addr, &sid, mid).await;
    assert_eq!(got["path"], "/d/a.md");
    // The store page shows both folders, each memory a link named with its path.
    let store = b.get(&format!("/console/stores/{sid}")).await;
    assert!(store.body.contains(">/d/a.md</a>"));
    assert!(store.body.contains(">d/</span>") && store.body.contains(">b/</span>"));
    assert!(store.body.contains("Memories: 2 of 2,000"));
    // Deleting needs the box, and is refused when the memory changed since it was shown.
    let sha = loaded.field("content_sha256");
    let r = b
        .post(
            &format!("{page}/delete"),
            &[("csrf", &csrf), ("content_sha256", &sha)],
        )
        .await;
    assert_eq!(r.status, 400);
    api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories/{mid}"),
        Some(json!({"content": "changed"})),
    )
    .await;
    let r = b
        .post(
            &format!("{page}/delete"),
            &[("csrf", &csrf), ("content_sha256", &sha), ("confirm", "1")],
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(r.body.contains("changed since it was loaded"), "{}", r.body);
    let fresh = b.get(&page).await.field("content_sha256");
    let r = b
        .post(
            &format!("{page}/delete"),
            &[
                ("csrf", &csrf),
                ("content_sha256", &fresh),
                ("confirm", "1"),
            ],
        )
        .await;
    assert_eq!(r.status, 303);
    let gone = api(
        srv.addr,
        "GET",
        &format!("/v1/memory_stores/{sid}/memories/{mid}"),
        None,
    )
    .await;
    assert_eq!(gone.status, 404);
    // A deleted memory's page says so in words.
    let r = b.get(&page).await;
    assert_eq!(r.status, 404);
    assert!(r.body.contains("Not found."));
}

/// An archived store's pages offer only what an archived store allows (no create, import,
/// save, rename, restore or archive); times are "… ago" with the exact time on hover; every
/// result page has its heading and a breadcrumb.
#[tokio::test]
async fn archived_pages_times_and_result_pages() {
    let srv = start(ServerConfig::default().api_keys(Some(keys()))).await;
    let made = api(
        srv.addr,
        "POST",
        "/v1/memory_stores",
        Some(json!({"name": "Old"})),
    )
    .await;
    let sid = made.json()["id"].as_str().unwrap().to_owned();
    let m = api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/memories"),
        Some(json!({"path": "/a.md", "content": "one"})),
    )
    .await;
    let mid = m.json()["id"].as_str().unwrap().to_owned();
    let ver = m.json()["memory_version_id"].as_str().unwrap().to_owned();
    let mut b = Browser::new(srv.addr);
    b.sign_in(SECRET).await;
    let store_page = format!("/console/stores/{sid}");
    let memory_page = format!("{store_page}/memories/{mid}");
    let version_page = format!("{store_page}/versions/{ver}");

    let live = b.get(&store_page).await.body;
    for form in ["/memories\"", "/import\"", "/archive\""] {
        assert!(
            live.contains(&format!("action=\"{store_page}{form}")),
            "{form}"
        );
    }
    assert!(live.contains(">just now</time>"), "{live}");
    assert!(
        live.contains(" UTC\">just now</time>"),
        "the exact time on hover: {live}"
    );
    assert!(!live.contains(".000"), "no raw RFC 3339 times: {live}");
    let mem = b.get(&memory_page).await.body;
    assert!(mem.contains(">Save</button>") && mem.contains(">Rename</button>"));
    assert!(
        b.get(&version_page)
            .await
            .body
            .contains("Restore this version")
    );

    api(
        srv.addr,
        "POST",
        &format!("/v1/memory_stores/{sid}/archive"),
        None,
    )
    .await;
    let archived = b.get(&store_page).await.body;
    for form in ["/memories\"", "/import\"", "/archive\""] {
        assert!(
            !archived.contains(&format!("action=\"{store_page}{form}")),
            "{form} offered on an archived store: {archived}"
        );
    }
    assert!(archived.contains(&format!("action=\"{store_page}/delete\"")));
    assert!(
        archived.contains("This store was archived <time"),
        "{archived}"
    );
    let mem = b.get(&memory_page).await.body;
    assert!(
        !mem.contains(">Save</button>") && !mem.contains(">Rename</button>"),
        "{mem}"
    );
    assert!(!mem.contains("<textarea"), "{mem}");
    assert!(mem.contains(">Delete memory</button>"));
    let v = b.get(&version_page).await.body;
    assert!(!v.contains("Restore this version"), "{v}");

    // Result pages: heading and breadcrumb.
    let missing = b.get(&format!("{store_page}/memories/mem_nope")).await;
    assert_eq!(missing.status, 404);
    assert!(
        missing.body.contains("<h1>Not found</h1>"),
        "{}",
        missing.body
    );
    assert!(
        missing.body.contains(&format!(
            "<a href=\"{store_page}\">Store <code>{sid}</code></a>"
        )),
        "{}",
        missing.body
    );
    let nowhere = b.get("/console/no/such/page").await;
    assert!(
        nowhere.body.contains("aria-label=\"Breadcrumb\""),
        "{}",
        nowhere.body
    );
    assert!(nowhere.body.contains("<h1>Not found</h1>"));
    let csrf = b.csrf().await;
    let refused = b
        .post(
            &format!("{store_page}/import"),
            &[("csrf", &csrf), ("archive", "not an archive")],
        )
        .await;
    assert!(
        refused.body.contains("<h1>Refused</h1>"),
        "{}",
        refused.body
    );
    assert!(refused.body.contains("aria-label=\"Breadcrumb\""));
}
