import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from "react";
import {
  type Client,
  type ClientRole,
  clientRoleHelp,
  clientRoles,
  clientsQuery,
  createClient,
  type IssuedClient,
  isLocalAgentClient,
  rotateClientSecret,
  setClientEnabled,
} from "../../api/settings.ts";
import { ActionsColumnHeader, ColumnHeader } from "../../components/column-header.tsx";
import { filterControl } from "../../components/control-classes.ts";
import { LiveStatus } from "../../components/live-status.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { WideTable } from "../../components/wide-table.tsx";
import { FieldMessages } from "../plans/field-messages.tsx";
import { messagesAt } from "./field-messages-at.ts";
import { OneTimeSecret } from "./one-time-secret.tsx";
import { dangerButton, primaryButton, quietButton } from "./settings-classes.ts";
import { StateChip } from "./state-chip.tsx";

/** The lines a pipeline (or an agent) sets to use the client, as the CLI and the agent read them (CLIENT.md). */
function environmentLines(issued: IssuedClient): string {
  return [
    `TESTBAY_URL=${window.location.origin}/v1`,
    `TESTBAY_CLIENT_ID=${issued.client_id}`,
    `TESTBAY_CLIENT_SECRET=${issued.client_secret}`,
  ].join("\n");
}

/**
 * The organization's CI and agent clients: create one (its secret shown once), disable or enable it, rotate its
 * secret after a confirmation (the pipelines using it break until they get the new one).
 */
