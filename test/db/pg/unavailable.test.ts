// source-only: calls src/db/pg/handle.ts's error mapping directly, no app.
// Issue 19: which database errors a failover (or a restart) raises through Bun.sql answer 503, and
// which of them the door may run again on another connection. db-outage.test.ts drives the same
// errors through the app on a real server.
import { describe, expect, test } from "bun:test";
import { unavailableOf } from "../../../src/db/pg/handle";
import { Problem } from "../../../src/lib/problem";

const server = (errno: string, message = "server says") => Object.assign(new Error(message), { name: "PostgresError", code: "ERR_POSTGRES_SERVER_ERROR", errno });
const client = (code: string, message = "client says") => Object.assign(new Error(message), { name: "PostgresError", code });

describe("db/pg/handle unavailableOf: a failover's errors are a 503, the rest are left alone", () => {
  test("connection errors and the SQLSTATEs of a server going away or changing hands: 503, Retry-After 1", () => {
    for (const err of [
      client("ERR_POSTGRES_CONNECTION_CLOSED"),
      client("ERR_POSTGRES_CONNECTION_REFUSED"),
      client("ERR_POSTGRES_CONNECTION_TIMEOUT"),
      client("ECONNRESET"),
      server("57P01"),
      server("57P02"),
      server("57P03"),
      server("08006"),
      server("08P01"),
      server("25006"),
      server("53300"),
      server("40001"),
      server("40P01"),
    ]) {
      const problem = unavailableOf(err);
      expect(problem, `${err.code} ${(err as { errno?: string }).errno}`).toBeInstanceOf(Problem);
      expect(problem!.status).toBe(503);
      expect(problem!.headers?.["retry-after"]).toBe("1");
      expect(problem!.message).toContain("not acknowledged");
      // Neither the server's nor the client's words reach the answer.
      expect(problem!.message).not.toContain("says");
      expect(JSON.stringify(problem!.toBody())).not.toContain("connectionEnded");
    }
  });

  test("only a connection that was open and ended may be run again at once", () => {
    for (const err of [client("ERR_POSTGRES_CONNECTION_CLOSED"), server("57P01"), server("57P02"), server("08006")]) expect(unavailableOf(err)!.connectionEnded).toBe(true);
    for (const err of [client("ERR_POSTGRES_CONNECTION_REFUSED"), server("57P03"), server("25006"), server("40P01")]) expect(unavailableOf(err)!.connectionEnded).toBe(false);
  });

  test("a 503 already made is returned as it is; constraint, syntax and client errors are not a 503", () => {
    const made = unavailableOf(server("57P01"))!;
    expect(unavailableOf(made)).toBe(made);
    for (const err of [server("23505"), server("42601"), server("22P02"), client("ERR_POSTGRES_SYNTAX_ERROR"), new Error("plain"), null, "text"]) expect(unavailableOf(err)).toBeNull();
  });
});
