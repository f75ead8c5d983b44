import { Type } from "typebox";
import { clientNameRule } from "./client-name.ts";

export const ClientRoleSchema = Type.Union([
  Type.Literal("ci"),
  Type.Literal("agent"),
  Type.Literal("admin"),
]);

const ClientName = Type.Union([Type.String(), Type.Null()], {
  description:
    'What people call the client ("nightly CI"), shown beside its ID; null when it was given none. The clients a first start makes are "ci (created at first start)" and "agent (created at first start)", the built-in local agent\'s "Built-in local agent".',
});

export const ClientView = Type.Object({
  client_id: Type.String(),
  name: ClientName,
  role: ClientRoleSchema,
  org: Type.String({ description: "Organization name." }),
  created_at: Type.String({ format: "date-time" }),
  disabled_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  all_orgs: Type.Boolean({
    description:
      "An agent client that claims the runs of every organization (made with testbay-server client create --role agent --all-orgs, API.md §15); false for every other client.",
  }),
});

export const WhoAmI = Type.Object({
  client_id: Type.String(),
  role: ClientRoleSchema,
  organization: Type.Object({ id: Type.String(), name: Type.String() }),
  token_expires_at: Type.String({ format: "date-time" }),
  limits: Type.Object(
    {
      max_upload_bytes: Type.Integer({ description: "The largest binary an upload may send, in bytes" }),
      rate_limit: Type.Object(
        {
          burst: Type.Integer({ description: "Requests that may be made at once" }),
          per_second: Type.Number({ description: "Requests regained per second" }),
        },
        { description: "The caller's own bucket: agents have a larger one than ci and admin clients" },
      ),
    },
    { description: "The configured limits that apply to the caller, so a client can stay within them" },
  ),
});

export const ClientIdParams = Type.Object({
  client_id: Type.String({ minLength: 1, maxLength: 128, pattern: "^[A-Za-z0-9_-]+$" }),
});

export const CreateClientBody = Type.Object(
  {
    role: Type.Union([Type.Literal("ci"), Type.Literal("agent"), Type.Literal("admin")], {
      description:
        "ci: pipelines (upload, plans, trigger, read results); agent: device hosts (the agent protocol); admin: manages clients and people.",
    }),
    name: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: `What people call the client, e.g. "nightly CI": ${clientNameRule}; blanks around it are dropped. Optional.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const IssuedClient = Type.Object({
  client_id: Type.String(),
  client_secret: Type.String({
    description:
      "Shown only in this response: the server keeps a slow hash of it. Exchange it for tokens at POST /v1/oauth/token.",
  }),
  org: Type.String({ description: "Organization name." }),
  role: ClientRoleSchema,
  name: ClientName,
});
