import { fallbackOperationId, type OperationDoc, operationDocs } from "./openapi-operations.ts";
import { requestHeaders } from "./openapi-request-headers.ts";
import { schemaNameKey } from "./openapi-schemas.ts";

/**
 * Completes the document @fastify/swagger builds from the route schemas with what those cannot say:
 * operationIds, raw and form bodies, downloads, response headers, problem+json errors, HEAD, the docs page.
 * Markers that openapi.ts's per-route transform leaves on operations (`x-testbay-*`) are read and removed.
 */

type Json = Record<string, unknown>;

interface MediaType {
  schema?: Json;
}

interface Response {
  description: string;
  headers?: Record<string, Json>;
  content?: Record<string, MediaType>;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Json[];
  parameters?: Json[];
  requestBody?: { required?: boolean; description?: string; content: Record<string, MediaType> };
  responses: Record<string, Response>;
  [extension: `x-${string}`]: unknown;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; [kind: string]: unknown };
  [member: string]: unknown;
}

/** Markers from the per-route transform (openapi.ts): what the route's config says. */
export const marker = { public: "x-testbay-public", rateLimited: "x-testbay-rate-limited" } as const;

const problemRef = { $ref: "#/components/schemas/Problem" };
const binarySchema = { type: "string", format: "binary" };
/**
 * Response headers, written out in each response rather than referenced: `required` differs (the RateLimit
 * headers are missing where a request is refused before it is counted, a 401 for one), and generated
 * clients honour `required` only on headers written out.
 */
const responseHeaders = {
  RequestId: {
    description: "Identifies the request in the server's logs (also `request_id` in problem bodies).",
    required: true,
    schema: { type: "string" },
  },
  RateLimit: {
    description:
      'The caller\'s remaining quota: `"default";r=<remaining>;t=<seconds until the next request is allowed>` (draft-ietf-httpapi-ratelimit-headers). Absent when the request was refused before it was counted (401).',
    schema: { type: "string" },
  },
  RateLimitPolicy: {
    description: 'The caller\'s policy: `"default";q=<burst>;w=<seconds to refill>`.',
    schema: { type: "string" },
  },
  RetryAfter: {
    description: "Whole seconds to wait before trying again.",
    required: true,
    schema: { type: "integer", minimum: 0 },
  },
  Location: { description: "Where the created resource is.", required: true, schema: { type: "string" } },
  ETag: {
    description: "The quoted hex SHA-256 of the whole file.",
    required: true,
    schema: { type: "string" },
  },
  AcceptRanges: {
    description: "Always `bytes`: one Range is supported.",
    required: true,
    schema: { type: "string" },
  },
  ContentRange: {
    description: "`bytes first-last/size` on 206; `bytes */size` on 416.",
    required: true,
    schema: { type: "string" },
  },
  ContentDisposition: {
    description: "Always `attachment`, with the file's name.",
    required: true,
    schema: { type: "string" },
  },
} satisfies Record<string, Json>;

const header = (name: keyof typeof responseHeaders): Json => structuredClone(responseHeaders[name]);

const reasonPhrases: Record<string, string> = {
  "200": "OK",
  "201": "Created",
  "204": "No Content",
  "206": "Partial Content",
  "207": "Some succeeded (see failed_executions)",
  "503": "Service Unavailable",
};

export function completeDocument(document: OpenApiDocument): OpenApiDocument {
  addHeadOfVersion(document);
  publishProblemsAsProblemJson(document);
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      completeOperation(method, path, operation, operationDocs[`${method} ${path}`]);
    }
  }
  nameTopLevelSchemas(document);
  publishErrorCode(document.components.schemas);
  addDiscriminatorMappings(document.components.schemas);
  mergeLiteralUnions(document);
  return document;
}

