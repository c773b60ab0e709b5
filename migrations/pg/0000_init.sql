CREATE TABLE "actions" (
	"id" text NOT NULL,
	"feature_id" text NOT NULL,
	"action" text NOT NULL,
	"name" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "actions_pkey" PRIMARY KEY("id"),
	CONSTRAINT "actions_feature_action" UNIQUE("feature_id","action")
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" text NOT NULL,
	"at" text NOT NULL,
	"action" text NOT NULL,
	"outcome" text NOT NULL,
	"actor_user_id" text,
	"corp_id" text,
	"target" text,
	"ip" text,
	"reason" text,
	"request_id" text,
	CONSTRAINT "audit_log_pkey" PRIMARY KEY("id")
);
--> statement-breakpoint
CREATE TABLE "corp_members" (
	"corp_id" text NOT NULL,
	"user_id" text NOT NULL,
	"created_at" text NOT NULL,
	CONSTRAINT "corp_members_corp_id_user_id_pk" PRIMARY KEY("corp_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "corp_services" (
	"corp_id" text NOT NULL,
	"service_id" text NOT NULL,
	CONSTRAINT "corp_services_corp_id_service_id_pk" PRIMARY KEY("corp_id","service_id")
);
--> statement-breakpoint
CREATE TABLE "corporations" (
	"id" text NOT NULL,
	"auth_name" text NOT NULL,
	"company_name" text NOT NULL,
	"trade_name" text,
	"doc_identity" text,
	"email" text,
	"phone" text,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"server_id" text NOT NULL,
	"status" text DEFAULT 'ENABLED' NOT NULL,
	"schema_version" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "corporations_pkey" PRIMARY KEY("id"),
	CONSTRAINT "corporations_auth_name_unique" UNIQUE("auth_name")
);
--> statement-breakpoint
CREATE TABLE "external_identities" (
	"id" text NOT NULL,
	"provider" text NOT NULL,
	"subject" text NOT NULL,
	"email" text,
	"user_id" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "external_identities_pkey" PRIMARY KEY("id"),
	CONSTRAINT "external_identities_provider_subject" UNIQUE("provider","subject")
);
--> statement-breakpoint
CREATE TABLE "features" (
	"id" text NOT NULL,
	"service_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "features_pkey" PRIMARY KEY("id"),
	CONSTRAINT "features_service_name" UNIQUE("service_id","name")
);
--> statement-breakpoint
CREATE TABLE "login_failures" (
	"corp_id" text NOT NULL,
	"login" text NOT NULL,
	"failures" bigint DEFAULT 0 NOT NULL,
	"locked_until" text,
	"updated_at" text NOT NULL,
	CONSTRAINT "login_failures_corp_id_login_pk" PRIMARY KEY("corp_id","login")
);
--> statement-breakpoint
CREATE TABLE "menus" (
	"id" text NOT NULL,
	"parent_id" text,
	"name" text NOT NULL,
	"icon" text,
	"url" text,
	"position" bigint DEFAULT 0 NOT NULL,
	"feature_id" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "menus_pkey" PRIMARY KEY("id")
);
--> statement-breakpoint
CREATE TABLE "password_reset_keys" (
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_at" text NOT NULL,
	"expires_at" text NOT NULL,
	"used_at" text,
	CONSTRAINT "password_reset_keys_pkey" PRIMARY KEY("id"),
	CONSTRAINT "password_reset_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "qr_slugs" (
	"slug" text NOT NULL,
	"corp_id" text NOT NULL,
	"qrcode_id" text NOT NULL,
	"created_at" text NOT NULL,
	CONSTRAINT "qr_slugs_pkey" PRIMARY KEY("slug")
);
--> statement-breakpoint
CREATE TABLE "remembered_devices" (
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" text NOT NULL,
	"expires_at" text NOT NULL,
	CONSTRAINT "remembered_devices_pkey" PRIMARY KEY("id"),
	CONSTRAINT "remembered_devices_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "safe_ip_ranges" (
	"id" text NOT NULL,
	"corp_id" text NOT NULL,
	"range" text NOT NULL,
	"description" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "safe_ip_ranges_pkey" PRIMARY KEY("id"),
	CONSTRAINT "safe_ip_ranges_corp_range" UNIQUE("corp_id","range")
);
--> statement-breakpoint
CREATE TABLE "servers" (
	"id" text NOT NULL,
	"name" text NOT NULL,
	"path" text NOT NULL,
	"description" text,
	"builtin" boolean DEFAULT false NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "servers_pkey" PRIMARY KEY("id"),
	CONSTRAINT "servers_name_unique" UNIQUE("name"),
	CONSTRAINT "servers_path_unique" UNIQUE("path")
);
--> statement-breakpoint
CREATE TABLE "services" (
	"id" text NOT NULL,
	"identifier" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"builtin" boolean DEFAULT false NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "services_pkey" PRIMARY KEY("id"),
	CONSTRAINT "services_identifier_unique" UNIQUE("identifier")
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"corp_id" text NOT NULL,
	"created_at" text NOT NULL,
	"expires_at" text NOT NULL,
	"revoked_at" text,
	"ip" text,
	"user_agent" text,
	"last_seen_at" text,
	CONSTRAINT "sessions_pkey" PRIMARY KEY("id")
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text NOT NULL,
	"value" text NOT NULL,
	CONSTRAINT "settings_pkey" PRIMARY KEY("key")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"login" text NOT NULL,
	"password_hash" text NOT NULL,
	"super_admin" boolean DEFAULT false NOT NULL,
	"status" boolean DEFAULT true NOT NULL,
	"builtin" boolean DEFAULT false NOT NULL,
	"two_factor_secret" text,
	"two_factor_pending" text,
	"two_factor_last_step" bigint,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "users_pkey" PRIMARY KEY("id"),
	CONSTRAINT "users_login_unique" UNIQUE("login")
);
--> statement-breakpoint
CREATE TABLE "workgroup_features" (
	"workgroup_id" text NOT NULL,
	"feature_id" text NOT NULL,
	CONSTRAINT "workgroup_features_workgroup_id_feature_id_pk" PRIMARY KEY("workgroup_id","feature_id")
);
--> statement-breakpoint
CREATE TABLE "workgroup_members" (
	"workgroup_id" text NOT NULL,
	"user_id" text NOT NULL,
	CONSTRAINT "workgroup_members_workgroup_id_user_id_pk" PRIMARY KEY("workgroup_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "workgroup_services" (
	"workgroup_id" text NOT NULL,
	"service_id" text NOT NULL,
	CONSTRAINT "workgroup_services_workgroup_id_service_id_pk" PRIMARY KEY("workgroup_id","service_id")
);
--> statement-breakpoint
CREATE TABLE "workgroups" (
	"id" text NOT NULL,
	"corp_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "workgroups_pkey" PRIMARY KEY("id"),
	CONSTRAINT "workgroups_corp_name" UNIQUE("corp_id","name")
);
--> statement-breakpoint
CREATE TABLE "cities" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"state" text NOT NULL,
	"country" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "cities_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "cities_name_state_country" UNIQUE("corp_id","name","state","country")
);
--> statement-breakpoint
ALTER TABLE "cities" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "classifications" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"color" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "classifications_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "classifications_name_unique" UNIQUE("corp_id","name")
);
--> statement-breakpoint
ALTER TABLE "classifications" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "contract_configs" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"contract_id" text NOT NULL,
	"username" text NOT NULL,
	"password" text NOT NULL,
	"min_upload" text,
	"max_upload" text,
	"min_download" text,
	"max_download" text,
	"pool_name_ipv4" text,
	"ipv4" text,
	"poll_name_ipv6" text,
	"ipv6" text,
	CONSTRAINT "contract_configs_pkey" PRIMARY KEY("corp_id","contract_id"),
	CONSTRAINT "contract_configs_username_unique" UNIQUE("corp_id","username")
);
--> statement-breakpoint
ALTER TABLE "contract_configs" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "contract_flags" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"contract_id" text NOT NULL,
	"classification_id" text NOT NULL,
	CONSTRAINT "contract_flags_contract_id_classification_id_pk" PRIMARY KEY("corp_id","contract_id","classification_id")
);
--> statement-breakpoint
ALTER TABLE "contract_flags" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "contract_items" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"contract_id" text NOT NULL,
	"position" bigint NOT NULL,
	"product_id" text NOT NULL,
	"description" text NOT NULL,
	"quantity" double precision NOT NULL,
	"unit_price" double precision NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "contract_items_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "contract_items" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "contracts" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"customer_id" text NOT NULL,
	"billing_customer_id" text NOT NULL,
	"agent_id" text,
	"number" text NOT NULL,
	"signature_date" text,
	"approval_date" text,
	"start_date" text NOT NULL,
	"end_date" text,
	"suspension_date" text,
	"cancellation_date" text,
	"total_value" double precision NOT NULL,
	"contract_status" text NOT NULL,
	"contract_stage" text NOT NULL,
	"address_line1" text,
	"address_line2" text,
	"address_district" text,
	"address_postal_code" text,
	"address_detail" text,
	"address_latitude" double precision,
	"address_longitude" double precision,
	"address_city_id" text,
	"json_original" text,
	"json_billing" text,
	"json_payment_method" text,
	"json_items" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "contracts_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "contracts_number_unique" UNIQUE("corp_id","number")
);
--> statement-breakpoint
ALTER TABLE "contracts" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "events" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"seq" bigint GENERATED BY DEFAULT AS IDENTITY (sequence name "events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text NOT NULL,
	"type" text NOT NULL,
	"record_id" text NOT NULL,
	"payload" text NOT NULL,
	"created_at" text NOT NULL,
	"dispatched_at" text,
	CONSTRAINT "events_pkey" PRIMARY KEY("corp_id","seq"),
	CONSTRAINT "events_id_unique" UNIQUE("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "events" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "external_apps" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"status" boolean DEFAULT true NOT NULL,
	"key_prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "external_apps_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "external_apps_name_unique" UNIQUE("corp_id","name")
);
--> statement-breakpoint
ALTER TABLE "external_apps" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "external_links" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"external_app_id" text NOT NULL,
	"record_type" text NOT NULL,
	"record_id" text NOT NULL,
	"identity" text NOT NULL,
	"created_at" text NOT NULL,
	CONSTRAINT "external_links_external_app_id_record_type_identity_pk" PRIMARY KEY("corp_id","external_app_id","record_type","identity"),
	CONSTRAINT "external_links_record" UNIQUE("corp_id","external_app_id","record_type","record_id")
);
--> statement-breakpoint
ALTER TABLE "external_links" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_layout_attributes" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"layout_id" text NOT NULL,
	"attribute_id" text NOT NULL,
	"operator" text NOT NULL,
	"value" text NOT NULL,
	"position" bigint NOT NULL,
	CONSTRAINT "isp_layout_attributes_layout_id_attribute_id_pk" PRIMARY KEY("corp_id","layout_id","attribute_id")
);
--> statement-breakpoint
ALTER TABLE "isp_layout_attributes" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_layouts" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"manufacturer_id" text,
	"description" text,
	"status" boolean DEFAULT true NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "isp_layouts_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "isp_layouts_name_unique" UNIQUE("corp_id","name")
);
--> statement-breakpoint
ALTER TABLE "isp_layouts" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_manufacturers" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"status" boolean DEFAULT true NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "isp_manufacturers_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "isp_manufacturers_name_unique" UNIQUE("corp_id","name")
);
--> statement-breakpoint
ALTER TABLE "isp_manufacturers" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_nas" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"ip" text NOT NULL,
	"secret_hash" text NOT NULL,
	"secret_salt" text NOT NULL,
	"secret_enc" text,
	"coa_port" bigint DEFAULT 3799 NOT NULL,
	"manufacturer_id" text,
	"pop_id" text,
	"layout_id" text,
	"status" boolean DEFAULT true NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "isp_nas_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "isp_nas_name_unique" UNIQUE("corp_id","name"),
	CONSTRAINT "isp_nas_ip_unique" UNIQUE("corp_id","ip")
);
--> statement-breakpoint
ALTER TABLE "isp_nas" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_pools" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"version" bigint NOT NULL,
	"cidr" text NOT NULL,
	"pop_id" text,
	"nas_id" text,
	"status" boolean DEFAULT true NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "isp_pools_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "isp_pools_name_unique" UNIQUE("corp_id","name")
);
--> statement-breakpoint
ALTER TABLE "isp_pools" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_pops" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"address_line1" text,
	"address_line2" text,
	"address_district" text,
	"address_postal_code" text,
	"address_detail" text,
	"address_latitude" double precision,
	"address_longitude" double precision,
	"address_city_id" text,
	"status" boolean DEFAULT true NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "isp_pops_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "isp_pops_name_unique" UNIQUE("corp_id","name")
);
--> statement-breakpoint
ALTER TABLE "isp_pops" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_radius_accounting" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"nas_id" text NOT NULL,
	"nas_ip" text NOT NULL,
	"username" text NOT NULL,
	"contract_id" text,
	"session_id" text NOT NULL,
	"radius_session_id" text,
	"unique_session_id" text,
	"status_type" text NOT NULL,
	"session_time" bigint NOT NULL,
	"input_octets" bigint,
	"output_octets" bigint,
	"input_packets" bigint,
	"output_packets" bigint,
	"framed_ip" text,
	"framed_ipv6_prefix" text,
	"calling_station_id" text,
	"terminate_cause" text,
	"event_at" text NOT NULL,
	"received_at" text NOT NULL,
	"attributes" text NOT NULL,
	CONSTRAINT "isp_radius_accounting_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "isp_radius_accounting" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_radius_attempts" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"at" text NOT NULL,
	"username" text NOT NULL,
	"nas_id" text,
	"nas_ip" text NOT NULL,
	"outcome" text NOT NULL,
	"reason" text NOT NULL,
	CONSTRAINT "isp_radius_attempts_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "isp_radius_attempts" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_radius_attributes" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"manufacturer_id" text,
	"type" text NOT NULL,
	"description" text,
	"status" boolean DEFAULT true NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "isp_radius_attributes_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "isp_radius_attributes" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_radius_sessions" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"nas_id" text NOT NULL,
	"acct_session_id" text NOT NULL,
	"username" text NOT NULL,
	"contract_id" text,
	"framed_ip" text,
	"calling_station_id" text,
	"started_at" text NOT NULL,
	"updated_at" text NOT NULL,
	"stopped_at" text,
	"open" boolean NOT NULL,
	"stale_at" text NOT NULL,
	"input_bytes" bigint DEFAULT 0 NOT NULL,
	"output_bytes" bigint DEFAULT 0 NOT NULL,
	"input_packets" bigint DEFAULT 0 NOT NULL,
	"output_packets" bigint DEFAULT 0 NOT NULL,
	"session_time" bigint DEFAULT 0 NOT NULL,
	"terminate_cause" text,
	"received_at" text NOT NULL,
	"created_at" text NOT NULL,
	CONSTRAINT "isp_radius_sessions_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "isp_radius_sessions" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "metric_values" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"seq" bigint GENERATED BY DEFAULT AS IDENTITY (sequence name "metric_values_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"metric_id" text NOT NULL,
	"at" text NOT NULL,
	"at_ms" bigint NOT NULL,
	"value" "bytea" NOT NULL,
	CONSTRAINT "metric_values_pkey" PRIMARY KEY("corp_id","seq")
);
--> statement-breakpoint
ALTER TABLE "metric_values" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "metrics" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"endpoint" text,
	"data_type" text NOT NULL,
	"periodicity" text NOT NULL,
	"start_date" text NOT NULL,
	"end_date" text,
	"daily_start_time" text DEFAULT '00:00' NOT NULL,
	"daily_end_time" text DEFAULT '00:00' NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "metrics_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "metrics_name_unique" UNIQUE("corp_id","name")
);
--> statement-breakpoint
ALTER TABLE "metrics" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "notes" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"user_id" text NOT NULL,
	"title" text,
	"content" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "notes_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "notes" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "persons" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"display_name" text,
	"tp_doc_identity" text,
	"doc_identity" text,
	"corporate" boolean DEFAULT false NOT NULL,
	"email" text,
	"phone" text,
	"address_line1" text,
	"address_line2" text,
	"address_district" text,
	"address_postal_code" text,
	"address_detail" text,
	"address_latitude" double precision,
	"address_longitude" double precision,
	"address_city_id" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "persons_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "persons" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "product_classifications" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"product_id" text NOT NULL,
	"classification_id" text NOT NULL,
	CONSTRAINT "product_classifications_product_id_classification_id_pk" PRIMARY KEY("corp_id","product_id","classification_id")
);
--> statement-breakpoint
ALTER TABLE "product_classifications" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "products" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"identity" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"price" double precision,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "products_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "products_identity_unique" UNIQUE("corp_id","identity")
);
--> statement-breakpoint
ALTER TABLE "products" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "qr_accesses" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"seq" bigint GENERATED BY DEFAULT AS IDENTITY (sequence name "qr_accesses_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text NOT NULL,
	"qrcode_id" text NOT NULL,
	"at" text NOT NULL,
	"ip" text NOT NULL,
	"user_agent" text,
	"referer" text,
	"bot" boolean DEFAULT false NOT NULL,
	"visitor" bigint,
	CONSTRAINT "qr_accesses_pkey" PRIMARY KEY("corp_id","seq")
);
--> statement-breakpoint
ALTER TABLE "qr_accesses" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "qr_campaigns" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"start_date" text,
	"end_date" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "qr_campaigns_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "qr_campaigns_name_unique" UNIQUE("corp_id","name")
);
--> statement-breakpoint
ALTER TABLE "qr_campaigns" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "qr_categories" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "qr_categories_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "qr_categories_name_unique" UNIQUE("corp_id","name")
);
--> statement-breakpoint
ALTER TABLE "qr_categories" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "qr_codes" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"content" text,
	"target" text,
	"slug" text,
	"campaign_id" text,
	"category_id" text,
	"logo_id" text,
	"status" boolean DEFAULT true NOT NULL,
	"scans" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "qr_codes_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "qr_codes_slug_unique" UNIQUE("corp_id","slug")
);
--> statement-breakpoint
ALTER TABLE "qr_codes" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "qr_logos" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"content_type" text NOT NULL,
	"data" "bytea" NOT NULL,
	"size" bigint NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "qr_logos_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "qr_logos" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"webhook_id" text NOT NULL,
	"source_event_id" text NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" bigint DEFAULT 0 NOT NULL,
	"response_status" bigint,
	"error" text,
	"next_attempt_at" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY("corp_id","id"),
	CONSTRAINT "webhook_deliveries_event_id_unique" UNIQUE("corp_id","event_id")
);
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "webhook_groups" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"webhook_id" text NOT NULL,
	"group" text NOT NULL,
	CONSTRAINT "webhook_groups_webhook_id_group_pk" PRIMARY KEY("corp_id","webhook_id","group")
);
--> statement-breakpoint
ALTER TABLE "webhook_groups" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "webhooks" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"target" text NOT NULL,
	"email" text NOT NULL,
	"body_content" text,
	"log_enabled" boolean DEFAULT false NOT NULL,
	"status" boolean DEFAULT true NOT NULL,
	"secret" text NOT NULL,
	"failure_count" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "webhooks_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "webhooks" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "actions" ADD CONSTRAINT "actions_feature_id_features_id_fk" FOREIGN KEY ("feature_id") REFERENCES "public"."features"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "corp_members" ADD CONSTRAINT "corp_members_corp_id_corporations_id_fk" FOREIGN KEY ("corp_id") REFERENCES "public"."corporations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "corp_members" ADD CONSTRAINT "corp_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "corp_services" ADD CONSTRAINT "corp_services_corp_id_corporations_id_fk" FOREIGN KEY ("corp_id") REFERENCES "public"."corporations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "corp_services" ADD CONSTRAINT "corp_services_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "corporations" ADD CONSTRAINT "corporations_server_id_servers_id_fk" FOREIGN KEY ("server_id") REFERENCES "public"."servers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "external_identities" ADD CONSTRAINT "external_identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "features" ADD CONSTRAINT "features_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "login_failures" ADD CONSTRAINT "login_failures_corp_id_corporations_id_fk" FOREIGN KEY ("corp_id") REFERENCES "public"."corporations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "menus" ADD CONSTRAINT "menus_parent_id_menus_id_fk" FOREIGN KEY ("parent_id") REFERENCES "public"."menus"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "menus" ADD CONSTRAINT "menus_feature_id_features_id_fk" FOREIGN KEY ("feature_id") REFERENCES "public"."features"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "password_reset_keys" ADD CONSTRAINT "password_reset_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_slugs" ADD CONSTRAINT "qr_slugs_corp_id_corporations_id_fk" FOREIGN KEY ("corp_id") REFERENCES "public"."corporations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "remembered_devices" ADD CONSTRAINT "remembered_devices_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "safe_ip_ranges" ADD CONSTRAINT "safe_ip_ranges_corp_id_corporations_id_fk" FOREIGN KEY ("corp_id") REFERENCES "public"."corporations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workgroup_features" ADD CONSTRAINT "workgroup_features_workgroup_id_workgroups_id_fk" FOREIGN KEY ("workgroup_id") REFERENCES "public"."workgroups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workgroup_features" ADD CONSTRAINT "workgroup_features_feature_id_features_id_fk" FOREIGN KEY ("feature_id") REFERENCES "public"."features"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workgroup_members" ADD CONSTRAINT "workgroup_members_workgroup_id_workgroups_id_fk" FOREIGN KEY ("workgroup_id") REFERENCES "public"."workgroups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workgroup_members" ADD CONSTRAINT "workgroup_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workgroup_services" ADD CONSTRAINT "workgroup_services_workgroup_id_workgroups_id_fk" FOREIGN KEY ("workgroup_id") REFERENCES "public"."workgroups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workgroup_services" ADD CONSTRAINT "workgroup_services_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workgroups" ADD CONSTRAINT "workgroups_corp_id_corporations_id_fk" FOREIGN KEY ("corp_id") REFERENCES "public"."corporations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contract_configs" ADD CONSTRAINT "contract_configs_contract_id_contracts_id_fk" FOREIGN KEY ("corp_id","contract_id") REFERENCES "public"."contracts"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contract_flags" ADD CONSTRAINT "contract_flags_contract_id_contracts_id_fk" FOREIGN KEY ("corp_id","contract_id") REFERENCES "public"."contracts"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contract_flags" ADD CONSTRAINT "contract_flags_classification_id_classifications_id_fk" FOREIGN KEY ("corp_id","classification_id") REFERENCES "public"."classifications"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contract_items" ADD CONSTRAINT "contract_items_contract_id_contracts_id_fk" FOREIGN KEY ("corp_id","contract_id") REFERENCES "public"."contracts"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contract_items" ADD CONSTRAINT "contract_items_product_id_products_id_fk" FOREIGN KEY ("corp_id","product_id") REFERENCES "public"."products"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_customer_id_persons_id_fk" FOREIGN KEY ("corp_id","customer_id") REFERENCES "public"."persons"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_billing_customer_id_persons_id_fk" FOREIGN KEY ("corp_id","billing_customer_id") REFERENCES "public"."persons"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_agent_id_persons_id_fk" FOREIGN KEY ("corp_id","agent_id") REFERENCES "public"."persons"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_address_city_id_cities_id_fk" FOREIGN KEY ("corp_id","address_city_id") REFERENCES "public"."cities"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "external_links" ADD CONSTRAINT "external_links_external_app_id_external_apps_id_fk" FOREIGN KEY ("corp_id","external_app_id") REFERENCES "public"."external_apps"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "isp_layout_attributes" ADD CONSTRAINT "isp_layout_attributes_layout_id_isp_layouts_id_fk" FOREIGN KEY ("corp_id","layout_id") REFERENCES "public"."isp_layouts"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "isp_layout_attributes" ADD CONSTRAINT "isp_layout_attributes_attribute_id_isp_radius_attributes_id_fk" FOREIGN KEY ("corp_id","attribute_id") REFERENCES "public"."isp_radius_attributes"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "isp_layouts" ADD CONSTRAINT "isp_layouts_manufacturer_id_isp_manufacturers_id_fk" FOREIGN KEY ("corp_id","manufacturer_id") REFERENCES "public"."isp_manufacturers"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "isp_nas" ADD CONSTRAINT "isp_nas_manufacturer_id_isp_manufacturers_id_fk" FOREIGN KEY ("corp_id","manufacturer_id") REFERENCES "public"."isp_manufacturers"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "isp_nas" ADD CONSTRAINT "isp_nas_pop_id_isp_pops_id_fk" FOREIGN KEY ("corp_id","pop_id") REFERENCES "public"."isp_pops"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "isp_nas" ADD CONSTRAINT "isp_nas_layout_id_isp_layouts_id_fk" FOREIGN KEY ("corp_id","layout_id") REFERENCES "public"."isp_layouts"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "isp_pools" ADD CONSTRAINT "isp_pools_pop_id_isp_pops_id_fk" FOREIGN KEY ("corp_id","pop_id") REFERENCES "public"."isp_pops"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "isp_pools" ADD CONSTRAINT "isp_pools_nas_id_isp_nas_id_fk" FOREIGN KEY ("corp_id","nas_id") REFERENCES "public"."isp_nas"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "isp_pops" ADD CONSTRAINT "isp_pops_address_city_id_cities_id_fk" FOREIGN KEY ("corp_id","address_city_id") REFERENCES "public"."cities"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "isp_radius_attributes" ADD CONSTRAINT "isp_radius_attributes_manufacturer_id_isp_manufacturers_id_fk" FOREIGN KEY ("corp_id","manufacturer_id") REFERENCES "public"."isp_manufacturers"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "metric_values" ADD CONSTRAINT "metric_values_metric_id_metrics_id_fk" FOREIGN KEY ("corp_id","metric_id") REFERENCES "public"."metrics"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "persons" ADD CONSTRAINT "persons_address_city_id_cities_id_fk" FOREIGN KEY ("corp_id","address_city_id") REFERENCES "public"."cities"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_classifications" ADD CONSTRAINT "product_classifications_product_id_products_id_fk" FOREIGN KEY ("corp_id","product_id") REFERENCES "public"."products"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_classifications" ADD CONSTRAINT "product_classifications_classification_id_classifications_id_fk" FOREIGN KEY ("corp_id","classification_id") REFERENCES "public"."classifications"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_accesses" ADD CONSTRAINT "qr_accesses_qrcode_id_qr_codes_id_fk" FOREIGN KEY ("corp_id","qrcode_id") REFERENCES "public"."qr_codes"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_codes" ADD CONSTRAINT "qr_codes_campaign_id_qr_campaigns_id_fk" FOREIGN KEY ("corp_id","campaign_id") REFERENCES "public"."qr_campaigns"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_codes" ADD CONSTRAINT "qr_codes_category_id_qr_categories_id_fk" FOREIGN KEY ("corp_id","category_id") REFERENCES "public"."qr_categories"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_codes" ADD CONSTRAINT "qr_codes_logo_id_qr_logos_id_fk" FOREIGN KEY ("corp_id","logo_id") REFERENCES "public"."qr_logos"("corp_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("corp_id","webhook_id") REFERENCES "public"."webhooks"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_groups" ADD CONSTRAINT "webhook_groups_webhook_id_webhooks_id_fk" FOREIGN KEY ("corp_id","webhook_id") REFERENCES "public"."webhooks"("corp_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_at" ON "audit_log" USING btree ("at");--> statement-breakpoint
CREATE INDEX "audit_log_actor" ON "audit_log" USING btree ("actor_user_id","at");--> statement-breakpoint
CREATE INDEX "audit_log_corp" ON "audit_log" USING btree ("corp_id","at");--> statement-breakpoint
CREATE INDEX "corp_members_user" ON "corp_members" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "corp_services_service" ON "corp_services" USING btree ("service_id");--> statement-breakpoint
CREATE INDEX "external_identities_user" ON "external_identities" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "menus_parent" ON "menus" USING btree ("parent_id");--> statement-breakpoint
CREATE INDEX "menus_feature" ON "menus" USING btree ("feature_id");--> statement-breakpoint
CREATE INDEX "password_reset_keys_user" ON "password_reset_keys" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "qr_slugs_corp" ON "qr_slugs" USING btree ("corp_id");--> statement-breakpoint
CREATE INDEX "remembered_devices_user" ON "remembered_devices" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "sessions_user" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "sessions_corp" ON "sessions" USING btree ("corp_id");--> statement-breakpoint
CREATE INDEX "workgroup_members_user" ON "workgroup_members" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "cities_state" ON "cities" USING btree ("corp_id","state");--> statement-breakpoint
CREATE INDEX "cities_country" ON "cities" USING btree ("corp_id","country");--> statement-breakpoint
CREATE INDEX "contract_flags_classification" ON "contract_flags" USING btree ("corp_id","classification_id");--> statement-breakpoint
CREATE INDEX "contract_items_contract" ON "contract_items" USING btree ("corp_id","contract_id","position");--> statement-breakpoint
CREATE INDEX "contract_items_product" ON "contract_items" USING btree ("corp_id","product_id");--> statement-breakpoint
CREATE INDEX "contracts_customer" ON "contracts" USING btree ("corp_id","customer_id");--> statement-breakpoint
CREATE INDEX "contracts_billing_customer" ON "contracts" USING btree ("corp_id","billing_customer_id");--> statement-breakpoint
CREATE INDEX "contracts_agent" ON "contracts" USING btree ("corp_id","agent_id");--> statement-breakpoint
CREATE INDEX "contracts_status" ON "contracts" USING btree ("corp_id","contract_status");--> statement-breakpoint
CREATE INDEX "contracts_stage" ON "contracts" USING btree ("corp_id","contract_stage");--> statement-breakpoint
CREATE INDEX "contracts_start_date" ON "contracts" USING btree ("corp_id","start_date");--> statement-breakpoint
CREATE INDEX "contracts_signature_date" ON "contracts" USING btree ("corp_id","signature_date");--> statement-breakpoint
CREATE INDEX "contracts_approval_date" ON "contracts" USING btree ("corp_id","approval_date");--> statement-breakpoint
CREATE INDEX "contracts_end_date" ON "contracts" USING btree ("corp_id","end_date");--> statement-breakpoint
CREATE INDEX "contracts_suspension_date" ON "contracts" USING btree ("corp_id","suspension_date");--> statement-breakpoint
CREATE INDEX "contracts_cancellation_date" ON "contracts" USING btree ("corp_id","cancellation_date");--> statement-breakpoint
CREATE INDEX "contracts_total_value" ON "contracts" USING btree ("corp_id","total_value");--> statement-breakpoint
CREATE INDEX "contracts_city" ON "contracts" USING btree ("corp_id","address_city_id");--> statement-breakpoint
CREATE INDEX "events_pending" ON "events" USING btree ("corp_id","dispatched_at","seq");--> statement-breakpoint
CREATE INDEX "external_apps_status" ON "external_apps" USING btree ("corp_id","status");--> statement-breakpoint
CREATE INDEX "external_apps_key_prefix" ON "external_apps" USING btree ("corp_id","key_prefix");--> statement-breakpoint
CREATE INDEX "external_links_by_record" ON "external_links" USING btree ("corp_id","record_type","record_id");--> statement-breakpoint
CREATE INDEX "isp_layout_attributes_attribute" ON "isp_layout_attributes" USING btree ("corp_id","attribute_id");--> statement-breakpoint
CREATE INDEX "isp_layouts_vendor" ON "isp_layouts" USING btree ("corp_id","manufacturer_id");--> statement-breakpoint
CREATE INDEX "isp_nas_vendor" ON "isp_nas" USING btree ("corp_id","manufacturer_id");--> statement-breakpoint
CREATE INDEX "isp_nas_pop" ON "isp_nas" USING btree ("corp_id","pop_id");--> statement-breakpoint
CREATE INDEX "isp_nas_layout" ON "isp_nas" USING btree ("corp_id","layout_id");--> statement-breakpoint
CREATE INDEX "isp_pools_pop" ON "isp_pools" USING btree ("corp_id","pop_id");--> statement-breakpoint
CREATE INDEX "isp_pools_nas" ON "isp_pools" USING btree ("corp_id","nas_id");--> statement-breakpoint
CREATE INDEX "isp_pops_city" ON "isp_pops" USING btree ("corp_id","address_city_id");--> statement-breakpoint
CREATE UNIQUE INDEX "isp_radius_accounting_session_record" ON "isp_radius_accounting" USING btree ("corp_id","radius_session_id","status_type","session_time");--> statement-breakpoint
CREATE INDEX "isp_radius_accounting_user" ON "isp_radius_accounting" USING btree ("corp_id","username","received_at");--> statement-breakpoint
CREATE INDEX "isp_radius_accounting_contract" ON "isp_radius_accounting" USING btree ("corp_id","contract_id");--> statement-breakpoint
CREATE INDEX "isp_radius_attempts_at" ON "isp_radius_attempts" USING btree ("corp_id","at");--> statement-breakpoint
CREATE INDEX "isp_radius_attempts_username" ON "isp_radius_attempts" USING btree ("corp_id","username","at");--> statement-breakpoint
CREATE UNIQUE INDEX "isp_radius_attributes_name_vendor" ON "isp_radius_attributes" USING btree ("corp_id","name","manufacturer_id");--> statement-breakpoint
CREATE INDEX "isp_radius_attributes_vendor" ON "isp_radius_attributes" USING btree ("corp_id","manufacturer_id");--> statement-breakpoint
CREATE INDEX "isp_radius_sessions_key" ON "isp_radius_sessions" USING btree ("corp_id","nas_id","acct_session_id","started_at");--> statement-breakpoint
CREATE INDEX "isp_radius_sessions_open" ON "isp_radius_sessions" USING btree ("corp_id","open","stale_at");--> statement-breakpoint
CREATE INDEX "isp_radius_sessions_started" ON "isp_radius_sessions" USING btree ("corp_id","started_at");--> statement-breakpoint
CREATE INDEX "isp_radius_sessions_contract" ON "isp_radius_sessions" USING btree ("corp_id","contract_id","started_at");--> statement-breakpoint
CREATE INDEX "isp_radius_sessions_username" ON "isp_radius_sessions" USING btree ("corp_id","username","started_at");--> statement-breakpoint
CREATE INDEX "metric_values_metric_at" ON "metric_values" USING btree ("corp_id","metric_id","at_ms","value");--> statement-breakpoint
CREATE INDEX "notes_user" ON "notes" USING btree ("corp_id","user_id","id");--> statement-breakpoint
CREATE INDEX "persons_search" ON "persons" USING btree ("corp_id","name","display_name","doc_identity");--> statement-breakpoint
CREATE INDEX "persons_display_name" ON "persons" USING btree ("corp_id","display_name");--> statement-breakpoint
CREATE INDEX "persons_doc_identity" ON "persons" USING btree ("corp_id","doc_identity");--> statement-breakpoint
CREATE INDEX "persons_tp_doc_identity" ON "persons" USING btree ("corp_id","tp_doc_identity");--> statement-breakpoint
CREATE INDEX "persons_email" ON "persons" USING btree ("corp_id","email");--> statement-breakpoint
CREATE INDEX "persons_phone" ON "persons" USING btree ("corp_id","phone");--> statement-breakpoint
CREATE INDEX "persons_corporate" ON "persons" USING btree ("corp_id","corporate");--> statement-breakpoint
CREATE INDEX "persons_city" ON "persons" USING btree ("corp_id","address_city_id");--> statement-breakpoint
CREATE INDEX "product_classifications_classification" ON "product_classifications" USING btree ("corp_id","classification_id");--> statement-breakpoint
CREATE INDEX "products_name" ON "products" USING btree ("corp_id","name");--> statement-breakpoint
CREATE INDEX "products_price" ON "products" USING btree ("corp_id","price");--> statement-breakpoint
CREATE INDEX "qr_accesses_code_at" ON "qr_accesses" USING btree ("corp_id","qrcode_id","at","visitor");--> statement-breakpoint
CREATE INDEX "qr_codes_campaign" ON "qr_codes" USING btree ("corp_id","campaign_id");--> statement-breakpoint
CREATE INDEX "qr_codes_category" ON "qr_codes" USING btree ("corp_id","category_id");--> statement-breakpoint
CREATE INDEX "qr_codes_logo" ON "qr_codes" USING btree ("corp_id","logo_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries" USING btree ("corp_id","status","webhook_id","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook" ON "webhook_deliveries" USING btree ("corp_id","webhook_id","id");--> statement-breakpoint
CREATE INDEX "webhook_groups_group" ON "webhook_groups" USING btree ("corp_id","group");--> statement-breakpoint
CREATE POLICY "tenant" ON "cities" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "classifications" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "contract_configs" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "contract_flags" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "contract_items" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "contracts" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "events" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "external_apps" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "external_links" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_layout_attributes" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_layouts" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_manufacturers" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_nas" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_pools" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_pops" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_radius_accounting" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_radius_attempts" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_radius_attributes" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_radius_sessions" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "metric_values" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "metrics" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "notes" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "persons" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "product_classifications" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "products" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "qr_accesses" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "qr_campaigns" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "qr_categories" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "qr_codes" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "qr_logos" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "webhook_deliveries" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "webhook_groups" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "webhooks" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));