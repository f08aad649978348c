//! Building HTML safely: every piece of text that is not a literal of this crate goes
//! through [`esc`] (text and attribute values) or [`q`] (a query-string component).

use std::fmt::Write as _;

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references: safe as element
/// text and as a quoted attribute value.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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

/// A time for people: how long ago, relative to now ("3 minutes ago", "yesterday"), in a
/// `<time>` element whose `datetime` is the exact RFC 3339 time and whose `title` (shown on
/// hover) is the exact time to the second, in UTC.
pub(crate) fn when(t: memory_store::Timestamp) -> String {
    when_at(t, memory_store::Timestamp::now())
}

fn when_at(t: memory_store::Timestamp, now: memory_store::Timestamp) -> String {
    let exact = t.to_string();
    let seconds = exact.split('.').next().unwrap_or(&exact).replace('T', " ");
    format!(
        "<time datetime=\"{}\" title=\"{} UTC\">{}</time>",
        esc(&exact),
        esc(&seconds),
        esc(&ago(
            now.as_micros().saturating_sub(t.as_micros()) / 1_000_000,
            &exact
        ))
    )
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
pub(crate) fn crumbs(href: Option<&str>, here: &str) -> String {
    let mut out = String::from(
        "<nav class=\"crumbs\" aria-label=\"Breadcrumb\"><a href=\"/console/\">Stores</a>",
    );
    if let Some(rest) = href.and_then(|h| h.strip_prefix("/console/stores/")) {
        let rest = rest.split(['?', '#']).next().unwrap_or("");
        let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
        if let Some(store) = parts.first() {
            let store_href = format!("/console/stores/{store}");
            let _ = write!(
                out,
                " › <a href=\"{}\">Store <code>{}</code></a>",
                esc(&store_href),
                esc(store)
            );
            match parts.get(1..) {
                Some(["memories", memory, ..]) => {
                    let _ = write!(
                        out,
                        " › <a href=\"{}/memories/{}\">Memory <code>{}</code></a>",
                        esc(&store_href),
                        esc(memory),
                        esc(memory)
                    );
                }
                Some(["versions", version, ..]) => {
                    let _ = write!(
                        out,
                        " › <a href=\"{}/versions/{}\">Version <code>{}</code></a>",
                        esc(&store_href),
                        esc(version),
                        esc(version)
                    );
                }
                _ => {}
            }
        }
    }
    let _ = write!(
        out,
        " › <span aria-current=\"page\">{}</span></nav>",
        esc(here)
    );
    out
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

/// A whole page: the layout around `body`.
pub(crate) fn page(title: &str, who: &Who, csrf: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 1500);
    out.push_str("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    let _ = write!(out, "<title>{} · memory console</title>", esc(title));
    out.push_str("<link rel=\"icon\" href=\"/console/assets/favicon.svg\" type=\"image/svg+xml\">");
    out.push_str("<link rel=\"stylesheet\" href=\"/console/assets/console.css\">");
    out.push_str("<script src=\"/console/assets/console.js\" defer></script>");
    out.push_str("</head><body><header class=\"top\">");
    out.push_str("<a class=\"home\" href=\"/console/\">Memory stores</a>");
    match who {
        Who::Nobody => {}
        Who::Open => out.push_str(
            "<p class=\"who\" role=\"note\">This server runs without API keys (loopback only): \
             the console works without signing in, and writes record no actor.</p>",
        ),
        Who::Key(id, workspace) => {
            let workspace = match workspace {
                Some(w) => format!("<code>{}</code>", esc(w)),
                None => "the default workspace".to_owned(),
            };
            let _ = write!(
                out,
                "<p class=\"who\">Signed in with API key <code>{}</code> \
                 <span class=\"workspace\">in workspace: {workspace}</span></p>\
                 <form method=\"post\" action=\"/console/sign-out\" class=\"inline\">{}\
                 <button type=\"submit\">Sign out</button></form>",
                esc(id),
                csrf_field(csrf)
            );
        }
    }
    out.push_str("</header><main>");
    // Every page has its heading: pages that do not write one (results, refusals) get the
    // title, after their breadcrumb.
    if body.contains("<h1") {
        out.push_str(body);
    } else if let Some(end) = body
        .starts_with("<nav class=\"crumbs\"")
        .then(|| body.find("</nav>"))
        .flatten()
    {
        let end = end + "</nav>".len();
        out.push_str(&body[..end]);
        let _ = write!(out, "<h1>{}</h1>", esc(title));
        out.push_str(&body[end..]);
    } else {
        let _ = write!(out, "<h1>{}</h1>", esc(title));
        out.push_str(body);
    }
    out.push_str("</main></body></html>\n");
    out
}

/// The hidden CSRF field every state-changing form carries.
pub(crate) fn csrf_field(csrf: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        esc(csrf)
    )
}

/// A message box: `kind` is `error` or `notice` (a literal of this crate).
pub(crate) fn message(kind: &'static str, headline: &str, detail: Option<&str>) -> String {
    let role = if kind == "error" { "alert" } else { "status" };
    let mut out = format!(
        "<div class=\"{kind}\" role=\"{role}\"><p><strong>{}</strong></p>",
        esc(headline)
    );
    if let Some(detail) = detail {
        let _ = write!(out, "<p>{}</p>", esc(detail));
    }
    out.push_str("</div>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("<img src=x onerror=alert(1)> & \"'"),
            "&lt;img src=x onerror=alert(1)&gt; &amp; &quot;&#39;"
        );
    }

    #[test]
    fn query_components_are_encoded() {
        assert_eq!(q("/a b/&x=1"), "/a%20b/%26x%3D1");
        assert_eq!(seg("a/b"), "a%2Fb");
    }

    #[test]
    fn times_for_people() {
        let now: memory_store::Timestamp = "2026-12-03T12:00:00Z".parse().unwrap();
        let at = |s: &str| when_at(s.parse().unwrap(), now);
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
        );
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
        assert!(!crumbs(None, "Not found").contains("Store "));
    }

    #[test]
    fn every_page_has_a_heading() {
        let p = page("Imported", &Who::Nobody, "", "<p>done</p>");
        assert!(p.contains("<main><h1>Imported</h1><p>done</p>"), "{p}");
        let p = page(
            "Refused",
            &Who::Nobody,
            "",
            &(crumbs(None, "Refused") + "<p>no</p>"),
        );
        assert!(p.contains("</nav><h1>Refused</h1><p>no</p>"), "{p}");
        let p = page("X", &Who::Nobody, "", "<h1>Own</h1>");
        assert!(!p.contains("<h1>X</h1>"));
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
