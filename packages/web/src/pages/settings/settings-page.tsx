import { useQuery } from "@tanstack/react-query";
import { mayChange } from "../../api/role.ts";
import { sessionQuery } from "../../api/session.ts";
import { ClientsSection } from "./clients-section.tsx";
import { PeopleSection } from "./people-section.tsx";
import { WebhooksSection } from "./webhooks-section.tsx";

/**
 * Settings (admins): the organization's clients and people. Anyone else reads one sentence, and the page makes
 * none of the admin calls for them (the API would refuse them anyway).
 */
export function SettingsPage() {
  const session = useQuery(sessionQuery);
  const person = session.data?.signed_in ? session.data.user : undefined;

  return (
    <div className="space-y-8">
      <h1 className="text-xl font-semibold">Settings</h1>
      {session.isPending && <p className="text-muted">Loading…</p>}
      {person && person.role !== "admin" && (
        <p>
          Settings (clients and people) are for administrators. You are a {person.role} of {person.org}: ask
          an administrator if you need a client for a pipeline or another role.
        </p>
      )}
      {person?.role === "admin" && (
        <>
          <ClientsSection />
          <PeopleSection me={person.email} />
        </>
      )}
      {person && <WebhooksSection canChange={mayChange(person)} />}
    </div>
  );
}
