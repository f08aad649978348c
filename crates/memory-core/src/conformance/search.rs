//! Search-level conformance checks: one `pub async fn` per behaviour of [`Storage::search`].
//!
//! [`storage::run_all`](super::storage::run_all) runs them all after the storage checks, so
//! every backend's conformance test covers its search, native or provided. Each check expects
//! an empty store and leaves what it wrote behind (the runner clears the store in between).

use std::collections::BTreeSet;
use std::sync::Arc;

use super::Capabilities;
use super::storage::{clear, ok, p, put};
use crate::Storage;
use crate::search::{QueryError, SearchHit, SearchQuery};

fn query(text: &str) -> SearchQuery {
    match SearchQuery::new(text) {
        Ok(q) => q,
        Err(e) => panic!("conformance suite bug: {text:?} does not parse: {e}"),
    }
}

async fn run(storage: &dyn Storage, q: &SearchQuery) -> Vec<SearchHit> {
    let hits = ok(
        storage,
        &format!("search {:?} under {}", q.text(), q.under()),
        storage.search(q).await,
    );
    for pair in hits.windows(2) {
        assert!(
            pair[0].score >= pair[1].score,
            "{storage}: search {:?}: hits must come best first, got {} ({}) before {} ({})",
            q.text(),
            pair[0].path,
            pair[0].score,
            pair[1].path,
            pair[1].score
        );
    }
    hits
}

async fn found(storage: &dyn Storage, text: &str) -> Vec<String> {
    paths(&run(storage, &query(text)).await)
}

async fn found_under(storage: &dyn Storage, text: &str, under: &str) -> BTreeSet<String> {
    let q = query(text).with_under(p(under));
    paths(&run(storage, &q).await).into_iter().collect()
}

fn paths(hits: &[SearchHit]) -> Vec<String> {
    hits.iter().map(|h| h.path.as_str().to_owned()).collect()
}

fn set(paths: &[&str]) -> BTreeSet<String> {
    paths.iter().map(|s| (*s).to_owned()).collect()
}

/// A created file is the top hit of a query of its rare words, among files sharing common
/// ones; its lines and snippet are the shared excerpt's.
pub async fn created_file_is_top_hit_of_its_rare_words(storage: &dyn Storage) {
    for i in 0..12 {
        put(
            storage,
            &format!("/memories/notes/filler-{i:02}.md"),
            format!("# Note {i}\nThe team met about the project plan.\nNothing else to say.\n"),
        )
        .await;
    }
    put(
        storage,
        "/memories/notes/zoo.md",
        "# Note\nThe team met about the project plan.\nA quetzal studies zymurgy here.\n",
    )
    .await;
    let hits = run(storage, &query("quetzal zymurgy")).await;
    assert_eq!(
        paths(&hits),
        ["/memories/notes/zoo.md"],
        "{storage}: search finds the file holding its rare words, and only it"
    );
    assert_eq!(hits[0].lines, [3], "{storage}: hit lines are 1-based");
    assert_eq!(
        hits[0].snippet, "A quetzal studies zymurgy here.",
        "{storage}: the snippet is the line holding the match"
    );
    let top = run(storage, &query("quetzal team")).await;
    assert_eq!(
        paths(&top).first().map(String::as_str),
        Some("/memories/notes/zoo.md"),
        "{storage}: a rare word with a common one still ranks its file first"
    );
    assert!(
        found(storage, "absentword").await.is_empty(),
        "{storage}: a word no file holds finds nothing"
    );
}

/// No word of a query is required: a file holding more of them ranks higher; `+word` is
/// required, `-word` excluded; case does not matter.
pub async fn words_rank_by_how_many_a_file_holds(storage: &dyn Storage) {
    put(storage, "/memories/a.md", "Apples and PEARS").await;
    put(storage, "/memories/b.md", "apples only").await;
    put(storage, "/memories/c.md", "plums").await;
    assert_eq!(
        found(storage, "apples pears").await,
        ["/memories/a.md", "/memories/b.md"],
        "{storage}: any word counts, the file holding both first"
    );
    assert_eq!(
        found(storage, "PEARS").await,
        ["/memories/a.md"],
        "{storage}: case-blind"
    );
    assert_eq!(
        found(storage, "+apples +pears").await,
        ["/memories/a.md"],
        "{storage}: +word is required"
    );
    assert_eq!(
        found(storage, "apples -pears").await,
        ["/memories/b.md"],
        "{storage}: -word is excluded"
    );
    assert_eq!(
        found(storage, "plums -\"apples only\"").await,
        ["/memories/c.md"],
        "{storage}: an excluded phrase"
    );
    assert_eq!(
        SearchQuery::new("-apples").err(),
        Some(QueryError::OnlyExcluded),
        "{storage}"
    );
}

