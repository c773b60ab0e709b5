// Cluster mode keeps corporations apart only by row-level security (issue 29 defect 1): the tenant
// tables' policy "tenant" shows a session the rows of the corporation it set, and nothing else.
// A role that is superuser or BYPASSRLS, or that owns a table whose row-level security is not
// FORCEd, is not held to it; a table without row-level security enabled or without its policy
// holds nobody. Then every corporation reads every other's rows, silently. So a serving node
// checks its role with `roleIsolationProblems` at start (before migrating: role attributes; after:
// the tables too) and again when its change feed reconnects, and refuses to serve on any problem
// (`startPgNode` in store.ts). `corpadmin doctor` can report the same list.
import type { SQL } from "bun";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import * as tenantSchema from "./tenant";

export type IsolationProblemKind = "superuser" | "bypassrls" | "table-missing" | "rls-disabled" | "policy-missing" | "policy-wrong" | "policy-extra" | "owner-not-forced";

/** One reason the connected role is not held to row-level security, with how to fix it. */
export interface IsolationProblem {
  kind: IsolationProblemKind;
  /** The connected role (current_user). */
  role: string;
  /** The tenant table concerned; absent for the role's own attributes. */
  table?: string;
  /** What is wrong, naming the role (and table). */
  message: string;
  /** What to run or change (SQL for a superuser, or another URL). */
  fix: string;
}

/** The tenant tables, with row-level security and the policy "tenant" (src/db/pg/tenant.ts). */
export const TENANT_TABLES: string[] = (Object.values(tenantSchema) as unknown[])
  .filter((v): v is PgTable => is(v, PgTable))
  .map((t) => getTableConfig(t))
  .filter((t) => t.policies.some((p) => p.name === "tenant"))
  .map((t) => t.name)
  .sort();

/** The policy's expression as pg_get_expr prints it, for both USING and WITH CHECK. */
const TENANT_EXPR = /^\(corp_id = current_setting\('corpadmin\.corp_id'::text\)\)$/;

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Everything that lets the connected role see or write another corporation's rows; empty when it
 * is held to row-level security on every tenant table. `tables: false` checks the role's
 * attributes only (before migrating, when tables may not exist yet).
 */
