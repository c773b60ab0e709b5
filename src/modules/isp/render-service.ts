// Rendering a layout for a contract: each active attribute's template filled from the contract,
// its connection settings, its customer and (optionally) the NAS and its POP. Used by the render
// route and by RADIUS authorize, which runs it on every Access-Request, so reads are prepared
// raw statements and only the records the templates name are read. Every function takes the
// handle of the caller's read (or write); the contract and its customer are read through their
// modules' services on that handle.
import { clientOf } from "../../db/rows";
import type { TenantDb } from "../../db/sqlite";
import type { ContractByUsername, ContractRow } from "../contract/service";
import { findPerson } from "../person/service";
import type { InForce } from "./network-service";
import { popName } from "./pop-service";
import { renderTemplate, type Variables } from "./template";

export interface RenderedAttribute {
  name: string;
  operator: string;
  value: string;
}

export interface RenderNas {
  name: string;
  ip: string;
  pop_id: string | null;
}

type Config = ContractByUsername["config"];

export interface AttributeTemplate {
  name: string;
  operator: string;
  value: string;
}

/** The active attributes of a layout, in order (inactive RADIUS attributes are left out). */
export async function activeTemplates(db: TenantDb, layoutId: string): Promise<AttributeTemplate[]> {
  // RADIUS authorize runs this on every request. A scalar subquery rather than a join, and the
  // order taken in JS rather than by ORDER BY: SQLite's sorter and a join each add several µs to
  // a read of a few rows. The name is null for an inactive attribute.
  const rows = await clientOf(db)
    .query<{ name: string | null; operator: string; value: string; position: number }, [string]>(
      `SELECT (SELECT a.name FROM isp_radius_attributes a WHERE a.id = la.attribute_id AND a.status = 1) AS name,
              la.operator AS operator, la.value AS value, la.position AS position
         FROM isp_layout_attributes la
        WHERE la.layout_id = ?1`,
    )
    .all(layoutId);
  return rows
    .filter((t) => t.name !== null)
    .sort((x, y) => x.position - y.position)
    .map((t) => ({ name: t.name!, operator: t.operator, value: t.value }));
}

export async function layoutStatus(db: TenantDb, layoutId: string): Promise<boolean | null> {
  const row = await clientOf(db).query<{ status: number }, [string]>("SELECT status FROM isp_layouts WHERE id = ?1").get(layoutId);
  return row ? row.status === 1 : null;
}

export interface RenderInput {
  contract: Pick<ContractRow, "id" | "number" | "contract_status" | "contract_stage" | "customer_id">;
  config: Config;
  /** The password as the templates see it (the render route masks it; RADIUS needs it in clear). */
  password: string;
  nas: RenderNas | null;
  /** The state and values in force (network-service.ts networkInForce); absent: the contract's own. */
  network?: InForce;
}

/** Fills the layout's active attributes; those rendering empty or with a variable unset are left out. */
export async function renderLayout(db: TenantDb, layoutId: string, input: RenderInput, given?: AttributeTemplate[]): Promise<RenderedAttribute[]> {
  const templates = given ?? (await activeTemplates(db, layoutId));
  if (templates.length === 0) return [];
  const uses = (prefix: string) => templates.some((t) => t.value.includes(prefix));
  const { contract, config, nas, network } = input;
  const vars: Variables = {
    "contract.id": contract.id,
    "contract.number": contract.number,
    "contract.contract_status": contract.contract_status,
    "contract.contract_stage": contract.contract_stage,
    "contract.config.username": config.username,
    "contract.config.password": input.password,
    "contract.config.min_upload": config.min_upload,
    "contract.config.max_upload": config.max_upload,
    "contract.config.min_download": config.min_download,
    "contract.config.max_download": config.max_download,
    "contract.config.pool_name_ipv4": config.pool_name_ipv4,
    "contract.config.ipv4": config.ipv4,
    "contract.config.poll_name_ipv6": config.poll_name_ipv6,
    "contract.config.ipv6": config.ipv6,
    "contract.network.state": network?.state ?? "normal",
    "contract.effective.max_upload": network ? network.max_upload : config.max_upload,
    "contract.effective.max_download": network ? network.max_download : config.max_download,
    "contract.effective.pool_name_ipv4": network ? network.pool_name_ipv4 : config.pool_name_ipv4,
    "nas.name": nas?.name,
    "nas.ip": nas?.ip,
  };
  if (uses("customer.")) {
    const customer = await findPerson(db, contract.customer_id);
    vars["customer.name"] = customer?.name;
    vars["customer.display_name"] = customer?.display_name;
    vars["customer.doc_identity"] = customer?.doc_identity;
  }
  if (nas && uses("pop.")) vars["pop.name"] = await popName(db, nas.pop_id);
  const out: RenderedAttribute[] = [];
  for (const t of templates) {
    const value = renderTemplate(t.value, vars);
    if (value !== null) out.push({ name: t.name, operator: t.operator, value });
  }
  return out;
}