/// Plain words find their inflections (English stems), and a whole question works: its stop
/// words are left out.
pub async fn inflections_and_questions(storage: &dyn Storage) {
    put(
        storage,
        "/memories/s1.md",
        "Melanie: Yeah, I painted that lake sunrise last year!",
    )
    .await;
    put(
        storage,
        "/memories/s2.md",
        "John: I went running by the river.",
    )
    .await;
    put(
        storage,
        "/memories/s3.md",
        "When did the bus come? It did not.",
    )
    .await;
    assert_eq!(
        found(storage, "When did Melanie paint a sunrise?").await,
        ["/memories/s1.md"],
        "{storage}: a question finds the file answering it (paint → painted)"
    );
    assert_eq!(
        found(storage, "run").await,
        ["/memories/s2.md"],
        "{storage}: run → running"
    );
    assert_eq!(
        found(storage, "paintings").await,
        ["/memories/s1.md"],
        "{storage}: paintings → painted"
    );
    assert!(
        found(storage, "\"paint\"").await.is_empty(),
        "{storage}: a quoted word is matched exactly"
    );
    assert_eq!(
        found(storage, "when did").await,
        ["/memories/s3.md"],
        "{storage}: stop words count when they are all the query has"
    );
}

/// Every backend ranks alike: the hits (paths, scores, lines, snippets) of a few queries are
/// the ones the in-memory store gives for the same files.
pub async fn ranks_as_every_store_does(storage: &dyn Storage) {
    let files = [
        (
            "/memories/people/melanie.md",
            "# Melanie\nPaints landscapes. Her sunrise painting won a prize.\nLikes hiking.",
        ),
        (
            "/memories/log/2023-05.md",
            "Melanie: I painted the lake at sunrise.\nCaroline: lovely!\nMelanie: next time mountains.",
        ),
        (
            "/memories/log/2023-06.md",
            "Caroline adopted a puppy.\nMelanie: what breed?\nCaroline: a beagle. We hiked with it.",
        ),
        (
            "/memories/log/2023-07.md",
            "Melanie ran a marathon in July.\nShe was running for charity.",
        ),
        (
            "/memories/ideas.md",
            "Sunrise over the mountains, painted in oils: a future project for the studio.",
        ),
        ("/memories/misc.md", "nothing about any of it"),
    ];
    let reference = crate::InMemoryStorage::new();
    for (path, text) in files {
        put(storage, path, text).await;
        put(&reference, path, text).await;
    }
    for text in [
        "When did Melanie paint a sunrise?",
        "melanie paint sunrise",
        "What breed is Caroline's puppy?",
        "hike",
        "\"painted the lake\" sunrise",
        "mount* -oils",
        "+melanie running",
    ] {
        let q = query(text);
        let want = run(&reference, &q).await;
        let got = run(storage, &q).await;
        assert!(
            !want.is_empty(),
            "conformance suite bug: {text:?} finds nothing"
        );
        assert_eq!(
            paths(&got),
            paths(&want),
            "{storage}: {text:?}: the same hits in the same order"
        );
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g.score - w.score).abs() <= 1e-9 * w.score.abs().max(1.0),
                "{storage}: {text:?}: {} scores {} here and {} in memory",
                g.path,
                g.score,
                w.score
            );
            assert_eq!(
                (&g.lines, &g.snippet),
                (&w.lines, &w.snippet),
                "{storage}: {text:?}: {}",
                g.path
            );
        }
    }
}

