// A Kafka broker of the test's own, for tests that stop the broker under a running process: the shared
// broker on 9092 serves everyone else's tests at the same time and is never touched. Started the
// project's normal way — scripts/services.sh with its own data dir and free ports (docs/services.md,
// "run a second broker") — from the jars in SLUICE_CACHE_DIR (default <repo>/.cache), which the test
// run's set-up resolved. Postgres and Redis are only checked there (DATABASE_URL and REDIS_URL point at
// the shared ones), never started or stopped. destroy() removes its data; the broker is killed when the
// test process exits without it.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "./free-port";
import { testServices } from "./services";
import { waitFor } from "./wait-for";

const run = promisify(execFile);
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export interface PrivateKafka {
  brokers: string[];
  /** Stop the broker (SIGTERM: a controlled shutdown), keeping its topics. */
  stop(): Promise<void>;
  /** Kill the broker at once (SIGKILL: gone this instant, as in a crash), keeping its topics. */
  kill(): Promise<void>;
  /** Start it again on the same ports and data, waiting until it answers metadata requests. */
  start(): Promise<void>;
  /** Stop it and remove its data. */
  destroy(): Promise<void>;
}

export async function startPrivateKafka(): Promise<PrivateKafka> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "sluice-kafka-"));
  const port = await freePort();
  let controllerPort = await freePort();
  while (controllerPort === port) controllerPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SLUICE_DATA_DIR: dataDir,
    SLUICE_KAFKA_PORT: String(port),
    SLUICE_KAFKA_CONTROLLER_PORT: String(controllerPort),
    SLUICE_KAFKA_HEAP: "384m",
    DATABASE_URL: testServices.databaseUrl,
    REDIS_URL: testServices.redisUrl,
  };
  // Unset: services.sh would only check a broker named there, not start the private one.
  delete env.KAFKA_BROKERS;
  const services = (command: "start" | "stop") =>
    run("bash", [path.join(REPO_ROOT, "scripts/services.sh"), command], {
      env,
      cwd: REPO_ROOT,
      timeout: 240_000,
    });
  const pidFile = path.join(dataDir, "kafka/kafka.pid");
  const brokerPid = () => Number(readFileSync(pidFile, "utf8").trim());
  const killOnExit = () => {
    try {
      process.kill(brokerPid(), "SIGKILL");
    } catch {
      // not running
    }
  };
  process.once("exit", killOnExit);
  try {
    await services("start");
  } catch (err) {
    killOnExit();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    brokers: [`127.0.0.1:${port}`],
    stop: () => services("stop").then(() => undefined),
    async kill() {
      const pid = brokerPid();
      process.kill(pid, "SIGKILL");
      await waitFor(
        `the broker (pid ${pid}) to exit`,
        () => {
          try {
            process.kill(pid, 0);
            return false;
          } catch {
            return true;
          }
        },
        30_000,
        50,
      );
    },
    start: () => services("start").then(() => undefined),
    async destroy() {
      await services("stop").catch(killOnExit);
      process.removeListener("exit", killOnExit);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
