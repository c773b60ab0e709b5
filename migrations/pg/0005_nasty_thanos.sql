CREATE TABLE "isp_usage_daily" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"contract_id" text NOT NULL,
	"day" text NOT NULL,
	"input_bytes" bigint DEFAULT 0 NOT NULL,
	"output_bytes" bigint DEFAULT 0 NOT NULL,
	"session_seconds" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "isp_usage_daily_contract_id_day_pk" PRIMARY KEY("corp_id","contract_id","day")
);
--> statement-breakpoint
ALTER TABLE "isp_usage_daily" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE INDEX "isp_usage_daily_day" ON "isp_usage_daily" USING btree ("corp_id","day","contract_id","input_bytes","output_bytes");--> statement-breakpoint
CREATE POLICY "tenant" ON "isp_usage_daily" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));