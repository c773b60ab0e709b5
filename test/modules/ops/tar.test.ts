// lib/tar.ts against the system's tar: what it writes, tar reads back, sizes past 8 GiB included.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tarHeader, tarStream } from "../../../src/lib/tar";
import { tempDir } from "../../support/helpers";

const dir = tempDir("corpadmin-tar-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("files of any size (block boundaries included) and directories come back byte for byte", async () => {
  mkdirSync(join(dir, "src"));
  const sizes = [0, 1, 511, 512, 513, 70_000];
  sizes.forEach((n, i) => writeFileSync(join(dir, "src", `f${i}.bin`), Buffer.alloc(n, i + 1)));
  const entries = [{ name: "sub/" }, ...sizes.map((_, i) => ({ name: i % 2 ? `sub/f${i}.bin` : `f${i}.bin`, path: join(dir, "src", `f${i}.bin`) }))];
  const bytes = Buffer.from(await new Response(tarStream(entries)).arrayBuffer());
  expect(bytes.length % 512).toBe(0);
  writeFileSync(join(dir, "a.tar"), bytes);
  mkdirSync(join(dir, "out"));
  const run = Bun.spawnSync(["tar", "-xf", join(dir, "a.tar"), "-C", join(dir, "out")]);
  expect(run.stderr.toString()).toBe("");
  expect(run.exitCode).toBe(0);
  sizes.forEach((n, i) => {
    const got = readFileSync(join(dir, "out", i % 2 ? `sub/f${i}.bin` : `f${i}.bin`));
    expect(got.equals(Buffer.alloc(n, i + 1))).toBe(true);
  });
});

test("a size of 8 GiB or more is written in base-256 and read back by tar", () => {
  const size = 9 * 1024 ** 3 + 7;
  writeFileSync(join(dir, "big.tar"), tarHeader("big.db", size, 1_700_000_000, false));
  const run = Bun.spawnSync(["tar", "-tvf", join(dir, "big.tar")]);
  // The header is read (the content is missing, so tar then reports the truncation).
  expect(run.stdout.toString()).toContain(String(size));
  expect(run.stdout.toString()).toContain("big.db");
});

test("a file that changes size while archived breaks the stream instead of corrupting the archive", async () => {
  const path = join(dir, "grow.bin");
  writeFileSync(path, Buffer.alloc(600, 1));
  const stream = tarStream([{ name: "grow.bin", path }]);
  const reader = stream.getReader();
  await reader.read(); // the header: the size is 600 from here on
  writeFileSync(path, Buffer.alloc(1_000, 2));
  let failed = false;
  try {
    for (;;) if ((await reader.read()).done) break;
  } catch (err) {
    failed = String(err).includes("changed while being archived");
  }
  expect(failed).toBe(true);
});
