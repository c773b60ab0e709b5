// Seeds the peer's SQLite file with the contracts bench/run.ts seeds into corpadmin (the same
// test/fixtures/contract-body.ts rows, the same count), one user with a live session, and signs
// that session's HS256 bearer token. Used only by the bench.
import { Database } from "bun:sqlite";
import { randomUUID } from "node:crypto";

import { contractBody } from "../../test/support/contract-body";

export function seedPeer(file: string, contracts: number, secret: Buffer): { ids: string[]; token: string } {
  const db = new Database(file, { create: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(`
    CREATE TABLE users (id TEXT PRIMARY KEY, login TEXT NOT NULL UNIQUE, status INTEGER NOT NULL);
    CREATE TABLE sessions (id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id), created_at TEXT NOT NULL, expires_at TEXT NOT NULL, revoked_at TEXT);
    CREATE TABLE cities (id TEXT PRIMARY KEY, identity TEXT NOT NULL UNIQUE, name TEXT NOT NULL, state TEXT, country TEXT);
    CREATE TABLE persons (id TEXT PRIMARY KEY, identity TEXT NOT NULL UNIQUE, name TEXT NOT NULL, display_name TEXT, tp_doc_identity TEXT, doc_identity TEXT, corporate INTEGER NOT NULL);
    CREATE TABLE contracts (id TEXT PRIMARY KEY, number TEXT NOT NULL UNIQUE, customer_id TEXT NOT NULL REFERENCES persons(id), billing_customer_id TEXT NOT NULL REFERENCES persons(id),
      signature_date TEXT, approval_date TEXT, start_date TEXT NOT NULL, end_date TEXT, cancellation_date TEXT, suspension_date TEXT,
      line1 TEXT, line2 TEXT, district TEXT, postal_code TEXT, city_id TEXT REFERENCES cities(id), latitude REAL, longitude REAL, detail TEXT,
      total_value REAL NOT NULL, contract_status TEXT NOT NULL, contract_stage TEXT NOT NULL,
      json_original TEXT, json_billing TEXT, json_payment_method TEXT, json_items TEXT,
      username TEXT NOT NULL UNIQUE, password TEXT NOT NULL, max_upload TEXT, max_download TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);`);
  const now = new Date().toISOString();
  const userId = randomUUID();
  const sessionId = randomUUID();
  db.query("INSERT INTO users VALUES (?, 'bench', 1)").run(userId);
  db.query("INSERT INTO sessions VALUES (?, ?, ?, ?, NULL)").run(sessionId, userId, now, new Date(Date.now() + 86_400_000).toISOString());
  const cityIds = new Map<string, string>();
  const city = db.query("INSERT INTO cities VALUES (?, ?, ?, ?, ?)");
  const person = db.query("INSERT INTO persons VALUES (?, ?, ?, ?, ?, ?, ?)");
  const contract = db.query(`INSERT INTO contracts VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, '10M', '100M', ?27, ?27)`);
  const ids: string[] = [];
  db.transaction(() => {
    for (let i = 0; i < contracts; i++) {
      const b = contractBody(i);
      const a = b.address;
      let cityId = cityIds.get(a.city.identity);
      if (cityId === undefined) {
        cityId = randomUUID();
        cityIds.set(a.city.identity, cityId);
        city.run(cityId, a.city.identity, a.city.name, a.city.state, a.city.country);
      }
      const personId = randomUUID();
      const c = b.customer;
      person.run(personId, c.identity, c.name, c.display_name, c.tp_doc_identity, c.doc_identity, c.corporate ? 1 : 0);
      const id = randomUUID();
      const j = (v: unknown) => (v === null ? null : JSON.stringify(v));
      contract.run(id, b.number, personId, b.signature_date, b.approval_date, b.start_date, b.end_date, b.cancellation_date, b.suspension_date,
        a.line1, a.line2, a.district, a.postal_code, cityId, a.latitude, a.longitude, a.detail, b.total_value, b.contract_status, b.contract_stage,
        j(b.json_original), j(b.json_billing), j(b.json_payment_method), j(b.json_items), `user-${i}`, randomUUID(), now);
      ids.push(id);
    }
  })();
  db.close();
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const iat = Math.floor(Date.now() / 1000);
  const input = `${b64({ alg: "HS256", typ: "JWT" })}.${b64({ sub: userId, corp: "bench", jti: sessionId, iat, exp: iat + 86_400 })}`;
  const token = `${input}.${new Bun.CryptoHasher("sha256", secret).update(input).digest("base64url")}`;
  return { ids, token };
}
