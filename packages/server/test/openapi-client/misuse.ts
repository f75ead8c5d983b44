/**
 * Calls the generated types must refuse. Each `@ts-expect-error` fails the type-check when its line
 * compiles: a document too loose to catch these (a missing request body, a free-form error code) fails
 * openapi-client-typecheck.test.ts, not only one too strict for flow.ts.
 */
import createClient from "openapi-fetch";
import type { paths } from "../../../client/src/sdk/api.generated.ts";

export async function misuse(binary: Blob): Promise<void> {
  const api = createClient<paths>({ baseUrl: "http://127.0.0.1:8080" });
  const path = { package_name: "com.example.basic", version: "1.0.0" };

  await api.PUT("/v1/apps/{package_name}/versions/{version}", {
    params: { path },
    // @ts-expect-error the upload's body is the binary, not a JSON object
    body: { file: "app.apk" },
  });

  // @ts-expect-error a batch trigger names its plans
  await api.POST("/v1/testplan/run/batch", { body: { package_name: "com.example.basic", version: "1.0.0" } });

  // @ts-expect-error executions are read by `id`
  await api.GET("/v1/executions/{id}", { params: { path: { execution_id: "ex_1" } } });

  const { error } = await api.PUT("/v1/apps/{package_name}/versions/{version}", {
    params: { path },
    body: binary,
  });
  // @ts-expect-error problem codes are the server's ErrorCode union, not any string
  if (error?.code === "no_such_code") throw new Error("unreachable");
  // @ts-expect-error a token request needs the audience
  await api.POST("/v1/oauth/token", { body: { client_id: "cl_1", client_secret: "secret" } });
}
