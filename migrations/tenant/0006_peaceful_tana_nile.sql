CREATE TABLE `metric_values` (
	`seq` integer PRIMARY KEY NOT NULL,
	`metric_id` text NOT NULL,
	`at` text NOT NULL,
	`at_ms` integer NOT NULL,
	`value` blob NOT NULL,
	FOREIGN KEY (`metric_id`) REFERENCES `metrics`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `metric_values_metric_at` ON `metric_values` (`metric_id`,`at_ms`,`value`);--> statement-breakpoint
CREATE TABLE `metrics` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`endpoint` text,
	`data_type` text NOT NULL,
	`periodicity` text NOT NULL,
	`start_date` text NOT NULL,
	`end_date` text,
	`daily_start_time` text DEFAULT '00:00' NOT NULL,
	`daily_end_time` text DEFAULT '00:00' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `metrics_name_unique` ON `metrics` (`name`);