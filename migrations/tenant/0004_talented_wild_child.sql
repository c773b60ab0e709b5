CREATE TABLE `qr_accesses` (
	`id` text PRIMARY KEY NOT NULL,
	`qrcode_id` text NOT NULL,
	`at` text NOT NULL,
	`ip` text NOT NULL,
	`user_agent` text,
	`referer` text,
	`bot` integer DEFAULT false NOT NULL,
	`visitor` integer,
	FOREIGN KEY (`qrcode_id`) REFERENCES `qr_codes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `qr_accesses_code_at` ON `qr_accesses` (`qrcode_id`,`at`,`visitor`);--> statement-breakpoint
CREATE INDEX `qr_accesses_at` ON `qr_accesses` (`at`,`qrcode_id`,`visitor`);--> statement-breakpoint
CREATE TABLE `qr_campaigns` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`start_date` text,
	`end_date` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `qr_campaigns_name_unique` ON `qr_campaigns` (`name`);--> statement-breakpoint
CREATE TABLE `qr_categories` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `qr_categories_name_unique` ON `qr_categories` (`name`);--> statement-breakpoint
CREATE TABLE `qr_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`content` text,
	`target` text,
	`slug` text,
	`campaign_id` text,
	`category_id` text,
	`logo_id` text,
	`status` integer DEFAULT true NOT NULL,
	`scans` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`campaign_id`) REFERENCES `qr_campaigns`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`category_id`) REFERENCES `qr_categories`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`logo_id`) REFERENCES `qr_logos`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `qr_codes_slug_unique` ON `qr_codes` (`slug`);--> statement-breakpoint
CREATE INDEX `qr_codes_campaign` ON `qr_codes` (`campaign_id`);--> statement-breakpoint
CREATE INDEX `qr_codes_category` ON `qr_codes` (`category_id`);--> statement-breakpoint
CREATE INDEX `qr_codes_logo` ON `qr_codes` (`logo_id`);--> statement-breakpoint
CREATE TABLE `qr_logos` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`content_type` text NOT NULL,
	`data` blob NOT NULL,
	`size` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
