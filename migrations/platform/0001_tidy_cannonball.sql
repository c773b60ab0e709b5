CREATE TABLE `menus` (
	`id` text PRIMARY KEY NOT NULL,
	`parent_id` text,
	`name` text NOT NULL,
	`icon` text,
	`url` text,
	`position` integer DEFAULT 0 NOT NULL,
	`feature_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`parent_id`) REFERENCES `menus`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`feature_id`) REFERENCES `features`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `menus_parent` ON `menus` (`parent_id`);--> statement-breakpoint
CREATE INDEX `menus_feature` ON `menus` (`feature_id`);