CREATE TABLE `isp_contract_network` (
	`contract_id` text PRIMARY KEY NOT NULL,
	`throttled_cycle` text,
	`throttled_at` text,
	`trusted_at` text,
	`trusted_until` text,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `isp_network_policy` (
	`id` text PRIMARY KEY NOT NULL,
	`usage_cycle_day` integer NOT NULL,
	`suspended_mode` text NOT NULL,
	`suspended_max_upload` text,
	`suspended_max_download` text,
	`suspended_pool_ipv4` text,
	`trust_unblock_days` integer NOT NULL,
	`trust_unblock_every_days` integer NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `contract_configs` ADD `allowance_gb` real;--> statement-breakpoint
ALTER TABLE `contract_configs` ADD `throttle_max_upload` text;--> statement-breakpoint
ALTER TABLE `contract_configs` ADD `throttle_max_download` text;