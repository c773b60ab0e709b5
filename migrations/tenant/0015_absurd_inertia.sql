CREATE TABLE `isp_usage_daily` (
	`contract_id` text NOT NULL,
	`day` text NOT NULL,
	`input_bytes` integer DEFAULT 0 NOT NULL,
	`output_bytes` integer DEFAULT 0 NOT NULL,
	`session_seconds` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`contract_id`, `day`)
);
--> statement-breakpoint
CREATE INDEX `isp_usage_daily_day` ON `isp_usage_daily` (`day`,`contract_id`,`input_bytes`,`output_bytes`);