import { Type } from "typebox";
import { PageQuery } from "../../http/pagination.ts";

export const AuditQuery = Type.Object(PageQuery, { additionalProperties: false });

export const AuditEventView = Type.Object({
  id: Type.String(),
  at: Type.String({ format: "date-time" }),
  actor: Type.Object(
    {
      type: Type.Union([Type.Literal("person"), Type.Literal("client"), Type.Literal("server")]),
      id: Type.String({
        description: "The person's email, the client's ID, or testbay-server (the admin CLI).",
      }),
    },
    { description: "Who did it." },
  ),
  action: Type.String({
    description:
      "execution.triggered, execution.cancelled, test_plan.created|updated|archived|deleted|restored, client.created|disabled|enabled|rotated, user.created|disabled|enabled|role_changed, test.quarantined (details: test_plan_id, classname, name, reason, previous_reason when it changed the reason of a quarantined test), test.unquarantined, webhook.created|updated|deleted|secret_rotated, schedule.created|updated|deleted (details: test_plan_id, cron, timezone, version, enabled; for updated, the members the request changed)",
  }),
  target: Type.Object({
    type: Type.String({ description: "execution, test_plan, client, user, test, webhook or schedule" }),
    id: Type.String({
      description:
        "Its ID; a person's email for a user; a test's id (t_…, as GET /v1/tests lists it) for a test.",
    }),
  }),
  details: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
});

export const AuditPage = Type.Object({
  items: Type.Array(AuditEventView),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
