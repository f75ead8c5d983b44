// The `testbay-server` bin as a process for the admin side: that it loads and says its version, that an admin
// command's failure reaches the shell as its exit code and stderr (cli.ts), and that migrations are safe when
// several processes run them at once. The commands' behaviour is tested in the tests' process:
// admin-commands.int.test.ts, user-commands.int.test.ts.
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  createWorkspace,
  root,
  runBin,
  runCli,
  severalRunsMs,
  stderrLines,
  useCliSuite,
} from "../../test/cli-harness.ts";
import { migrations } from "../db/migrations/index.ts";

useCliSuite();

describe("testbay-server --version", () => {
  it("prints the server's version (packages/server/package.json) and exits 0", async () => {
    const { version } = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8"));
    const bin = await runBin(["--version"], {});
    expect(bin.code).toBe(0);
    expect(bin.stdout).toBe(`${version}\n`);
    expect(bin.stderr).toBe("");
    // The short flag: the same program, so the same run in this process says enough.
    for (const flag of ["--version", "-V"]) {
      const result = await runCli([flag], {});
      expect(result, flag).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
    }
  });
});

describe("an admin command through the bin", () => {
  it("in a directory without .testbay: exit 2 naming TESTBAY_DATA_DIR and what to do; no file is created", async () => {
    const elsewhere = await mkdtemp(path.join(root, "elsewhere-"));
    // No TESTBAY_* variable: the data dir is ./.testbay of the directory it runs in.
    const result = await runBin(["client", "list"], {}, elsewhere);
    const dataDir = path.join(elsewhere, ".testbay");
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(stderrLines(result)).toEqual([
      `testbay-server: No Testbay store here: ${path.join(dataDir, "testbay.db")} does not exist (TESTBAY_DATA_DIR is ${dataDir} (./.testbay in the current directory unless set)). Run this from the directory that holds the server's .testbay, or set TESTBAY_DATA_DIR to the server's data dir (TESTBAY_DATABASE_URL to its database, if it has one elsewhere); to make a new store, run testbay-server start (or testbay-server migrate) first.`,
    ]);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it("a mistyped command: commander's message and exit 1", async () => {
    const result = await runBin(["client", "lsit"], {});
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("unknown command 'lsit'");
    // Run in this process, it says the same, byte for byte.
    expect(await runCli(["client", "lsit"], {})).toEqual(result);
  });
});

describe("testbay-server migrate in several processes", () => {
  it(
    "lets several processes migrate one fresh database at once: one applies, the others wait and find it done",
    async () => {
      const ws = await createWorkspace();
      const results = await Promise.all([1, 2, 3].map(() => runBin(["migrate"], ws.env)));
      for (const result of results) expect(result.code, result.stderr).toBe(0);
      const said = results.map((result) => stderrLines(result)[0]).sort();
      expect(said).toEqual([
        `Applied: ${Object.keys(migrations).join(", ")}`,
        "The database is up to date.",
        "The database is up to date.",
      ]);
    },
    severalRunsMs,
  );
});
