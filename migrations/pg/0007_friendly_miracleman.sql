CREATE TABLE "isp_contract_network" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"contract_id" text NOT NULL,
	"throttled_cycle" text,
	"throttled_at" text,
	"trusted_at" text,
	"trusted_until" text,
	"updated_at" text NOT NULL,
	CONSTRAINT "isp_contract_network_pkey" PRIMARY KEY("corp_id","contract_id")
);
--> statement-breakpoint
ALTER TABLE "isp_contract_network" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "isp_network_policy" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"usage_cycle_day" bigint NOT NULL,
	"suspended_mode" text NOT NULL,
	"suspended_max_upload" text,
	"suspended_max_download" text,
	"suspended_pool_ipv4" text,
	"trust_unblock_days" bigint NOT NULL,
	"trust_unblock_every_days" bigint NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "isp_network_policy_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "isp_network_policy" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "contract_configs" ADD COLUMN "allowance_gb" double precision;--> statement-breakpoint
ALTER TABLE "contract_configs" ADD COLUMN "throttle_max_upload" text;--> statement-breakpoint
ALTER TABLE "contract_configs" ADD COLUMN "throttle_max_download" text;--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_contract_network" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_network_policy" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));