CREATE TABLE "platform_history" (
	"id" text NOT NULL,
	"at" text NOT NULL,
	"actor" text NOT NULL,
	"actor_user_id" text,
	"actor_app_id" text,
	"corp_id" text,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"action" text NOT NULL,
	"fields" text NOT NULL,
	"changes" text NOT NULL,
	"request_id" text,
	CONSTRAINT "platform_history_pkey" PRIMARY KEY("id")
);
--> statement-breakpoint
CREATE TABLE "history" (
	"corp_id" text DEFAULT current_setting('corpadmin.corp_id') NOT NULL,
	"id" text NOT NULL,
	"at" text NOT NULL,
	"actor" text NOT NULL,
	"actor_user_id" text,
	"actor_app_id" text,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"action" text NOT NULL,
	"fields" text NOT NULL,
	"changes" text NOT NULL,
	"request_id" text,
	CONSTRAINT "history_pkey" PRIMARY KEY("corp_id","id")
);
--> statement-breakpoint
ALTER TABLE "history" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE INDEX "platform_history_at" ON "platform_history" USING btree ("at");--> statement-breakpoint
CREATE INDEX "platform_history_target" ON "platform_history" USING btree ("target_type","target_id","at");--> statement-breakpoint
CREATE INDEX "platform_history_corp" ON "platform_history" USING btree ("corp_id","at");--> statement-breakpoint
CREATE INDEX "history_at" ON "history" USING btree ("corp_id","at");--> statement-breakpoint
CREATE INDEX "history_target" ON "history" USING btree ("corp_id","target_type","target_id","at");--> statement-breakpoint
CREATE POLICY "tenant" ON "history" AS PERMISSIVE FOR ALL TO public USING ("corp_id" = current_setting('corpadmin.corp_id')) WITH CHECK ("corp_id" = current_setting('corpadmin.corp_id'));