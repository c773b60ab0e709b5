CREATE TABLE `history` (
	`id` text PRIMARY KEY NOT NULL,
	`at` text NOT NULL,
	`actor` text NOT NULL,
	`actor_user_id` text,
	`actor_app_id` text,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`action` text NOT NULL,
	`fields` text NOT NULL,
	`changes` text NOT NULL,
	`request_id` text
);
--> statement-breakpoint
CREATE INDEX `history_at` ON `history` (`at`);--> statement-breakpoint
CREATE INDEX `history_target` ON `history` (`target_type`,`target_id`,`at`);