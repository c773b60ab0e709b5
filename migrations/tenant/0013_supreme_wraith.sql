ALTER TABLE `isp_nas` ADD `last_accounting_at` text;--> statement-breakpoint
ALTER TABLE `isp_nas` ADD `open_sessions` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `isp_nas` ADD `quiet_after` text;--> statement-breakpoint
ALTER TABLE `isp_nas` ADD `quiet_since` text;