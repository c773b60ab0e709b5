ALTER TABLE "corporations" ADD COLUMN "noc_email" text;--> statement-breakpoint
ALTER TABLE "isp_nas" ADD COLUMN "last_accounting_at" text;--> statement-breakpoint
ALTER TABLE "isp_nas" ADD COLUMN "open_sessions" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "isp_nas" ADD COLUMN "quiet_after" text;--> statement-breakpoint
ALTER TABLE "isp_nas" ADD COLUMN "quiet_since" text;