function completeOperation(method: string, path: string, operation: Operation, doc?: OperationDoc): void {
  const isPublic = operation[marker.public] === true;
  const rateLimited = operation[marker.rateLimited] !== false;
  delete operation[marker.public];
  delete operation[marker.rateLimited];
  operation.operationId = doc?.operationId ?? fallbackOperationId(method, path);
  if (isPublic) operation.security = [];
  if (doc?.security) operation.security = doc.security;

  if (doc?.rawBody) {
    operation.requestBody = {
      required: true,
      description: doc.rawBody.description,
      content: Object.fromEntries(doc.rawBody.mediaTypes.map((type) => [type, { schema: binarySchema }])),
    };
  }
  const jsonBody = operation.requestBody?.content["application/json"];
  if (doc?.formBody && operation.requestBody && jsonBody) {
    operation.requestBody.content["application/x-www-form-urlencoded"] = jsonBody;
  }
  for (const name of doc?.headers ?? []) {
    operation.parameters = [...(operation.parameters ?? []), structuredClone(requestHeaders[name])];
  }
  if (doc?.text) {
    operation.responses["200"] = {
      description: doc.text.description,
      content: { [doc.text.mediaType]: { schema: { type: "string" } } },
    };
  }
  if (doc?.download) documentDownload(operation, doc.download);

  // Any request can be refused (a malformed URL, headers too large) or fail; most routes say so already.
  const problemContent = { "application/problem+json": { schema: problemRef } };
  if (!Object.keys(operation.responses).some((status) => status.startsWith("4"))) {
    operation.responses["4XX"] = { description: "A problem the caller can fix.", content: problemContent };
  }
  if (!Object.keys(operation.responses).some((status) => status.startsWith("5"))) {
    operation.responses["5XX"] = { description: "A server failure.", content: problemContent };
  }
  if (rateLimited && !operation.responses["429"]) {
    operation.responses["429"] = {
      description: "Too many requests: wait for Retry-After seconds (code rate_limited).",
      headers: { "Retry-After": header("RetryAfter") },
      // The same body as the route's other errors (the token endpoint's are OAuth-shaped JSON).
      content: structuredClone(operation.responses["4XX"]?.content ?? problemContent),
    };
  }
  for (const [status, response] of Object.entries(operation.responses)) {
    if (response.description === "Default Response") response.description = reasonPhrases[status] ?? status;
    response.headers = {
      ...response.headers,
      "x-request-id": header("RequestId"),
      ...(rateLimited
        ? { RateLimit: header("RateLimit"), "RateLimit-Policy": header("RateLimitPolicy") }
        : {}),
      ...(doc?.location === status ? { Location: header("Location") } : {}),
    };
    if (method === "head") delete response.content;
  }
}

function documentDownload(operation: Operation, download: NonNullable<OperationDoc["download"]>): void {
  const content = Object.fromEntries(download.mediaTypes.map((type) => [type, { schema: binarySchema }]));
  const fileHeaders = {
    ETag: header("ETag"),
    "Accept-Ranges": header("AcceptRanges"),
    "Content-Disposition": header("ContentDisposition"),
  };
  operation.parameters = [...(operation.parameters ?? []), structuredClone(requestHeaders.Range)];
  operation.responses = {
    "200": { description: download.description, headers: fileHeaders, content },
    "206": {
      description: "The one range asked for with Range.",
      headers: { ...fileHeaders, "Content-Range": header("ContentRange") },
      content,
    },
    "416": {
      description: "The range lies outside the file (code range_not_satisfiable).",
      headers: { "Content-Range": header("ContentRange") },
      content: { "application/problem+json": { schema: problemRef } },
    },
    ...operation.responses,
  };
}

/** HEAD of a version is the cheap "is it registered?" check before an upload (API.md §4). */
function addHeadOfVersion(document: OpenApiDocument): void {
  const item = document.paths["/v1/apps/{package_name}/versions/{version}"];
  const get = item?.get;
  if (!item || !get) return;
  const responses: Record<string, Response> = {};
  for (const [status, response] of Object.entries(structuredClone(get.responses))) {
    delete response.content;
    responses[status] = response;
  }
  if (responses["200"]) responses["200"].description = "The version is registered.";
  responses["404"] = { description: "No such version (or app): upload it." };
  item.head = {
    ...structuredClone(get),
    summary: "Is a version registered?",
    description: "200 when the version is registered, 404 when not; no body either way.",
    responses,
  };
}

