import { randomBytes } from "node:crypto";
import {
  hostileJsonValues,
  hostilePathSegments,
  hostileStrings,
  malformedJsonBodies,
  replaceAt,
  replaceRandomLeaf,
  stringLeafPaths,
  unstorableStrings,
} from "./hostile-input.ts";
import type { OpenApiDocument, Operation, Parameter } from "./openapi-operations.ts";
import { type KnownValues, sampleFromSchema } from "./sample-from-schema.ts";
import { SeededRandom } from "./seeded-random.ts";

/** Which credentials a request carries: the right role's token, none, or a forged one. */
export type Caller = "ci" | "agent" | "admin" | "none" | "forged";

export interface FuzzRequest {
  /** What was done to the request, for the failure message. */
  label: string;
  method: string;
  /** Path and query, percent-encoded as sent. */
  url: string;
  caller: Caller;
  headers: Record<string, string>;
  body?: Buffer;
  /**
   * The request carries text no database can store in a field a client names (API.md §2): only a 4xx is
   * right. Agent-reported device text (the events body) is kept instead, so it is exempt.
   */
  mustRefuse: boolean;
}

/** What exists on the server, so that requests name real things and reach past the lookups. */
export interface FuzzFixtures {
  packageName: string;
  version: string;
  planId: string;
  executionId: string;
  leaseId: string;
  clientId: string;
}

/** The value a well-behaved client would put in a path or query parameter. */
function knownValues(operation: Operation, fixtures: FuzzFixtures): KnownValues {
  const id = operation.path.includes("/testplans")
    ? fixtures.planId
    : operation.path.includes("/executions")
      ? fixtures.executionId
      : operation.path.includes("/clients")
        ? fixtures.clientId
        : "x";
  return {
    id,
    package_name: fixtures.packageName,
    version: fixtures.version,
    test_plan_id: fixtures.planId,
    test_plan_ids: [fixtures.planId],
    lease_id: fixtures.leaseId,
    client_id: fixtures.clientId,
    execution_id: fixtures.executionId,
    code: "app_not_found",
    name: "report/junit.xml",
    "*": "report/junit.xml",
    agent_id: "fuzz-agent",
    // A claim may rightly hold the request for up to 30 s (long poll): not a stall, but slow to fuzz.
    wait_seconds: 0,
    audience: "testbay",
    "idempotency-key": "fuzz-key",
  };
}

function callerFor(operation: Operation): Caller {
  if (operation.path.startsWith("/v1/agent")) return "agent";
  if (operation.path.startsWith("/v1/clients") || operation.path.startsWith("/v1/users")) return "admin";
  return "ci";
}

function isDeviceTextBody(operation: Operation): boolean {
  return operation.method === "POST" && /\/agent\/jobs\/[^/]+\/events$/.test(operation.path);
}

interface Parts {
  path: Record<string, string>;
  query: Array<[string, string]>;
  headers: Record<string, string>;
}

/** Path and query parameters filled with valid values (percent-encoded). */
function validParts(
  operation: Operation,
  known: KnownValues,
  random: SeededRandom,
  doc: OpenApiDocument,
): Parts {
  const parts: Parts = { path: {}, query: [], headers: {} };
  for (const parameter of operation.parameters) {
    const value = String(sampleFromSchema(doc, parameter.schema, random, known, parameter.name));
    if (parameter.in === "path") {
      // A wildcard (`{*}`, `{name}` of artifacts) keeps its slashes: it is a relative path.
      parts.path[parameter.name] = value.split("/").map(encodeURIComponent).join("/");
    } else if (parameter.in === "query" && (parameter.required || random.chance(0.5))) {
      parts.query.push([parameter.name, value]);
    } else if (parameter.in === "header") {
      parts.headers[parameter.name] = `${value}-${random.below(1e9)}`;
    }
  }
  return parts;
}

function urlOf(operation: Operation, parts: Parts, rawQuery = ""): string {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => parts.path[name] ?? "x");
  // A URL cannot carry an unpaired surrogate: it goes as U+FFFD, as a browser would send it.
  const encode = (text: string) => encodeURIComponent(text.toWellFormed());
  const query = parts.query.map(([name, value]) => `${encode(name)}=${encode(value)}`);
  if (rawQuery) query.push(rawQuery);
  return query.length > 0 ? `${path}?${query.join("&")}` : path;
}

function jsonBody(value: unknown): { body: Buffer; headers: Record<string, string> } {
  return { body: Buffer.from(stringifyDeep(value)), headers: { "content-type": "application/json" } };
}

