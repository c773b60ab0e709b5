-- Hand-added USING (drizzle-kit writes none, and PostgreSQL has no automatic cast from bytea): no cluster holds data yet; a value stored as JSON bytes would convert.
ALTER TABLE "metric_values" ALTER COLUMN "value" SET DATA TYPE jsonb USING convert_from("value", 'UTF8')::jsonb;
