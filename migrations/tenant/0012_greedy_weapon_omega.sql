-- Contract search (?q) also by PPPoE username (issue 21): contracts_fts indexes the contract's
-- number and its connection username (contract_configs.username). Hand-written, all of it (FTS5
-- tables and triggers are not in the Drizzle schema); replayable as it is after the generated
-- statements of any other migration. The customer's name, display name and document are found
-- through persons_fts (contract/service.ts LIST), so no contract entry changes with a person.
-- The username is indexed only where it differs from the number (NULL otherwise): a new
-- contract's default username is its number, so the config's insert costs no index write.
DROP TRIGGER `contracts_fts_insert`;
--> statement-breakpoint
DROP TRIGGER `contracts_fts_delete`;
--> statement-breakpoint
DROP TRIGGER `contracts_fts_update`;
--> statement-breakpoint
DROP TABLE `contracts_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `contracts_fts` USING fts5(number, username, content='', contentless_delete=1, tokenize='trigram remove_diacritics 2');
--> statement-breakpoint
INSERT INTO `contracts_fts`(rowid, number, username) SELECT c.rowid, c.number, nullif(cc.username, c.number) FROM `contracts` c LEFT JOIN `contract_configs` cc ON cc.contract_id = c.id;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_insert` AFTER INSERT ON `contracts` BEGIN
  INSERT INTO `contracts_fts`(rowid, number, username) VALUES (new.rowid, new.number, nullif((SELECT username FROM `contract_configs` WHERE contract_id = new.id), new.number));
END;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_delete` AFTER DELETE ON `contracts` BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = old.rowid;
END;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_update` AFTER UPDATE OF number ON `contracts` WHEN old.number IS NOT new.number BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = old.rowid;
  INSERT INTO `contracts_fts`(rowid, number, username) VALUES (new.rowid, new.number, nullif((SELECT username FROM `contract_configs` WHERE contract_id = new.id), new.number));
END;
--> statement-breakpoint
CREATE TRIGGER `contract_configs_fts_insert` AFTER INSERT ON `contract_configs` WHEN new.username IS NOT (SELECT number FROM `contracts` WHERE id = new.contract_id) BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = (SELECT rowid FROM `contracts` WHERE id = new.contract_id);
  INSERT INTO `contracts_fts`(rowid, number, username) SELECT rowid, number, new.username FROM `contracts` WHERE id = new.contract_id;
END;
--> statement-breakpoint
CREATE TRIGGER `contract_configs_fts_update` AFTER UPDATE OF username ON `contract_configs` WHEN old.username IS NOT new.username BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = (SELECT rowid FROM `contracts` WHERE id = new.contract_id);
  INSERT INTO `contracts_fts`(rowid, number, username) SELECT rowid, number, nullif(new.username, number) FROM `contracts` WHERE id = new.contract_id;
END;
--> statement-breakpoint
CREATE TRIGGER `contract_configs_fts_delete` AFTER DELETE ON `contract_configs` WHEN old.username IS NOT (SELECT number FROM `contracts` WHERE id = old.contract_id) BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = (SELECT rowid FROM `contracts` WHERE id = old.contract_id);
  INSERT INTO `contracts_fts`(rowid, number, username) SELECT rowid, number, NULL FROM `contracts` WHERE id = old.contract_id;
END;
