//! Helpers for tests that check what a PostgreSQL store left in its database (feature
//! `testing`; not a stable API).

/// Everything in `schema` an open or a run could change, as lines to compare: whether the
/// schema exists, its relations, every row of its tables in order (as JSON text, bytea as hex)
/// and its sequences' values. Two equal dumps mean nothing in the schema changed.
///
/// Panics when a query fails: it is for tests.
pub async fn dump_schema(client: &tokio_postgres::Client, schema: &str) -> Vec<String> {
    // Other tests make schemas of their own meanwhile: only this one's existence is asked.
    let mut out: Vec<String> = client
        .query(
            "SELECT 'schema ' || nspname::text FROM pg_namespace WHERE nspname = $1",
            &[&schema],
        )
        .await
        .expect("list the schema")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let relations = client
        .query(
            "SELECT c.relname::text, c.relkind::text FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY 1",
            &[&schema],
        )
        .await
        .expect("list the schema's relations");
    for relation in relations {
        let (name, kind): (String, String) = (relation.get(0), relation.get(1));
        out.push(format!("relation {name} {kind}"));
        let sql = match kind.as_str() {
            "r" => format!("SELECT row_to_json(t)::text FROM \"{schema}\".\"{name}\" t ORDER BY 1"),
            "S" => format!(
                "SELECT row_to_json(t)::text FROM (SELECT last_value, is_called FROM \"{schema}\".\"{name}\") t"
            ),
            _ => continue,
        };
        for row in client.query(&sql, &[]).await.expect("read a relation") {
            out.push(format!("{name}: {}", row.get::<_, String>(0)));
        }
    }
    out
}
