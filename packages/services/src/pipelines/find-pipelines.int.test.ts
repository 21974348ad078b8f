import { createPrismaClient, type PrismaClient } from "@sluice/db";
import { createTestDatabase, type TestDatabase } from "@sluice/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findTeams } from "../teams/find-teams";
import { findPipelines } from "./find-pipelines";

let database: TestDatabase;
let db: PrismaClient;

beforeAll(async () => {
  database = await createTestDatabase("find_pipelines");
  db = createPrismaClient(database.url);
});

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe("findPipelines", () => {
  it("an empty control plane lists no pipelines", async () => {
    expect(await findPipelines(db)).toEqual([]);
  });

  it("lists each pipeline once with its owner team and its highest version, sorted by name", async () => {
    const team = await db.team.create({ data: { slug: "payments-data", name: "Payments Data" } });
    const settlements = await db.pipeline.create({
      data: { name: "merchant-settlements", ownerTeamId: team.id },
    });
    await db.pipelineVersion.createMany({
      data: [1, 3, 2].map((version) => ({
        pipelineId: settlements.id,
        version,
        spec: { name: "merchant-settlements", version },
        specHash: `hash-${version}`,
      })),
    });
    await db.pipeline.create({ data: { name: "event-ledger", ownerTeamId: team.id } });

    const pipelines = await findPipelines(db);

    expect(pipelines.map((p) => p.name)).toEqual(["event-ledger", "merchant-settlements"]);
    expect(pipelines[0]).toMatchObject({ latestVersion: null, ownerTeam: { slug: "payments-data" } });
    expect(pipelines[1]).toMatchObject({ latestVersion: 3, ownerTeam: { name: "Payments Data" } });
    expect(pipelines[1]?.createdAt).toBeInstanceOf(Date);
  });

  it("findTeams counts each team's members and owned pipelines", async () => {
    const teams = await findTeams(db);
    expect(teams).toEqual([
      expect.objectContaining({ slug: "payments-data", memberCount: 0, pipelineCount: 2 }),
    ]);
  });
});
