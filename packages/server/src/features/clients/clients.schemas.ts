import { Type } from "typebox";

export const ClientRoleSchema = Type.Union([
  Type.Literal("ci"),
  Type.Literal("agent"),
  Type.Literal("admin"),
]);

export const ClientView = Type.Object({
  client_id: Type.String(),
  role: ClientRoleSchema,
  org: Type.String({ description: "Organization name." }),
  created_at: Type.String({ format: "date-time" }),
  disabled_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
});

export const WhoAmI = Type.Object({
  client_id: Type.String(),
  role: ClientRoleSchema,
  organization: Type.Object({ id: Type.String(), name: Type.String() }),
  token_expires_at: Type.String({ format: "date-time" }),
});

export const ClientIdParams = Type.Object({
  client_id: Type.String({ minLength: 1, maxLength: 128, pattern: "^[A-Za-z0-9_-]+$" }),
});
