CREATE TABLE `isp_radius_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`at` text NOT NULL,
	`username` text NOT NULL,
	`nas_id` text,
	`nas_ip` text NOT NULL,
	`outcome` text NOT NULL,
	`reason` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `isp_radius_attempts_at` ON `isp_radius_attempts` (`at`);--> statement-breakpoint
CREATE INDEX `isp_radius_attempts_username` ON `isp_radius_attempts` (`username`,`at`);--> statement-breakpoint
CREATE TABLE `isp_radius_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`nas_id` text NOT NULL,
	`acct_session_id` text NOT NULL,
	`username` text NOT NULL,
	`contract_id` text,
	`framed_ip` text,
	`calling_station_id` text,
	`started_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`stopped_at` text,
	`open` integer NOT NULL,
	`stale_at` text NOT NULL,
	`input_bytes` integer DEFAULT 0 NOT NULL,
	`output_bytes` integer DEFAULT 0 NOT NULL,
	`input_packets` integer DEFAULT 0 NOT NULL,
	`output_packets` integer DEFAULT 0 NOT NULL,
	`session_time` integer DEFAULT 0 NOT NULL,
	`terminate_cause` text,
	`received_at` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `isp_radius_sessions_key` ON `isp_radius_sessions` (`nas_id`,`acct_session_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `isp_radius_sessions_open` ON `isp_radius_sessions` (`open`,`stale_at`);--> statement-breakpoint
CREATE INDEX `isp_radius_sessions_started` ON `isp_radius_sessions` (`started_at`);--> statement-breakpoint
CREATE INDEX `isp_radius_sessions_contract` ON `isp_radius_sessions` (`contract_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `isp_radius_sessions_username` ON `isp_radius_sessions` (`username`,`started_at`);--> statement-breakpoint
ALTER TABLE `isp_nas` ADD `secret_enc` text;--> statement-breakpoint
ALTER TABLE `isp_nas` ADD `coa_port` integer DEFAULT 3799 NOT NULL;