export function ClientsSection() {
  const queries = useQueryClient();
  const clients = useQuery(clientsQuery);
  const roleId = useId();
  const nameId = useId();
  const [role, setRole] = useState<ClientRole>("ci");
  const [name, setName] = useState("");
  const [revealed, setRevealed] = useState<{ issued: IssuedClient; rotated: boolean }>();
  const [confirming, setConfirming] = useState<string>();
  const [result, setResult] = useState("");
  const createButton = useRef<HTMLButtonElement>(null);
  const refresh = () => queries.invalidateQueries({ queryKey: clientsQuery.queryKey });
  /** The secret panel or the confirmation closes: the keyboard goes back to where the section starts. */
  const closed = () => createButton.current?.focus();

  // gcTime 0: the answer (with its secret) leaves the mutation cache as soon as nothing shows it.
  const create = useMutation({
    mutationFn: createClient,
    gcTime: 0,
    onSuccess: (issued) => {
      setRevealed({ issued, rotated: false });
      setName("");
      setResult(`Client ${issued.client_id} created.`);
      return refresh();
    },
  });
  const rotate = useMutation({
    mutationFn: rotateClientSecret,
    gcTime: 0,
    onSuccess: (issued) => {
      setConfirming(undefined);
      setRevealed({ issued, rotated: true });
      setResult(`Client ${issued.client_id} has a new secret.`);
      return refresh();
    },
  });
  const toggle = useMutation({
    mutationFn: ({ client, enable }: { client: Client; enable: boolean }) =>
      setClientEnabled(client.client_id, enable),
    onSuccess: (client) => {
      setResult(`Client ${client.client_id} ${client.disabled_at ? "disabled" : "enabled"}.`);
      return refresh();
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setRevealed(undefined);
    create.mutate({ role, name });
  };
  const nameMessages = messagesAt(create.error, "/name");
  // A refused name is said at its field, not twice.
  const failure = (nameMessages ? undefined : create.error) ?? rotate.error ?? toggle.error;

  return (
    <section aria-labelledby="clients-heading" className="space-y-4">
      <div>
        <h2 id="clients-heading" className="text-lg font-semibold">
          Clients
        </h2>
        <p className="text-sm text-muted">
          Credentials for CI pipelines and device hosts: a client exchanges its ID and secret for tokens.
        </p>
      </div>
      <form onSubmit={submit} aria-label="Create a client" className="flex flex-wrap items-end gap-3">
        <div className="flex max-w-full flex-col gap-1">
          <label htmlFor={nameId} className="text-xs text-muted">
            Name (optional)
          </label>
          <input
            id={nameId}
            className={`${filterControl} w-56 max-w-full`}
            value={name}
            maxLength={100}
            placeholder="nightly CI"
            autoComplete="off"
            aria-invalid={Boolean(nameMessages)}
            aria-describedby={nameMessages ? `${nameId}-messages` : undefined}
            onChange={(event) => setName(event.target.value)}
          />
          <FieldMessages id={`${nameId}-messages`} messages={nameMessages} />
        </div>
        <div className="flex max-w-full flex-col gap-1">
          <label htmlFor={roleId} className="text-xs text-muted">
            Role
          </label>
          <select
            id={roleId}
            className={`${filterControl} max-w-full`}
            value={role}
            onChange={(event) => setRole(event.target.value as ClientRole)}
          >
            {clientRoles.map((value) => (
              <option key={value} value={value}>
                {clientRoleHelp[value]}
              </option>
            ))}
          </select>
        </div>
        <button ref={createButton} type="submit" className={primaryButton} disabled={create.isPending}>
          Create client
        </button>
      </form>
      {revealed && (
        <OneTimeSecret
          key={`${revealed.issued.client_id}:${revealed.rotated}`}
          title={
            revealed.rotated
              ? `New secret of ${revealed.issued.client_id}: copy it now`
              : `Client ${revealed.issued.client_id} created: copy its secret now`
          }
          copyText={environmentLines(revealed.issued)}
          copyLabel="Copy the three lines"
          onDone={() => {
            setRevealed(undefined);
            closed();
          }}
        >
          <p>
            <strong>You will not see this secret again.</strong> Testbay keeps only a hash of it: store it in
            your CI system's secrets (or the agent's environment) now. If it is lost, rotate the secret.
          </p>
          <dl className="grid gap-1 sm:grid-cols-[max-content_1fr] sm:gap-x-3">
            <dt className="text-muted">Client ID</dt>
            <dd className="font-mono break-all">{revealed.issued.client_id}</dd>
            <dt className="text-muted">Client secret</dt>
            <dd className="font-mono break-all" data-secret>
              {revealed.issued.client_secret}
            </dd>
          </dl>
          <p className="text-muted">A pipeline needs these environment variables:</p>
        </OneTimeSecret>
      )}
      {confirming && (
        <ConfirmRotation
          clientId={confirming}
          busy={rotate.isPending}
          onConfirm={() => rotate.mutate(confirming)}
          onCancel={() => {
            setConfirming(undefined);
            closed();
          }}
        />
      )}
      <LiveStatus>{result}</LiveStatus>
      {failure && <ProblemMessage error={failure} />}
      {clients.error && <ProblemMessage error={clients.error} />}
      {clients.isPending && <p className="text-muted">Loading clients…</p>}
      {clients.data && clients.data.length === 0 && <p className="text-muted">No clients yet.</p>}
      {clients.data && clients.data.length > 0 && (
        <ClientsList
          clients={clients.data}
          actions={(client) => (
            <div className="flex flex-wrap gap-2">
              <button
                type="button"
                className={client.disabled_at ? quietButton : dangerButton}
                disabled={toggle.isPending}
                aria-label={`${client.disabled_at ? "Enable" : "Disable"} ${client.client_id}`}
                onClick={() => toggle.mutate({ client, enable: Boolean(client.disabled_at) })}
              >
                {client.disabled_at ? "Enable" : "Disable"}
              </button>
              <button
                type="button"
                className={quietButton}
                aria-label={`Rotate the secret of ${client.client_id}`}
                onClick={() => {
                  setRevealed(undefined);
                  setConfirming(client.client_id);
                }}
              >
                Rotate secret
              </button>
            </div>
          )}
        />
      )}
    </section>
  );
}

/** The step before a rotation: it breaks whatever uses the client until it gets the new secret. */
function ConfirmRotation(props: {
  clientId: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const panel = useRef<HTMLDivElement>(null);
  const headingId = useId();
  useEffect(() => panel.current?.focus(), []);
  return (
    <div
      ref={panel}
      tabIndex={-1}
      role="alertdialog"
      aria-labelledby={headingId}
      className="space-y-3 rounded-lg border border-red-300 bg-red-50 p-4 text-sm outline-none focus-visible:ring-2 focus-visible:ring-accent dark:border-red-800 dark:bg-red-950"
    >
      <h3 id={headingId} className="font-semibold">
        Rotate the secret of {props.clientId}?
      </h3>
      <p>
        The current secret stops working at once, and so do the tokens issued with it: every pipeline or agent
        using this client fails until it is given the new secret, which is shown once.
      </p>
      <div className="flex flex-wrap gap-2">
        <button type="button" className={dangerButton} disabled={props.busy} onClick={props.onConfirm}>
          Rotate now
        </button>
        <button type="button" className={quietButton} onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** A table from 640 px wide, cards on a phone (client IDs are long). */
function ClientsList({ clients, actions }: { clients: Client[]; actions: (client: Client) => ReactNode }) {
  return (
    <>
      <ul className="space-y-2 sm:hidden" aria-label="Clients">
        {clients.map((client) => (
          <li
            key={client.client_id}
            className="space-y-2 rounded-lg border border-line bg-surface p-3 text-sm"
          >
            <ClientName client={client} />
            <div className="flex flex-wrap items-center gap-2 text-muted">
              <span>{client.role}</span>·<StateChip disabledAt={client.disabled_at} />·
              <span>
                created <Timestamp value={client.created_at} />
              </span>
            </div>
            {actions(client)}
          </li>
        ))}
      </ul>
      <WideTable
        caption="Clients"
        head={
          <>
            <ColumnHeader>Client</ColumnHeader>
            <ColumnHeader>Role</ColumnHeader>
            <ColumnHeader>Created</ColumnHeader>
            <ColumnHeader>State</ColumnHeader>
            <ActionsColumnHeader />
          </>
        }
      >
        {clients.map((client) => (
          <tr key={client.client_id} className="border-b border-line last:border-0">
            <td className="px-3 py-2">
              <ClientName client={client} />
            </td>
            <td className="px-3 py-2">{client.role}</td>
            <td className="px-3 py-2 whitespace-nowrap">
              <Timestamp value={client.created_at} />
            </td>
            <td className="px-3 py-2">
              <StateChip disabledAt={client.disabled_at} />
            </td>
            <td className="px-3 py-2">{actions(client)}</td>
          </tr>
        ))}
      </WideTable>
    </>
  );
}

/**
 * A client's name over its ID (the ID alone when it has no name), and for the built-in local agent's client what
 * it is, so nobody disables it wondering where it came from.
 */
function ClientName({ client }: { client: Client }) {
  return (
    <div className="min-w-0 space-y-0.5">
      {client.name && <div className="font-medium break-words">{client.name}</div>}
      <div className={`font-mono break-all ${client.name ? "text-xs text-muted" : "text-xs"}`}>
        {client.client_id}
      </div>
      {isLocalAgentClient(client) && (
        <p className="text-xs text-muted">
          Runs device-less steps inside the server; <code>TESTBAY_LOCAL_AGENT=false</code> turns it off.
        </p>
      )}
    </div>
  );
}
