import { describe, expect, it } from "vitest";
import { SessionDirectory } from "./session-directory.ts";
import type { SessionsRepo, SessionWhereabouts } from "./sessions.repo.ts";

const running: SessionWhereabouts = {
  organizationId: "org_a",
  clientId: "cl_ci",
  state: "ready",
  message: null,
  endReason: null,
  cancelRequested: false,
  agentId: "agent-1",
  runStatus: "running",
  runReason: null,
};

/** The sessions table as the directory reads it: one row per session, the reads counted. */
function table(rows: Record<string, SessionWhereabouts>) {
  const reads: string[] = [];
  const repo = {
    whereabouts: async (id: string) => {
      reads.push(id);
      return rows[id];
    },
  } as unknown as SessionsRepo;
  return { rows, reads, directory: new SessionDirectory(repo) };
}

describe("SessionDirectory", () => {
  it("reads a running session's route once for the commands that follow, still for its own client only", async () => {
    const { reads, directory } = table({ s1: running });
    const onAgent = { organizationId: "org_a", agentId: "agent-1" };
    expect(await directory.find("s1", {})).toEqual(onAgent);
    expect(await directory.find("s1", { clientId: "cl_ci" })).toEqual(onAgent);
    expect(await directory.find("s1", { clientId: "cl_someone_else" })).toBeUndefined();
    expect(reads).toEqual(["s1"]);
  });

  it("reads again after forget: the session's end is then what its commands are told", async () => {
    const { rows, reads, directory } = table({ s1: running });
    await directory.find("s1", {});
    rows.s1 = { ...running, state: "ended", endReason: "deleted" };
    directory.forget("s1");
    expect(await directory.find("s1", {})).toEqual({ ended: "deleted" });
    expect(await directory.find("s1", {})).toEqual({ ended: "deleted" });
    expect(reads).toEqual(["s1", "s1", "s1"]);
  });

  it("forgets every session of a lost agent, and only those", async () => {
    const { rows, reads, directory } = table({
      s1: running,
      s2: running,
      s3: { ...running, agentId: "agent-2" },
    });
    for (const id of ["s1", "s2", "s3"]) await directory.find(id, {});
    for (const id of ["s1", "s2"]) rows[id] = { ...running, agentId: null };
    directory.forgetAgent({ organizationId: "org_a", agentId: "agent-1" });
    expect(await directory.find("s1", {})).toEqual({ ended: "agent_lost" });
    expect(await directory.find("s2", {})).toEqual({ ended: "agent_lost" });
    expect(await directory.find("s3", {})).toEqual({ organizationId: "org_a", agentId: "agent-2" });
    expect(reads).toEqual(["s1", "s2", "s3", "s1", "s2"]);
  });

  it("keeps no route of a session that is not running: a queued one is found as soon as it is ready", async () => {
    const { rows, directory } = table({ s1: { ...running, state: "queued", agentId: null } });
    expect(await directory.find("s1", {})).toBeUndefined();
    rows.s1 = running;
    expect(await directory.find("s1", {})).toEqual({ organizationId: "org_a", agentId: "agent-1" });
  });

  it("says a cancelled session is over when its agent could not be told", async () => {
    const { directory } = table({ s1: { ...running, cancelRequested: true } });
    expect(await directory.find("s1", {})).toEqual({ ended: "cancelled" });
  });
});
