// The console's typed client is generated from the service's own OpenAPI document: the committed
// types must be what the document generates today (`bun run build` regenerates them).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { API_TYPES, generateApiTypes, resolveBareRefs } from "../../../scripts/build-console";
import { openapiDocument } from "../../../scripts/openapi-document";

test("console/src/api.gen.ts is the types of the current OpenAPI document", async () => {
  const fresh = await generateApiTypes(await openapiDocument());
  expect(readFileSync(API_TYPES, "utf8") === fresh, "console/src/api.gen.ts is stale: run `bun run build`").toBe(true);
}, 60_000);

test("a recursive schema given as a bare $ref is moved to components.schemas", () => {
  const doc = {
    paths: { "/x": { get: { responses: { 200: { content: { "application/json": { schema: { type: "array", items: { $id: "Node", type: "object", properties: { children: { type: "array", items: { $ref: "Node" } } } } } } } } } } } },
    components: { schemas: {} },
  };
  const out = resolveBareRefs(doc);
  expect(out.paths["/x"].get.responses[200].content["application/json"].schema.items).toEqual({ $ref: "#/components/schemas/Node" });
  expect(out.components.schemas.Node.properties.children.items).toEqual({ $ref: "#/components/schemas/Node" });
  // A document without such schemas passes unchanged.
  const plain = { paths: { "/y": { get: {} } } };
  expect(resolveBareRefs(plain)).toBe(plain);
});