/**
 * RFC 9457: every error body is application/problem+json, whatever the route's success bodies are (a route
 * that `produces` XML would otherwise have its problems listed as XML too).
 */
function publishProblemsAsProblemJson(document: OpenApiDocument): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation.responses)) {
        const problem = Object.values(response.content ?? {}).find((m) => m.schema?.$ref === problemRef.$ref);
        if (problem) response.content = { "application/problem+json": problem };
      }
    }
  }
}

/**
 * The problem `code` enum as a component of its own, used by problems and by a batch trigger's failed
 * executions alike, so generated clients get one `ErrorCode` union (the server's errors.ts catalog).
 */
function publishErrorCode(schemas: Record<string, Json>): void {
  const properties = (name: string) => schemas[name]?.properties as Record<string, Json> | undefined;
  const code = properties("Problem")?.code;
  if (!code) return;
  const { description, ...errorCode } = code;
  schemas.ErrorCode = { ...errorCode, description: "Every error code the API answers with." };
  for (const owner of ["Problem", "OAuthProblem", "ProblemType", "FailedExecution"]) {
    const members = properties(owner);
    if (members?.code) members.code = { $ref: "#/components/schemas/ErrorCode", description };
  }
}

/**
 * @fastify/swagger makes components of the named schemas nested in a body, but inlines one that is a whole
 * body: make it a component too and reference it, so generated clients name those types as well. Then the
 * name markers go.
 */
function nameTopLevelSchemas(document: OpenApiDocument): void {
  const { schemas } = document.components;
  const reference = (media: MediaType) => {
    const name = media.schema?.[schemaNameKey];
    if (typeof name !== "string" || !media.schema) return;
    schemas[name] ??= media.schema;
    media.schema = { $ref: `#/components/schemas/${name}` };
  };
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      for (const media of Object.values(operation.requestBody?.content ?? {})) reference(media);
      for (const response of Object.values(operation.responses)) {
        for (const media of Object.values(response.content ?? {})) reference(media);
      }
    }
  }
  removeKey(document, schemaNameKey);
}

function removeKey(value: unknown, key: string): void {
  if (Array.isArray(value)) for (const item of value) removeKey(item, key);
  else if (value !== null && typeof value === "object") {
    delete (value as Json)[key];
    for (const member of Object.values(value)) removeKey(member, key);
  }
}

/**
 * TypeBox writes a union of string literals as an `anyOf` of one-value enums: one `enum` says the same and
 * reads better in the reference page.
 */
function mergeLiteralUnions(value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) mergeLiteralUnions(item);
    return;
  }
  if (value === null || typeof value !== "object") return;
  const schema = value as Json;
  for (const member of Object.values(schema)) mergeLiteralUnions(member);
  const members = schema.anyOf;
  if (!Array.isArray(members) || members.length === 0) return;
  const literals = members.every(
    (m: Json) =>
      m.type === "string" && Array.isArray(m.enum) && m.enum.length === 1 && Object.keys(m).length === 2,
  );
  if (!literals) return;
  delete schema.anyOf;
  schema.type = "string";
  schema.enum = members.map((m: Json) => (m.enum as unknown[])[0]);
}

/**
 * A discriminated `oneOf` of named schemas gets an explicit mapping from each tag value to its schema: the
 * implicit mapping would look for schemas named after the values ("inspect", "log").
 */
function addDiscriminatorMappings(schemas: Record<string, Json>): void {
  for (const schema of Object.values(schemas)) {
    const discriminator = schema.discriminator as { propertyName: string; mapping?: Json } | undefined;
    const members = schema.oneOf as Json[] | undefined;
    if (!discriminator || !members) continue;
    const mapping: Record<string, string> = {};
    for (const member of members) {
      const ref = member.$ref;
      if (typeof ref !== "string") return;
      const target = schemas[ref.slice(ref.lastIndexOf("/") + 1)];
      const tag = (target?.properties as Record<string, Json> | undefined)?.[discriminator.propertyName];
      const value = tag?.const ?? (tag?.enum as unknown[] | undefined)?.[0];
      if (typeof value === "string") mapping[value] = ref;
    }
    discriminator.mapping = mapping;
  }
}