/// A quoted phrase only matches files holding its words next to each other, in order.
pub async fn phrase_matches_exact_phrase_only(storage: &dyn Storage) {
    put(storage, "/memories/a.md", "We saw the blue whale sing.").await;
    put(storage, "/memories/b.md", "The whale was blue, not grey.").await;
    put(storage, "/memories/c.md", "blue\nwhale on two lines").await;
    assert_eq!(
        found_under(storage, "\"blue whale\"", "/memories").await,
        set(&["/memories/a.md", "/memories/c.md"]),
        "{storage}: a phrase needs its words adjacent and in order (a line break is a space)"
    );
    assert_eq!(
        found_under(storage, "blue whale", "/memories").await,
        set(&["/memories/a.md", "/memories/b.md", "/memories/c.md"]),
        "{storage}: unquoted, the words may be anywhere"
    );
    assert!(
        found(storage, "\"whale blue sing\"").await.is_empty(),
        "{storage}: a phrase in another order finds nothing"
    );
}

/// A trailing `*` matches every word that begins with the prefix, and only at a word's start.
pub async fn prefix_matches_word_starts(storage: &dyn Storage) {
    put(storage, "/memories/a.md", "deployment checklist").await;
    put(storage, "/memories/b.md", "deploy now").await;
    put(storage, "/memories/c.md", "undeploy it").await;
    put(storage, "/memories/d.md", "dep only").await;
    assert_eq!(
        found_under(storage, "deploy*", "/memories").await,
        set(&["/memories/a.md", "/memories/b.md"]),
        "{storage}: prefix query"
    );
    assert_eq!(
        found(storage, "\"deploy\"").await,
        ["/memories/b.md"],
        "{storage}: quoted, without a star, whole words only"
    );
}

/// Unicode text is found whatever its case and diacritics; scripts without spaces are
/// searched by their runs of letters.
pub async fn unicode_text(storage: &dyn Storage) {
    put(storage, "/memories/food.md", "Crème brûlée at the Café Zoë").await;
    put(storage, "/memories/trip.md", "東京 meeting notes").await;
    put(storage, "/memories/greek.md", "Σοφία wrote this").await;
    for (q, want) in [
        ("brûlée", "/memories/food.md"),
        ("creme", "/memories/food.md"),
        ("CAFÉ", "/memories/food.md"),
        ("zoe", "/memories/food.md"),
        ("東京", "/memories/trip.md"),
        ("σοφία", "/memories/greek.md"),
    ] {
        assert_eq!(
            found(storage, q).await,
            [want],
            "{storage}: unicode query {q:?}"
        );
    }
}

/// `under` keeps hits at or below a folder, by whole segments.
pub async fn under_filters_whole_segments(storage: &dyn Storage) {
    put(storage, "/memories/a/x.md", "marmot").await;
    put(storage, "/memories/a/deep/y.md", "marmot").await;
    put(storage, "/memories/ab/z.md", "marmot").await;
    put(storage, "/memories/top.md", "marmot").await;
    assert_eq!(
        found_under(storage, "marmot", "/memories/a").await,
        set(&["/memories/a/x.md", "/memories/a/deep/y.md"]),
        "{storage}: /memories/a never matches /memories/ab"
    );
    assert_eq!(
        found_under(storage, "marmot", "/memories/ab").await,
        set(&["/memories/ab/z.md"]),
        "{storage}"
    );
    assert!(
        found_under(storage, "marmot", "/memories/nowhere")
            .await
            .is_empty(),
        "{storage}: a missing folder finds nothing"
    );
    assert_eq!(
        found_under(storage, "marmot", "/memories").await.len(),
        4,
        "{storage}: /memories finds everything"
    );
}

/// Hidden files and folders and `node_modules` are skipped, as `view` skips them, unless the
/// search is inside one by name.
pub async fn hidden_and_node_modules_skipped(storage: &dyn Storage) {
    put(storage, "/memories/visible.md", "ocelot").await;
    put(storage, "/memories/.hidden.md", "ocelot").await;
    put(storage, "/memories/.git/config", "ocelot").await;
    put(
        storage,
        "/memories/web/node_modules/pkg/readme.md",
        "ocelot",
    )
    .await;
    put(storage, "/memories/web/.cache/x", "ocelot").await;
    assert_eq!(
        found(storage, "ocelot").await,
        ["/memories/visible.md"],
        "{storage}: hidden names and node_modules are not searched"
    );
    assert_eq!(
        found_under(storage, "ocelot", "/memories/.git").await,
        set(&["/memories/.git/config"]),
        "{storage}: a hidden folder asked for by name is searched"
    );
}

