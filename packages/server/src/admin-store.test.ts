import path from "node:path";
import { describe, expect, it } from "vitest";
import { storeDescription } from "./admin-store.ts";
import { loadConfig } from "./config.ts";

describe("storeDescription: the line an admin command prints about the store it uses", () => {
  it("names the data dir and its SQLite file as absolute paths", () => {
    const config = loadConfig({ TESTBAY_DATA_DIR: "relative/data" });
    const dataDir = path.resolve("relative/data");
    expect(storeDescription(config)).toBe(
      `using data dir ${dataDir} (SQLite ${path.join(dataDir, "testbay.db")})`,
    );
  });

  it("names a SQLite file set apart from the data dir by its absolute path", () => {
    const config = loadConfig({ TESTBAY_DATA_DIR: "/srv/testbay", TESTBAY_DATABASE_URL: "sqlite:db/t.db" });
    expect(storeDescription(config)).toBe(`using data dir /srv/testbay (SQLite ${path.resolve("db/t.db")})`);
  });

  it("shows PostgreSQL's URL with the password hidden", () => {
    const config = loadConfig({ TESTBAY_DATABASE_URL: "postgres://app:hunter2@db.example.com:5432/testbay" });
    const line = storeDescription(config);
    expect(line).toBe(
      "using PostgreSQL postgres://app:***@db.example.com:5432/testbay (TESTBAY_DATABASE_URL)",
    );
    expect(line).not.toContain("hunter2");
  });
});
