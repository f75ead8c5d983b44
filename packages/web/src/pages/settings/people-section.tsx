import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useId, useRef, useState } from "react";
import {
  createUser,
  type IssuedAccount,
  type PersonRole,
  personRoles,
  type User,
  updateUser,
  usersQuery,
} from "../../api/settings.ts";
import { ChoiceSelect } from "../../components/choice-select.tsx";
import { ActionsColumnHeader, ColumnHeader } from "../../components/column-header.tsx";
import { filterControl, formControl } from "../../components/control-classes.ts";
import { LabelledField } from "../../components/labelled-field.tsx";
import { LiveStatus } from "../../components/live-status.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { WideTable } from "../../components/wide-table.tsx";
import { FieldMessages } from "../plans/field-messages.tsx";
import { messagesAt } from "./field-messages-at.ts";
import { OneTimeSecret } from "./one-time-secret.tsx";
import { dangerButton, primaryButton, quietButton } from "./settings-classes.ts";
import { StateChip } from "./state-chip.tsx";

const ownRowReason = "This is you: ask another administrator to change your role or disable you.";

/**
 * The organization's people: add one (a generated password shown once), change a role, disable or enable. The
 * signed-in admin's own row cannot be demoted or disabled (the API refuses it too), and says why.
 */
export function PeopleSection({ me }: { me: string }) {
  const queries = useQueryClient();
  const users = useQuery(usersQuery);
  const ids = { email: useId(), role: useId(), emailMessages: useId(), own: useId() };
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<PersonRole>("member");
  const [revealed, setRevealed] = useState<IssuedAccount>();
  const [result, setResult] = useState("");
  const addButton = useRef<HTMLButtonElement>(null);
  const refresh = () => queries.invalidateQueries({ queryKey: usersQuery.queryKey });

  const add = useMutation({
    mutationFn: ({ email, role }: { email: string; role: PersonRole }) => createUser(email, role),
    // gcTime 0: the answer (with its password) leaves the mutation cache as soon as nothing shows it.
    gcTime: 0,
    onSuccess: (account) => {
      setRevealed(account);
      setEmail("");
      setResult(`${account.email} added as ${account.role}.`);
      return refresh();
    },
  });
  const update = useMutation({
    mutationFn: ({ user, change }: { user: User; change: { role?: PersonRole; disabled?: boolean } }) =>
      updateUser(user.email, change),
    onSuccess: (user, { change }) => {
      setResult(
        change.role !== undefined
          ? `${user.email} is now ${user.role}.`
          : `${user.email} ${user.disabled_at ? "disabled and signed out" : "enabled"}.`,
      );
      return refresh();
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setRevealed(undefined);
    add.mutate({ email, role });
  };
  const emailMessages = messagesAt(add.error, "/email");
  const isMe = (user: User) => user.email.toLowerCase() === me.toLowerCase();

  const roleControl = (user: User) => (
    <select
      aria-label={`Role of ${user.email}`}
      aria-describedby={isMe(user) ? ids.own : undefined}
      className={`${filterControl} disabled:cursor-not-allowed disabled:opacity-50`}
      value={user.role}
      disabled={isMe(user) || update.isPending}
      onChange={(event) => update.mutate({ user, change: { role: event.target.value as PersonRole } })}
    >
      {personRoles.map((value) => (
        <option key={value} value={value}>
          {value}
        </option>
      ))}
    </select>
  );
  const stateControl = (user: User) => (
    <button
      type="button"
      className={user.disabled_at ? quietButton : dangerButton}
      aria-label={`${user.disabled_at ? "Enable" : "Disable"} ${user.email}`}
      aria-describedby={isMe(user) ? ids.own : undefined}
      disabled={isMe(user) || update.isPending}
      onClick={() => update.mutate({ user, change: { disabled: !user.disabled_at } })}
    >
      {user.disabled_at ? "Enable" : "Disable"}
    </button>
  );

  return (
    <section aria-labelledby="people-heading" className="space-y-4">
      <div>
        <h2 id="people-heading" className="text-lg font-semibold">
          People
        </h2>
        <p className="text-sm text-muted">
          Who signs in to this dashboard. Viewers read; members also create plans, trigger and cancel runs;
          admins also manage clients and people.
        </p>
      </div>
      <form
        onSubmit={submit}
        noValidate
        aria-label="Add a person"
        className="flex flex-wrap items-start gap-3"
      >
        <LabelledField id={ids.email} label="Email" className="flex w-full max-w-xs flex-col gap-1">
          <input
            id={ids.email}
            type="email"
            autoComplete="off"
            className={formControl}
            value={email}
            onChange={(event) => setEmail(event.target.value)}
            aria-invalid={Boolean(emailMessages)}
            aria-describedby={emailMessages ? ids.emailMessages : undefined}
          />
          <FieldMessages id={ids.emailMessages} messages={emailMessages} />
        </LabelledField>
        <LabelledField id={ids.role} label="Role">
          <ChoiceSelect id={ids.role} value={role} choices={personRoles} onChange={setRole} />
        </LabelledField>
        <div className="flex flex-col gap-1">
          <span aria-hidden className="text-xs">
            &nbsp;
          </span>
          <button ref={addButton} type="submit" className={primaryButton} disabled={add.isPending}>
            Add person
          </button>
        </div>
      </form>
      {add.error && !emailMessages && <ProblemMessage error={add.error} />}
      {revealed && (
        <OneTimeSecret
          key={revealed.email}
          title={`${revealed.email} added: give them this password now`}
          copyText={revealed.password}
          copyLabel="Copy the password"
          onDone={() => {
            setRevealed(undefined);
            addButton.current?.focus();
          }}
        >
          <p>
            <strong>You will not see this password again.</strong> Give it to {revealed.email} in a private
            message; they sign in with it as a {revealed.role} and can change it afterwards.
          </p>
        </OneTimeSecret>
      )}
      <LiveStatus>{result}</LiveStatus>
      {update.error && <ProblemMessage error={update.error} />}
      {users.error && <ProblemMessage error={users.error} />}
      {users.isPending && <p className="text-muted">Loading people…</p>}
      <p id={ids.own} className="sr-only">
        {ownRowReason}
      </p>
      {users.data && (
        <PeopleList users={users.data} isMe={isMe} roleControl={roleControl} stateControl={stateControl} />
      )}
    </section>
  );
}

function PeopleList(props: {
  users: User[];
  isMe: (user: User) => boolean;
  roleControl: (user: User) => ReactNode;
  stateControl: (user: User) => ReactNode;
}) {
  const { users, isMe } = props;
  const you = (user: User) =>
    isMe(user) && (
      <span className="ml-2 rounded-full bg-sunken px-2 py-0.5 text-xs text-muted" title={ownRowReason}>
        you
      </span>
    );
  return (
    <>
      <ul className="space-y-2 sm:hidden" aria-label="People">
        {users.map((user) => (
          <li key={user.email} className="space-y-2 rounded-lg border border-line bg-surface p-3 text-sm">
            <div className="break-all">
              {user.email}
              {you(user)}
            </div>
            <div className="flex flex-wrap items-center gap-2">
              {props.roleControl(user)}
              <StateChip disabledAt={user.disabled_at} />
              {props.stateControl(user)}
            </div>
            <p className="text-xs text-muted">
              Last sign-in: {user.last_sign_in_at ? <Timestamp value={user.last_sign_in_at} /> : "never"}
            </p>
            {isMe(user) && <p className="text-xs text-muted">{ownRowReason}</p>}
          </li>
        ))}
      </ul>
      <WideTable
        caption="People"
        head={
          <>
            <ColumnHeader>Email</ColumnHeader>
            <ColumnHeader>Role</ColumnHeader>
            <ColumnHeader>State</ColumnHeader>
            <ColumnHeader>Added</ColumnHeader>
            <ColumnHeader>Last sign-in</ColumnHeader>
            <ActionsColumnHeader />
          </>
        }
      >
        {users.map((user) => (
          <tr key={user.email} className="border-b border-line last:border-0">
            <td className="px-3 py-2">
              {user.email}
              {you(user)}
              {isMe(user) && <p className="text-xs text-muted">{ownRowReason}</p>}
            </td>
            <td className="px-3 py-2">{props.roleControl(user)}</td>
            <td className="px-3 py-2">
              <StateChip disabledAt={user.disabled_at} />
            </td>
            <td className="px-3 py-2 whitespace-nowrap">
              <Timestamp value={user.created_at} />
            </td>
            <td className="px-3 py-2 whitespace-nowrap">
              {user.last_sign_in_at ? (
                <Timestamp value={user.last_sign_in_at} />
              ) : (
                <span className="text-muted">never</span>
              )}
            </td>
            <td className="px-3 py-2">{props.stateControl(user)}</td>
          </tr>
        ))}
      </WideTable>
    </>
  );
}
