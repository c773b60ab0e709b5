-- The search indexes of persons and contracts written once per grouped write (issue 31, the
-- external-app upsert embedded; docs/architecture.md "Search", "deferred"). FTS5 writes a table's
-- pending entries as a new segment at every savepoint and at every statement that opens a
-- statement journal: in a grouped write (one savepoint per write) a new person and contract cost
-- ≈ 80 µs of segment writes. Inside the store door's grouped transactions (src/db/door.ts), which
-- put a marker row ('*') in `search_pending` first, the triggers below note the rowids to index
-- instead, and the door indexes them all before COMMIT (src/db/search-pending.ts), outside every
-- savepoint: a failed write's notes roll back with its rows. Every other writer (plain writes,
-- migrations, the QR writer thread, tools) sees no marker, and the triggers index at once as
-- before. `indexed`: whether the index held the row when it was first noted in the transaction
-- (1 for an update or a delete), so the flush deletes its old entry first. Hand-written, all of
-- it (FTS5 tables and triggers are not in the Drizzle schema).
CREATE TABLE `search_pending` (`tbl` text NOT NULL, `rid` integer NOT NULL, `indexed` integer NOT NULL, PRIMARY KEY (`tbl`, `rid`)) WITHOUT ROWID;
--> statement-breakpoint
DROP TRIGGER `persons_fts_insert`;
--> statement-breakpoint
CREATE TRIGGER `persons_fts_insert` AFTER INSERT ON `persons` WHEN NOT EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT INTO `persons_fts`(rowid, name, display_name, doc_identity) VALUES (new.rowid, new.name, new.display_name, new.doc_identity);
END;
--> statement-breakpoint
CREATE TRIGGER `persons_fts_later_insert` AFTER INSERT ON `persons` WHEN EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT OR IGNORE INTO `search_pending` VALUES ('persons', new.rowid, 0);
END;
--> statement-breakpoint
DROP TRIGGER `persons_fts_delete`;
--> statement-breakpoint
CREATE TRIGGER `persons_fts_delete` AFTER DELETE ON `persons` WHEN NOT EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  DELETE FROM `persons_fts` WHERE rowid = old.rowid;
END;
--> statement-breakpoint
CREATE TRIGGER `persons_fts_later_delete` AFTER DELETE ON `persons` WHEN EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT OR IGNORE INTO `search_pending` VALUES ('persons', old.rowid, 1);
END;
--> statement-breakpoint
DROP TRIGGER `persons_fts_update`;
--> statement-breakpoint
CREATE TRIGGER `persons_fts_update` AFTER UPDATE OF name, display_name, doc_identity ON `persons` WHEN (old.name IS NOT new.name OR old.display_name IS NOT new.display_name OR old.doc_identity IS NOT new.doc_identity) AND NOT EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  DELETE FROM `persons_fts` WHERE rowid = old.rowid;
  INSERT INTO `persons_fts`(rowid, name, display_name, doc_identity) VALUES (new.rowid, new.name, new.display_name, new.doc_identity);
