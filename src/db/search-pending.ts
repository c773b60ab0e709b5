// The search indexes of persons and contracts, written once per grouped write (tenant migration
// 0018_search_pending; docs/architecture.md "Search"). FTS5 writes its pending entries as a new
// segment at every savepoint and at every statement that opens a statement journal, so a grouped
// write (one savepoint per write) paid a segment per table per new person or contract (≈ 80 µs a
// creation). Inside a grouped transaction the door marks the file (a row '*' in `search_pending`):
// the tables' triggers then note each rowid to index instead of indexing it, and `indexNoted`
// indexes them all before COMMIT, outside every savepoint. A failed write's notes roll back with
// its rows; the marker never reaches a COMMIT, so every other writer indexes at once.
import type { Database } from "bun:sqlite";

/**
 * The table of notes and its marker (migration 0018): SQLite's alone, and empty outside a grouped
 * transaction (cluster mode's search indexes are PostgreSQL's own: nothing to copy there).
 */
export const SEARCH_NOTES_TABLE = "search_pending";
const TABLE = SEARCH_NOTES_TABLE;

/** Whether the file has the notes' table (corporation files from migration 0018 on; not the platform's). */
export function hasSearchNotes(client: Database): boolean {
  return client.query("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?1").get(TABLE) !== null;
}

/** At the start of a grouped transaction: the triggers note rowids from here on. */
export function markSearchDeferred(client: Database): void {
  client.query(`INSERT INTO ${TABLE} (tbl, rid, indexed) VALUES ('*', 0, 0)`).run();
}

// Each noted row's old entry deleted (rows the index held when first noted), then its current
// text indexed (rows still there) — the statements the immediate triggers make, for every noted
// row at once. contracts_fts holds the username only where it differs from the number.
const INDEX_NOTED = [
  `DELETE FROM persons_fts WHERE rowid IN (SELECT rid FROM ${TABLE} WHERE tbl = 'persons' AND indexed = 1)`,
  `INSERT INTO persons_fts (rowid, name, display_name, doc_identity) SELECT p.rowid, p.name, p.display_name, p.doc_identity FROM ${TABLE} n JOIN persons p ON p.rowid = n.rid WHERE n.tbl = 'persons'`,
  `DELETE FROM contracts_fts WHERE rowid IN (SELECT rid FROM ${TABLE} WHERE tbl = 'contracts' AND indexed = 1)`,
  `INSERT INTO contracts_fts (rowid, number, username) SELECT c.rowid, c.number, nullif(cc.username, c.number) FROM ${TABLE} n JOIN contracts c ON c.rowid = n.rid LEFT JOIN contract_configs cc ON cc.contract_id = c.id WHERE n.tbl = 'contracts'`,
];

/** Before COMMIT, outside every savepoint: the noted rows indexed, the notes and the marker gone. */
export function indexNoted(client: Database): void {
  const noted = client.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${TABLE}`).get()!.n;
  if (noted > 1) for (const sql of INDEX_NOTED) client.query(sql).run();
  client.query(`DELETE FROM ${TABLE}`).run();
}
