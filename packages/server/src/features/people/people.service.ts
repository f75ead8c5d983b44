import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import type { PersonRole } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { type Actor, type AuditAction, type AuditLog, serverActor } from "../audit/index.ts";
import { AdminError, hashSecret, verifyAgainstDecoy, verifySecret } from "../clients/index.ts";
import { generatePassword } from "./passwords.ts";
import type { PeopleRepo, SessionRecord, UserRecord } from "./people.repo.ts";
import { newSessionId, sessionIdHash } from "./session-ids.ts";

/**
 * What single sign-on does on its own (a first sign-in creates the person; a role claim changes their role): done
 * by the identity provider's say-so, which the audit log names as such.
 */
const singleSignOnActor: Actor = { type: "server", id: "single-sign-on" };

export const personRoles: readonly PersonRole[] = ["viewer", "member", "admin"];

/** A session ends this long after it was last used (API.md §10). */
export const sessionIdleMs = 12 * 60 * 60 * 1000;
/**
 * A session's last use is written at most this often: one write per person per minute rather than one per
 * request, at the price of the idle expiry being up to a minute early.
 */
const touchEveryMs = 60 * 1000;

/**
 * How many accounts of one email a sign-in without `org` checks the password against. Each costs a slow hash
 * (about 32 MiB and tens of milliseconds, features/clients/secret-hash.ts), run at once on Node's four
 * threadpool threads, so up to four cost a sign-in about the time of one and the memory stays bounded
 * whatever an email has; the accounts beyond (by organization name) are signed in to with `org`.
 */
export const signInCandidateLimit = 4;

/** An admin command named a person by an email that has accounts in several organizations. */
export class AmbiguousEmailError extends AdminError {
  override name = "AmbiguousEmailError";
  constructor(email: string, accounts: readonly UserRecord[]) {
    const orgs = accounts.map((account) => account.organizationName);
    super(
      `${email} has an account in each of the organizations ${orgs.join(", ")}; say which with --org NAME (for example --org ${orgs[0]}).`,
    );
  }
}

/** The one time a person's password exists in clear: printed to whoever created the account. */
export interface IssuedAccount {
  email: string;
  role: PersonRole;
  org: string;
  password: string;
}

// Deliberately loose (a local part, @, a domain without spaces): `admin@localhost` must pass, and the
// address is never mailed, only typed again at sign-in.
const emailPattern = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** Whether `email` (trimmed) is an address an account can have: the check createUser makes. */
export function isEmailAddress(email: string): boolean {
  return emailPattern.test(email.trim());
}

/** Local accounts and their sessions. */
export class PeopleService {
  constructor(
    private readonly repo: PeopleRepo,
    private readonly clock: Clock,
    private readonly audit?: AuditLog,
  ) {}

  /** Appends to the audit log; people are managed with the admin CLI, so by the server's operator. */
  private async audited(
    user: { organizationId: string; email: string; role: PersonRole },
    action: AuditAction,
    actor: Actor,
    details: Record<string, unknown> = {},
  ): Promise<void> {
    await this.audit?.record({
      organizationId: user.organizationId,
      actor,
      action,
      target: { type: "user", id: user.email },
      details: { role: user.role, ...details },
    });
  }

  async createUser(
    input: { email: string; role: PersonRole; org: string },
    actor = serverActor,
  ): Promise<IssuedAccount> {
    const email = input.email.trim();
    if (!emailPattern.test(email)) {
      throw new AdminError(`${JSON.stringify(input.email)} is not an email address (name@domain).`);
    }
    if (!personRoles.includes(input.role)) {
      throw new AdminError(`Role ${JSON.stringify(input.role)} is not one of ${personRoles.join(", ")}.`);
    }
    const organizationId = await this.repo.findOrganizationId(input.org);
    if (!organizationId) {
      throw new AdminError(
        `Organization ${JSON.stringify(input.org)} does not exist; create it with: testbay-server org create ${input.org}`,
      );
    }
    if (await this.repo.findUserInOrganization(organizationId, email)) {
      throw new AdminError(
        `A person with email ${email} exists already in organization ${input.org} (emails are case-insensitive).`,
      );
    }
    const password = generatePassword();
    const now = this.clock.now();
    await this.repo.insertUser({
      id: newId("usr", now),
      organizationId,
      email,
      role: input.role,
      passwordHash: await hashSecret(password),
      createdAt: isoTime(now),
    });
    await this.audited({ organizationId, email, role: input.role }, "user.created", actor);
    return { email, role: input.role, org: input.org, password };
  }

