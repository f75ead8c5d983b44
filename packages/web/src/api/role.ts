import { useQuery } from "@tanstack/react-query";
import { sessionQuery } from "./session.ts";
import type { Person } from "./types.ts";

/** Viewers read; members and admins also create, edit, trigger, cancel (API.md §10). */
export function mayChange(person: Person | undefined): boolean {
  return person !== undefined && person.role !== "viewer";
}

/** Whether the signed-in person may change things: pages show their buttons only then (the API refuses anyway). */
export function useMayChange(): boolean {
  const session = useQuery(sessionQuery);
  return mayChange(session.data?.signed_in ? session.data.user : undefined);
}
