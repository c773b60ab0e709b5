CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`at` text NOT NULL,
	`action` text NOT NULL,
	`outcome` text NOT NULL,
	`actor_user_id` text,
	`corp_id` text,
	`target` text,
	`ip` text,
	`reason` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_at` ON `audit_log` (`at`);--> statement-breakpoint
CREATE INDEX `audit_log_actor` ON `audit_log` (`actor_user_id`,`at`);--> statement-breakpoint
CREATE INDEX `audit_log_corp` ON `audit_log` (`corp_id`,`at`);