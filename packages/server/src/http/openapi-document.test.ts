import { beforeAll, describe, expect, it } from "vitest";
import { errorCatalog } from "../errors.ts";
import { buildOpenApiDocument } from "./openapi-build.ts";

interface Media {
  schema?: { $ref?: string; type?: string; format?: string };
}
interface Response {
  headers?: Record<string, unknown>;
  content?: Record<string, Media>;
}
interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: unknown[];
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, Response>;
}
interface Document {
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { enum?: string[] }> };
}

let document: Document;
const operations: Array<[string, Operation]> = [];

beforeAll(async () => {
  document = (await buildOpenApiDocument()) as Document;
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) operations.push([`${method} ${path}`, operation]);
  }
});

const op = (key: string): Operation => {
  const found = operations.find(([k]) => k === key)?.[1];
  if (!found) throw new Error(`${key} is not documented`);
  return found;
};

describe("the OpenAPI document", () => {
  it("names a server and gives every operation an operationId, a summary and a tag", () => {
    expect(document.servers?.[0]?.url).toBe("/");
    for (const [key, operation] of operations) {
      expect(operation.operationId, key).toMatch(/^[a-z][A-Za-z]+$/);
      expect(operation.summary, key).toBeTruthy();
      expect(operation.tags?.length, key).toBe(1);
    }
  });

  it("serves every error as application/problem+json (the token endpoint's as OAuth's JSON)", () => {
    for (const [key, operation] of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (
          !/^[45]/.test(status) ||
          key === "get /readyz" ||
          key === "head /v1/apps/{package_name}/versions/{version}"
        )
          continue;
        const expected =
          key === "post /v1/oauth/token"
            ? { "application/json": { schema: { $ref: "#/components/schemas/OAuthProblem" } } }
            : { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } };
        expect(response.content, `${key} ${status}`).toEqual(expected);
      }
    }
    expect(document.components.schemas.ErrorCode?.enum).toEqual(Object.keys(errorCatalog));
  });

  it("lists the rate-limit headers, and Retry-After on 429, wherever requests are counted", () => {
    for (const [key, operation] of operations) {
      // Probes and downloads are not counted: a whole CI fleet behind one address fetches its CLI every run.
      if (key === "get /healthz" || key === "get /readyz" || key.includes("/.well-known/")) continue;
      if (key.startsWith("get /downloads/")) continue;
      expect(Object.keys(operation.responses["429"]?.headers ?? {}), key).toContain("Retry-After");
      for (const response of Object.values(operation.responses)) {
        expect(Object.keys(response.headers ?? {}), key).toEqual(
          expect.arrayContaining(["x-request-id", "RateLimit", "RateLimit-Policy"]),
        );
      }
    }
  });

  it("describes uploads as raw bytes, the token body as JSON or a form, downloads with ranges", () => {
    const binary = { schema: { type: "string", format: "binary" } };
    expect(op("put /v1/apps/{package_name}/versions/{version}").requestBody?.content).toEqual({
      "application/octet-stream": binary,
    });
    expect(op("put /v1/agent/jobs/{lease_id}/artifacts/{name}").requestBody?.content).toMatchObject({
      "application/octet-stream": binary,
    });
    expect(Object.keys(op("post /v1/oauth/token").requestBody?.content ?? {})).toEqual([
      "application/json",
      "application/x-www-form-urlencoded",
    ]);
    const download = op("get /v1/apps/{package_name}/versions/{version}/binary");
    expect(download.responses["200"]?.content).toEqual({ "application/octet-stream": binary });
    expect(Object.keys(download.responses["206"]?.headers ?? {})).toContain("Content-Range");
    expect(download.parameters?.map((p) => p.name)).toContain("range");
    expect(op("get /v1/executions/{id}/junit").responses["200"]?.content).toHaveProperty("application/xml");
    expect(op("get /v1/executions/{id}/log").responses["200"]?.content).toHaveProperty("text/plain");
    expect(op("head /v1/apps/{package_name}/versions/{version}").responses["404"]).toBeDefined();
    expect(
      Object.keys(op("put /v1/apps/{package_name}/versions/{version}").responses["201"]?.headers ?? {}),
    ).toContain("Location");
  });

  it("marks public operations security: [] and names the artifact wildcard {name}", () => {
    for (const key of [
      "get /healthz",
      "get /readyz",
      "get /v1/openapi.json",
      "get /docs",
      "get /problems/{code}",
    ]) {
      expect(op(key).security, key).toEqual([]);
    }
    expect(op("get /v1/me").security).toBeUndefined();
    const download = op("get /v1/executions/{id}/artifacts/{name}");
    expect(download.parameters?.filter((p) => p.in === "path").map((p) => p.name)).toEqual(["id", "name"]);
  });
});
