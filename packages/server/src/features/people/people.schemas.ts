import { Type } from "typebox";
import { maximumPasswordLength } from "./passwords.ts";

export const PersonRoleSchema = Type.Union([
  Type.Literal("viewer"),
  Type.Literal("member"),
  Type.Literal("admin"),
]);

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320, description: "Case-insensitive." }),
    password: Type.String({ minLength: 1, maxLength: maximumPasswordLength }),
  },
  { additionalProperties: false },
);

export const PersonView = Type.Object({
  email: Type.String(),
  role: PersonRoleSchema,
  org: Type.String({ description: "Organization name." }),
});

const csrfToken = Type.String({
  description:
    "Send it as the x-csrf-token header on every cookie-authenticated request that changes state (POST, PUT, PATCH, DELETE).",
});

export const LoginResponse = Type.Object({ user: PersonView, csrf_token: csrfToken });

export const SessionResponse = Type.Union([
  Type.Object({ signed_in: Type.Literal(true), user: PersonView, csrf_token: csrfToken }),
  Type.Object({
    signed_in: Type.Literal(false),
    oidc: Type.Optional(
      Type.Literal(true, {
        description:
          "Present when single sign-on is configured: the sign-in page offers GET /auth/oidc/start. Absent otherwise.",
      }),
    ),
  }),
]);

export const PasswordChangeBody = Type.Object(
  {
    current_password: Type.String({ minLength: 1, maxLength: maximumPasswordLength }),
    new_password: Type.String({
      maxLength: maximumPasswordLength,
      description: "At least 12 characters; checked by the server, which says why it refuses one.",
    }),
  },
  { additionalProperties: false },
);
