CREATE TABLE `external_identities` (
	`id` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`subject` text NOT NULL,
	`email` text,
	`user_id` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `external_identities_user` ON `external_identities` (`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `external_identities_provider_subject` ON `external_identities` (`provider`,`subject`);--> statement-breakpoint
CREATE TABLE `login_failures` (
	`corp_id` text NOT NULL,
	`login` text NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`locked_until` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`corp_id`, `login`),
	FOREIGN KEY (`corp_id`) REFERENCES `corporations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `password_reset_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `password_reset_keys_key_hash_unique` ON `password_reset_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `password_reset_keys_user` ON `password_reset_keys` (`user_id`);--> statement-breakpoint
CREATE TABLE `remembered_devices` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `remembered_devices_token_hash_unique` ON `remembered_devices` (`token_hash`);--> statement-breakpoint
CREATE INDEX `remembered_devices_user` ON `remembered_devices` (`user_id`);--> statement-breakpoint
CREATE TABLE `safe_ip_ranges` (
	`id` text PRIMARY KEY NOT NULL,
	`corp_id` text NOT NULL,
	`range` text NOT NULL,
	`description` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`corp_id`) REFERENCES `corporations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `safe_ip_ranges_corp_range` ON `safe_ip_ranges` (`corp_id`,`range`);