import { describe, expect, it } from "vitest";
import type { AppiumAnswer } from "./appium-http.ts";
import type { RelayedCommand, SessionEndReason } from "./appium-session.ts";
import { AppiumSessionRegistry } from "./session-registry.ts";

/** A served session whose relay is `relay`; its ends are recorded in `ended`. */
function served(relay: (command: RelayedCommand) => Promise<AppiumAnswer>, ended: SessionEndReason[] = []) {
  return { relay, end: (reason: SessionEndReason) => void ended.push(reason) };
}

describe("AppiumSessionRegistry", () => {
  it("hands a session's commands to its relay, without the session ID", async () => {
    const registry = new AppiumSessionRegistry();
    const seen: unknown[] = [];
    registry.serve(
      "s1",
      served(async (command) => {
        seen.push(command);
        return { status: 200, body: { value: "PORTRAIT" } };
      }),
    );
    expect(await registry.handle({ session: "s1", method: "GET", path: "/orientation" })).toEqual({
      status: 200,
      body: { value: "PORTRAIT" },
    });
    expect(seen).toEqual([{ method: "GET", path: "/orientation", body: undefined }]);
    expect(registry.sessions()).toEqual(["s1"]);
  });

  it("answers a session it does not hold with invalid session id, naming how it ended when it ended here", async () => {
    const registry = new AppiumSessionRegistry();
    const stop = registry.serve(
      "s1",
      served(async () => ({ status: 200, body: { value: null } })),
    );
    stop("idle_timeout");
    expect(registry.sessions()).toEqual([]);
    expect(await registry.handle({ session: "s1", method: "GET", path: "/source" })).toEqual({
      status: 404,
      body: {
        value: {
          error: "invalid session id",
          message: expect.stringContaining("(idle_timeout)"),
          stacktrace: "",
        },
      },
    });
    expect(await registry.handle({ session: "s2", method: "GET", path: "/source" })).toMatchObject({
      status: 404,
      body: { value: { error: "invalid session id", message: "No session s2 on this agent." } },
    });
  });

  it("keeps a newer relay for the same session when an older one stops", async () => {
    const registry = new AppiumSessionRegistry();
    const stopOld = registry.serve(
      "s1",
      served(async () => ({ status: 200, body: { value: "old" } })),
    );
    registry.serve(
      "s1",
      served(async () => ({ status: 200, body: { value: "new" } })),
    );
    stopOld("deleted");
    expect((await registry.handle({ session: "s1", method: "GET", path: "/title" })).body).toEqual({
      value: "new",
    });
  });

  it("ends a session the server cancelled, relaying nothing to Appium", async () => {
    const registry = new AppiumSessionRegistry();
    const relayed: RelayedCommand[] = [];
    const ended: SessionEndReason[] = [];
    registry.serve(
      "s1",
      served(async (command) => {
        relayed.push(command);
        return { status: 200, body: { value: null } };
      }, ended),
    );
    const answer = await registry.handle({ session: "s1", method: "DELETE", path: "", end: "cancelled" });
    expect(answer).toEqual({ status: 200, body: { value: null } });
    expect(ended).toEqual(["cancelled"]);
    expect(relayed).toEqual([]);
  });
});
