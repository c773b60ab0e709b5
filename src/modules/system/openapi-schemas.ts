// Which route schemas the OpenAPI document publishes by name under components.schemas. The rule:
// every object schema a module's model exports, named after its export (a trailing `View` or
// `Schema` dropped: AddressView → Address, ProblemSchema → Problem). A new schema in a listed
// module is named with no extra work; a new module's model is one line below.
//
// The name rides on the schema object under a symbol: invisible to validation (TypeBox, Elysia's
// response mirror) and to JSON, and kept by the openapi plugin's object spreads, so
// openapi-publish.ts finds it in the generated document wherever the schema was used.
import { Kind, type TSchema } from "@sinclair/typebox";
import * as schemas from "../../lib/schemas";
import * as address from "../address/model";
import * as auth from "../auth/model";
import * as catalog from "../catalog/model";
import * as city from "../city/model";
import * as classification from "../classification/model";
import * as contract from "../contract/model";
import * as maintenance from "../maintenance/model";
import * as notepad from "../notepad/model";
import * as corp from "../corp/model";
import * as externalApp from "../externalapp/model";
import * as history from "../history/model";
import * as isp from "../isp/model";
import * as metric from "../metric/model";
import * as person from "../person/model";
import * as product from "../product/model";
import * as qrcode from "../qrcode/model";
import * as server from "../server/model";
import * as user from "../user/model";
import * as webhook from "../webhook/model";
import * as workgroup from "../workgroup/model";

const MODELS: Record<string, unknown>[] = [
  schemas, auth, catalog, city, classification, contract, maintenance, notepad, corp, externalApp, history, isp,
  metric, person, product, qrcode, address, server, user, webhook, workgroup,
];

export const SCHEMA_NAME = Symbol("openapi schema name");

export interface NamedSchema {
  name: string;
  /** What identifies the named schema in the document: its property names and required ones. */
  shape: string;
}

/**
 * The fields that tell the named schema from a schema derived from it (t.Partial, t.Omit copy the
 * symbol along with the options).
 */
export function shapeOf(schema: { properties?: Record<string, unknown>; required?: string[] }): string {
  return `${Object.keys(schema.properties ?? {}).sort().join(",")}|${[...(schema.required ?? [])].sort().join(",")}`;
}

export const schemaName = (exportName: string) => exportName.replace(/(View|Schema)$/, "");

/** Stamps the names; throws when two modules would publish the same name. */
function nameSchemas(models: Record<string, unknown>[]): void {
  const byName = new Map<string, TSchema>();
  for (const model of models) {
    for (const [exported, value] of Object.entries(model)) {
      if (!value || typeof value !== "object" || !(Kind in value)) continue;
      const schema = value as TSchema & { [SCHEMA_NAME]?: NamedSchema };
      if (schema.type !== "object" || !schema.properties) continue;
      const name = schemaName(exported);
      const other = byName.get(name);
      if (other && other !== schema) throw new Error(`Two schemas would be published as ${name}`);
      if (schema[SCHEMA_NAME] && schema[SCHEMA_NAME].name !== name) continue; // exported twice: first name wins
      byName.set(name, schema);
      schema[SCHEMA_NAME] = { name, shape: shapeOf(schema as never) };
    }
  }
}

// Run once, when the module is first imported (openapi-publish.ts imports it).
nameSchemas(MODELS);
