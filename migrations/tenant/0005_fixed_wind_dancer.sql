CREATE TABLE `isp_layout_attributes` (
	`layout_id` text NOT NULL,
	`attribute_id` text NOT NULL,
	`operator` text NOT NULL,
	`value` text NOT NULL,
	`position` integer NOT NULL,
	PRIMARY KEY(`layout_id`, `attribute_id`),
	FOREIGN KEY (`layout_id`) REFERENCES `isp_layouts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`attribute_id`) REFERENCES `isp_radius_attributes`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `isp_layout_attributes_attribute` ON `isp_layout_attributes` (`attribute_id`);--> statement-breakpoint
CREATE TABLE `isp_layouts` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`manufacturer_id` text,
	`description` text,
	`status` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`manufacturer_id`) REFERENCES `isp_manufacturers`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `isp_layouts_name_unique` ON `isp_layouts` (`name`);--> statement-breakpoint
CREATE INDEX `isp_layouts_vendor` ON `isp_layouts` (`manufacturer_id`);--> statement-breakpoint
CREATE TABLE `isp_manufacturers` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`status` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `isp_manufacturers_name_unique` ON `isp_manufacturers` (`name`);--> statement-breakpoint
CREATE TABLE `isp_nas` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`ip` text NOT NULL,
	`secret_hash` text NOT NULL,
	`secret_salt` text NOT NULL,
	`manufacturer_id` text,
	`pop_id` text,
	`layout_id` text,
	`status` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`manufacturer_id`) REFERENCES `isp_manufacturers`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`pop_id`) REFERENCES `isp_pops`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`layout_id`) REFERENCES `isp_layouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `isp_nas_name_unique` ON `isp_nas` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `isp_nas_ip_unique` ON `isp_nas` (`ip`);--> statement-breakpoint
CREATE INDEX `isp_nas_vendor` ON `isp_nas` (`manufacturer_id`);--> statement-breakpoint
CREATE INDEX `isp_nas_pop` ON `isp_nas` (`pop_id`);--> statement-breakpoint
CREATE INDEX `isp_nas_layout` ON `isp_nas` (`layout_id`);--> statement-breakpoint
CREATE TABLE `isp_pools` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`version` integer NOT NULL,
	`cidr` text NOT NULL,
	`pop_id` text,
	`nas_id` text,
	`status` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`pop_id`) REFERENCES `isp_pops`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`nas_id`) REFERENCES `isp_nas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `isp_pools_name_unique` ON `isp_pools` (`name`);--> statement-breakpoint
CREATE INDEX `isp_pools_pop` ON `isp_pools` (`pop_id`);--> statement-breakpoint
CREATE INDEX `isp_pools_nas` ON `isp_pools` (`nas_id`);--> statement-breakpoint
CREATE TABLE `isp_pops` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`address_line1` text,
	`address_line2` text,
	`address_district` text,
	`address_postal_code` text,
	`address_detail` text,
	`address_latitude` real,
	`address_longitude` real,
	`address_city_id` text,
	`status` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`address_city_id`) REFERENCES `cities`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `isp_pops_name_unique` ON `isp_pops` (`name`);--> statement-breakpoint
CREATE INDEX `isp_pops_city` ON `isp_pops` (`address_city_id`);--> statement-breakpoint
CREATE TABLE `isp_radius_accounting` (
	`id` text PRIMARY KEY NOT NULL,
	`nas_id` text NOT NULL,
	`nas_ip` text NOT NULL,
	`username` text NOT NULL,
	`contract_id` text,
	`session_id` text NOT NULL,
	`unique_session_id` text,
	`status_type` text NOT NULL,
	`session_time` integer NOT NULL,
	`input_octets` integer,
	`output_octets` integer,
	`input_packets` integer,
	`output_packets` integer,
	`framed_ip` text,
	`framed_ipv6_prefix` text,
	`calling_station_id` text,
	`terminate_cause` text,
	`event_at` text NOT NULL,
	`received_at` text NOT NULL,
	`attributes` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `isp_radius_accounting_record` ON `isp_radius_accounting` (`nas_id`,`session_id`,`status_type`,`session_time`);--> statement-breakpoint
CREATE INDEX `isp_radius_accounting_user` ON `isp_radius_accounting` (`username`,`received_at`);--> statement-breakpoint
CREATE INDEX `isp_radius_accounting_contract` ON `isp_radius_accounting` (`contract_id`);--> statement-breakpoint
CREATE TABLE `isp_radius_attributes` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`manufacturer_id` text,
	`type` text NOT NULL,
	`description` text,
	`status` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`manufacturer_id`) REFERENCES `isp_manufacturers`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `isp_radius_attributes_name_vendor` ON `isp_radius_attributes` (`name`,`manufacturer_id`);--> statement-breakpoint
CREATE INDEX `isp_radius_attributes_vendor` ON `isp_radius_attributes` (`manufacturer_id`);