PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_qr_accesses` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
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
INSERT INTO `__new_qr_accesses`("id", "qrcode_id", "at", "ip", "user_agent", "referer", "bot", "visitor") SELECT "id", "qrcode_id", "at", "ip", "user_agent", "referer", "bot", "visitor" FROM `qr_accesses` ORDER BY rowid;--> statement-breakpoint
DROP TABLE `qr_accesses`;--> statement-breakpoint
ALTER TABLE `__new_qr_accesses` RENAME TO `qr_accesses`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `qr_accesses_code_at` ON `qr_accesses` (`qrcode_id`,`at`,`visitor`);