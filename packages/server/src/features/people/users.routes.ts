import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { ApiError } from "../../errors.ts";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { actorOf } from "../audit/index.ts";
import type { UserRecord } from "./people.repo.ts";
import {
  CreateUserBody,
  IssuedAccountView,
  UpdateUserBody,
  UserEmailParams,
  UserView,
} from "./people.schemas.ts";
import { isEmailAddress, type PeopleService } from "./people.service.ts";

const userView = (user: UserRecord) => ({
  email: user.email,
  role: user.role,
  org: user.organizationName,
  created_at: user.createdAt,
  disabled_at: user.disabledAt,
  last_sign_in_at: user.lastSignInAt,
});

/** A password in a response must not stay in a browser's or a proxy's cache. */
const noStore = (reply: FastifyReply) => reply.header("cache-control", "no-store");

/**
 * Admins manage their organization's people over HTTP as the admin CLI does on the server: list, add (a
 * generated password shown once), change a role, disable and enable. Every change is audited with the
 * calling person or client. A person cannot demote or disable themself: the organization could be left
 * without anyone to undo it.
 */
export const usersRoutes: FastifyPluginAsyncTypebox<{ people: PeopleService }> = async (app, { people }) => {
  app.get(
    "/v1/users",
    {
      config: { auth: ["admin"] },
      schema: {
        summary: "List the organization's people",
        description: "Everyone who can sign in to the organization's dashboard, by email. Admins only.",
        tags: ["people"],
        response: { 200: Type.Object({ items: Type.Array(UserView) }), ...ProblemResponses },
      },
    },
    async (request) => ({
      items: (await people.listOrganizationUsers(principalOf(request).organizationId)).map(userView),
    }),
  );

  app.post(
    "/v1/users",
    {
      config: { auth: ["admin"] },
      bodyLimit: 8192,
      schema: {
        summary: "Add a person",
        description:
          "A local account in the caller's organization: 201 with a generated password, shown only in this response. 409 user_exists when someone in the organization has that email (case-insensitive). Accounts belong to an organization: an email with an account in another organization gets a separate one here (its own password, role and sessions), and the answer does not say whether one exists elsewhere. Admins only.",
        tags: ["people"],
        body: CreateUserBody,
        response: { 201: IssuedAccountView, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { email, role } = request.body;
      if (!isEmailAddress(email)) {
        throw new ApiError("invalid_request", {
          detail: `${JSON.stringify(email)} is not an email address.`,
          fix: "Give the address the person signs in with, as name@domain.",
          extra: {
            errors: [{ path: "/email", in: "body", message: "is not an email address (name@domain)" }],
          },
        });
      }
      // An email is unique within an organization (migration 0025), so whether it has an account in another
      // organization changes nothing here and is not told (API.md §10). A duplicate in the admin's own
      // organization is one they can list anyway, and is named as such.
      const exists = () =>
        new ApiError("user_exists", { detail: `A person with email ${email.trim()} exists already.` });
      if (await people.findInOrganization(principal.organizationId, email)) throw exists();
      try {
        const issued = await people.createUser(
          { email, role, org: principal.organizationName },
          actorOf(principal),
        );
        return noStore(reply).code(201).send(issued);
      } catch (error) {
        // Two admins adding the same person at once: the database's unique (organization, email) decided.
        if (await people.findInOrganization(principal.organizationId, email)) throw exists();
        throw error;
      }
    },
  );

  app.patch(
    "/v1/users/:email",
    {
      config: { auth: ["admin"] },
      bodyLimit: 8192,
      schema: {
        summary: "Change a person's role, disable or enable them",
        description:
          "role applies from the person's next request. disabled: true signs them out everywhere at once and stops them signing in; false lets them in again. Each change is audited. A person cannot change their own role or disable themself (409 self_lockout). Admins only.",
        tags: ["people"],
        params: UserEmailParams,
        body: UpdateUserBody,
        response: { 200: UserView, ...ProblemResponses },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const user = await people.getUser(principal.organizationId, request.params.email);
      const { role, disabled } = request.body;
      const self = principal.person?.userId === user.id;
      if (self && role !== undefined && role !== user.role) {
        throw new ApiError("self_lockout", {
          reason: "own_role",
          detail: `You cannot change your own role (${user.role}): you could not change it back.`,
        });
      }
      if (self && disabled === true) {
        throw new ApiError("self_lockout", {
          reason: "own_account",
          detail: "You cannot disable yourself: you would be signed out and could not sign in again.",
        });
      }
      const actor = actorOf(principal);
      const org = principal.organizationName;
      if (role !== undefined) await people.changeRole(user.email, role, actor, org);
      if (disabled === true) await people.disableUser(user.email, actor, org);
      if (disabled === false) await people.enableUser(user.email, actor, org);
      return userView(await people.getUser(principal.organizationId, user.email));
    },
  );
};
