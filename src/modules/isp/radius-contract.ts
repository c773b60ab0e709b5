// The contract RADIUS authorize checks on every Access-Request: its connection settings by user
// name and the few contract fields the templates use. Two single-table reads prepared once per
// corporation connection: bun:sqlite runs a two-table join at several µs more than two primary-key
// or unique-index reads, and the whole contract row carries its JSON documents.
import type { Database, Statement } from "bun:sqlite";
import type { TenantDb } from "../../db/sqlite";
import type { ContractByUsername } from "../contract/service";
import type { RenderInput } from "./render";

type Config = ContractByUsername["config"];
type ContractFields = RenderInput["contract"];

interface Statements {
  config: Statement<Config & { contract_id: string }, [string]>;
  contract: Statement<ContractFields, [string]>;
}

const prepared = new WeakMap<Database, Statements>();

function statements(db: TenantDb): Statements {
  let s = prepared.get(db.$client);
  if (!s) {
    s = {
      config: db.$client.prepare(
        `SELECT contract_id, username, password, min_upload, max_upload, min_download, max_download,
                pool_name_ipv4, ipv4, poll_name_ipv6, ipv6
           FROM contract_configs WHERE username = ?1`,
      ),
      contract: db.$client.prepare("SELECT id, number, contract_status, contract_stage, customer_id FROM contracts WHERE id = ?1"),
    };
    prepared.set(db.$client, s);
  }
  return s;
}

/** The contract id behind a connection user name (accounting needs no more). */
export function contractIdOf(db: TenantDb, username: string): string | null {
  return statements(db).config.get(username)?.contract_id ?? null;
}

/** The contract whose connection user name is `username`, with its settings (password in clear). */
export function radiusContract(db: TenantDb, username: string): { contract: ContractFields; config: Config } | null {
  const s = statements(db);
  const row = s.config.get(username);
  if (!row) return null;
  const contract = s.contract.get(row.contract_id);
  if (!contract) return null;
  const { contract_id: _, ...config } = row;
  return { contract, config };
}
