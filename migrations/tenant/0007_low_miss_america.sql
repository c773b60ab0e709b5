DROP INDEX `persons_name`;--> statement-breakpoint
CREATE INDEX `persons_search` ON `persons` (`name`,`display_name`,`doc_identity`);