  /** For the admin CLI: every person, or an organization's; an unknown organization is a mistake. */
  async listUsers(org?: string): Promise<UserRecord[]> {
    if (org === undefined) return this.repo.listUsers();
    const organizationId = await this.repo.findOrganizationId(org);
    if (!organizationId) {
      throw new AdminError(
        `Organization ${JSON.stringify(org)} does not exist; list them with: testbay-server org list`,
      );
    }
    return this.repo.listUsers(organizationId);
  }

  /** An organization's people, by email: what its admins see in Settings. */
  listOrganizationUsers(organizationId: string): Promise<UserRecord[]> {
    return this.repo.listUsers(organizationId);
  }

  /** The organization's person with this email (case-insensitive), or undefined. */
  findInOrganization(organizationId: string, email: string): Promise<UserRecord | undefined> {
    return this.repo.findUserInOrganization(organizationId, email);
  }

  /** A person of the caller's organization; accounts of the same email elsewhere are other people's business. */
  async getUser(organizationId: string, email: string): Promise<UserRecord> {
    const user = await this.repo.findUserInOrganization(organizationId, email);
    if (!user) {
      throw new ApiError("user_not_found", {
        detail: `No person with email ${email} was found in this organization.`,
      });
    }
    return user;
  }

  /**
   * Gives a person another role; it applies to their next request, as sessions read the person afresh.
   * Giving the role they have changes nothing and is not logged.
   */
  async changeRole(email: string, role: PersonRole, actor = serverActor, org?: string): Promise<void> {
    const user = await this.existing(email, org);
    if (user.role === role) return;
    await this.repo.setRole(user.id, role);
    await this.audited({ ...user, role }, "user.role_changed", actor, { previous_role: user.role });
  }

  /** Disabling signs the person out everywhere at once; their sessions are deleted, not just refused. */
  async disableUser(email: string, actor = serverActor, org?: string): Promise<void> {
    const user = await this.existing(email, org);
    if (user.disabledAt) return;
    await this.repo.setDisabledAt(user.id, isoTime(this.clock.now()));
    await this.repo.deleteSessionsOf(user.id);
    await this.audited(user, "user.disabled", actor);
  }

  async enableUser(email: string, actor = serverActor, org?: string): Promise<void> {
    const user = await this.existing(email, org);
    if (!user.disabledAt) return;
    await this.repo.setDisabledAt(user.id, null);
    await this.audited(user, "user.enabled", actor);
  }

  /**
   * The account `email` names for the admin CLI: the one in organization `org` (a name), or without it the
   * only account with that email; an email with accounts in several organizations needs `org`.
   */
  private async existing(email: string, org?: string): Promise<UserRecord> {
    if (org !== undefined) {
      const organizationId = await this.repo.findOrganizationId(org);
      if (!organizationId) {
        throw new AdminError(
          `Organization ${JSON.stringify(org)} does not exist; list them with: testbay-server org list`,
        );
      }
      const user = await this.repo.findUserInOrganization(organizationId, email);
      if (!user) {
        throw new AdminError(
          `No person has email ${email} in organization ${org}; list them with: testbay-server user list --org ${org}`,
        );
      }
      return user;
    }
    const users = await this.repo.findUsersByEmail(email);
    const [user] = users;
    if (!user) {
      throw new AdminError(`No person has email ${email}; list them with: testbay-server user list`);
    }
    if (users.length > 1) throw new AmbiguousEmailError(email, users);
    return user;
  }

  /**
   * The accounts with this email whose password this is: the one in organization `org` (a name) when given,
   * else any of the first `signInCandidateLimit` by organization name. Each candidate costs a slow hash, all
   * checked at once and always all of them, so the time taken does not tell which matched; an email without
   * an account costs one hash too (a decoy), so response times do not tell which addresses have accounts. The
   * password is checked before the account's state (disabled) is looked at.
   */
  async accountsWithPassword(email: string, password: string, org?: string): Promise<UserRecord[]> {
    let candidates: UserRecord[];
    if (org === undefined) {
      candidates = await this.repo.findUsersByEmail(email, signInCandidateLimit);
    } else {
      const organizationId = await this.repo.findOrganizationId(org);
      const user = organizationId && (await this.repo.findUserInOrganization(organizationId, email));
      candidates = user ? [user] : [];
    }
    if (candidates.length === 0) return verifyAgainstDecoy(password).then(() => []);
    const verified = await Promise.all(candidates.map((user) => verifySecret(password, user.passwordHash)));
    return candidates.filter((_, i) => verified[i]);
  }

