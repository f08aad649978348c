//! The SQL of the store's history ([`super::history`]), for one schema and one set of
//! [`HistoryOptions`].
//!
//! Every change that keeps history is one statement (or, for a folder's delete and a rename,
//! a few in one transaction): data-modifying CTEs that change the file's row and, from what
//! that change returned, copy the replaced content into the path's previous newest revision
//! (one `UPDATE`), add the new revision (one `INSERT`) and drop what the retention no longer
//! keeps (one `DELETE`, usually of nothing). The sub-statements see one snapshot, so a change
//! that skips the root's lock checks the file's version it read in that snapshot
//! (`f.version = old.version`): a concurrent change of the file makes it match nothing, and
//! the caller runs it again on a fresh snapshot, so the history it appends to is never stale.
//!
//! The CTEs that read the history are `MATERIALIZED`: inlined, a planner that takes a new
//! table for a one-row one (no statistics yet) runs them again for every row of a join.

use memory_core::history::HistoryOptions;

use crate::schema::quoted;

/// The statements, with the schema name and the retention filled in. `$1` is always the root.
pub(super) struct HistorySql {
    /// CAS edit: `$2` path, `$3` contents, `$4` size, `$5` expected version, `$6` words, `$7`
    /// sha256, `$8` session → the new version, if the file was at `$5`.
    pub(super) compare_and_swap: String,
    /// Replace an existing file: `$2` path, `$3` contents, `$4` size, `$5` words, `$6`
    /// sha256, `$7` change, `$8` session → (new version, whether a row was there).
    pub(super) replace: String,
    /// Create: `$2` path, `$3` contents, `$4` size, `$5` words, `$6` sha256, `$7` change,
    /// `$8` session → the version, if the path was free.
    pub(super) create: String,
    /// Delete a file: `$2` path, `$3` session → (deleted, whether a row was there).
    pub(super) delete_file: String,
    /// The files strictly between `$2` and `$3`, locked (a folder's delete, one by one).
    pub(super) files_below: String,
    /// Before a rename: the content of source `$2` into its newest revision.
    pub(super) keep_before_move: String,
    /// A rename's history move: from `$2` to `$3`, renumbered after the target's own.
    pub(super) move_history: String,
    /// After a rename: a `renamed` revision for target `$2`, moved from `$3`, `$4` session.
    pub(super) record_renamed: String,
    /// One path's revisions (`$2`), newest first.
    pub(super) of_path: String,
    /// The revisions of every path strictly between `$2` and `$3`.
    pub(super) below: String,
    /// Revision `$3` of `$2`: change, redacted, content (its own or the current file's).
    pub(super) read: String,
    /// Whether `$2` has revision `$3`.
    pub(super) exists: String,
    /// Redacts revisions `$3` (numbers) of `$2`.
    pub(super) redact: String,
    /// The tables a redaction rewrites so that no dead row keeps the removed bytes.
    pub(super) vacuum: String,
}

/// The columns of one revision, as [`super::history`] reads them.
const COLUMNS: &str = "number, change, at_path, old_path, time, size, sha256, session, redacted";

