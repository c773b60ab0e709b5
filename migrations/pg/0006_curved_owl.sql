CREATE TABLE "isp_usage_monthly" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"contract_id" text NOT NULL,
	"month" text NOT NULL,
	"input_bytes" bigint DEFAULT 0 NOT NULL,
	"output_bytes" bigint DEFAULT 0 NOT NULL,
	"session_seconds" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "isp_usage_monthly_contract_id_month_pk" PRIMARY KEY("corp_id","contract_id","month")
);
--> statement-breakpoint
ALTER TABLE "isp_usage_monthly" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE INDEX "isp_usage_monthly_month" ON "isp_usage_monthly" USING btree ("corp_id","month","contract_id","input_bytes","output_bytes");--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_usage_monthly" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));--> statement-breakpoint
-- Hand-added after generation: the months of the daily rows already stored, every corporation's.
-- The owner reads every corporation's daily rows only with FORCE lifted (no corporation is set
-- here); the migrator forces row-level security on every table again once the migrations ran.
ALTER TABLE "isp_usage_daily" NO FORCE ROW LEVEL SECURITY;--> statement-breakpoint
INSERT INTO "isp_usage_monthly" ("corp_id", "contract_id", "month", "input_bytes", "output_bytes", "session_seconds") SELECT "corp_id", "contract_id", substr("day", 1, 7), sum("input_bytes"), sum("output_bytes"), sum("session_seconds") FROM "isp_usage_daily" GROUP BY "corp_id", "contract_id", substr("day", 1, 7);
