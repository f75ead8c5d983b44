// The server's container image (API.md §15, "Container image"; Dockerfile, compose.yaml): built on the local base
// (scripts/container-base.sh) as no image registry is reachable here, then run as an operator runs it. Needs a
// Docker engine: where none answers the suite is skipped, saying so in its name (the one skip issue 30 allows).
// Runs in the sqlite project only: it starts its own PostgreSQL database and Redis settings where it needs them.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createTestDatabase, type TestDatabase } from "../harness.ts";
import { startS3Server, type TestS3Server } from "../s3-server.ts";
import {
  buildImage,
  type Container,
  docker,
  dockerEngine,
  freePort,
  localBaseImage,
  run,
  runContainer,
  uniqueName,
} from "./docker.ts";

const engine = await dockerEngine();
const image = "testbay-server:int-test";
const agentImage = "testbay-agent:int-test";
/** A build from nothing cached: debootstrap, npm ci and the build, on a busy 2-core machine. */
const buildTimeoutMs = 30 * 60_000;
/** A container's start, first migration and health checks, then a run, on a machine that others load too. */
const scenarioTimeoutMs = 10 * 60_000;
const basicApk = fileURLToPath(new URL("../fixtures/binaries/app-basic.apk", import.meta.url));

/** Where the containers' Redis keys go: a database of its own on the host's Redis, not the other suites' 0. */
function redisUrl(): string {
  const url = new URL(process.env.TESTBAY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379");
  if (url.pathname === "" || url.pathname === "/") url.pathname = "/7";
  return url.toString();
}

async function token(origin: string, credentials: { client_id: string; client_secret: string }) {
  const response = await call(`${origin}/v1/oauth/token`, {
    json: { ...credentials, audience: "testbay" },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { "x-api-key": response.body.access_token as string };
}

async function healthy(container: Container): Promise<void> {
  await expect
    .poll(() => container.health(), { timeout: 180_000, message: `${container.name} never became healthy` })
    .toBe("running healthy");
}

const containers: Container[] = [];
const volumes: string[] = [];

async function start(options: Parameters<typeof runContainer>[0]): Promise<Container> {
  const container = await runContainer(options);
  containers.push(container);
  return container;
}

async function remove(container: Container): Promise<void> {
  await container.remove();
  containers.splice(containers.indexOf(container), 1);
}

const title = engine.available
  ? "the server's container image"
  : `the server's container image: SKIPPED, no Docker engine answers here (${engine.reason}); .ci/run starts dockerd where the machine allows it`;

describe.skipIf(!engine.available)(title, () => {
  beforeAll(async () => {
    const base = await localBaseImage();
    await buildImage("Dockerfile", image, base);
    // Its build stage is the server image's, step for step: Docker takes those layers from the build above.
    await buildImage("Dockerfile.agent", agentImage, base);
  }, buildTimeoutMs);

  afterAll(async () => {
    for (const container of [...containers]) await remove(container);
    for (const volume of volumes) await docker(["volume", "rm", "--force", volume]);
  });

  it("is built as API.md §15 says: non-root, data in the /data volume, listening on 0.0.0.0, HEALTHCHECK on /healthz", async () => {
    const { stdout } = await docker(["image", "inspect", image, "--format", "{{json .Config}}"]);
    const config = JSON.parse(stdout);
    expect(config.User).toBe("10001:10001");
    expect(Object.keys(config.Volumes)).toEqual(["/data"]);
    expect(config.Env).toEqual(expect.arrayContaining(["TESTBAY_HOST=0.0.0.0", "TESTBAY_DATA_DIR=/data"]));
    expect(config.Healthcheck.Test.join(" ")).toContain("/healthz");
    expect(config.Entrypoint).toEqual(["testbay-server"]);
    expect(config.Cmd).toEqual(["start"]);
  });

  it("builds the agent's image: testbay-agent of the server's version and Debian's adb, run as a user without privileges", async () => {
    const { stdout } = await docker(["image", "inspect", agentImage, "--format", "{{json .Config}}"]);
    const config = JSON.parse(stdout);
    expect(config.User).toBe("10001:10001");
    expect(config.Entrypoint).toEqual(["testbay-agent"]);
    const version = (await docker(["run", "--rm", agentImage, "--version"])).stdout.trim();
    const serverVersion = (await docker(["run", "--rm", image, "--version"])).stdout.trim();
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(serverVersion).toContain(version);
    const adb = await docker(["run", "--rm", "--entrypoint", "adb", agentImage, "version"]);
    expect(adb.stdout).toMatch(/^Android Debug Bridge version/);
  });

  it(
    "runs a plan to passed on the embedded default, and a new container on the same volume finds the run",
    async () => {
      const volume = uniqueName("data");
      volumes.push(volume);
      const port = await freePort();
      const options = {
        image,
        port,
        volume,
        env: { TESTBAY_LOCAL_AGENT_SHELL: "true", TESTBAY_LOG_LEVEL: "warn" },
      };
      const first = await start({ ...options, name: uniqueName("embedded") });
      await healthy(first);
      const health = await call(`${first.origin}/healthz`);
      expect(health).toMatchObject({ status: 200, body: { status: "ok" } });

      // The first start wrote credentials.json into the volume, as the server's user, readable by it only
      // (written aside and renamed just after the server starts listening: whole once it is there).
      await expect
        .poll(() => first.exec(["cat", "/data/credentials.json"]).catch(() => ""), { timeout: 60_000 })
        .toContain('"ci"');
      const credentials = JSON.parse(await first.exec(["cat", "/data/credentials.json"]));
      expect(credentials.base_url).toBe(`${first.origin}/v1`);
      expect((await first.exec(["stat", "--format", "%u %a", "/data/credentials.json"])).trim()).toBe(
        "10001 600",
      );
      const ci = await token(first.origin, credentials.ci);

      await call(`${first.origin}/v1/apps`, {
        headers: ci,
        json: { package_name: "com.example.basic", platform: "android" },
      });
      const upload = await fetch(`${first.origin}/v1/apps/com.example.basic/versions/1.2.3`, {
        method: "PUT",
        headers: ci,
        body: await readFile(basicApk),
      });
      expect(upload.status).toBe(201);
      // The embedded local agent runs the shell step inside the container, as the image's user.
      const plan = await call(`${first.origin}/v1/testplans`, {
        headers: ci,
        json: {
          name: "in the container",
          package_name: "com.example.basic",
          steps: [{ type: "shell", run: 'test "$(id -u)" = 10001 && echo "ran as the image user"' }],
        },
      });
      expect(plan.status, JSON.stringify(plan.body)).toBe(201);
      const triggered = await call(`${first.origin}/v1/testplan/run`, {
        headers: ci,
        json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
      });
      expect(triggered.status, JSON.stringify(triggered.body)).toBe(200);
      const executionId: string = triggered.body.execution.id;
      await expect
        .poll(
          async () =>
            (await call(`${first.origin}/v1/executions/${executionId}`, { headers: ci })).body.status,
          {
            timeout: 60_000,
          },
        )
        .toBe("passed");

      // A new container of the image on the same volume, as an upgrade or a rescheduled pod starts: same data, same
      // signing key (the token from before still works), no second set of credentials.
      await remove(first);
      const second = await start({ ...options, name: uniqueName("embedded-again") });
      await healthy(second);
      const view = await call(`${second.origin}/v1/executions/${executionId}`, { headers: ci });
      expect(view).toMatchObject({ status: 200, body: { id: executionId, status: "passed" } });
      expect(JSON.parse(await second.exec(["cat", "/data/credentials.json"]))).toEqual(credentials);
      expect(await second.logs()).not.toContain("Created organization");
    },
    scenarioTimeoutMs,
  );

  describe("two containers on the host's PostgreSQL, Redis and an S3 endpoint", () => {
    let database: TestDatabase;
    // The scaled set's shared blob store (docs/operating.md, "Running at scale"): a binary uploaded through one
    // instance is downloaded by an agent through the other.
    let s3: TestS3Server;
    beforeAll(async () => {
      database = await createTestDatabase("", "postgres");
      s3 = await startS3Server();
    });
    afterAll(async () => {
      for (const container of [...containers]) await remove(container);
      await database?.drop();
      await s3?.close();
    });

    it(
      "serve one organization: a token from one instance is taken by the other, data made on one is read on the other, and an agent container runs their runs",
      async () => {
        const env = {
          TESTBAY_DATABASE_URL: database.url,
          TESTBAY_REDIS_URL: redisUrl(),
          TESTBAY_STORAGE_URL: s3.storageUrl,
          AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
          TESTBAY_LOCAL_AGENT: "false",
          TESTBAY_LOG_LEVEL: "warn",
        };
        // Both start at once on the empty database: one migrates it, the other waits for it (migration lock).
        const [a, b] = await Promise.all(
          ["a", "b"].map(async (which) =>
            start({ image, env, port: await freePort(), name: uniqueName(`scaled-${which}`) }),
          ),
        );
        await Promise.all([healthy(a as Container), healthy(b as Container)]);
        const one = a as Container;
        const other = b as Container;

        // The organization and its client made with the image's admin CLI, as `docker run --rm IMAGE …`.
        const adminCli = (args: string[]) =>
          run("docker", [
            "run",
            "--rm",
            "--network",
            "host",
            "--env",
            `TESTBAY_DATABASE_URL=${database.url}`,
            "--env",
            "TESTBAY_LOG_LEVEL=warn",
            image,
            ...args,
          ]);
        await adminCli(["org", "create", "acme"]);
        const client = JSON.parse(
          (await adminCli(["client", "create", "--org", "acme", "--role", "ci"])).stdout,
        );

        const headers = await token(one.origin, client);
        const me = await call(`${other.origin}/v1/me`, { headers });
        expect(me).toMatchObject({ status: 200, body: { organization: { name: "acme" }, role: "ci" } });
        const created = await call(`${other.origin}/v1/apps`, {
          headers,
          json: { package_name: "com.example.scaled", platform: "android" },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const read = await call(`${one.origin}/v1/apps/com.example.scaled`, { headers });
        expect(read).toMatchObject({ status: 200, body: { package_name: "com.example.scaled" } });

        // A device host in the agent's image, connected to one instance, runs a run triggered on the other.
        const agentClient = JSON.parse(
          (await adminCli(["client", "create", "--org", "acme", "--role", "agent"])).stdout,
        );
        const agentName = uniqueName("agent");
        await docker([
          "run",
          "--detach",
          "--name",
          agentName,
          "--network",
          "host",
          "--env",
          `TESTBAY_URL=${one.origin}/v1`,
          "--env",
          `TESTBAY_CLIENT_ID=${agentClient.client_id}`,
          "--env",
          `TESTBAY_CLIENT_SECRET=${agentClient.client_secret}`,
          agentImage,
          "--name",
          "container-host",
          "--devices",
          "none",
          "--allow-shell",
        ]);
        containers.push({
          name: agentName,
          origin: "",
          exec: async () => "",
          health: async () => "",
          logs: async () => {
            const { stdout, stderr } = await docker(["logs", agentName]);
            return `${stdout}${stderr}`;
          },
          remove: async () => {
            await docker(["rm", "--force", agentName]);
          },
        });
        await call(`${other.origin}/v1/apps`, {
          headers,
          json: { package_name: "com.example.basic", platform: "android" },
        });
        const upload = await fetch(`${other.origin}/v1/apps/com.example.basic/versions/1.0.0`, {
          method: "PUT",
          headers,
          body: await readFile(basicApk),
        });
        expect(upload.status, await upload.text()).toBe(201);
        const plan = await call(`${other.origin}/v1/testplans`, {
          headers,
          json: {
            name: "on the agent's image",
            package_name: "com.example.basic",
            steps: [{ type: "shell", run: 'test "$(id -u)" = 10001 && echo "ran on the device host"' }],
          },
        });
        expect(plan.status, JSON.stringify(plan.body)).toBe(201);
        const triggered = await call(`${other.origin}/v1/testplan/run`, {
          headers,
          json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.0.0" },
        });
        expect(triggered.status, JSON.stringify(triggered.body)).toBe(200);
        const executionId: string = triggered.body.execution.id;
        const status = async () =>
          (await call(`${one.origin}/v1/executions/${executionId}`, { headers })).body.status;
        // Once a second: faster polls would spend the ci client's rate limit (4 requests a second) on 429s.
        await expect
          .poll(status, {
            timeout: 120_000,
            interval: 1_000,
            message: "the agent container never finished the run",
          })
          .not.toBeOneOf(["queued", "running"]);
        const agentLogs = await docker(["logs", agentName]);
        const log = await call(`${other.origin}/v1/executions/${executionId}/log`, { headers });
        expect(
          await status(),
          `agent:\n${agentLogs.stdout}${agentLogs.stderr}\nrun's log:\n${log.body}`,
        ).toBe("passed");
        expect(log.body).toContain("ran on the device host");
      },
      scenarioTimeoutMs,
    );
  });

  it("compose.yaml is accepted by `config` of Compose v2 and of docker-compose 1.29, whichever are installed", async () => {
    const readers: Array<{ name: string; command: string; args: string[] }> = [];
    if (await succeeds("docker", ["compose", "version"]))
      readers.push({ name: "Compose v2", command: "docker", args: ["compose"] });
    if (await succeeds("docker-compose", ["version"]))
      readers.push({ name: "docker-compose", command: "docker-compose", args: [] });
    expect(
      readers.map((reader) => reader.name),
      "neither docker compose nor docker-compose is installed",
    ).not.toEqual([]);
    for (const reader of readers) {
      const { stdout } = await run(reader.command, [...reader.args, "--file", "compose.yaml", "config"]);
      for (const service of ["server-1", "server-2", "postgres", "redis", "s3"]) {
        expect(stdout, reader.name).toContain(`  ${service}:`);
      }
    }
  });
});

async function succeeds(command: string, args: string[]): Promise<boolean> {
  try {
    await run(command, args);
    return true;
  } catch {
    return false;
  }
}