impl HistorySql {
    pub(super) fn new(schema: &str, options: &HistoryOptions) -> Self {
        let s = quoted(schema);
        let next = format!("nextval('{s}.versions')");
        let cas = format!(
            "WITH old AS (
                 SELECT contents, version, modified FROM {s}.files WHERE root = $1 AND path = $2 AND version = $5
             ), upd AS (
                 UPDATE {s}.files f SET contents = $3, size = $4, version = {next}, modified = now(),
                     words = $6::text::tsvector
                 FROM old WHERE f.root = $1 AND f.path = $2 AND f.version = old.version
                 RETURNING f.path, f.version
             ), chg AS (
                 SELECT upd.path, old.contents AS prev_contents, old.version AS prev_version,
                        old.modified AS prev_modified,
                        upd.version, $4::bigint AS size, $7::text AS sha256,
                        'modified'::text AS change, NULL::text AS old_path
                 FROM upd, old
             ), {record}
             SELECT version FROM upd",
            record = record(&s, options, "$2", "$8::text"),
        );
        let replace = format!(
            "WITH old AS (
                 SELECT contents, version, modified FROM {s}.files WHERE root = $1 AND path = $2
             ), upd AS (
                 UPDATE {s}.files f SET contents = $3, size = $4, version = {next}, modified = now(),
                     words = $5::text::tsvector
                 FROM old WHERE f.root = $1 AND f.path = $2 AND f.version = old.version
                 RETURNING f.path, f.version
             ), chg AS (
                 SELECT upd.path, old.contents AS prev_contents, old.version AS prev_version,
                        old.modified AS prev_modified,
                        upd.version, $4::bigint AS size, $6::text AS sha256,
                        $7::text AS change, NULL::text AS old_path
                 FROM upd, old
             ), {record}
             SELECT (SELECT version FROM upd), EXISTS (SELECT 1 FROM old)",
            record = record(&s, options, "$2", "$8::text"),
        );
        let create = format!(
            "WITH upd AS (
                 INSERT INTO {s}.files (root, path, contents, size, version, modified, words)
                 VALUES ($1, $2, $3, $4, {next}, now(), $5::text::tsvector)
                 ON CONFLICT (root, path) DO NOTHING RETURNING path, version
             ), chg AS (
                 SELECT upd.path, NULL::bytea AS prev_contents, NULL::bigint AS prev_version,
                        NULL::timestamptz AS prev_modified,
                        upd.version, $4::bigint AS size, $6::text AS sha256,
                        $7::text AS change, NULL::text AS old_path
                 FROM upd
             ), {record}
             SELECT version FROM upd",
            record = record(&s, options, "$2", "$8::text"),
        );
        let deleted =
            "SELECT upd.path, upd.contents AS prev_contents, upd.prev_version, upd.prev_modified,
                        NULL::bigint AS version, 0::bigint AS size, NULL::text AS sha256,
                        'deleted'::text AS change, NULL::text AS old_path
                 FROM upd";
        let delete_file = format!(
            "WITH old AS (
                 SELECT path, version FROM {s}.files WHERE root = $1 AND path = $2
             ), upd AS (
                 DELETE FROM {s}.files f USING old
                 WHERE f.root = $1 AND f.path = old.path AND f.version = old.version
                 RETURNING f.path, f.contents, f.version AS prev_version, f.modified AS prev_modified
             ), chg AS ({deleted}), {record}
             SELECT EXISTS (SELECT 1 FROM upd), EXISTS (SELECT 1 FROM old)",
            record = record(&s, options, "$2", "$3::text"),
        );
        let record_renamed = format!(
            "WITH chg AS (
                 SELECT NULL::bytea AS prev_contents, NULL::bigint AS prev_version,
                        NULL::timestamptz AS prev_modified,
                        f.version, f.size, encode(sha256(f.contents), 'hex') AS sha256,
                        'renamed'::text AS change, $3::text AS old_path
                 FROM {s}.files f WHERE f.root = $1 AND f.path = $2
             ), {record}
             SELECT count(*) FROM chg",
            record = record(&s, options, "$2", "$4::text"),
        );
        HistorySql {
            compare_and_swap: cas,
            replace,
            create,
            delete_file,
            files_below: format!(
                "SELECT path FROM {s}.files WHERE root = $1 AND path > $2 AND path < $3
                 ORDER BY path FOR UPDATE"
            ),
            keep_before_move: format!(
                "UPDATE {s}.history h SET contents = f.contents FROM {s}.files f
                 WHERE f.root = $1 AND f.path = $2
                   AND h.root = $1 AND h.path = $2 AND h.version = f.version
                   AND h.contents IS NULL AND NOT h.redacted AND h.change <> 'deleted'"
            ),
            // Numbers by rank, as `FileHistory::append_moved` gives them (gaps left by pruning
            // close up). No key collides on the way: the target's own revisions are at or
            // below its `top`, and a source is never a target.
            move_history: format!(
                "WITH src AS MATERIALIZED (
                     SELECT h.number, row_number() OVER (ORDER BY h.number) AS rank,
                            coalesce((SELECT max(d.number) FROM {s}.history d
                                      WHERE d.root = $1 AND d.path = $3), 0) AS top
                     FROM {s}.history h WHERE h.root = $1 AND h.path = $2
                 )
                 UPDATE {s}.history h SET path = $3, number = src.top + src.rank
                 FROM src WHERE h.root = $1 AND h.path = $2 AND h.number = src.number"
            ),
            record_renamed,
            of_path: format!(
                "SELECT {COLUMNS} FROM {s}.history WHERE root = $1 AND path = $2 ORDER BY number DESC"
            ),
            below: format!(
                "SELECT path, {COLUMNS} FROM {s}.history WHERE root = $1 AND path > $2 AND path < $3"
            ),
            // A past revision holds its content; the newest of a live file is the file.
            read: format!(
                "SELECT h.change, h.redacted, coalesce(h.contents, f.contents)
                 FROM {s}.history h
                 LEFT JOIN {s}.files f ON h.contents IS NULL AND f.root = h.root
                      AND f.path = h.path AND f.version = h.version
                 WHERE h.root = $1 AND h.path = $2 AND h.number = $3"
            ),
            exists: format!(
                "SELECT EXISTS (SELECT 1 FROM {s}.history WHERE root = $1 AND path = $2 AND number = $3)"
            ),
            redact: format!(
                "UPDATE {s}.history SET contents = NULL, sha256 = NULL, redacted = true
                 WHERE root = $1 AND path = $2 AND number = ANY ($3::bigint[])"
            ),
            vacuum: format!("VACUUM (FULL) {s}.history, {s}.files"),
        }
    }
}