/**
 * JSON text like JSON.stringify's, built with a list instead of recursion: JSON.stringify overflows Node
 * 20's default stack on the 5000-deep hostile values, which a body must still be able to carry.
 */
function stringifyDeep(value: unknown): string {
  const out: string[] = [];
  // Each entry is text to write as it is, or a value to serialize; popped last first.
  const work: Array<{ text: string } | { value: unknown }> = [{ value }];
  for (let next = work.pop(); next !== undefined; next = work.pop()) {
    if ("text" in next) {
      out.push(next.text);
      continue;
    }
    const current = next.value;
    if (Array.isArray(current)) {
      const parts: Array<{ text: string } | { value: unknown }> = [{ text: "[" }];
      current.forEach((item, i) => {
        if (i > 0) parts.push({ text: "," });
        parts.push({ value: item === undefined ? null : item });
      });
      parts.push({ text: "]" });
      work.push(...parts.reverse());
    } else if (current !== null && typeof current === "object") {
      const parts: Array<{ text: string } | { value: unknown }> = [{ text: "{" }];
      const entries = Object.entries(current).filter(([, item]) => item !== undefined);
      entries.forEach(([key, item], i) => {
        parts.push({ text: `${i > 0 ? "," : ""}${JSON.stringify(key)}:` }, { value: item });
      });
      parts.push({ text: "}" });
      work.push(...parts.reverse());
    } else {
      out.push(JSON.stringify(current) ?? "null");
    }
  }
  return out.join("");
}

/**
 * The requests of one fuzz round, the same for the same seed. For every operation of the document:
 * - unstorable text (U+0000, unpaired surrogates) in each path parameter, query parameter and string field
 *   of the JSON body, one at a time: the API.md §2 probes, which must all be refused (4xx);
 * - hostile path segments and query values, malformed and mistyped JSON, wrong content types, odd headers,
 *   forged and missing tokens, random binary bodies, each a few times at random.
 */
