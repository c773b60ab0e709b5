import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/platform/schema.ts",
  out: "./migrations/platform",
});
