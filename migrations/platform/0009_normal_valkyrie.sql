CREATE TABLE `platform_history` (
	`id` text PRIMARY KEY NOT NULL,
	`at` text NOT NULL,
	`actor` text NOT NULL,
	`actor_user_id` text,
	`actor_app_id` text,
	`corp_id` text,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`action` text NOT NULL,
	`fields` text NOT NULL,
	`changes` text NOT NULL,
	`request_id` text
);
--> statement-breakpoint
CREATE INDEX `platform_history_at` ON `platform_history` (`at`);--> statement-breakpoint
CREATE INDEX `platform_history_target` ON `platform_history` (`target_type`,`target_id`,`at`);--> statement-breakpoint
CREATE INDEX `platform_history_corp` ON `platform_history` (`corp_id`,`at`);