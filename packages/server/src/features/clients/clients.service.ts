import { randomBytes } from "node:crypto";
import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import type { ClientRole } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { type Actor, type AuditAction, type AuditLog, serverActor } from "../audit/index.ts";
import { checkClientName, clientNameRule } from "./client-name.ts";
import type { ClientRecord, ClientsRepo, OrganizationRecord } from "./clients.repo.ts";
import { hashSecret, verifyAgainstDecoy, verifySecret } from "./secret-hash.ts";
import { TurnLookups } from "./turn-lookups.ts";

export const clientRoles: readonly ClientRole[] = ["ci", "agent", "admin"];

/** The one time a secret exists in clear: printed to whoever created the client, then only its hash is kept. */
export interface IssuedCredentials {
  client_id: string;
  client_secret: string;
  org: string;
  role: ClientRole;
  /** What people call it; null when it was given none. */
  name: string | null;
  /** Set (true) for an agent client that claims every organization's runs (`--all-orgs`). */
  all_orgs?: true;
}

/** A mistake of whoever runs the admin CLI: said plainly, without a stack trace. */
export class AdminError extends Error {
  override name = "AdminError";
}

const organizationName = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export class ClientsService {
  /** The authentication lookups of the requests that arrive together share one read per client. */
  private readonly authenticationLookups: TurnLookups<string, ClientRecord | undefined>;

  constructor(
    private readonly repo: ClientsRepo,
    private readonly clock: Clock,
    private readonly audit?: AuditLog,
  ) {
    this.authenticationLookups = new TurnLookups((id) => this.repo.findClient(id));
  }

  async createOrganization(name: string): Promise<OrganizationRecord> {
    if (!organizationName.test(name)) {
      throw new AdminError(
        `Organization name ${JSON.stringify(name)} is not valid: use 1–63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit.`,
      );
    }
    if (await this.repo.findOrganizationByName(name)) {
      throw new AdminError(`Organization ${JSON.stringify(name)} exists already.`);
    }
    const now = this.clock.now();
    const org = { id: newId("org", now), name, createdAt: isoTime(now) };
    await this.repo.insertOrganization(org);
    return org;
  }

  listOrganizationNames(): Promise<string[]> {
    return this.repo.listOrganizationNames();
  }

  listOrganizations(): Promise<OrganizationRecord[]> {
    return this.repo.listOrganizations();
  }

  /** For the admin CLI: every client, or an organization's; an unknown organization is a mistake, not "none". */
  async listAllClients(orgName?: string): Promise<ClientRecord[]> {
    if (orgName === undefined) return this.repo.listAllClients();
    const org = await this.repo.findOrganizationByName(orgName);
    if (!org) {
      throw new AdminError(
        `Organization ${JSON.stringify(orgName)} does not exist; list them with: testbay-server org list`,
      );
    }
    return this.repo.listAllClients(org.id);
  }

  /**
   * Appends to the audit log. Clients are managed with the admin CLI, so the actor is the server's
   * operator unless a caller says otherwise.
   */
  private async audited(
    client: { id: string; organizationId: string; role: ClientRole },
    action: AuditAction,
    actor: Actor,
  ): Promise<void> {
    await this.audit?.record({
      organizationId: client.organizationId,
      actor,
      action,
      target: { type: "client", id: client.id },
      details: { role: client.role },
    });
  }

  private static newSecret(): string {
    return `tbs_${randomBytes(32).toString("base64url")}`;
  }

  /**
   * A new client of the organization, with its secret shown this once. `name` (optional) is trimmed and must
   * follow clientNameRule; the API checks it first to answer 400 with its own fix (client-admin.routes.ts).
   */
  /**
   * Caps how many of the organization's device runs may run at once (API.md §15: its other runs wait with
   * waiting_reason org_limit); null lifts the cap. Returns the organization as it is now.
   */
  async setOrganizationLimits(
    orgName: string,
    maxConcurrentDeviceRuns: number | null,
  ): Promise<OrganizationRecord> {
    if (
      maxConcurrentDeviceRuns !== null &&
      (!Number.isInteger(maxConcurrentDeviceRuns) || maxConcurrentDeviceRuns < 1)
    ) {
      throw new AdminError(
        `--max-concurrent-device-runs must be a whole number of at least 1 (or "none" to lift the limit), not ${JSON.stringify(String(maxConcurrentDeviceRuns))}.`,
      );
    }
    const org = await this.repo.findOrganizationByName(orgName);
    if (!org) {
      throw new AdminError(
        `Organization ${JSON.stringify(orgName)} does not exist; list them with: testbay-server org list`,
      );
    }
    await this.repo.setMaxConcurrentDeviceRuns(org.id, maxConcurrentDeviceRuns);
    return { ...org, maxConcurrentDeviceRuns };
  }

  async createClient(
    orgName: string,
    role: ClientRole,
    actor = serverActor,
    name: string | null = null,
    /** allOrganizations: an agent client that claims the runs of every organization (API.md §15). */
    options: { allOrganizations?: boolean } = {},
  ): Promise<IssuedCredentials> {
    if (!clientRoles.includes(role)) {
      throw new AdminError(`Role ${JSON.stringify(role)} is not one of ${clientRoles.join(", ")}.`);
    }
    const allOrganizations = options.allOrganizations === true;
    if (allOrganizations && role !== "agent") {
      throw new AdminError(
        `--all-orgs is for agent clients (a fleet that serves every organization); a ${role} client belongs to one organization: drop --all-orgs, or give --role agent.`,
      );
    }
    let checkedName: string | null = null;
    if (name !== null) {
      const checked = checkClientName(name);
      if ("problem" in checked) {
        throw new AdminError(`${checked.problem}: give --name ${clientNameRule}, e.g. --name "nightly CI".`);
      }
      checkedName = checked.name;
    }
    const org = await this.repo.findOrganizationByName(orgName);
    if (!org) {
      throw new AdminError(
        `Organization ${JSON.stringify(orgName)} does not exist; create it with: testbay-server org create ${orgName}`,
      );
    }
    const now = this.clock.now();
    const secret = ClientsService.newSecret();
    const id = newId("cl", now);
    await this.repo.insertClient({
      id,
      organizationId: org.id,
      role,
      name: checkedName,
      secretHash: await hashSecret(secret),
      createdAt: isoTime(now),
      allOrganizations,
    });
    await this.audited({ id, organizationId: org.id, role }, "client.created", actor);
    return {
      client_id: id,
      client_secret: secret,
      org: org.name,
      role,
      name: checkedName,
      ...(allOrganizations ? { all_orgs: true as const } : {}),
    };
  }

  /**
   * Gives a client the server made itself (at first start, the built-in local agent's) its name, unless it has
   * one: for stores made before clients had names, at every start, on any number of instances at once.
   */
  async nameIfUnnamed(id: string, name: string): Promise<void> {
    await this.repo.nameIfUnnamed(id, name);
  }

  async disableClient(id: string, actor = serverActor): Promise<void> {
    const client = await this.repo.findClient(id);
    if (!client) throw new AdminError(`Client ${JSON.stringify(id)} does not exist.`);
    if (client.disabledAt) return;
    await this.repo.disableClient(id, isoTime(this.clock.now()));
    await this.audited(client, "client.disabled", actor);
  }

  /**
   * Lets a disabled client get tokens again. The tokens it had before it was disabled stay refused: a client
   * is usually disabled because its credentials were exposed, and re-enabling it must not revive what an
   * attacker may hold. Enabling an enabled client changes nothing.
   */
  async enableClient(id: string, actor = serverActor): Promise<void> {
    const client = await this.repo.findClient(id);
    if (!client) throw new AdminError(`Client ${JSON.stringify(id)} does not exist.`);
    await this.repo.enableClient(id, isoTime(this.clock.now()));
    if (client.disabledAt) await this.audited(client, "client.enabled", actor);
  }

  /**
   * Gives the client a new secret. The old secret stops working at once, and so do the tokens issued with
   * it: whoever held the old secret could have minted tokens valid for another 24 h, and rotating is
   * usually done because the secret leaked. A disabled client stays disabled.
   */
  async rotateSecret(id: string, actor = serverActor): Promise<IssuedCredentials> {
    const client = await this.repo.findClient(id);
    if (!client) throw new AdminError(`Client ${JSON.stringify(id)} does not exist.`);
    const secret = ClientsService.newSecret();
    await this.repo.replaceSecret(id, await hashSecret(secret), isoTime(this.clock.now()));
    await this.audited(client, "client.rotated", actor);
    return {
      client_id: id,
      client_secret: secret,
      org: client.organizationName,
      role: client.role,
      name: client.name,
      ...(client.allOrganizations ? { all_orgs: true as const } : {}),
    };
  }

  /**
   * Checks a client ID and secret. Unknown IDs cost as much time as wrong secrets, and the secret is
   * checked before the client's state is revealed.
   */
  async authenticate(id: string, secret: string): Promise<ClientRecord | undefined> {
    const client = await this.repo.findClient(id);
    if (!client) return verifyAgainstDecoy(secret).then(() => undefined);
    return (await verifySecret(secret, client.secretHash)) ? client : undefined;
  }

  /**
   * Looks a client up by ID without any organization check: for authentication only. Runs on every
   * authenticated request, so the lookups of one event-loop turn share one read per client, made after they
   * were all asked for: a client disabled before a request arrived, by this process or another, is seen
   * disabled by that request (see TurnLookups). Nothing is cached beyond the turn.
   */
  findForAuthentication(id: string): Promise<ClientRecord | undefined> {
    return this.authenticationLookups.get(id);
  }

  async isEmpty(): Promise<boolean> {
    return (await this.repo.countOrganizations()) === 0;
  }

  /** A client of the caller's organization; another organization's client looks exactly like an unknown one. */
  async getClient(organizationId: string, id: string): Promise<ClientRecord> {
    const client = await this.repo.findClient(id);
    if (!client || client.organizationId !== organizationId) {
      throw new ApiError("client_not_found", { reason: "unknown", detail: `Client ${id} was not found.` });
    }
    return client;
  }

  listClients(organizationId: string): Promise<ClientRecord[]> {
    return this.repo.listClients(organizationId);
  }
}
