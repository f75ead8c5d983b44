// The global flags as commander sees them once the program's options are positional (global-options.ts): the
// help reads as before (hidden copies add no option and no "[options]"), and a mistyped global flag after a
// command is still matched against the global flags. Where they send requests: webhooks.int.test.ts.
import { describe, expect, it } from "vitest";
import { Captured } from "../../test/scripted-server.ts";
import { main } from "./main.ts";

async function cli(argv: string[]) {
  const stdout = new Captured();
  const stderr = new Captured();
  const code = await main(argv, { env: {}, stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe("global options", () => {
  it("are listed by the program's help alone; a command without options of its own shows no [options]", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^ {2}--url <url> +API base URL/m);
    expect(help.stdout).toMatch(/^ {2}token {2,}Print an access token/m);
    expect(help.stdout).toMatch(/^ {2}agents {2,}Who is connected/m);
    expect(help.stdout).toMatch(/^ {2}logs <execution_id> {2,}Print an execution's log/m);
    expect(help.stdout).toMatch(/^ {2}upload \[options\] {2,}Upload a build/m);

    const webhooks = await cli(["webhooks", "--help"]);
    expect(webhooks.stdout).toMatch(/^ {2}delete <webhook_id> {2,}Delete a webhook/m);

    const upload = await cli(["upload", "--help"]);
    expect(upload.code).toBe(0);
    expect(upload.stdout).toContain("--file <path>");
    expect(upload.stdout).not.toContain("--url");
    expect(upload.stdout).not.toContain("--json");
  });

  it("webhooks create|update list their own --url, the webhook's address", async () => {
    for (const command of ["create", "update"]) {
      const help = await cli(["webhooks", command, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/--url <url> +where to POST, http\(s\)/);
      expect(help.stdout).not.toContain("API base URL");
    }
  });

  it("a mistyped global flag after a command is matched against the global flags (exit 2)", async () => {
    const json = await cli(["agents", "--jsn"]);
    expect(json.code).toBe(2);
    expect(json.stderr).toBe(
      "error: unknown option '--jsn'\n(Did you mean --json?)\n(run testbay --help for usage)\n",
    );
    const token = await cli(["webhooks", "delete", "wh_1", "--tokn", "x"]);
    expect(token.code).toBe(2);
    expect(token.stderr).toContain("(Did you mean --token?)");
  });

  it("the hidden --webhook-url of earlier versions is gone: webhooks create takes --url", async () => {
    const run = await cli([
      "webhooks",
      "create",
      "--webhook-url",
      "https://hooks.example.com/x",
      "--events",
      "a",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("error: unknown option '--webhook-url'");
  });
});
