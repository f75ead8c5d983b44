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
    org: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 63,
        description:
          "Organization name: which account to sign in to when the email has accounts in several organizations with this password (409 organization_required without it).",
      }),
    ),
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

/** A person as their organization's admins see them: never a password or its hash. */
export const UserView = Type.Object({
  email: Type.String(),
  role: PersonRoleSchema,
  org: Type.String({ description: "Organization name." }),
  created_at: Type.String({ format: "date-time" }),
  disabled_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "Set while the person is disabled: they cannot sign in, and their sessions were ended.",
  }),
  last_sign_in_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "Their last sign-in, by password or single sign-on; null if they never signed in.",
  }),
});

export const UserEmailParams = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 320, description: "Case-insensitive." }),
});

export const CreateUserBody = Type.Object(
  {
    email: Type.String({
      minLength: 1,
      maxLength: 320,
      description: "What the person signs in with (name@domain; case-insensitive, unique on the server).",
    }),
    role: PersonRoleSchema,
  },
  { additionalProperties: false },
);

export const IssuedAccountView = Type.Object({
  email: Type.String(),
  role: PersonRoleSchema,
  org: Type.String({ description: "Organization name." }),
  password: Type.String({
    description:
      "Generated, and shown only in this response: give it to the person, who can change it after signing in (POST /auth/password).",
  }),
});

export const UpdateUserBody = Type.Object(
  {
    role: Type.Optional(PersonRoleSchema),
    disabled: Type.Optional(
      Type.Boolean({
        description:
          "true signs the person out everywhere and stops them signing in; false lets them in again.",
      }),
    ),
  },
  { additionalProperties: false },
);
