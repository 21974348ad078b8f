// A process that approves a change request and stops inside the approval's transaction, after the
// checkpoint was rewritten and before the commit — for the crash test, which SIGKILLs it there.
// Prints "uncommitted" when it got there. Env: DATABASE_URL, CR_ID, CR_PIPELINE, APPROVER_ID, APPROVER_EMAIL.
import { createPrismaClient } from "@sluice/db";
import { approveChangeRequest } from "@sluice/services";

const env = process.env;
const db = createPrismaClient(env.DATABASE_URL!);
await approveChangeRequest(
  db,
  { actorUserId: env.APPROVER_ID!, actor: env.APPROVER_EMAIL!, from: { origin: "system" } },
  { id: env.CR_ID!, pipeline: env.CR_PIPELINE! },
  {
    beforeCommit: async () => {
      process.stdout.write("uncommitted\n");
      await new Promise(() => undefined);
    },
  },
);
