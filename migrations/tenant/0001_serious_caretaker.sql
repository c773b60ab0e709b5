CREATE TABLE `cities` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`state` text NOT NULL,
	`country` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `cities_state` ON `cities` (`state`);--> statement-breakpoint
CREATE INDEX `cities_country` ON `cities` (`country`);--> statement-breakpoint
CREATE UNIQUE INDEX `cities_name_state_country` ON `cities` (`name`,`state`,`country`);--> statement-breakpoint
CREATE TABLE `classifications` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`color` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `classifications_name_unique` ON `classifications` (`name`);--> statement-breakpoint
CREATE TABLE `contract_configs` (
	`contract_id` text PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`password` text NOT NULL,
	`min_upload` text,
	`max_upload` text,
	`min_download` text,
	`max_download` text,
	`pool_name_ipv4` text,
	`ipv4` text,
	`poll_name_ipv6` text,
	`ipv6` text,
	FOREIGN KEY (`contract_id`) REFERENCES `contracts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `contract_configs_username_unique` ON `contract_configs` (`username`);--> statement-breakpoint
CREATE TABLE `contract_flags` (
	`contract_id` text NOT NULL,
	`classification_id` text NOT NULL,
	PRIMARY KEY(`contract_id`, `classification_id`),
	FOREIGN KEY (`contract_id`) REFERENCES `contracts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`classification_id`) REFERENCES `classifications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `contract_flags_classification` ON `contract_flags` (`classification_id`);--> statement-breakpoint
CREATE TABLE `contract_items` (
	`id` text PRIMARY KEY NOT NULL,
	`contract_id` text NOT NULL,
	`position` integer NOT NULL,
	`product_id` text NOT NULL,
	`description` text NOT NULL,
	`quantity` real NOT NULL,
	`unit_price` real NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`contract_id`) REFERENCES `contracts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `contract_items_contract` ON `contract_items` (`contract_id`,`position`);--> statement-breakpoint
CREATE INDEX `contract_items_product` ON `contract_items` (`product_id`);--> statement-breakpoint
CREATE TABLE `contracts` (
	`id` text PRIMARY KEY NOT NULL,
	`customer_id` text NOT NULL,
	`billing_customer_id` text NOT NULL,
	`agent_id` text,
	`number` text NOT NULL,
	`signature_date` text,
	`approval_date` text,
	`start_date` text NOT NULL,
	`end_date` text,
	`suspension_date` text,
	`cancellation_date` text,
	`total_value` real NOT NULL,
	`contract_status` text NOT NULL,
	`contract_stage` text NOT NULL,
	`address_line1` text,
	`address_line2` text,
	`address_district` text,
	`address_postal_code` text,
	`address_detail` text,
	`address_latitude` real,
	`address_longitude` real,
	`address_city_id` text,
	`json_original` text,
	`json_billing` text,
	`json_payment_method` text,
	`json_items` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`customer_id`) REFERENCES `persons`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`billing_customer_id`) REFERENCES `persons`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`agent_id`) REFERENCES `persons`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`address_city_id`) REFERENCES `cities`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `contracts_number_unique` ON `contracts` (`number`);--> statement-breakpoint
CREATE INDEX `contracts_customer` ON `contracts` (`customer_id`);--> statement-breakpoint
CREATE INDEX `contracts_billing_customer` ON `contracts` (`billing_customer_id`);--> statement-breakpoint
CREATE INDEX `contracts_agent` ON `contracts` (`agent_id`);--> statement-breakpoint
CREATE INDEX `contracts_status` ON `contracts` (`contract_status`);--> statement-breakpoint
CREATE INDEX `contracts_stage` ON `contracts` (`contract_stage`);--> statement-breakpoint
CREATE INDEX `contracts_start_date` ON `contracts` (`start_date`);--> statement-breakpoint
CREATE INDEX `contracts_signature_date` ON `contracts` (`signature_date`);--> statement-breakpoint
CREATE INDEX `contracts_approval_date` ON `contracts` (`approval_date`);--> statement-breakpoint
CREATE INDEX `contracts_end_date` ON `contracts` (`end_date`);--> statement-breakpoint
CREATE INDEX `contracts_suspension_date` ON `contracts` (`suspension_date`);--> statement-breakpoint
CREATE INDEX `contracts_cancellation_date` ON `contracts` (`cancellation_date`);--> statement-breakpoint
CREATE INDEX `contracts_total_value` ON `contracts` (`total_value`);--> statement-breakpoint
CREATE INDEX `contracts_city` ON `contracts` (`address_city_id`);--> statement-breakpoint
CREATE TABLE `external_apps` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`status` integer DEFAULT true NOT NULL,
	`key_prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `external_apps_name_unique` ON `external_apps` (`name`);--> statement-breakpoint
CREATE INDEX `external_apps_status` ON `external_apps` (`status`);--> statement-breakpoint
CREATE INDEX `external_apps_key_prefix` ON `external_apps` (`key_prefix`);--> statement-breakpoint
CREATE TABLE `external_links` (
	`external_app_id` text NOT NULL,
	`record_type` text NOT NULL,
	`record_id` text NOT NULL,
	`identity` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`external_app_id`, `record_type`, `identity`),
	FOREIGN KEY (`external_app_id`) REFERENCES `external_apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `external_links_by_record` ON `external_links` (`record_type`,`record_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `external_links_record` ON `external_links` (`external_app_id`,`record_type`,`record_id`);--> statement-breakpoint
CREATE TABLE `persons` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`display_name` text,
	`tp_doc_identity` text,
	`doc_identity` text,
	`corporate` integer DEFAULT false NOT NULL,
	`email` text,
	`phone` text,
	`address_line1` text,
	`address_line2` text,
	`address_district` text,
	`address_postal_code` text,
	`address_detail` text,
	`address_latitude` real,
	`address_longitude` real,
	`address_city_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`address_city_id`) REFERENCES `cities`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `persons_name` ON `persons` (`name`);--> statement-breakpoint
CREATE INDEX `persons_display_name` ON `persons` (`display_name`);--> statement-breakpoint
CREATE INDEX `persons_doc_identity` ON `persons` (`doc_identity`);--> statement-breakpoint
CREATE INDEX `persons_tp_doc_identity` ON `persons` (`tp_doc_identity`);--> statement-breakpoint
CREATE INDEX `persons_email` ON `persons` (`email`);--> statement-breakpoint
CREATE INDEX `persons_phone` ON `persons` (`phone`);--> statement-breakpoint
CREATE INDEX `persons_corporate` ON `persons` (`corporate`);--> statement-breakpoint
CREATE INDEX `persons_city` ON `persons` (`address_city_id`);--> statement-breakpoint
CREATE TABLE `product_classifications` (
	`product_id` text NOT NULL,
	`classification_id` text NOT NULL,
	PRIMARY KEY(`product_id`, `classification_id`),
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`classification_id`) REFERENCES `classifications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `product_classifications_classification` ON `product_classifications` (`classification_id`);--> statement-breakpoint
CREATE TABLE `products` (
	`id` text PRIMARY KEY NOT NULL,
	`identity` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`price` real,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `products_identity_unique` ON `products` (`identity`);--> statement-breakpoint
CREATE INDEX `products_name` ON `products` (`name`);--> statement-breakpoint
CREATE INDEX `products_price` ON `products` (`price`);