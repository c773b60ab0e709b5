DROP INDEX `isp_radius_accounting_user`;--> statement-breakpoint
DROP INDEX `isp_radius_accounting_contract`;