import { describe, expect, it } from "vitest";
import { flowName, runFlowBatches } from "./maestro-shards.ts";
import type { StepContext } from "./step-types.ts";

describe("flowName (the name maestro reports a flow under)", () => {
  it("is the config's name when it has one", () => {
    expect(flowName("appId: com.example\nname: Sign in\n---\n- launchApp\n", "/w/flows/flow-01.yaml")).toBe(
      "Sign in",
    );
  });

  it("is the file's base name when the config has no name, or there is no config", () => {
    expect(flowName("appId: com.example\n---\n- launchApp\n", "/w/flows/flow-02.yaml")).toBe("flow-02");
    expect(flowName("- launchApp\n", "/w/flows/flow-03.yml")).toBe("flow-03");
    expect(flowName("appId: com.example\nname: ''\n---\n- launchApp\n", "/w/flows/flow-04.yaml")).toBe(
      "flow-04",
    );
  });
});

describe("runFlowBatches", () => {
  it("refuses to shard flows that share a name, before listing anything or running maestro", async () => {
    const calls: string[] = [];
    const flow = "appId: com.example\nname: Checkout\n---\n- launchApp\n";
    const done = await runFlowBatches({
      ctx: { workDir: "/nonexistent", signal: new AbortController().signal } as unknown as StepContext,
      shard: {
        index: 0,
        count: 2,
        listTests: async () => {
          calls.push("list");
          throw new Error("not expected");
        },
        nextBatch: async () => null,
      },
      files: ["/w/flows/flow-01.yaml", "/w/flows/flow-02.yaml"],
      flows: [flow, flow],
      retries: 0,
      runMaestro: async () => {
        calls.push("maestro");
        throw new Error("not expected");
      },
      reportPath: (label) => `/w/${label}.xml`,
      devicePresent: null,
      lost: (message) => ({ status: "errored", message, deviceLost: true }),
      failureArtifacts: [],
    });
    expect(done).toEqual({
      stop: {
        status: "errored",
        message:
          'two flows are named "Checkout": give each flow its own config name to split them over shards',
      },
    });
    expect(calls).toEqual([]);
  });
});
