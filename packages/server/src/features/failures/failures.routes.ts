import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ApiError } from "../../errors.ts";
import { decodeCursor, encodeCursor } from "../../http/pagination.ts";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import {
  FailureGroupPage,
  FailureListQuery,
  OccurrencePage,
  OccurrencesQuery,
  SignatureParams,
} from "./failures.schemas.ts";
import { type FailuresService, stackHead } from "./failures.service.ts";

function badCursor(path: string): ApiError {
  return new ApiError("invalid_request", {
    detail: "The cursor is not one this list handed out.",
    fix: `Pass next_cursor from the previous page of GET ${path} unchanged, or leave cursor out to start from the newest.`,
    extra: { errors: [{ path: "/cursor", in: "querystring", message: "is not a valid cursor" }] },
  });
}

/** Failure groups across runs (API.md §16): what failed, how often, since when, and whether it is fixed. */
export const failuresRoutes: FastifyPluginAsyncTypebox<{ failures: FailuresService }> = async (
  app,
  { failures },
) => {
  app.get(
    "/v1/failures",
    {
      schema: {
        summary: "Failure groups: the organization's failed tests grouped by cause",
        description:
          "Failed and errored tests with the same signature (the exception type, the first line of the message with numbers, hex, identity hashes, UUIDs, IDs, quoted values and paths as placeholders, and the first stack frame in the app's own code without its line number) are one group. Each group says how many failures it has (occurrences), in how many tests and executions, where it was first and last seen (execution, version, commit, time), an example, and its status: new (first seen in the last 24 hours), fixed (its tests passed in each of the plan's last 3 executions since it was last seen; wins over new) or ongoing. Newest last seen first; filtered by app (package_name), plan (test_plan_id; counts and status then within that plan), groups seen since a time, and status; paged by cursor. Failures recorded before the server had failure groups are not in any.",
        tags: ["tests"],
        querystring: FailureListQuery,
        response: { 200: FailureGroupPage, ...ProblemResponses },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request);
      const {
        package_name: packageName,
        test_plan_id: testPlanId,
        since,
        status,
        limit = 50,
        cursor,
      } = request.query;
      const position = decodeCursor(cursor);
      if (position && !/^[0-9a-f]{24}$/.test(position.id)) throw badCursor("/v1/failures");
      const page = await failures.list({
        organizationId,
        ...(packageName !== undefined ? { packageName } : {}),
        ...(testPlanId !== undefined ? { testPlanId } : {}),
        ...(since !== undefined ? { since: new Date(since).toISOString() } : {}),
        ...(status !== undefined ? { status } : {}),
        limit,
        ...(position ? { after: { at: position.createdAt, signature: position.id } } : {}),
      });
      return {
        items: page.items,
        next_cursor:
          page.next_cursor &&
          encodeCursor({ createdAt: page.next_cursor.at, id: page.next_cursor.signature }),
      };
    },
  );

  app.get(
    "/v1/failures/:signature/occurrences",
    {
      schema: {
        summary: "A failure group's occurrences",
        description:
          "Every failed test case of the group, newest first: its execution, device run, attempt, test, message, the head of its stack, device, version, commit and when the execution was triggered. Same filters as GET /v1/failures. 404 failure_group_not_found when the organization has no failure with this signature (another organization's signature included).",
        tags: ["tests"],
        params: SignatureParams,
        querystring: OccurrencesQuery,
        response: { 200: OccurrencePage, ...ProblemResponses },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request);
      const { package_name: packageName, test_plan_id: testPlanId, limit = 50, cursor } = request.query;
      const position = decodeCursor(cursor);
      const key = position?.id.split(" ");
      if (position && (key?.length !== 3 || !key.slice(1).every((n) => /^\d{1,9}$/.test(n)))) {
        throw badCursor("/v1/failures/{signature}/occurrences");
      }
      const page = await failures.occurrences(
        {
          organizationId,
          ...(packageName !== undefined ? { packageName } : {}),
          ...(testPlanId !== undefined ? { testPlanId } : {}),
        },
        request.params.signature,
        limit,
        position && key
          ? {
              at: position.createdAt,
              deviceRunId: key[0] as string,
              attempt: Number(key[1]),
              seq: Number(key[2]),
            }
          : undefined,
      );
      return {
        signature: request.params.signature,
        title: page.title,
        items: page.items.map((o) => ({
          execution_id: o.executionId,
          test_plan_id: o.testPlanId,
          device_run_id: o.deviceRunId,
          attempt: o.attempt,
          test_id: o.testId,
          classname: o.classname,
          name: o.name,
          status: o.status as "failed" | "errored",
          message: o.message,
          stack_head: stackHead(o.details),
          device: o.device,
          version: o.version,
          commit: o.commit,
          at: o.at,
        })),
        next_cursor:
          page.next &&
          encodeCursor({
            createdAt: page.next.at,
            id: `${page.next.deviceRunId} ${page.next.attempt} ${page.next.seq}`,
          }),
      };
    },
  );
};
