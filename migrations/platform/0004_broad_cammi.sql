CREATE TABLE `qr_slugs` (
	`slug` text PRIMARY KEY NOT NULL,
	`corp_id` text NOT NULL,
	`qrcode_id` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`corp_id`) REFERENCES `corporations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `qr_slugs_corp` ON `qr_slugs` (`corp_id`);