// An integrator's client of corpadmin, typed from the published OpenAPI document:
//   npx openapi-typescript http://localhost:8080/api/openapi.json -o api.d.ts
// then this file with openapi-fetch. The project's tests generate api.d.ts from the document the
// service publishes, type-check this file against it and run it against a live app.
import createClient from "openapi-fetch";
import type { components, paths } from "./api";

export type Contract = components["schemas"]["Contract"];
export type ContractPage = components["schemas"]["ContractWithIdentityPage"];

export interface Options {
  baseUrl: string;
  /** Only for tests: where the requests go instead of the network. */
  fetch?: (request: Request) => Promise<Response>;
}

/** 1. Log in as a user: the answer carries the bearer token. */
export async function login(o: Options, corp: string, user: string, password: string): Promise<string> {
  const client = createClient<paths, `application/${string}json`>(o);
  const { data, error } = await client.POST("/api/login", { body: { corp, login: user, password } });
  if (error) throw new Error(`login: ${error.status} ${error.detail}`);
  return data.access_token;
}

/** An external app (the ERP), with the API key it calls the registry with. */
export async function createApp(o: Options, token: string, name: string): Promise<string> {
  const client = createClient<paths, `application/${string}json`>({ ...o, headers: { authorization: `Bearer ${token}` } });
  const { data, error } = await client.POST("/api/externalapp", { body: { name } });
  if (error) throw new Error(`external app: ${error.status} ${error.detail}`);
  return data.api_key;
}

/** 2. Create or update a contract by the ERP's own identity, with the app's API key. */
export async function upsertContract(o: Options, apiKey: string, app: string, identity: string): Promise<Contract> {
  const client = createClient<paths, `application/${string}json`>({ ...o, headers: { "X-Api-Key": apiKey } });
  const { data, error } = await client.POST("/api/contract/create/externalapp/name/{externalAppName}", {
    params: { path: { externalAppName: app } },
    body: {
      identity,
      number: `N-${identity}`,
      start_date: "2026-01-01",
      total_value: 99.9,
      customer: { identity: "CUST-1", name: "Maria Silva", doc_identity: "123.456.789-09" },
      address: { line1: "Rua A, 10", city: { identity: "BEL", name: "Belém", state: "PA", country: "BR" } },
    },
  });
  if (error) throw new Error(`upsert: ${error.status} ${error.detail} ${JSON.stringify(error.errors ?? [])}`);
  return data;
}

/** 3. Every contract the ERP knows, page by page (sorted by number). */
export async function allContracts(o: Options, apiKey: string, app: string, limit = 50): Promise<ContractPage["items"]> {
  const client = createClient<paths, `application/${string}json`>({ ...o, headers: { "X-Api-Key": apiKey } });
  const items: ContractPage["items"] = [];
  for (let page = 1; ; page++) {
    const { data, error } = await client.GET("/api/contract/externalapp/name/{externalAppName}", {
      params: { path: { externalAppName: app }, query: { page, limit, sort: "number" } },
    });
    if (error) throw new Error(`list: ${error.status} ${error.detail}`);
    items.push(...data.items);
    if (page * data.limit >= data.total) return items;
  }
}
