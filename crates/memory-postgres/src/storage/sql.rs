//! The SQL statements of [`PostgresStorage`](super::PostgresStorage), for one schema.

use crate::schema::quoted;

/// The statements, with the schema name filled in. `$1` is always the root.
pub(super) struct Sql {
    pub(super) read: String,
    pub(super) stat: String,
    pub(super) file_ancestor: String,
    pub(super) has_below: String,
    pub(super) lock_root: String,
    pub(super) insert_root: String,
    pub(super) create: String,
    pub(super) upsert: String,
    pub(super) replace: String,
    pub(super) compare_and_swap: String,
    pub(super) delete_file: String,
    pub(super) delete_below: String,
    pub(super) list: String,
    pub(super) count: String,
    pub(super) sources: String,
    pub(super) move_files: String,
    pub(super) search_scope: String,
    pub(super) search: String,
    pub(super) unindexed: String,
    pub(super) any_unindexed: String,
    pub(super) index_words: String,
    pub(super) set_modified: String,
}

impl Sql {
    pub(super) fn new(schema: &str) -> Self {
        let s = quoted(schema);
        let next = format!("nextval('{s}.versions')");
        Sql {
            read: format!("SELECT contents, version FROM {s}.files WHERE root = $1 AND path = $2"),
            // One statement, so the file and the directory test see one snapshot.
            stat: format!(
                "SELECT f.size, f.modified,
                        EXISTS (SELECT 1 FROM {s}.files b WHERE b.root = $1 AND b.path > $3 AND b.path < $4)
                 FROM (SELECT 1) AS one LEFT JOIN {s}.files f ON f.root = $1 AND f.path = $2"
            ),
            // Ancestors are prefixes, so in byte order the outermost comes first.
            file_ancestor: format!(
                "SELECT path FROM {s}.files WHERE root = $1 AND path = ANY ($2::text[]) ORDER BY path LIMIT 1"
            ),
            has_below: format!(
                "SELECT EXISTS (SELECT 1 FROM {s}.files WHERE root = $1 AND path > $2 AND path < $3)"
            ),
            // `NO KEY UPDATE`: the root's writers still run one at a time, and the foreign key
            // check of a history row (`FOR KEY SHARE` on the root's row), which an edit makes
            // while holding its file's row lock, never waits for them (a rename holding this
            // lock and waiting for that file's row would otherwise deadlock with it).
            lock_root: format!("SELECT 1 FROM {s}.roots WHERE root = $1 FOR NO KEY UPDATE"),
            insert_root: format!(
                "INSERT INTO {s}.roots (root) VALUES ($1) ON CONFLICT (root) DO NOTHING"
            ),
            create: format!(
                "INSERT INTO {s}.files (root, path, contents, size, version, modified, words)
                 VALUES ($1, $2, $3, $4, {next}, now(), $5::text::tsvector)
                 ON CONFLICT (root, path) DO NOTHING RETURNING version"
            ),
            upsert: format!(
                "INSERT INTO {s}.files (root, path, contents, size, version, modified, words)
                 VALUES ($1, $2, $3, $4, {next}, now(), $5::text::tsvector)
                 ON CONFLICT (root, path) DO UPDATE SET contents = excluded.contents,
                     size = excluded.size, version = excluded.version, modified = excluded.modified,
                     words = excluded.words
                 RETURNING version"
            ),
            replace: format!(
                "UPDATE {s}.files SET contents = $3, size = $4, version = {next}, modified = now(),
                     words = $5::text::tsvector
                 WHERE root = $1 AND path = $2 RETURNING version"
            ),
            compare_and_swap: format!(
                "UPDATE {s}.files SET contents = $3, size = $4, version = {next}, modified = now(),
                     words = $6::text::tsvector
                 WHERE root = $1 AND path = $2 AND version = $5 RETURNING version"
            ),
            delete_file: format!("DELETE FROM {s}.files WHERE root = $1 AND path = $2"),
            delete_below: format!(
                "DELETE FROM {s}.files WHERE root = $1 AND path > $2 AND path < $3"
            ),
            list: format!(
                "SELECT path, size, modified FROM {s}.files
                 WHERE root = $1 AND path > $2 AND path < $3 ORDER BY path"
            ),
            count: format!("SELECT count(*) FROM {s}.files WHERE root = $1"),
            // Locks the rows it returns: they cannot change before the rename moves them.
            sources: format!(
                "SELECT path FROM {s}.files WHERE root = $1 AND (path = $2 OR (path > $3 AND path < $4))
                 ORDER BY path FOR UPDATE"
            ),
            move_files: format!(
                "UPDATE {s}.files AS f SET path = m.target, version = {next}
                 FROM unnest($2::text[], $3::text[]) AS m (source, target)
                 WHERE f.root = $1 AND f.path = m.source"
            ),
            // The files a search covers, counted for the ranking's idf.
            search_scope: format!(
                "SELECT path FROM {s}.files WHERE root = $1 AND path > $2 AND path < $3"
            ),
            // The candidates; memory-core's Ranker then checks and ranks each.
            search: format!(
                "SELECT path, contents FROM {s}.files
                 WHERE root = $1 AND path > $2 AND path < $3 AND words @@ $4::text::tsquery"
            ),
            unindexed: format!(
                "SELECT path, contents, version FROM {s}.files WHERE root = $1 AND words IS NULL"
            ),
            any_unindexed: format!(
                "SELECT EXISTS (SELECT 1 FROM {s}.files WHERE root = $1 AND words IS NULL)"
            ),
            // Only the version read: a write in between wrote its own words.
            index_words: format!(
                "UPDATE {s}.files SET words = $4::text::tsvector
                 WHERE root = $1 AND path = $2 AND version = $3 AND words IS NULL"
            ),
            set_modified: format!(
                "UPDATE {s}.files SET modified = $3 WHERE root = $1 AND path = $2"
            ),
        }
    }
}