/// An overwritten file's old words are gone, a deleted file is gone, a renamed file is found
/// at its new path only.
pub async fn changes_are_seen_by_the_next_search(storage: &dyn Storage) {
    put(storage, "/memories/a.md", "first aardvark").await;
    assert_eq!(
        found(storage, "aardvark").await,
        ["/memories/a.md"],
        "{storage}"
    );
    put(storage, "/memories/a.md", "then bandicoot").await;
    assert!(
        found(storage, "aardvark").await.is_empty(),
        "{storage}: an overwritten file's old words are gone"
    );
    assert_eq!(
        found(storage, "bandicoot").await,
        ["/memories/a.md"],
        "{storage}"
    );
    ok(
        storage,
        "rename a file",
        storage
            .rename(&p("/memories/a.md"), &p("/memories/moved/b.md"))
            .await,
    );
    assert_eq!(
        found(storage, "bandicoot").await,
        ["/memories/moved/b.md"],
        "{storage}: a renamed file is found at its new path"
    );
    put(storage, "/memories/moved/c.md", "capybara").await;
    ok(
        storage,
        "rename a folder",
        storage
            .rename(&p("/memories/moved"), &p("/memories/archive"))
            .await,
    );
    assert_eq!(
        found_under(storage, "bandicoot", "/memories").await,
        set(&["/memories/archive/b.md"]),
        "{storage}: a renamed folder's files are found below its new path"
    );
    ok(
        storage,
        "delete a file",
        storage.delete(&p("/memories/archive/b.md")).await,
    );
    assert!(
        found(storage, "bandicoot").await.is_empty(),
        "{storage}: a deleted file is gone"
    );
    ok(
        storage,
        "delete a folder",
        storage.delete(&p("/memories/archive")).await,
    );
    assert!(
        found(storage, "capybara").await.is_empty(),
        "{storage}: a deleted folder's files are gone"
    );
}

/// Query syntax of search engines (`OR`, `NOT`, `NEAR(...)`, `col:word`, `^`, `&`, `|`)
/// is plain text here: it neither fails nor changes the meaning; a query that cannot be
/// parsed is a typed error before any store sees it.
pub async fn engine_syntax_is_plain_text(storage: &dyn Storage) {
    put(
        storage,
        "/memories/a.md",
        "cats or dogs, and not near title: foo",
    )
    .await;
    put(storage, "/memories/b.md", "cats only").await;
    for q in [
        "OR",
        "NOT cats",
        "near",
        "title:foo",
        "NEAR (cats dogs)",
        "^cats dogs",
        "cats & dogs | title",
        "'cats' (dogs) {not} [or]",
        "cats AND dogs",
        "\"or dogs\"",
    ] {
        assert_eq!(
            found(storage, q).await.first().map(String::as_str),
            Some("/memories/a.md"),
            "{storage}: {q:?} searches for its words"
        );
    }
    for (q, want) in [
        ("\"open", QueryError::UnbalancedQuote),
        ("", QueryError::Empty),
        ("*", QueryError::MisplacedStar),
    ] {
        assert_eq!(SearchQuery::new(q).err(), Some(want), "{storage}: {q:?}");
    }
}

/// At most `limit` hits, best first.
pub async fn limit_respected(storage: &dyn Storage) {
    for i in 0..7 {
        put(storage, &format!("/memories/l{i}.md"), "lemur").await;
    }
    assert_eq!(found(storage, "lemur").await.len(), 7, "{storage}");
    let q = query("lemur")
        .with_limit(3)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run(storage, &q).await.len(), 3, "{storage}: limit 3");
    let q = query("lemur")
        .with_limit(1)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run(storage, &q).await.len(), 1, "{storage}: limit 1");
}

/// A file where the words occur more often ranks above one where they occur once; scores are
/// positive and ordered best first.
pub async fn ranking_best_first(storage: &dyn Storage) {
    put(storage, "/memories/many.md", "kiwi kiwi kiwi kiwi harvest").await;
    put(storage, "/memories/once.md", "kiwi harvest was late").await;
    put(storage, "/memories/none.md", "apple harvest was late").await;
    put(storage, "/memories/other.md", "nothing to see here").await;
    let hits = run(storage, &query("kiwi")).await;
    assert_eq!(
        paths(&hits),
        ["/memories/many.md", "/memories/once.md"],
        "{storage}: more occurrences rank higher"
    );
    assert!(
        hits.iter().all(|h| h.score > 0.0 && h.score.is_finite()),
        "{storage}: scores are positive: {hits:?}"
    );
    assert_eq!(hits[0].lines, [1], "{storage}");
}

