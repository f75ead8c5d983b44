// The docker CLI for the container image tests (container-image.int.test.ts): whether a Docker engine answers,
// the server image built on the local base (scripts/container-base.sh), and containers on the host's network.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

export const repositoryRoot = fileURLToPath(new URL("../../../../", import.meta.url));

export interface CommandResult {
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; a non-zero exit is an error carrying the command's last output. */
export function run(
  command: string,
  args: string[],
  options: { timeoutMs?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: repositoryRoot, maxBuffer: 64 * 1024 * 1024, timeout: options.timeoutMs ?? 0 },
      (error, stdout, stderr) => {
        if (!error) {
          resolve({ stdout, stderr });
          return;
        }
        const tail = `${stdout}\n${stderr}`.trim().split("\n").slice(-40).join("\n");
        reject(new Error(`${command} ${args.join(" ")} failed (${error.code ?? error.signal}):\n${tail}`));
      },
    );
  });
}

export const docker = (args: string[], options?: { timeoutMs?: number }) => run("docker", args, options);

/**
 * Whether a Docker engine answers here; when it does not, why (the tests say so in their name). .ci/run starts
 * dockerd where it can; a machine without the right to (no privileges for namespaces, overlayfs) has none.
 */
export async function dockerEngine(): Promise<{ available: true } | { available: false; reason: string }> {
  try {
    await docker(["info", "--format", "{{.ServerVersion}}"], { timeoutMs: 20_000 });
    return { available: true };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const firstLine = message.split("\n").find((line) => /cannot|error|not found|ENOENT/i.test(line));
    return { available: false, reason: (firstLine ?? message.split("\n")[0] ?? "").trim() };
  }
}

/** The local base image's reference: the last line scripts/container-base.sh prints (made once, then cached). */
export async function localBaseImage(): Promise<string> {
  const { stdout } = await run("bash", ["scripts/container-base.sh"]);
  const ref = stdout.trim().split("\n").at(-1);
  if (!ref) throw new Error("scripts/container-base.sh printed no image reference");
  return ref;
}

/**
 * `docker build` of a Dockerfile of the repository on `baseImage`, tagged `tag`. The build's RUN steps use the
 * host's network (npm registry, Debian mirror), which needs no bridge: dockerd may run without one here.
 */
export async function buildImage(dockerfile: string, tag: string, baseImage: string): Promise<void> {
  await docker([
    "build",
    "--network",
    "host",
    "--file",
    dockerfile,
    "--build-arg",
    `BASE_IMAGE=${baseImage}`,
    "--tag",
    tag,
    ".",
  ]);
}

/** A port free on the loopback interface now, for a container on the host's network to listen on. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** A name for this run's containers and volumes, so that nothing of another run is touched. */
export const uniqueName = (what: string) => `testbay-int-${what}-${randomBytes(4).toString("hex")}`;

export interface Container {
  name: string;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** docker exec NAME ARGS… */
  exec(args: string[]): Promise<string>;
  /** The container's state and health as docker inspect reports them. */
  health(): Promise<string>;
  logs(): Promise<string>;
  remove(): Promise<void>;
}

/**
 * `docker run -d` of the image on the host's network, listening on 127.0.0.1:port (TESTBAY_HOST, which the image
 * sets to 0.0.0.0, is narrowed here: on the host's network that would be every interface of the machine).
 * HEALTHCHECK every second instead of every 30, so that the health status is known soon.
 */
export async function runContainer(options: {
  image: string;
  name: string;
  port: number;
  env?: Record<string, string>;
  volume?: string;
}): Promise<Container> {
  const env = { TESTBAY_HOST: "127.0.0.1", TESTBAY_PORT: String(options.port), ...options.env };
  await docker([
    "run",
    "--detach",
    "--name",
    options.name,
    "--network",
    "host",
    "--health-interval",
    "1s",
    "--health-start-period",
    "60s",
    ...(options.volume ? ["--volume", `${options.volume}:/data`] : []),
    ...Object.entries(env).flatMap(([name, value]) => ["--env", `${name}=${value}`]),
    options.image,
  ]);
  return {
    name: options.name,
    origin: `http://127.0.0.1:${options.port}`,
    exec: async (args) => (await docker(["exec", options.name, ...args])).stdout,
    health: async () =>
      (
        await docker(["inspect", "--format", "{{.State.Status}} {{.State.Health.Status}}", options.name])
      ).stdout.trim(),
    logs: async () => {
      const { stdout, stderr } = await docker(["logs", options.name]);
      return `${stdout}${stderr}`;
    },
    remove: async () => {
      await docker(["rm", "--force", "--volumes", options.name]);
    },
  };
}