export function fuzzRequests(
  document: OpenApiDocument,
  operations: readonly Operation[],
  fixtures: FuzzFixtures,
  seed: number,
  randomPerOperation: number,
): FuzzRequest[] {
  const random = new SeededRandom(seed);
  const requests: FuzzRequest[] = [];
  for (const operation of operations) {
    const known = knownValues(operation, fixtures);
    const caller = callerFor(operation);
    const jsonSchema = operation.bodies["application/json"];
    const sampleBody = () => (jsonSchema ? sampleFromSchema(document, jsonSchema, random, known) : undefined);
    const add = (label: string, parts: Parts, extra: Partial<FuzzRequest> & { rawQuery?: string } = {}) => {
      const { rawQuery, ...rest } = extra;
      requests.push({
        label: `${operation.method} ${operation.path}: ${label}`,
        method: operation.method,
        url: urlOf(operation, parts, rawQuery),
        caller,
        headers: { ...parts.headers },
        mustRefuse: false,
        ...rest,
        ...(rest.headers ? { headers: { ...parts.headers, ...rest.headers } } : {}),
      });
    };
    const withBody = (value: unknown) => (jsonSchema ? jsonBody(value) : {});

    // The API.md §2 probes: every parameter and every string field, with each kind of unstorable text, and
    // on every operation (also those that take no input) a query parameter it does not know, holding a NUL.
    add("unstorable text in an unknown query parameter", validParts(operation, known, random, document), {
      ...withBody(sampleBody()),
      rawQuery: "probe=a%00b",
      mustRefuse: true,
    });
    for (const parameter of operation.parameters.filter((p) => p.in === "path" || p.in === "query")) {
      for (const text of unstorableStrings) {
        const parts = validParts(operation, known, random, document);
        setParameter(parts, parameter, text);
        add(`unstorable text in ${parameter.in} ${parameter.name}`, parts, {
          ...withBody(sampleBody()),
          // A URL cannot carry an unpaired surrogate (its UTF-8 bytes are invalid, which decoders replace
          // or refuse), so only a NUL is sure to arrive as sent.
          mustRefuse: text.includes("\0"),
        });
      }
    }
    if (jsonSchema) {
      const body = sampleBody();
      for (const leaf of stringLeafPaths(body)) {
        for (const text of unstorableStrings) {
          add(`unstorable text at body /${leaf.join("/")}`, validParts(operation, known, random, document), {
            ...jsonBody(replaceAt(body, leaf, text)),
            mustRefuse: !isDeviceTextBody(operation),
          });
        }
      }
      add("unstorable text as a body key", validParts(operation, known, random, document), {
        ...jsonBody({ ...(body as object), "k\u0000": 1 }),
        mustRefuse: !isDeviceTextBody(operation),
      });
    }

    for (let i = 0; i < randomPerOperation; i++) {
      const parts = validParts(operation, known, random, document);
      const kind = random.below(10);
      if (kind === 0 && Object.keys(parts.path).length > 0) {
        const name = random.pick(Object.keys(parts.path));
        parts.path[name] = random.pick(hostilePathSegments);
        add(`hostile path segment for ${name}`, parts, withBody(sampleBody()));
      } else if (kind === 1) {
        const name = random.pick([...parts.query.map(([n]) => n), "limit", "cursor", "status", "zz"]);
        const value = random.pick([
          ...hostileStrings,
          Buffer.from(JSON.stringify(["2026-01-01T00:00:00.000Z", "ex_\u0000"])).toString("base64url"),
          Buffer.from("[1,2]").toString("base64url"),
        ]);
        parts.query = parts.query.filter(([n]) => n !== name);
        parts.query.push([name, value]);
        add(`hostile query ${name}`, parts, withBody(sampleBody()));
      } else if (kind === 2) {
        add("repeated and raw query", parts, {
          ...withBody(sampleBody()),
          rawQuery: random.pick([
            "limit=1&limit=2",
            "cursor=%00",
            "status=%ED%A0%80",
            "a[b]=1&a[c]=2",
            "%=%",
          ]),
        });
      } else if (kind === 3 && jsonSchema) {
        const value = replaceRandomLeaf(
          sampleBody(),
          random.pick([...hostileJsonValues, ...hostileStrings]),
          random,
        );
        add("hostile JSON value", parts, jsonBody(value));
      } else if (kind === 4 && (jsonSchema || operation.method !== "GET")) {
        add("malformed JSON", parts, {
          body: Buffer.from(random.pick(malformedJsonBodies)),
          headers: { "content-type": "application/json" },
        });
      } else if (kind === 5) {
        const contentType = random.pick([
          "text/plain",
          "application/x-www-form-urlencoded",
          "application/json; charset=utf-16",
          "multipart/form-data; boundary=x",
          "application/octet-stream",
          "application/xml",
          ";;;",
        ]);
        add(`content type ${contentType}`, parts, {
          body: Buffer.from(random.chance(0.5) ? "a=%00&b=\u0000" : JSON.stringify(sampleBody() ?? {})),
          headers: { "content-type": contentType },
        });
      } else if (kind === 6) {
        add("forged or missing token", parts, {
          ...withBody(sampleBody()),
          caller: random.pick(["none", "forged"] as const),
        });
      } else if (kind === 7) {
        const header = random.pick([
          ["idempotency-key", "k".repeat(4000)],
          ["idempotency-key", "\u00ff\u00fe\u00e9"],
          [
            "range",
            random.pick(["bytes=999999999999-", "bytes=-0", "bytes=5-1", "bytes=a-b", "bytes=0-0,1-1,2-2"]),
          ],
          ["content-digest", random.pick(["sha-256=:AAAA:", "sha-256=::", "md5=:x:", "x"])],
          ["x-api-key", "e30.e30.e30"],
          ["accept", "application/xml"],
          ["x-forwarded-for", "::1, 999.1.1.1"],
        ]) as [string, string];
        add(`odd header ${header[0]}`, parts, {
          ...withBody(sampleBody()),
          headers: { [header[0]]: header[1] },
        });
      } else if (kind === 8 && operation.bodies["application/octet-stream"]) {
        add("random binary body", parts, {
          body: randomBytes(random.below(64 * 1024)),
          headers: { "content-type": "application/octet-stream" },
        });
      } else {
        add("wrong caller role", parts, {
          ...withBody(sampleBody()),
          caller: random.pick(["ci", "agent", "admin"] as const),
        });
      }
    }
  }
  return requests;
}

function setParameter(parts: Parts, parameter: Parameter, text: string): void {
  if (parameter.in === "path") {
    // encodeURIComponent refuses unpaired surrogates; send their (invalid) UTF-8 bytes instead.
    parts.path[parameter.name] = text.isWellFormed() ? encodeURIComponent(text) : "%ED%A0%80";
  } else {
    parts.query = parts.query.filter(([name]) => name !== parameter.name);
    parts.query.push([parameter.name, text.isWellFormed() ? text : "\ud800".toWellFormed()]);
  }
}
