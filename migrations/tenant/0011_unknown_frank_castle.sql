DROP INDEX `isp_radius_accounting_record`;--> statement-breakpoint
ALTER TABLE `isp_radius_accounting` ADD `radius_session_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `isp_radius_accounting_session_record` ON `isp_radius_accounting` (`radius_session_id`,`status_type`,`session_time`);