/// Content that is not UTF-8 is not indexed.
pub async fn binary_content_not_indexed(storage: &dyn Storage) {
    let mut bytes = b"\xff\xfe\x00\x01 wombat ".to_vec();
    bytes.extend_from_slice(&[0xc3, 0x28]);
    put(storage, "/memories/blob.bin", bytes).await;
    put(storage, "/memories/text.md", "wombat").await;
    assert_eq!(
        found(storage, "wombat").await,
        ["/memories/text.md"],
        "{storage}: a binary file is not searched"
    );
}

/// Runs every search check on `storage`, which must be empty, clearing it in between.
pub async fn run_all(storage: Arc<dyn Storage>) {
    let caps = storage.capabilities();
    run_all_with(storage, caps).await;
}

/// [`run_all`] with capabilities given by the caller.
pub async fn run_all_with(storage: Arc<dyn Storage>, caps: Capabilities) {
    let s: &dyn Storage = &*storage;
    macro_rules! check {
        ($($name:ident),* $(,)?) => {
            $(
                $name(s).await;
                clear(s).await;
            )*
        };
    }
    check!(
        created_file_is_top_hit_of_its_rare_words,
        words_rank_by_how_many_a_file_holds,
        inflections_and_questions,
        ranks_as_every_store_does,
        phrase_matches_exact_phrase_only,
        prefix_matches_word_starts,
        unicode_text,
        under_filters_whole_segments,
        hidden_and_node_modules_skipped,
        changes_are_seen_by_the_next_search,
        engine_syntax_is_plain_text,
        limit_respected,
        ranking_best_first,
    );
    if caps.binary_files {
        binary_content_not_indexed(s).await;
        clear(s).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::ProvidedDefaults;
    use crate::conformance::faults::Faulty;
    use crate::{InMemoryStorage, Prefixed, ReadOnly, WriteMode};

    #[tokio::test]
    async fn in_memory_search_conforms() {
        run_all(Arc::new(InMemoryStorage::new())).await;
    }

    /// The provided scan conforms too (through `Box`, which forwards).
    #[tokio::test]
    async fn provided_scan_conforms() {
        let boxed: Box<dyn Storage> = Box::new(ProvidedDefaults::new(InMemoryStorage::new()));
        run_all(Arc::new(boxed)).await;
    }

    #[tokio::test]
    async fn prefixed_search_conforms_and_maps_paths() {
        let inner = Arc::new(InMemoryStorage::new());
        let alice = Prefixed::new(Arc::clone(&inner), p("/memories/users/alice"));
        run_all(Arc::new(alice)).await;
        // Files beside the prefix are never found through it, and hits carry its paths.
        inner
            .write(
                &p("/memories/users/bob/x.md"),
                b"heron".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        inner
            .write(
                &p("/memories/users/alice/y.md"),
                b"heron".to_vec(),
                WriteMode::Create,
            )
            .await
            .unwrap();
        let alice = Prefixed::new(Arc::clone(&inner), p("/memories/users/alice"));
        assert_eq!(found(&alice, "heron").await, ["/memories/y.md"]);
        let read_only = ReadOnly::new(alice);
        assert_eq!(found(&read_only, "heron").await, ["/memories/y.md"]);
    }

    #[tokio::test]
    #[should_panic(expected = "hidden names and node_modules are not searched")]
    async fn suite_catches_a_search_that_finds_hidden_files() {
        let sees_hidden = Faulty::new(InMemoryStorage::new()).on_search(|inner, q| {
            Box::pin(async move {
                // Every matching file, hidden ones included.
                let mut hits = Vec::new();
                for meta in inner.list(q.under()).await? {
                    let text = String::from_utf8(inner.read(&meta.path).await?.contents)
                        .unwrap_or_default();
                    hits.extend(SearchHit::from_text(meta.path, 1.0, &text, q.parsed()));
                }
                Ok(hits)
            })
        });
        hidden_and_node_modules_skipped(&sees_hidden).await;
    }
}