  /** Whether `password` is the signed-in person's own (read afresh: it may have changed since). */
  async isOwnPassword(user: UserRecord, password: string): Promise<boolean> {
    const current = await this.repo.findUser(user.id);
    if (!current) return verifyAgainstDecoy(password).then(() => false);
    return verifySecret(password, current.passwordHash);
  }

  /**
   * Sets a new password (already checked against the policy) and ends the person's other sessions: a
   * password is usually changed because someone else may know it, and they may be signed in.
   */
  async setPassword(user: UserRecord, password: string, keepSessionId: string): Promise<void> {
    await this.repo.setPasswordHash(user.id, await hashSecret(password));
    await this.repo.deleteSessionsOf(user.id, sessionIdHash(keepSessionId));
  }

  /**
   * The person an OpenID provider signed in (its email verified), as an account of organization `org`
   * (an account of that email in another organization is not the one signed in), created on their first
   * sign-in there with `claimedRole ?? defaultRole`. A claimed role is the provider's word and is applied at every
   * sign-in; without one, the role an existing person has is kept. Such a person gets a random password
   * nobody is told: they sign in through the provider. Undefined when `org` does not exist.
   */
  async personFromProvider(input: {
    email: string;
    org: string;
    defaultRole: PersonRole;
    claimedRole: PersonRole | undefined;
  }): Promise<UserRecord | undefined> {
    const organizationId = await this.repo.findOrganizationId(input.org);
    if (!organizationId) return undefined;
    const existing = await this.repo.findUserInOrganization(organizationId, input.email);
    if (existing) {
      if (input.claimedRole !== undefined && input.claimedRole !== existing.role) {
        await this.repo.setRole(existing.id, input.claimedRole);
        await this.audited({ ...existing, role: input.claimedRole }, "user.role_changed", singleSignOnActor, {
          previous_role: existing.role,
        });
        return { ...existing, role: input.claimedRole };
      }
      return existing;
    }
    const role = input.claimedRole ?? input.defaultRole;
    const now = this.clock.now();
    try {
      await this.repo.insertUser({
        id: newId("usr", now),
        organizationId,
        email: input.email,
        role,
        passwordHash: await hashSecret(generatePassword()),
        createdAt: isoTime(now),
      });
    } catch (error) {
      // The same person's first sign-in finishing twice at once (two tabs, two instances): the other won.
      const created = await this.repo.findUserInOrganization(organizationId, input.email);
      if (created) return created;
      throw error;
    }
    await this.audited({ organizationId, email: input.email, role }, "user.created", singleSignOnActor);
    return this.repo.findUserInOrganization(organizationId, input.email);
  }

  /** Starts a session; returns its ID, which only the cookie will hold. */
  async startSession(user: UserRecord): Promise<string> {
    const id = newSessionId();
    await this.repo.insertSession({
      idHash: sessionIdHash(id),
      userId: user.id,
      at: isoTime(this.clock.now()),
    });
    return id;
  }

  /**
   * The live session with this ID and its person, or undefined when it is unknown, ended, idle for 12 h or
   * its person is disabled. Read from the database on every call, so what one instance ended no instance
   * accepts. Using the session pushes its expiry on (sliding).
   */
  async resumeSession(sessionId: string): Promise<SessionRecord | undefined> {
    const now = this.clock.now();
    const idHash = sessionIdHash(sessionId);
    const session = await this.repo.findSession(idHash, isoTime(now - sessionIdleMs));
    if (!session || session.user.disabledAt) return undefined;
    if (now - Date.parse(session.lastSeenAt) >= touchEveryMs) {
      await this.repo.touchSession(idHash, isoTime(now));
    }
    return session;
  }

  async endSession(sessionId: string): Promise<void> {
    await this.repo.deleteSession(sessionIdHash(sessionId));
  }

  /** Housekeeping: idle sessions are refused anyway; this only keeps the table small. */
  purgeIdleSessions(): Promise<number> {
    return this.repo.deleteSessionsIdleSince(isoTime(this.clock.now() - sessionIdleMs));
  }

  /**
   * On the first start of an empty embedded store: the `admin@localhost` account (role admin, organization
   * `default`, which the clients' bootstrap has just created), for the credentials file.
   */
  async createFirstAdmin(): Promise<{ email: string; password: string }> {
    const account = await this.createUser({ email: "admin@localhost", role: "admin", org: "default" });
    return { email: account.email, password: account.password };
  }
}
