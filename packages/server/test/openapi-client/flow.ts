/**
 * A client of the Testbay API written only against the types generated from its OpenAPI document, with
 * openapi-fetch, as an outside team would write one: token, app and plan, upload, batch trigger, read the
 * execution. openapi-client.int.test.ts runs it against a real server; openapi-client-typecheck.test.ts
 * type-checks this directory on its own, so a document that cannot type such a client fails the build.
 */
import createClient from "openapi-fetch";
import type { components, paths } from "../../../client/src/sdk/api.generated.ts";

export interface FlowInput {
  origin: string;
  credentials: { client_id: string; client_secret: string };
  audience: string;
  binary: Blob;
  version: string;
}

export interface FlowResult {
  tokenType: components["schemas"]["TokenResponse"]["token_type"];
  uploaded: components["schemas"]["AppVersion"];
  location: string | null;
  batch: components["schemas"]["BatchTriggerResponse"];
  execution: components["schemas"]["Execution"];
  /** A refused call's problem, read through the generated types: its `code` is the ErrorCode union. */
  refusal: { status: number; code: components["schemas"]["ErrorCode"] };
}

/** The API answered with an error: its problem document, typed. */
function refused(what: string, status: number, problem: { code: string; detail: string } | undefined): Error {
  return new Error(`${what}: ${status} ${problem?.code ?? "no problem body"}: ${problem?.detail ?? ""}`);
}

export async function runOpenApiFetchFlow(input: FlowInput): Promise<FlowResult> {
  const api = createClient<paths>({ baseUrl: input.origin });

  // 1. A token, the way OAuth libraries send it: a form body.
  const token = await api.POST("/v1/oauth/token", {
    body: { grant_type: "client_credentials", ...input.credentials, audience: input.audience },
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  if (!token.data) throw refused("token", token.response.status, token.error);
  const auth = { "x-api-key": token.data.access_token };

  const app = await api.POST("/v1/apps", {
    body: { package_name: "com.example.basic", platform: "android" },
    headers: auth,
  });
  if (!app.data && app.error?.code !== "app_exists") throw refused("app", app.response.status, app.error);
  const plan = await api.POST("/v1/testplans", {
    body: {
      name: "size check",
      package_name: "com.example.basic",
      steps: [{ type: "inspect", expect: { max_size_mb: 100 } }],
    },
    headers: auth,
  });
  if (!plan.data) throw refused("plan", plan.response.status, plan.error);

  // 2. The upload: the body is the binary itself, sent as it is (no JSON serialization).
  const path = { package_name: "com.example.basic", version: input.version };
  const uploaded = await api.PUT("/v1/apps/{package_name}/versions/{version}", {
    params: { path },
    body: input.binary,
    bodySerializer: (binary) => binary,
    headers: { ...auth, "content-type": "application/octet-stream" },
  });
  if (!uploaded.data) throw refused("upload", uploaded.response.status, uploaded.error);

  // 3. The batch trigger, and 4. the execution it started.
  const batch = await api.POST("/v1/testplan/run/batch", {
    body: { ...path, test_plan_ids: [plan.data.id] },
    headers: auth,
  });
  if (!batch.data) throw refused("batch", batch.response.status, batch.error);
  const started = batch.data.executions[0];
  if (!started) throw new Error(`no execution started: ${JSON.stringify(batch.data.failed_executions)}`);
  const execution = await api.GET("/v1/executions/{id}", {
    params: { path: { id: started.id } },
    headers: auth,
  });
  if (!execution.data) throw refused("execution", execution.response.status, execution.error);

  // The same version again is refused: the error is a typed problem document.
  const again = await api.PUT("/v1/apps/{package_name}/versions/{version}", {
    params: { path },
    body: input.binary,
    bodySerializer: (binary) => binary,
    headers: { ...auth, "content-type": "application/octet-stream" },
  });
  if (!again.error) throw new Error("a second upload of the same version was accepted");

  return {
    tokenType: token.data.token_type,
    uploaded: uploaded.data,
    location: uploaded.response.headers.get("location"),
    batch: batch.data,
    execution: execution.data,
    refusal: { status: again.response.status, code: again.error.code },
  };
}
