// The peer of corpadmin's hottest read, as a Node shop would write it: Fastify + better-sqlite3,
// `GET /api/contract/:id` behind a bearer token (HS256 verified on every request, then the
// session row and its user read), answering the contract with its customer, billing customer, address and city as
// JSON. Started by bench/run.ts on a file it seeded (bench/peers/seed.ts); not part of the product.
//   node bench/peers/contract-read.mjs <sqlite file> <port>   (PEER_TOKEN_SECRET: the HS256 key)
import { createHmac, timingSafeEqual } from "node:crypto";
import Database from "better-sqlite3";
import Fastify from "fastify";

const [file, port] = process.argv.slice(2);
const key = Buffer.from(process.env.PEER_TOKEN_SECRET ?? "", "hex");
if (!file || !port || key.length < 32) {
  console.error("usage: PEER_TOKEN_SECRET=<hex> node contract-read.mjs <sqlite file> <port>");
  process.exit(2);
}

const db = new Database(file, { readonly: true });
const sessionStmt = db.prepare(`
  SELECT s.id, s.user_id, u.status AS user_status FROM sessions s JOIN users u ON u.id = s.user_id
  WHERE s.id = ? AND s.revoked_at IS NULL AND s.expires_at > ?`);
const contractStmt = db.prepare(`
  SELECT c.*, p.identity AS p_identity, p.name AS p_name, p.display_name AS p_display_name,
         p.tp_doc_identity AS p_tp_doc_identity, p.doc_identity AS p_doc_identity, p.corporate AS p_corporate,
         b.identity AS b_identity, b.name AS b_name, b.display_name AS b_display_name,
         b.tp_doc_identity AS b_tp_doc_identity, b.doc_identity AS b_doc_identity, b.corporate AS b_corporate,
         ci.name AS city_name, ci.state AS city_state, ci.country AS city_country
  FROM contracts c JOIN persons p ON p.id = c.customer_id JOIN persons b ON b.id = c.billing_customer_id
  LEFT JOIN cities ci ON ci.id = c.city_id
  WHERE c.id = ?`);

/** The token's claims when its HS256 signature matches and it has not expired; else null. */
function verify(token) {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  const expected = createHmac("sha256", key).update(`${parts[0]}.${parts[1]}`).digest();
  const given = Buffer.from(parts[2], "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const header = JSON.parse(Buffer.from(parts[0], "base64url").toString("utf8"));
    if (header.alg !== "HS256") return null;
    const claims = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    return typeof claims.jti === "string" && typeof claims.exp === "number" && claims.exp > Date.now() / 1000 ? claims : null;
  } catch {
    return null;
  }
}

const json = (text) => (text === null ? null : JSON.parse(text));
const app = Fastify({ logger: false });

app.get("/api/contract/:id", async (request, reply) => {
  const auth = request.headers.authorization;
  const claims = auth?.startsWith("Bearer ") ? verify(auth.slice(7)) : null;
  const session = claims && sessionStmt.get(claims.jti, new Date().toISOString());
  if (!session || session.user_status !== 1) return reply.code(401).send({ title: "Unauthorized", status: 401 });
  const c = contractStmt.get(request.params.id);
  if (!c) return reply.code(404).send({ title: "Contract not found", status: 404 });
  const address = { line1: c.line1, line2: c.line2, district: c.district, postal_code: c.postal_code, city: c.city_name === null ? null : { name: c.city_name, state: c.city_state, country: c.city_country }, latitude: c.latitude, longitude: c.longitude, detail: c.detail };
  return {
    id: c.id,
    customer: { identity: c.p_identity, name: c.p_name, display_name: c.p_display_name, tp_doc_identity: c.p_tp_doc_identity, doc_identity: c.p_doc_identity, corporate: c.p_corporate === 1, address },
    billing_customer: { identity: c.b_identity, name: c.b_name, display_name: c.b_display_name, tp_doc_identity: c.b_tp_doc_identity, doc_identity: c.b_doc_identity, corporate: c.b_corporate === 1, address },
    number: c.number,
    signature_date: c.signature_date,
    approval_date: c.approval_date,
    start_date: c.start_date,
    end_date: c.end_date,
    cancellation_date: c.cancellation_date,
    suspension_date: c.suspension_date,
    address,
    total_value: c.total_value,
    contract_status: c.contract_status,
    contract_stage: c.contract_stage,
    original: json(c.json_original),
    billing: json(c.json_billing),
    payment_method: json(c.json_payment_method),
    items: json(c.json_items),
    config: { username: c.username, password: "********", max_upload: c.max_upload, max_download: c.max_download },
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
});

await app.listen({ port: Number(port), host: "127.0.0.1" });
