CREATE TABLE `rate_limit_windows` (
	`key` text NOT NULL,
	`window_start` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`key`, `window_start`)
);
--> statement-breakpoint
CREATE INDEX `rate_limit_windows_start` ON `rate_limit_windows` (`window_start`);