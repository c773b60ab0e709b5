CREATE TABLE `isp_usage_monthly` (
	`contract_id` text NOT NULL,
	`month` text NOT NULL,
	`input_bytes` integer DEFAULT 0 NOT NULL,
	`output_bytes` integer DEFAULT 0 NOT NULL,
	`session_seconds` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`contract_id`, `month`)
);
--> statement-breakpoint
CREATE INDEX `isp_usage_monthly_month` ON `isp_usage_monthly` (`month`,`contract_id`,`input_bytes`,`output_bytes`);--> statement-breakpoint
-- Hand-added after generation: the months of the daily rows already stored (usage-range.ts reads whole months here).
INSERT INTO `isp_usage_monthly` (`contract_id`, `month`, `input_bytes`, `output_bytes`, `session_seconds`) SELECT `contract_id`, substr(`day`, 1, 7), sum(`input_bytes`), sum(`output_bytes`), sum(`session_seconds`) FROM `isp_usage_daily` GROUP BY `contract_id`, substr(`day`, 1, 7);
