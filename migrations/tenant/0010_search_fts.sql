-- Search (?q) through FTS5 trigram indexes, one per searched table, holding the table's ?q
-- columns under the table's rowid (docs/architecture.md, "Search"). Contentless: the text stays
-- in the table only; contentless_delete lets the triggers remove a row's entry. Triggers keep each
-- index in step inside the writing transaction, whoever writes (services, raw row writers, the QR
-- writer thread); the update trigger fires only when a searched column changes. Existing rows
-- are indexed here (backfill).
CREATE VIRTUAL TABLE `persons_fts` USING fts5(name, display_name, doc_identity, content='', contentless_delete=1, tokenize='trigram remove_diacritics 2');
--> statement-breakpoint
INSERT INTO `persons_fts`(rowid, name, display_name, doc_identity) SELECT rowid, name, display_name, doc_identity FROM `persons`;
--> statement-breakpoint
CREATE TRIGGER `persons_fts_insert` AFTER INSERT ON `persons` BEGIN
  INSERT INTO `persons_fts`(rowid, name, display_name, doc_identity) VALUES (new.rowid, new.name, new.display_name, new.doc_identity);
END;
--> statement-breakpoint
CREATE TRIGGER `persons_fts_delete` AFTER DELETE ON `persons` BEGIN
  DELETE FROM `persons_fts` WHERE rowid = old.rowid;
END;
--> statement-breakpoint
CREATE TRIGGER `persons_fts_update` AFTER UPDATE OF name, display_name, doc_identity ON `persons` WHEN old.name IS NOT new.name OR old.display_name IS NOT new.display_name OR old.doc_identity IS NOT new.doc_identity BEGIN
  DELETE FROM `persons_fts` WHERE rowid = old.rowid;
  INSERT INTO `persons_fts`(rowid, name, display_name, doc_identity) VALUES (new.rowid, new.name, new.display_name, new.doc_identity);
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE `contracts_fts` USING fts5(number, content='', contentless_delete=1, tokenize='trigram remove_diacritics 2');
--> statement-breakpoint
INSERT INTO `contracts_fts`(rowid, number) SELECT rowid, number FROM `contracts`;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_insert` AFTER INSERT ON `contracts` BEGIN
  INSERT INTO `contracts_fts`(rowid, number) VALUES (new.rowid, new.number);
END;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_delete` AFTER DELETE ON `contracts` BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = old.rowid;
END;
--> statement-breakpoint
CREATE TRIGGER `contracts_fts_update` AFTER UPDATE OF number ON `contracts` WHEN old.number IS NOT new.number BEGIN
  DELETE FROM `contracts_fts` WHERE rowid = old.rowid;
  INSERT INTO `contracts_fts`(rowid, number) VALUES (new.rowid, new.number);
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE `cities_fts` USING fts5(name, state, content='', contentless_delete=1, tokenize='trigram remove_diacritics 2');
--> statement-breakpoint
INSERT INTO `cities_fts`(rowid, name, state) SELECT rowid, name, state FROM `cities`;
--> statement-breakpoint
CREATE TRIGGER `cities_fts_insert` AFTER INSERT ON `cities` BEGIN
  INSERT INTO `cities_fts`(rowid, name, state) VALUES (new.rowid, new.name, new.state);
END;
--> statement-breakpoint
CREATE TRIGGER `cities_fts_delete` AFTER DELETE ON `cities` BEGIN
  DELETE FROM `cities_fts` WHERE rowid = old.rowid;
END;
--> statement-breakpoint
CREATE TRIGGER `cities_fts_update` AFTER UPDATE OF name, state ON `cities` WHEN old.name IS NOT new.name OR old.state IS NOT new.state BEGIN
  DELETE FROM `cities_fts` WHERE rowid = old.rowid;
  INSERT INTO `cities_fts`(rowid, name, state) VALUES (new.rowid, new.name, new.state);
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE `products_fts` USING fts5(identity, name, content='', contentless_delete=1, tokenize='trigram remove_diacritics 2');
--> statement-breakpoint
INSERT INTO `products_fts`(rowid, identity, name) SELECT rowid, identity, name FROM `products`;
--> statement-breakpoint
CREATE TRIGGER `products_fts_insert` AFTER INSERT ON `products` BEGIN
  INSERT INTO `products_fts`(rowid, identity, name) VALUES (new.rowid, new.identity, new.name);
END;
--> statement-breakpoint
CREATE TRIGGER `products_fts_delete` AFTER DELETE ON `products` BEGIN
  DELETE FROM `products_fts` WHERE rowid = old.rowid;
END;
--> statement-breakpoint
CREATE TRIGGER `products_fts_update` AFTER UPDATE OF identity, name ON `products` WHEN old.identity IS NOT new.identity OR old.name IS NOT new.name BEGIN
  DELETE FROM `products_fts` WHERE rowid = old.rowid;
  INSERT INTO `products_fts`(rowid, identity, name) VALUES (new.rowid, new.identity, new.name);
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE `qr_codes_fts` USING fts5(name, content, target, slug, content='', contentless_delete=1, tokenize='trigram remove_diacritics 2');
--> statement-breakpoint
INSERT INTO `qr_codes_fts`(rowid, name, content, target, slug) SELECT rowid, name, content, target, slug FROM `qr_codes`;
--> statement-breakpoint
CREATE TRIGGER `qr_codes_fts_insert` AFTER INSERT ON `qr_codes` BEGIN
  INSERT INTO `qr_codes_fts`(rowid, name, content, target, slug) VALUES (new.rowid, new.name, new.content, new.target, new.slug);
END;
--> statement-breakpoint
CREATE TRIGGER `qr_codes_fts_delete` AFTER DELETE ON `qr_codes` BEGIN
  DELETE FROM `qr_codes_fts` WHERE rowid = old.rowid;
END;
--> statement-breakpoint
CREATE TRIGGER `qr_codes_fts_update` AFTER UPDATE OF name, content, target, slug ON `qr_codes` WHEN old.name IS NOT new.name OR old.content IS NOT new.content OR old.target IS NOT new.target OR old.slug IS NOT new.slug BEGIN
  DELETE FROM `qr_codes_fts` WHERE rowid = old.rowid;
  INSERT INTO `qr_codes_fts`(rowid, name, content, target, slug) VALUES (new.rowid, new.name, new.content, new.target, new.slug);
END;
