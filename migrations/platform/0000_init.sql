CREATE TABLE `actions` (
	`id` text PRIMARY KEY NOT NULL,
	`feature_id` text NOT NULL,
	`action` text NOT NULL,
	`name` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`feature_id`) REFERENCES `features`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `actions_feature_action` ON `actions` (`feature_id`,`action`);--> statement-breakpoint
CREATE TABLE `corp_services` (
	`corp_id` text NOT NULL,
	`service_id` text NOT NULL,
	PRIMARY KEY(`corp_id`, `service_id`),
	FOREIGN KEY (`corp_id`) REFERENCES `corporations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `corp_services_service` ON `corp_services` (`service_id`);--> statement-breakpoint
CREATE TABLE `features` (
	`id` text PRIMARY KEY NOT NULL,
	`service_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `features_service_name` ON `features` (`service_id`,`name`);--> statement-breakpoint
CREATE TABLE `services` (
	`id` text PRIMARY KEY NOT NULL,
	`identifier` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`builtin` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `services_identifier_unique` ON `services` (`identifier`);--> statement-breakpoint
CREATE TABLE `corp_members` (
	`corp_id` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`corp_id`, `user_id`),
	FOREIGN KEY (`corp_id`) REFERENCES `corporations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `corp_members_user` ON `corp_members` (`user_id`);--> statement-breakpoint
CREATE TABLE `corporations` (
	`id` text PRIMARY KEY NOT NULL,
	`auth_name` text NOT NULL,
	`company_name` text NOT NULL,
	`trade_name` text,
	`doc_identity` text,
	`email` text,
	`phone` text,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`server_id` text NOT NULL,
	`status` text DEFAULT 'ENABLED' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`server_id`) REFERENCES `servers`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `corporations_auth_name_unique` ON `corporations` (`auth_name`);--> statement-breakpoint
CREATE TABLE `servers` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`path` text NOT NULL,
	`description` text,
	`builtin` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `servers_name_unique` ON `servers` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `servers_path_unique` ON `servers` (`path`);--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`corp_id` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sessions_user` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE INDEX `sessions_corp` ON `sessions` (`corp_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`email` text NOT NULL,
	`login` text NOT NULL,
	`password_hash` text NOT NULL,
	`super_admin` integer DEFAULT false NOT NULL,
	`status` integer DEFAULT true NOT NULL,
	`builtin` integer DEFAULT false NOT NULL,
	`two_factor_secret` text,
	`two_factor_pending` text,
	`two_factor_last_step` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_login_unique` ON `users` (`login`);--> statement-breakpoint
CREATE TABLE `workgroup_features` (
	`workgroup_id` text NOT NULL,
	`feature_id` text NOT NULL,
	PRIMARY KEY(`workgroup_id`, `feature_id`),
	FOREIGN KEY (`workgroup_id`) REFERENCES `workgroups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`feature_id`) REFERENCES `features`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `workgroup_members` (
	`workgroup_id` text NOT NULL,
	`user_id` text NOT NULL,
	PRIMARY KEY(`workgroup_id`, `user_id`),
	FOREIGN KEY (`workgroup_id`) REFERENCES `workgroups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `workgroup_members_user` ON `workgroup_members` (`user_id`);--> statement-breakpoint
CREATE TABLE `workgroup_services` (
	`workgroup_id` text NOT NULL,
	`service_id` text NOT NULL,
	PRIMARY KEY(`workgroup_id`, `service_id`),
	FOREIGN KEY (`workgroup_id`) REFERENCES `workgroups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `workgroups` (
	`id` text PRIMARY KEY NOT NULL,
	`corp_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`corp_id`) REFERENCES `corporations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workgroups_corp_name` ON `workgroups` (`corp_id`,`name`);