END;
--> statement-breakpoint
CREATE TRIGGER `persons_fts_later_update` AFTER UPDATE OF name, display_name, doc_identity ON `persons` WHEN (old.name IS NOT new.name OR old.display_name IS NOT new.display_name OR old.doc_identity IS NOT new.doc_identity) AND EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT OR IGNORE INTO `search_pending` VALUES ('persons', old.rowid, 1);
END;
--> statement-breakpoint
DROP TRIGGER `contracts_fts_insert`;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_insert` AFTER INSERT ON `contracts` WHEN NOT EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT INTO `contracts_fts`(rowid, number, username) VALUES (new.rowid, new.number, nullif((SELECT username FROM `contract_configs` WHERE contract_id = new.id), new.number));
END;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_later_insert` AFTER INSERT ON `contracts` WHEN EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT OR IGNORE INTO `search_pending` VALUES ('contracts', new.rowid, 0);
END;
--> statement-breakpoint
DROP TRIGGER `contracts_fts_delete`;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_delete` AFTER DELETE ON `contracts` WHEN NOT EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = old.rowid;
END;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_later_delete` AFTER DELETE ON `contracts` WHEN EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT OR IGNORE INTO `search_pending` VALUES ('contracts', old.rowid, 1);
END;
--> statement-breakpoint
DROP TRIGGER `contracts_fts_update`;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_update` AFTER UPDATE OF number ON `contracts` WHEN old.number IS NOT new.number AND NOT EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = old.rowid;
  INSERT INTO `contracts_fts`(rowid, number, username) VALUES (new.rowid, new.number, nullif((SELECT username FROM `contract_configs` WHERE contract_id = new.id), new.number));
END;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_later_update` AFTER UPDATE OF number ON `contracts` WHEN old.number IS NOT new.number AND EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT OR IGNORE INTO `search_pending` VALUES ('contracts', old.rowid, 1);
END;
--> statement-breakpoint
DROP TRIGGER `contract_configs_fts_insert`;
--> statement-breakpoint
CREATE TRIGGER `contract_configs_fts_insert` AFTER INSERT ON `contract_configs` WHEN new.username IS NOT (SELECT number FROM `contracts` WHERE id = new.contract_id) AND NOT EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = (SELECT rowid FROM `contracts` WHERE id = new.contract_id);
  INSERT INTO `contracts_fts`(rowid, number, username) SELECT rowid, number, new.username FROM `contracts` WHERE id = new.contract_id;
END;
--> statement-breakpoint
CREATE TRIGGER `contract_configs_fts_later_insert` AFTER INSERT ON `contract_configs` WHEN new.username IS NOT (SELECT number FROM `contracts` WHERE id = new.contract_id) AND EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT OR IGNORE INTO `search_pending` SELECT 'contracts', rowid, 1 FROM `contracts` WHERE id = new.contract_id;
END;
--> statement-breakpoint
DROP TRIGGER `contract_configs_fts_update`;
--> statement-breakpoint
CREATE TRIGGER `contract_configs_fts_update` AFTER UPDATE OF username ON `contract_configs` WHEN old.username IS NOT new.username AND NOT EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = (SELECT rowid FROM `contracts` WHERE id = new.contract_id);
  INSERT INTO `contracts_fts`(rowid, number, username) SELECT rowid, number, nullif(new.username, number) FROM `contracts` WHERE id = new.contract_id;
END;
--> statement-breakpoint
CREATE TRIGGER `contract_configs_fts_later_update` AFTER UPDATE OF username ON `contract_configs` WHEN old.username IS NOT new.username AND EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT OR IGNORE INTO `search_pending` SELECT 'contracts', rowid, 1 FROM `contracts` WHERE id = new.contract_id;
END;
--> statement-breakpoint
DROP TRIGGER `contract_configs_fts_delete`;
--> statement-breakpoint
CREATE TRIGGER `contract_configs_fts_delete` AFTER DELETE ON `contract_configs` WHEN old.username IS NOT (SELECT number FROM `contracts` WHERE id = old.contract_id) AND NOT EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = (SELECT rowid FROM `contracts` WHERE id = old.contract_id);
  INSERT INTO `contracts_fts`(rowid, number, username) SELECT rowid, number, NULL FROM `contracts` WHERE id = old.contract_id;
END;
--> statement-breakpoint
CREATE TRIGGER `contract_configs_fts_later_delete` AFTER DELETE ON `contract_configs` WHEN old.username IS NOT (SELECT number FROM `contracts` WHERE id = old.contract_id) AND EXISTS (SELECT 1 FROM `search_pending` WHERE tbl = '*') BEGIN
  INSERT OR IGNORE INTO `search_pending` SELECT 'contracts', rowid, 1 FROM `contracts` WHERE id = old.contract_id;
END;
