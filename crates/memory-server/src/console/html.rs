//! The pieces every page is built of, as maud templates: text is escaped by the template
//! engine wherever it goes (element text and attribute values alike), so nothing here or in
//! the pages escapes by hand. [`q`] and [`seg`] percent-encode URL parts (a URL's own
//! encoding, escaped again as an attribute by the template).

use std::fmt::Write as _;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};

/// `markup` as an HTML response with `status`.
pub(crate) fn respond(status: StatusCode, markup: Markup) -> Response {
    let mut r = (status, markup.into_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    r
}

/// `text` percent-encoded for a query-string component (everything but unreserved
/// characters and `/`).
pub(crate) fn q(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// `text` percent-encoded for one path segment of a console URL (ids are plain, but a URL a
/// person typed may hold anything).
pub(crate) fn seg(text: &str) -> String {
    q(text).replace('/', "%2F")
}

/// A byte count for people: `512 B`, `1.5 kB`, `2.3 MB` (1 kB = 1,000 bytes).
pub(crate) fn size(bytes: u64) -> String {
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let kb = bytes as f64 / 1000.0;
    if kb < 1000.0 {
        return format!("{kb:.1} kB");
    }
    format!("{:.1} MB", kb / 1000.0)
}

/// `n` with thousands separators: `2,000`.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `memory` or `memories`, after `n`.
pub(crate) fn memories(n: u64) -> &'static str {
    if n == 1 { "memory" } else { "memories" }
}

/// A time for people: how long ago, relative to now ("3 minutes ago", "yesterday"), in a
/// `<time>` element whose `datetime` is the exact RFC 3339 time and whose `title` (shown on
/// hover) is the exact time to the second, in UTC.
pub(crate) fn when(t: memory_store::Timestamp) -> Markup {
    when_at(t, memory_store::Timestamp::now())
}

fn when_at(t: memory_store::Timestamp, now: memory_store::Timestamp) -> Markup {
    let exact = t.to_string();
    let seconds = exact.split('.').next().unwrap_or(&exact).replace('T', " ");
    let ago = ago(
        now.as_micros().saturating_sub(t.as_micros()) / 1_000_000,
        &exact,
    );
    html! { time datetime=(exact) title={ (seconds) " UTC" } { (ago) } }
}

/// `secs` seconds ago in words; beyond four weeks, the date of `exact` (RFC 3339).
fn ago(secs: i64, exact: &str) -> String {
    let plural = |n: i64, unit: &str| {
        if n == 1 {
            format!("1 {unit} ago")
        } else {
            format!("{n} {unit}s ago")
        }
    };
    match secs {
        s if s < 10 => "just now".to_owned(),
        s if s < 60 => plural(s, "second"),
        s if s < 3600 => plural(s / 60, "minute"),
        s if s < 86_400 => plural(s / 3600, "hour"),
        s if s < 2 * 86_400 => "yesterday".to_owned(),
        s if s < 28 * 86_400 => plural(s / 86_400, "day"),
        _ => format!("on {}", exact.split('T').next().unwrap_or(exact)),
    }
}

/// A breadcrumb trail from the stores page to `href` (a console address: a store, a memory,
/// a version or a history under it), ending with `here` (the current page, not a link).
pub(crate) fn crumbs(href: Option<&str>, here: &str) -> Markup {
    let rest = href
        .and_then(|h| h.strip_prefix("/console/stores/"))
        .map(|rest| rest.split(['?', '#']).next().unwrap_or(""));
    let parts: Vec<&str> = rest
        .map(|rest| rest.split('/').filter(|p| !p.is_empty()).collect())
        .unwrap_or_default();
    html! {
        nav class="crumbs" aria-label="Breadcrumb" {
            a href="/console/" { "Stores" }
            @if let Some(store) = parts.first() {
                @let store_href = format!("/console/stores/{store}");
                " › " a href=(store_href) { "Store " code { (store) } }
                @match parts.get(1..) {
                    Some(["memories", memory, ..]) => {
                        " › " a href={ (store_href) "/memories/" (memory) } { "Memory " code { (memory) } }
                    }
                    Some(["versions", version, ..]) => {
                        " › " a href={ (store_href) "/versions/" (version) } { "Version " code { (version) } }
                    }
                    _ => {}
                }
            }
            " › " span aria-current="page" { (here) }
        }
    }
}

/// What the page header shows about who is acting.
#[derive(Debug, Clone)]
pub(crate) enum Who {
    /// Nobody is signed in (only the sign-in form is shown).
    Nobody,
    /// The server has no API keys: loopback only, no actor recorded.
    Open,
    /// Signed in with the key of this id, in this workspace (`None`: the default one).
    Key(String, Option<String>),
}

/// The body of a result page (imported, refused, not found): a breadcrumb to `href`, the
/// heading `title`, then `content`.
pub(crate) fn outcome(href: Option<&str>, title: &str, content: Markup) -> Markup {
    html! {
        (crumbs(href, title))
        h1 { (title) }
        (content)
    }
}

/// A whole page: the layout around `body` (which holds the page's heading).
pub(crate) fn page(title: &str, who: &Who, csrf: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · memory console" }
                link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml";
                link rel="stylesheet" href="/console/assets/console.css";
                script src="/console/assets/console.js" defer {}
            }
            body {
                header class="top" {
                    a class="home" href="/console/" { "Memory stores" }
                    @match who {
                        Who::Nobody => {}
                        Who::Open => {
                            p class="who" role="note" {
                                "This server runs without API keys (loopback only): the console works without signing in, and writes record no actor."
                            }
                        }
                        Who::Key(id, workspace) => {
                            p class="who" {
                                "Signed in with API key " code { (id) } " "
                                span class="workspace" {
                                    "in workspace: "
                                    @match workspace {
                                        Some(w) => { code { (w) } }
                                        None => { "the default workspace" }
                                    }
                                }
                            }
                            form method="post" action="/console/sign-out" class="inline" {
                                (csrf_field(csrf))
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// The hidden CSRF field every state-changing form carries.
pub(crate) fn csrf_field(csrf: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(csrf); }
}

/// A message box: `kind` is `error` or `notice` (a literal of this crate).
pub(crate) fn message(kind: &'static str, headline: &str, detail: Option<&str>) -> Markup {
    let role = if kind == "error" { "alert" } else { "status" };
    html! {
        div class=(kind) role=(role) {
            p { strong { (headline) } }
            @if let Some(detail) = detail {
                p { (detail) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_by_the_templates() {
        let m = message("error", "<img src=x onerror=alert(1)> & \"", Some("<b>"));
        assert!(
            m.0.contains("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;"),
            "{}",
            m.0
        );
        assert!(m.0.contains("<p>&lt;b&gt;</p>"), "{}", m.0);
        let c = crumbs(Some("/console/stores/a\"b"), "x");
        assert!(c.0.contains("href=\"/console/stores/a&quot;b\""), "{}", c.0);
    }

    #[test]
    fn query_components_are_encoded() {
        assert_eq!(q("/a b/&x=1"), "/a%20b/%26x%3D1");
        assert_eq!(seg("a/b"), "a%2Fb");
    }

    #[test]
    fn times_for_people() {
        let now: memory_store::Timestamp = "2026-12-03T12:00:00Z".parse().unwrap();
        let at = |s: &str| when_at(s.parse().unwrap(), now).into_string();
        assert_eq!(
            at("2026-12-03T11:57:00Z"),
            "<time datetime=\"2026-12-03T11:57:00.000000Z\" title=\"2026-12-03 11:57:00 UTC\">3 minutes ago</time>"
        );
        assert!(at("2026-12-03T11:59:58Z").contains(">just now<"));
        assert!(
            at("2026-12-03T12:00:05Z").contains(">just now<"),
            "a clock ahead"
        );
        assert!(at("2026-12-03T11:00:00Z").contains(">1 hour ago<"));
        assert!(at("2026-12-02T10:00:00Z").contains(">yesterday<"));
        assert!(at("2026-11-28T12:00:00Z").contains(">5 days ago<"));
        assert!(at("2026-01-02T12:00:00Z").contains(">on 2026-01-02<"));
    }

    #[test]
    fn crumbs_follow_the_address() {
        let c = crumbs(
            Some("/console/stores/memstore_1/memories/mem_2?x=1"),
            "Refused",
        )
        .into_string();
        assert!(c.contains("<a href=\"/console/\">Stores</a>"), "{c}");
        assert!(
            c.contains("<a href=\"/console/stores/memstore_1\">Store <code>memstore_1</code></a>"),
            "{c}"
        );
        assert!(c.contains("<a href=\"/console/stores/memstore_1/memories/mem_2\">Memory <code>mem_2</code></a>"), "{c}");
        assert!(
            c.ends_with("<span aria-current=\"page\">Refused</span></nav>"),
            "{c}"
        );
        assert!(!crumbs(None, "Not found").0.contains("Store "));
    }

    #[test]
    fn result_pages_have_a_heading_after_their_breadcrumb() {
        let p = page(
            "Refused",
            &Who::Nobody,
            "",
            outcome(None, "Refused", html! { p { "no" } }),
        )
        .0;
        assert!(
            p.contains("<main><nav class=\"crumbs\"")
                && p.contains("</nav><h1>Refused</h1><p>no</p></main>"),
            "{p}"
        );
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(count(2000), "2,000");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(size(12), "12 B");
        assert_eq!(size(1500), "1.5 kB");
        assert_eq!(size(102_400), "102.4 kB");
    }
}
