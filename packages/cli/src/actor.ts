// Who is acting, for the records of lifecycle commands and webhook re-queues: the OS user and host.
import { hostname, userInfo } from "node:os";

export const cliActor = (): string => `cli:${userInfo().username}@${hostname()}`;
