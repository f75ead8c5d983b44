import { describe, expect, it } from "vitest";
import { changesState, clientRoleOf, personRefusal } from "./person-roles.ts";

const writers = ["ci", "admin"] as const;
const admins = ["admin"] as const;
const agents = ["agent"] as const;

describe("personRefusal", () => {
  it("lets a viewer read what any caller may read, and nothing else", () => {
    expect(personRefusal("viewer", undefined, "GET")).toBeUndefined();
    expect(personRefusal("viewer", undefined, "HEAD")).toBeUndefined();
    expect(personRefusal("viewer", undefined, "POST")).toEqual({ needs: "member" });
    expect(personRefusal("viewer", writers, "POST")).toEqual({ needs: "member" });
    expect(personRefusal("viewer", writers, "DELETE")).toEqual({ needs: "member" });
    expect(personRefusal("viewer", admins, "GET")).toEqual({ needs: "admin" });
  });

  it("lets a member do what a ci client may, not what only admins may", () => {
    expect(personRefusal("member", writers, "POST")).toBeUndefined();
    expect(personRefusal("member", writers, "PATCH")).toBeUndefined();
    expect(personRefusal("member", undefined, "POST")).toBeUndefined();
    expect(personRefusal("member", admins, "GET")).toEqual({ needs: "admin" });
    expect(personRefusal("member", admins, "DELETE")).toEqual({ needs: "admin" });
  });

  it("lets an admin do what an admin client may", () => {
    expect(personRefusal("admin", admins, "DELETE")).toBeUndefined();
    expect(personRefusal("admin", writers, "POST")).toBeUndefined();
  });

  it("keeps every person out of the agent protocol, reads included", () => {
    for (const role of ["viewer", "member", "admin"] as const) {
      expect(personRefusal(role, agents, "POST")).toEqual({ needs: "agent" });
      expect(personRefusal(role, agents, "GET")).toEqual({ needs: "agent" });
    }
  });
});

describe("clientRoleOf and changesState", () => {
  it("maps people to the client role whose calls they make", () => {
    expect(clientRoleOf("admin")).toBe("admin");
    expect(clientRoleOf("member")).toBe("ci");
    expect(clientRoleOf("viewer")).toBe("ci");
  });

  it("treats everything but GET, HEAD and OPTIONS as a change", () => {
    expect(["GET", "HEAD", "OPTIONS"].map(changesState)).toEqual([false, false, false]);
    expect(["POST", "PUT", "PATCH", "DELETE"].map(changesState)).toEqual([true, true, true, true]);
  });
});
