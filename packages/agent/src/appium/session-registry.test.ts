import { describe, expect, it } from "vitest";
import { AppiumSessionRegistry } from "./session-registry.ts";

describe("AppiumSessionRegistry", () => {
  it("hands a session's commands to its relay, without the session ID", async () => {
    const registry = new AppiumSessionRegistry();
    const seen: unknown[] = [];
    registry.serve("s1", async (command) => {
      seen.push(command);
      return { status: 200, body: { value: "PORTRAIT" } };
    });
    expect(await registry.handle({ session: "s1", method: "GET", path: "/orientation" })).toEqual({
      status: 200,
      body: { value: "PORTRAIT" },
    });
    expect(seen).toEqual([{ method: "GET", path: "/orientation", body: undefined }]);
    expect(registry.sessions()).toEqual(["s1"]);
  });

  it("answers a session it does not hold with invalid session id, naming how it ended when it ended here", async () => {
    const registry = new AppiumSessionRegistry();
    const stop = registry.serve("s1", async () => ({ status: 200, body: { value: null } }));
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
    const stopOld = registry.serve("s1", async () => ({ status: 200, body: { value: "old" } }));
    registry.serve("s1", async () => ({ status: 200, body: { value: "new" } }));
    stopOld("deleted");
    expect((await registry.handle({ session: "s1", method: "GET", path: "/title" })).body).toEqual({
      value: "new",
    });
  });
});
