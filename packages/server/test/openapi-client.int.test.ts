import { readFile } from "node:fs/promises";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness.ts";
import { runOpenApiFetchFlow } from "./openapi-client/flow.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

it("serves a client generated from its OpenAPI document: token (form), upload, batch trigger, execution", async () => {
  const credentials = await server.createClient("generated", "ci");
  const binary = new Blob([await readFile(new URL("./fixtures/binaries/app-basic.apk", import.meta.url))]);
  const result = await runOpenApiFetchFlow({
    origin: server.origin,
    credentials: { client_id: credentials.client_id, client_secret: credentials.client_secret },
    audience: server.config.audience,
    binary,
    version: "4.5.6",
  });
  expect(result.tokenType).toBe("api-key");
  expect(result.uploaded).toMatchObject({
    package_name: "com.example.basic",
    version: "4.5.6",
    size_bytes: binary.size,
    binary: { format: "apk", package_name: "com.example.basic" },
  });
  expect(result.location).toBe("/v1/apps/com.example.basic/versions/4.5.6");
  expect(result.batch.failed_executions).toEqual([]);
  expect(result.execution).toMatchObject({ id: result.batch.executions[0]?.id, status: "queued" });
  expect(result.refusal).toEqual({ status: 409, code: "app_version_exists" });

  // The document tells the truth about these bodies: each matches its named schema.
  const document = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as object;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document, "openapi");
  const conforms = (name: string, body: unknown) => {
    const validate = ajv.getSchema(`openapi#/components/schemas/${name}`);
    if (!validate) throw new Error(`no schema ${name}`);
    return validate(body) ? [] : validate.errors;
  };
  expect(conforms("AppVersion", result.uploaded)).toEqual([]);
  expect(conforms("BatchTriggerResponse", result.batch)).toEqual([]);
  expect(conforms("Execution", result.execution)).toEqual([]);
  expect(conforms("Execution", { ...result.execution, status: "lost" })).not.toEqual([]);
});
