// A stand-in for GitHub's REST API on 127.0.0.1 that holds every request to GitHub's published OpenAPI
// description (npm @octokit/openapi, api.github.com): the method and path must be an operation of it, and the
// JSON body must validate against that operation's request schema (ajv). What does not is answered 404 or 422,
// as GitHub would, and kept in `invalid` for the test to show. Check runs and issue comments are kept, so that
// a test reads what the CLI left on GitHub; any operation can be made to answer 403 (a token without permission).

import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import AjvModule, { type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

interface Operation {
  operationId: string;
  requestBody?: { content?: Record<string, { schema?: object }> };
}

interface Route {
  method: string;
  template: string;
  regex: RegExp;
  names: string[];
  operation: Operation;
}

export interface GitHubRequest {
  method: string;
  path: string;
  operationId: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown> | undefined;
  authorization: string | undefined;
}

export interface StoredCheckRun {
  id: number;
  name: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  external_id: string | null;
  details_url: string | null;
  output: { title: string | null; summary: string | null };
  annotations: Array<Record<string, unknown>>;
}

export interface StoredComment {
  id: number;
  issue_number: number;
  body: string;
}

const require = createRequire(import.meta.url);
// ajv and ajv-formats are CommonJS with a default export (as packages/server/src/http/validation.ts takes them).
const Ajv = AjvModule.default ?? AjvModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;

let routes: Route[] | undefined;

/** GitHub's operations as routes, the most specific first (fewer path parameters). */
function githubRoutes(): Route[] {
  if (routes) return routes;
  const description = require("@octokit/openapi/generated/api.github.com.deref.json") as {
    paths: Record<string, Record<string, Operation>>;
  };
  const found: Route[] = [];
  for (const [template, methods] of Object.entries(description.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (!operation?.operationId) continue;
      const names: string[] = [];
      const source = template
        .split("/")
        .map((part) => {
          const param = /^\{(.+)\}$/.exec(part);
          if (!param) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
          names.push(param[1] as string);
          return "([^/]+)";
        })
        .join("/");
      found.push({
        method: method.toUpperCase(),
        template,
        regex: new RegExp(`^${source}$`),
        names,
        operation,
      });
    }
  }
  routes = found.sort((a, b) => a.names.length - b.names.length);
  return routes;
}

export class GitHubStandIn {
  readonly requests: GitHubRequest[] = [];
  /** Requests GitHub's description does not allow, with why: a test expects none. */
  readonly invalid: string[] = [];
  readonly checkRuns = new Map<number, StoredCheckRun>();
  readonly comments: StoredComment[] = [];
  private readonly refusals = new Map<string, number>();
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private server: Server | undefined;
  private nextId = 1000;
  url = "";

  constructor() {
    addFormats(this.ajv);
  }

  /** Answers the operation (its operationId, e.g. checks/create) with this status from now on. */
  refuse(operationId: string, status: number): this {
    this.refusals.set(operationId, status);
    return this;
  }

  reset(): void {
    this.requests.length = 0;
    this.invalid.length = 0;
    this.refusals.clear();
  }

  called(operationId: string): GitHubRequest[] {
    return this.requests.filter((r) => r.operationId === operationId);
  }

  private validatorOf(route: Route): ValidateFunction | undefined {
    const schema = route.operation.requestBody?.content?.["application/json"]?.schema;
    if (!schema) return undefined;
    const key = `${route.method} ${route.template}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(key, validate);
    }
    return validate;
  }

  private answer(
    request: GitHubRequest,
    base: string,
  ): { status: number; body: unknown; headers?: Record<string, string> } {
    const { owner, repo } = request.params;
    const repoUrl = `${base}/repos/${owner}/${repo}`;
    const body = request.body ?? {};
    const user = { login: "github-actions[bot]", id: 41898282, type: "Bot" };
    const checkRunJson = (run: StoredCheckRun) => ({
      ...run,
      annotations: undefined,
      node_id: `CR_${run.id}`,
      url: `${repoUrl}/check-runs/${run.id}`,
      html_url: `https://github.com/${owner}/${repo}/runs/${run.id}`,
      started_at: new Date().toISOString(),
      completed_at: run.status === "completed" ? new Date().toISOString() : null,
      check_suite: { id: 1 },
      app: null,
      pull_requests: [],
      output: {
        ...run.output,
        text: null,
        annotations_count: run.annotations.length,
        annotations_url: `${repoUrl}/check-runs/${run.id}/annotations`,
      },
    });
    const commentJson = (c: StoredComment) => ({
      id: c.id,
      node_id: `IC_${c.id}`,
      body: c.body,
      user,
      url: `${repoUrl}/issues/comments/${c.id}`,
      html_url: `https://github.com/${owner}/${repo}/pull/${c.issue_number}#issuecomment-${c.id}`,
      issue_url: `${repoUrl}/issues/${c.issue_number}`,
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
      author_association: "NONE",
    });
    const output = body.output as
      | { title?: string; summary?: string; annotations?: Array<Record<string, unknown>> }
      | undefined;
    switch (request.operationId) {
      case "checks/create": {
        const run: StoredCheckRun = {
          id: this.nextId++,
          name: String(body.name),
          head_sha: String(body.head_sha),
          status: body.conclusion ? "completed" : String(body.status ?? "queued"),
          conclusion: (body.conclusion as string | undefined) ?? null,
          external_id: (body.external_id as string | undefined) ?? null,
          details_url: (body.details_url as string | undefined) ?? null,
          output: { title: output?.title ?? null, summary: output?.summary ?? null },
          annotations: [...(output?.annotations ?? [])],
        };
        this.checkRuns.set(run.id, run);
        return { status: 201, body: checkRunJson(run) };
      }
      case "checks/update": {
        const run = this.checkRuns.get(Number(request.params.check_run_id));
        if (!run) return { status: 404, body: { message: "Not Found" } };
        if (body.status) run.status = String(body.status);
        if (body.conclusion) {
          run.conclusion = String(body.conclusion);
          run.status = "completed";
        }
        if (output) {
          run.output = {
            title: output.title ?? run.output.title,
            summary: output.summary ?? run.output.summary,
          };
          // Annotations are appended to those the check run has (GitHub's checks API).
          run.annotations.push(...(output.annotations ?? []));
        }
        return { status: 200, body: checkRunJson(run) };
      }
      case "issues/list-comments": {
        const issue = Number(request.params.issue_number);
        const perPage = Number(request.query.get("per_page") ?? 30);
        const page = Number(request.query.get("page") ?? 1);
        const all = this.comments.filter((c) => c.issue_number === issue);
        const items = all.slice((page - 1) * perPage, page * perPage);
        const headers: Record<string, string> = {};
        if (page * perPage < all.length)
          headers.link = `<${repoUrl}/issues/${issue}/comments?per_page=${perPage}&page=${page + 1}>; rel="next"`;
        return { status: 200, body: items.map(commentJson), headers };
      }
      case "issues/create-comment": {
        const comment = {
          id: this.nextId++,
          issue_number: Number(request.params.issue_number),
          body: String(body.body),
        };
        this.comments.push(comment);
        return { status: 201, body: commentJson(comment) };
      }
      case "issues/update-comment": {
        const comment = this.comments.find((c) => c.id === Number(request.params.comment_id));
        if (!comment) return { status: 404, body: { message: "Not Found" } };
        comment.body = String(body.body);
        return { status: 200, body: commentJson(comment) };
      }
      default:
        return { status: 501, body: { message: `the stand-in does not answer ${request.operationId}` } };
    }
  }

  async start(): Promise<string> {
    const all = githubRoutes();
    this.server = createServer(async (incoming, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
      const url = new URL(incoming.url ?? "/", "http://localhost");
      const method = incoming.method ?? "GET";
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        response.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
        response.end(JSON.stringify(body));
      };
      const route = all.find((r) => r.method === method && r.regex.test(url.pathname));
      if (!route) {
        this.invalid.push(`${method} ${url.pathname}: no such operation in GitHub's OpenAPI description`);
        send(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
        return;
      }
      const match = route.regex.exec(url.pathname) as RegExpExecArray;
      const params = Object.fromEntries(
        route.names.map((name, i) => [name, decodeURIComponent(match[i + 1] as string)]),
      );
      const text = Buffer.concat(chunks).toString();
      let body: Record<string, unknown> | undefined;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        this.invalid.push(`${method} ${url.pathname}: the body is not JSON`);
        send(400, { message: "Problems parsing JSON" });
        return;
      }
      const request: GitHubRequest = {
        method,
        path: url.pathname,
        operationId: route.operation.operationId,
        params,
        query: url.searchParams,
        body,
        authorization: incoming.headers.authorization,
      };
      this.requests.push(request);
      const validate = this.validatorOf(route);
      if (validate && !validate(body ?? {})) {
        this.invalid.push(`${route.operation.operationId}: ${this.ajv.errorsText(validate.errors)}`);
        send(422, { message: "Invalid request.", errors: validate.errors, status: "422" });
        return;
      }
      if (!request.authorization) {
        send(401, { message: "Requires authentication", status: "401" });
        return;
      }
      const refusal = this.refusals.get(route.operation.operationId);
      if (refusal) {
        send(refusal, {
          message: "Resource not accessible by integration",
          documentation_url: "https://docs.github.com/rest",
          status: String(refusal),
        });
        return;
      }
      const answer = this.answer(request, `http://${incoming.headers.host}`);
      send(answer.status, answer.body, answer.headers);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this.url;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