/// Whether retention drops a revision of rank `rank` (1 for the newest, counting those the
/// statement adds) made at `time`: beyond `history_max`, or older than `history_days`
/// (measured from the statement's `now()`, the same in every sub-statement).
fn drops(options: &HistoryOptions, rank: &str, time: &str) -> String {
    let mut parts = Vec::new();
    if let Some(max) = options.max_per_file {
        parts.push(format!("{rank} > {max}"));
    }
    if let Some(keep) = options.keep_for {
        parts.push(format!(
            "{time} < now() - interval '{} seconds'",
            keep.as_secs()
        ));
    }
    if parts.is_empty() {
        "false".to_owned()
    } else {
        format!("({})", parts.join(" OR "))
    }
}

/// The sub-statements that record a revision for the change in the CTE `chg` (one row or
/// none: `prev_contents`, `prev_version` and `prev_modified`, the row the change replaced or
/// deleted; `version`, `size`, `sha256`, `change`, `old_path`) of the file at `path`:
///
/// - `keep`: the replaced content into the path's newest revision, where that revision is the
///   replaced row (its version): the newest revision of a live file holds no content of its
///   own until a change replaces it;
/// - `adopt`: where the replaced row is no revision (a file from before history, or changed
///   with `history=off`), a revision for it first, with its content, so that no replaced
///   content is lost;
/// - `ins`: the new revision;
/// - `pruned`: the retention's drops among the revisions before, when the oldest says some
///   are due (a revision past the days but numbered after a younger one, as a rename or an
///   adopted revision may leave, goes once those before it do). The newest is either kept or
///   dropped, never both, so no row is changed twice; the rows this statement adds are not in
///   its snapshot, so pruning never drops the new revision (an adopted one waits for the
///   next change).
fn record(s: &str, options: &HistoryOptions, path: &str, session: &str) -> String {
    let top_dropped = drops(options, "2", "top.time");
    let mut sql = format!(
        "top AS MATERIALIZED (
             SELECT t.number, t.time, t.version, t.change
             FROM chg LEFT JOIN LATERAL (
                 SELECT x.number, x.time, x.version, x.change FROM {s}.history x
                 WHERE x.root = $1 AND x.path = {path} ORDER BY x.number DESC LIMIT 1
             ) t ON true
         ), untracked AS MATERIALIZED (
             SELECT chg.prev_contents, chg.prev_version, chg.prev_modified,
                    CASE WHEN top.number IS NULL OR top.change = 'deleted'
                         THEN 'created' ELSE 'modified' END AS change
             FROM chg, top
             WHERE chg.prev_version IS NOT NULL AND top.version IS DISTINCT FROM chg.prev_version
         ), keep AS (
             UPDATE {s}.history h SET contents = chg.prev_contents
             FROM chg, top
             WHERE h.root = $1 AND h.path = {path} AND h.number = top.number
               AND h.version = chg.prev_version AND h.contents IS NULL
               AND NOT h.redacted AND h.change <> 'deleted' AND NOT {top_dropped}
         ), adopt AS (
             INSERT INTO {s}.history
                 (root, path, number, change, at_path, time, size, sha256, version, contents)
             SELECT $1, {path}, coalesce(top.number, 0) + 1, u.change, {path}, u.prev_modified,
                    length(u.prev_contents), encode(sha256(u.prev_contents), 'hex'),
                    u.prev_version, u.prev_contents
             FROM untracked u, top
         ), ins AS (
             INSERT INTO {s}.history
                 (root, path, number, change, at_path, old_path, time, size, sha256, session, version)
             SELECT $1, {path}, coalesce(top.number, 0) + 1 + (SELECT count(*) FROM untracked),
                    chg.change, {path}, chg.old_path,
                    clock_timestamp(), chg.size, chg.sha256, {session}, chg.version
             FROM chg, top
         )"
    );
    if options.max_per_file.is_some() || options.keep_for.is_some() {
        let dropped = drops(options, "r.rank", "r.time");
        // The revisions are ranked only when the oldest is past the days, or when the numbers
        // from the oldest to the newest (an upper bound of their count) pass the maximum: a
        // change of a file whose history is within both reads one index entry, not them all.
        let due = drops(
            options,
            "top.number - first.number + 2 + (SELECT count(*) FROM untracked)",
            "first.time",
        );
        sql.push_str(&format!(
            ", first AS MATERIALIZED (
                 SELECT o.number, o.time FROM {s}.history o
                 WHERE o.root = $1 AND o.path = {path} AND EXISTS (SELECT 1 FROM chg)
                 ORDER BY o.number LIMIT 1
             ), ranked AS MATERIALIZED (
                 SELECT x.number, x.time,
                        row_number() OVER (ORDER BY x.number DESC) + 1
                            + (SELECT count(*) FROM untracked) AS rank
                 FROM {s}.history x
                 WHERE x.root = $1 AND x.path = {path}
                   AND EXISTS (SELECT 1 FROM first, top WHERE {due})
             ), pruned AS (
                 DELETE FROM {s}.history h USING ranked r
                 WHERE h.root = $1 AND h.path = {path} AND h.number = r.number AND {dropped}
             )"
        ));
    }
    sql
}