export async function roleIsolationProblems(sql: SQL, { tables = true }: { tables?: boolean } = {}): Promise<IsolationProblem[]> {
  const problems: IsolationProblem[] = [];
  const [me] = (await sql`SELECT current_user AS role, rolsuper AS superuser, rolbypassrls AS bypass FROM pg_roles WHERE rolname = current_user`) as {
    role: string;
    superuser: boolean;
    bypass: boolean;
  }[];
  const role = me.role;
  const add = (kind: IsolationProblemKind, message: string, fix: string, table?: string) => problems.push({ kind, role, ...(table ? { table } : {}), message, fix });
  const ownRole =
    "give --database-url (CORPADMIN_DATABASE_URL) a role that is neither superuser nor BYPASSRLS and owns the database: as a superuser, " +
    "CREATE ROLE corpadmin LOGIN PASSWORD '...'; CREATE DATABASE corpadmin OWNER corpadmin (deploy/cluster/README.md, step 2)";
  if (me.superuser) add("superuser", `role "${role}" is a superuser, which row-level security never holds: every corporation would read every other's rows`, ownRole);
  // A superuser bypasses anyway: its BYPASSRLS is not a second problem.
  else if (me.bypass) add("bypassrls", `role "${role}" has BYPASSRLS: row-level security does not hold it, every corporation would read every other's rows`, `as a superuser, ALTER ROLE ${ident(role)} NOBYPASSRLS; or ${ownRole}`);
  if (!tables) return problems;

  const rows = (await sql`SELECT c.relname AS name, c.relrowsecurity AS enabled, c.relforcerowsecurity AS forced,
      pg_has_role(current_user, c.relowner, 'USAGE') AS owned, pg_get_userbyid(c.relowner) AS owner
    FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND c.relname = ANY(${TENANT_TABLES}::text[])`) as {
    name: string;
    enabled: boolean;
    forced: boolean;
    owned: boolean;
    owner: string;
  }[];
  const policies = (await sql`SELECT c.relname AS table, p.polname AS name, p.polcmd AS cmd, p.polpermissive AS permissive, p.polroles = '{0}'::oid[] AS public,
      pg_get_expr(p.polqual, p.polrelid) AS qual, pg_get_expr(p.polwithcheck, p.polrelid) AS check
    FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY(${TENANT_TABLES}::text[])`) as {
    table: string;
    name: string;
    cmd: string;
    permissive: boolean;
    public: boolean;
    qual: string | null;
    check: string | null;
  }[];
  const byName = new Map(rows.map((r) => [r.name, r]));
  const migrate = "run `corpadmin migrate` as the tables' owner (it creates the table, its policy and forces row-level security)";
  for (const name of TENANT_TABLES) {
    const t = byName.get(name);
    if (!t) {
      add("table-missing", `tenant table "${name}" does not exist in the current schema of role "${role}"`, migrate, name);
      continue;
    }
    if (!t.enabled) add("rls-disabled", `tenant table "${name}" has row-level security disabled: its policy holds nobody`, `ALTER TABLE ${ident(name)} ENABLE ROW LEVEL SECURITY`, name);
    const own = policies.filter((p) => p.table === name);
    const tenant = own.find((p) => p.name === "tenant");
    if (!tenant)
      add(
        "policy-missing",
        `tenant table "${name}" has no policy "tenant": role "${role}" would see no row, or with row-level security off every corporation's`,
        `CREATE POLICY tenant ON ${ident(name)} AS PERMISSIVE FOR ALL TO public USING (corp_id = current_setting('corpadmin.corp_id')) WITH CHECK (corp_id = current_setting('corpadmin.corp_id'))`,
        name,
      );
    else if (tenant.cmd !== "*" || !tenant.permissive || !tenant.public || !TENANT_EXPR.test(tenant.qual ?? "") || !TENANT_EXPR.test(tenant.check ?? ""))
      add(
        "policy-wrong",
        `tenant table "${name}": policy "tenant" is not corpadmin's (FOR ALL TO public USING and WITH CHECK corp_id = current_setting('corpadmin.corp_id'); found USING ${tenant.qual ?? "none"}, WITH CHECK ${tenant.check ?? "none"})`,
        `DROP POLICY tenant ON ${ident(name)}, then ${migrate.replace("run ", "")}, or recreate it as in src/db/pg/tenant.ts`,
        name,
      );
    // Permissive policies are OR-ed: any other one widens what a corporation sees.
    for (const other of own.filter((p) => p.name !== "tenant" && p.permissive))
      add("policy-extra", `tenant table "${name}" has another permissive policy "${other.name}", which widens what each corporation sees (USING ${other.qual ?? "none"})`, `DROP POLICY ${ident(other.name)} ON ${ident(name)}`, name);
    if (t.owned && !t.forced)
      add(
        "owner-not-forced",
        `role "${role}" owns tenant table "${name}" (owner "${t.owner}") without FORCE ROW LEVEL SECURITY: a table's owner bypasses its policies`,
        `ALTER TABLE ${ident(name)} FORCE ROW LEVEL SECURITY`,
        name,
      );
  }
  return problems;
}

/** The problems as the lines of one message: what is wrong and the fix, each. */
export function describeIsolationProblems(problems: IsolationProblem[]): string {
  const role = problems[0]?.role ?? "?";
  return (
    `cluster mode refuses to serve as database role "${role}": corporations are kept apart by row-level security, which does not hold this role:\n` +
    problems.map((p) => `  - ${p.message}.\n    Fix: ${p.fix}`).join("\n")
  );
}
